// The Envoy gateway: a Deployment of a pinned Envoy with its bootstrap in a ConfigMap, a
// Service exposing only the HTTP (8000) and gRPC (8001) listeners, and a PDB. Routes each
// serving group to its primary and mirrors a fraction of requests to its canary. Settings and
// defaults: ./schema.ts; manifests: ./builders.ts and ./envoy-config.ts; what its pods need
// from the network: ./network.ts (composed by the Firewall).
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { canaryGroupsOf, gatewayConfigMap, gatewayDeployment, gatewayPodDisruptionBudget, gatewayService, runsCanaryStop } from "./builders";
import {
  CANARY_STOP_NAME,
  GATE_ALERT,
  canaryStopConfigMap,
  canaryStopCronJob,
  canaryStopRole,
  canaryStopRoleBinding,
  canaryStopServiceAccount,
  type CanaryStopArgs,
} from "./canary-stop";
import * as v from "valibot";
import { PROMETHEUS_PODS } from "../contracts";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { list, plural } from "../summary-text";
import { GATEWAY_LB_SECURITY_GROUP, gatewayNetworkNeeds, gatewayPods } from "./network";
import { gatewaySettings, resolveEnvoyGatewayArgs, type EnvoyGatewayArgs } from "./schema";

export * from "./builders";
export * from "./canary-stop";
export * from "./envoy-config";
export * from "./network";
export * from "./schema";

export class EnvoyGateway extends pulumi.ComponentResource {
  readonly configMap: k8s.core.v1.ConfigMap;
  /** The canary stop's runtime layer (its data is the stop job's: ignoreChanges), when the gateway has a canary and canaryStop is on. */
  readonly canaryStopConfigMap?: k8s.core.v1.ConfigMap;
  readonly deployment: k8s.apps.v1.Deployment;
  readonly service: k8s.core.v1.Service;
  readonly pdb: k8s.policy.v1.PodDisruptionBudget;
  readonly serviceName: pulumi.Output<string>;

  constructor(name: string, args: EnvoyGatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:gateway:EnvoyGateway", name, {}, opts);
    // Defaults and rules once, before anything is created.
    const r = resolveEnvoyGatewayArgs(args, name);
    this.configMap = new k8s.core.v1.ConfigMap(`${name}-config`, gatewayConfigMap(r), { parent: this });
    const stopped: k8s.core.v1.ConfigMap[] = [];
    if (runsCanaryStop(r)) {
      const a: CanaryStopArgs = { namespace: r.namespace, labels: r.labels, clusterDomain: r.clusterDomain, canaryGroups: canaryGroupsOf(r) };
      // Created once with no canary stopped; afterwards its data is the stop job's: a deploy never lifts a stop.
      this.canaryStopConfigMap = new k8s.core.v1.ConfigMap(`${name}-canary-stop`, canaryStopConfigMap(a), { parent: this, ignoreChanges: ["data"] });
      stopped.push(this.canaryStopConfigMap);
      const sa = new k8s.core.v1.ServiceAccount(`${name}-canary-stop`, canaryStopServiceAccount(a), { parent: this });
      const role = new k8s.rbac.v1.Role(`${name}-canary-stop`, canaryStopRole(a), { parent: this });
      const binding = new k8s.rbac.v1.RoleBinding(`${name}-canary-stop`, canaryStopRoleBinding(a), { parent: this, dependsOn: [role, sa] });
      new k8s.batch.v1.CronJob(`${name}-canary-stop`, canaryStopCronJob(a), { parent: this, dependsOn: [binding, this.canaryStopConfigMap] });
    }
    this.deployment = new k8s.apps.v1.Deployment(name, gatewayDeployment(r), { parent: this, dependsOn: [this.configMap, ...stopped] });
    this.service = new k8s.core.v1.Service(name, gatewayService(r), { parent: this });
    this.pdb = new k8s.policy.v1.PodDisruptionBudget(name, gatewayPodDisruptionBudget(r), { parent: this });
    this.serviceName = this.service.metadata.name;
    this.registerOutputs({ serviceName: this.serviceName });
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
/** The stack file's `gateway` section: optional, every key defaulted. */
const gatewaySection = v.optional(gatewaySettings, {});

declare module "../component" {
  interface StackSettings {
    gateway: v.InferOutput<typeof gatewaySection>;
  }
  interface Produced {
    gateway: EnvoyGateway;
  }
}

/** The Envoy gateway in front of the serving groups, behind its load balancer's security group (the Firewall creates it). */
export const gatewayComponent: ComponentDescriptor = {
  name: "gateway",
  sections: { gateway: sectionSpec<"gateway">(gatewaySection, "docs/gateway-and-firewall.md") },
  policyDomains: ["gateway", "exposure"],
  argumentKeys: { namespace: "triton.namespace" },
  build(ctx) {
    const namespace = ctx.settings.triton.namespace;
    const gateway = new EnvoyGateway(
      "gateway",
      {
        ...ctx.settings.gateway,
        namespace,
        labels: ctx.need("labels"),
        servingGroups: ctx.need("servingGroups"),
        loadBalancerSecurityGroupId: ctx.need("firewallSecurityGroupIds")[GATEWAY_LB_SECURITY_GROUP],
      },
      { provider: ctx.need("cluster").k8s, dependsOn: [ctx.need("servingNamespace")] },
    );
    return { gateway };
  },
  network: (ctx) =>
    gatewayNetworkNeeds({
      pods: gatewayPods(ctx.settings.triton.namespace),
      clientCidrs: ctx.settings.gateway.clientCidrs,
      clientNamespaces: ctx.settings.gateway.clientNamespaces,
      scrapedBy: PROMETHEUS_PODS,
    }),
  summary: [
    {
      at: 60,
      row: ({ settings }) => {
        const g = settings.gateway;
        const lb = g.clientCidrs.length ? `${g.loadBalancerScheme} load balancer for ${list(g.clientCidrs)}` : "no load balancer (no gateway.clientCidrs)";
        const inCluster = g.clientNamespaces.length ? ` · in-cluster callers from ${list(g.clientNamespaces)}` : "";
        const canaries = settings.triton.groups.filter((x) => x.canary).map((x) => x.name);
        const stop =
          g.canaryStop && canaries.length
            ? [
                `canary stop: every minute, a firing ${GATE_ALERT.alertname} alert sets the mirror and share of its ${GATE_ALERT.group}'s canary ` +
                  `(${list(canaries)}) to 0 in ConfigMap ${CANARY_STOP_NAME}, live; pulumi up never lifts a stop (ignoreChanges on its data)`,
              ]
            : [];
        return { label: "gateway", lines: [`${lb} · ${plural(g.replicas, "replica")}${inCluster}`, ...stop] };
      },
    },
  ],
  outputs: (ctx) => ({
    gatewayServiceName: ctx.need("gateway").serviceName,
    // null when the gateway has no load balancer (no client CIDRs: in-cluster clients only).
    gatewayLoadBalancerSecurityGroupId: ctx.need("firewallSecurityGroupIds")[GATEWAY_LB_SECURITY_GROUP] ?? null,
  }),
};
