// Settings of the Cluster Autoscaler component, written once: types, defaults, rules and docs.
// The stack config's `autoscaler` section (config/schema.ts) and a direct caller of
// ClusterAutoscaler resolve through the same entries. The rule that reads another section
// (two replicas in prod) lives in config/cross-section.ts.
import type * as pulumi from "@pulumi/pulumi";
import * as v from "valibot";
import { CLUSTER_AUTOSCALER_CHART, CLUSTER_AUTOSCALER_IMAGE_TAG, EXPANDERS_USABLE_ON_AWS, PRICE_EXPANDER_UNSUPPORTED } from "../upstream/cluster-autoscaler";
import { bool, dnsLabel, doc, integer, oneOf, parseSettings, pattern, pinnedVersion, section, type DeepReadonly } from "../../lib/schema";

const autoscalerEntries = {
  enabled: doc(
    v.optional(bool(), true),
    "Install the Kubernetes Cluster Autoscaler, which sets the GPU node group's desired size between gpu.scaling.min and max from pending " +
      "pods. Without it (or another autoscaler) the group stays at its creation size: a canary or an HPA scale-up never gets a node " +
      "(policy autoscaler-present-for-scaling-node-groups).",
  ),
  version: doc(
    v.optional(pinnedVersion, CLUSTER_AUTOSCALER_CHART.version),
    `Exact cluster-autoscaler chart version (${CLUSTER_AUTOSCALER_CHART.repo}); its values are checked against that version's values.yaml. ` +
      "Chart 9.59.0 runs autoscaler v1.35.0 unless imageTag says otherwise.",
  ),
  imageTag: doc(
    v.optional(pattern(/^v1\.\d+\.\d+$/, "must be an autoscaler release tag such as v1.35.0"), CLUSTER_AUTOSCALER_IMAGE_TAG),
    "Tag of the registry.k8s.io/autoscaling/cluster-autoscaler image. Upstream recommends the autoscaler minor that matches the " +
      "cluster's Kubernetes minor, at its latest patch (cluster-autoscaler/README.md, Releases): v1.33.x for a 1.33 cluster. Its Releases " +
      "table lists chart 9.47.0+ for 1.33 and 9.51.0+ for 1.34, so this chart runs those too.",
  ),
  namespace: doc(
    v.optional(dnsLabel, "kube-system"),
    "Namespace of the release. It must exist; kube-system, where the autoscaler's examples run it, always does.",
  ),
  replicas: doc(
    v.optional(integer({ min: 1, max: 5 }), 1),
    "Autoscaler pods. They elect a leader: one scales, the others wait to take over, so 2 keep scaling through a node drain or loss " +
      "(the chart's PodDisruptionBudget lets one go at a time). prod: at least 2.",
  ),
  expander: doc(
    v.optional(oneOf(EXPANDERS_USABLE_ON_AWS), "least-waste"),
    "How the autoscaler picks among node groups that fit the pending pods. least-waste takes the one that leaves the least CPU and " +
      `memory idle, i.e. the smallest (cheapest) fitting instances. ${PRICE_EXPANDER_UNSUPPORTED} is not offered: the AWS provider has no pricing ` +
      "model and the autoscaler exits at start; priority needs a hand-written cost order (a ConfigMap) this stack does not render.",
  ),
};

/** Settings of a ClusterAutoscaler (what resolveClusterAutoscalerArgs parses), and the stack file's `autoscaler` section. */
export const autoscalerSettings = doc(
  section(autoscalerEntries),
  "The Kubernetes Cluster Autoscaler (kubernetes/autoscaler chart) with its own IRSA role: it scales the cluster's managed node groups " +
    "that EKS tags for auto-discovery.",
);
export type AutoscalerSettings = v.InferOutput<typeof autoscalerSettings>;
export type AutoscalerSettingsInput = DeepReadonly<v.InferInput<typeof autoscalerSettings>>;

/** Arguments of the ClusterAutoscaler component: its settings and what the stack wires in. */
export interface ClusterAutoscalerArgs extends AutoscalerSettingsInput {
  /** Name of the EKS cluster (the discovery tags and the IAM conditions name it). */
  readonly clusterName: string;
  /** The stack's region (aws:region): the node groups', so the Auto Scaling groups'. */
  readonly region: string;
  /** The cluster's OIDC issuer URL (IRSA trust). */
  readonly oidcIssuerUrl: pulumi.Input<string>;
  /** Standard labels of the stack. */
  readonly labels: Readonly<Record<string, string>>;
}

export type ResolvedClusterAutoscalerArgs = AutoscalerSettings & Pick<ClusterAutoscalerArgs, "clusterName" | "region" | "oidcIssuerUrl" | "labels">;

/** Apply the defaults and rules of the schema once; every problem in one SettingsError naming the component. */
export function resolveClusterAutoscalerArgs(args: ClusterAutoscalerArgs, name?: string): ResolvedClusterAutoscalerArgs {
  const { clusterName, region, oidcIssuerUrl, labels, ...settings } = args;
  const parsed = parseSettings(autoscalerSettings, settings, `invalid arguments of ClusterAutoscaler${name === undefined ? "" : ` "${name}"`}`);
  return { ...parsed, clusterName, region, oidcIssuerUrl, labels };
}
