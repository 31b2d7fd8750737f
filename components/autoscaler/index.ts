// The Kubernetes Cluster Autoscaler: an IRSA role allowed to scale only this cluster's managed
// node groups, and the kubernetes/autoscaler chart with auto-discovery of those groups. Settings:
// ./schema.ts; documents, values and release arguments: ./builders.ts; upstream facts:
// components/upstream/cluster-autoscaler.ts. This class only creates the resources.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { Role } from "@pulumi/aws/iam/role";
import { RolePolicy } from "@pulumi/aws/iam/rolePolicy";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import { getPartitionOutput } from "@pulumi/aws/getPartition";
import { oidcProviderArn } from "../upstream/aws-iam";
import * as v from "valibot";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { plural } from "../summary-text";
import { autoscalerSettings, resolveClusterAutoscalerArgs, type ClusterAutoscalerArgs } from "./schema";
import { autoscalerPolicy, autoscalerRelease, autoscalerRoleArgs, autoscalerTrustPolicy } from "./builders";

export * from "./schema";
export * from "./builders";

export class ClusterAutoscaler extends pulumi.ComponentResource {
  readonly role: Role;
  readonly release: k8s.helm.v3.Release;
  readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: ClusterAutoscalerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:autoscaler:ClusterAutoscaler", name, {}, opts);
    const r = resolveClusterAutoscalerArgs(args, name);
    const parent = { parent: this };
    const partition = getPartitionOutput({}, parent).partition;
    const accountId = getCallerIdentityOutput({}, parent).accountId;

    const trust = pulumi
      .all([partition, accountId, r.oidcIssuerUrl])
      .apply(([p, account, issuerUrl]) =>
        JSON.stringify(autoscalerTrustPolicy({ providerArn: oidcProviderArn(p, account, issuerUrl), issuerUrl, namespace: r.namespace })),
      );
    this.role = new Role(name, autoscalerRoleArgs(trust), parent);
    const policy = new RolePolicy(
      name,
      {
        role: this.role.name,
        policy: pulumi
          .all([partition, accountId])
          .apply(([p, account]) => JSON.stringify(autoscalerPolicy({ partition: p, accountId: account, region: r.region, clusterName: r.clusterName }))),
      },
      parent,
    );
    this.roleArn = this.role.arn;
    // The policy is in place before the pods start calling AWS.
    this.release = new k8s.helm.v3.Release(name, autoscalerRelease(r, this.roleArn), { parent: this, dependsOn: [policy] });
    this.registerOutputs({ roleArn: this.roleArn, release: this.release.status });
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
/** The stack file's `autoscaler` section: optional, every key defaulted. */
const autoscalerSection = v.optional(autoscalerSettings, {});

declare module "../component" {
  interface StackSettings {
    autoscaler: v.InferOutput<typeof autoscalerSection>;
  }
  interface Produced {
    /** The Cluster Autoscaler, when autoscaler.enabled. */
    autoscaler: ClusterAutoscaler;
  }
}

/**
 * The Cluster Autoscaler owns the GPU node group's desired size between its min and max (the
 * node group ignores desiredSize after creation); it discovers the group by the tags EKS sets.
 */
export const autoscalerComponent: ComponentDescriptor = {
  name: "autoscaler",
  sections: { autoscaler: sectionSpec<"autoscaler">(autoscalerSection, "docs/autoscaler.md") },
  policyDomains: ["autoscaler", "iam"],
  argumentKeys: { clusterName: "cluster.name", region: "aws:region" },
  build(ctx) {
    const { autoscaler, cluster: clusterSettings } = ctx.settings;
    if (!autoscaler.enabled) return;
    const cluster = ctx.need("cluster");
    const created = new ClusterAutoscaler(
      "cluster-autoscaler",
      { ...autoscaler, clusterName: clusterSettings.name, region: ctx.region, oidcIssuerUrl: cluster.oidcIssuerUrl, labels: ctx.need("labels") },
      { providers: [cluster.aws, cluster.k8s], dependsOn: [ctx.need("gpuNodes")] },
    );
    return { autoscaler: created };
  },
  summary: [
    {
      at: 80,
      row: ({ settings }) => {
        const a = settings.autoscaler;
        const { desired, min } = settings.gpu.scaling;
        if (!a.enabled) return { label: "autoscaler", lines: [`off: the GPU node group stays at its creation size (${desired ?? min} nodes)`] };
        const v = [a.version ? `chart ${a.version}` : "", a.imageTag ? `image ${a.imageTag}` : ""].filter(Boolean).join(", ");
        return {
          label: "autoscaler",
          lines: [`Cluster Autoscaler${v ? ` (${v})` : ""} · ${plural(a.replicas, "replica")}${a.expander ? ` · expander ${a.expander}` : ""}`],
        };
      },
    },
  ],
  // null when autoscaler.enabled is false.
  outputs: (ctx) => ({ clusterAutoscalerRoleArn: ctx.find("autoscaler")?.roleArn ?? null }),
};
