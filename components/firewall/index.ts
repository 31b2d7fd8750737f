// Firewall: composes the network needs the components declare (components/network.ts) into
// Kubernetes NetworkPolicies and AWS security-group rules. It knows no component: each guarded
// namespace is closed by default-deny ingress, and only what a declaration allows is opened
// (one NetworkPolicy per declared PodConnections, one rule per declared security-group rule).
// Settings: ./schema.ts; manifests and rule specs: ./builders.ts.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { SecurityGroup } from "@pulumi/aws/ec2/securityGroup";
import { SecurityGroupIngressRule } from "@pulumi/aws/vpc/securityGroupIngressRule";
import { SecurityGroupEgressRule } from "@pulumi/aws/vpc/securityGroupEgressRule";
import type { SgRef } from "../network";
import { networkPolicies, networkPolicyResourceName, securityGroupRuleArgs, securityGroupRules, securityGroupsToCreate } from "./builders";
import { resolveFirewallArgs, type FirewallArgs } from "./schema";
import type { ComponentDescriptor } from "../component";

export * from "./builders";
export * from "./schema";

export class Firewall extends pulumi.ComponentResource {
  readonly networkPolicies: k8s.networking.v1.NetworkPolicy[];
  /** The ids of the security groups it created for the needs, by their symbolic name (e.g. gatewayLb). */
  readonly securityGroupIds: Readonly<Partial<Record<SgRef, pulumi.Output<string>>>>;

  constructor(name: string, args: FirewallArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:firewall:Firewall", name, {}, opts);
    // Every declaration checked before anything is created.
    const r = resolveFirewallArgs(args, name);
    this.networkPolicies = networkPolicies(r).map((np) => new k8s.networking.v1.NetworkPolicy(networkPolicyResourceName(name, r, np), np, { parent: this }));

    const created: Record<SgRef, pulumi.Output<string>> = {};
    for (const g of securityGroupsToCreate(r)) {
      // Rules live in separate resources (below), never inline: inline and standalone rules
      // on one group fight each other on every update.
      created[g.ref] = new SecurityGroup(`${name}-${g.name}`, { vpcId: r.vpcId, description: g.description }, { parent: this }).id;
    }
    this.securityGroupIds = created;
    const ids = { ...r.securityGroupIds, ...created };
    for (const spec of securityGroupRules(r)) {
      const ruleArgs = securityGroupRuleArgs(spec, ids);
      if (spec.direction === "ingress") new SecurityGroupIngressRule(`${name}-${spec.name}`, ruleArgs, { parent: this });
      else new SecurityGroupEgressRule(`${name}-${spec.name}`, ruleArgs, { parent: this });
    }
    this.registerOutputs({ securityGroupIds: this.securityGroupIds });
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
declare module "../component" {
  interface Produced {
    /** The ids of the security groups the Firewall created for the needs, by their symbolic name (e.g. gatewayLb). */
    firewallSecurityGroupIds: Firewall["securityGroupIds"];
  }
}

/**
 * The firewall composes what every component declares of its pods' network needs (anything
 * undeclared stays closed by its default-deny ingress). Before the components whose resources
 * need a security group it creates (the gateway's load balancer).
 */
export const firewallComponent: ComponentDescriptor = {
  name: "firewall",
  policyDomains: ["firewall", "exposure"],
  argumentKeys: { namespace: "triton.namespace" },
  build(ctx) {
    const cluster = ctx.need("cluster");
    const firewall = new Firewall(
      "firewall",
      {
        namespace: ctx.settings.triton.namespace,
        labels: ctx.need("labels"),
        needs: ctx.networkNeeds(),
        vpcId: cluster.vpcId,
        securityGroupIds: ctx.securityGroups(),
      },
      { providers: { aws: cluster.aws, kubernetes: cluster.k8s }, dependsOn: [ctx.need("servingNamespace")] },
    );
    return { firewallSecurityGroupIds: firewall.securityGroupIds };
  },
};
