// Rules that keep the GPU node groups scalable: a group allowed to grow must have something that
// grows it.
import type { PolicyResource } from "@pulumi/policy";
import { CLUSTER_AUTOSCALER_CHART } from "../../components/upstream/cluster-autoscaler";
import { propsOf } from "./props";
import { stackRule, type Finding, type Rule } from "./rule";
import { HELM_RELEASE, NODE_GROUP } from "./types";
import { isHelmChart, show } from "./util";

/**
 * The clusters a Cluster Autoscaler release scales: the cluster its auto-discovery names, or any
 * cluster when it lists groups by hand (autoscalingGroups: their ASG names are known only at
 * apply time). A release that runs no pod, or for another cloud provider, scales nothing here.
 */
function scaledClusters(r: PolicyResource): { all: boolean; clusters: Set<string> } | undefined {
  if (!isHelmChart(r.type, r.props as { chart?: unknown }, CLUSTER_AUTOSCALER_CHART.chart)) return undefined;
  const v = propsOf(r, HELM_RELEASE)?.values ?? {};
  if (v.replicaCount === 0) return undefined;
  // The chart's default cloudProvider is aws (values.yaml).
  if (v.cloudProvider !== undefined && v.cloudProvider !== "aws") return undefined;
  const all = Array.isArray(v.autoscalingGroups) && v.autoscalingGroups.length > 0;
  const name = v.autoDiscovery?.clusterName;
  return { all, clusters: new Set(typeof name === "string" && name !== "" ? [name] : []) };
}

export const autoscalerPresentForScalingNodeGroups = stackRule({
  name: "autoscaler-present-for-scaling-node-groups",
  domain: "autoscaler",
  configKey: "autoscaler.enabled",
  description:
    `Every EKS node group whose scalingConfig.maxSize exceeds its minSize has a ${CLUSTER_AUTOSCALER_CHART.chart} release in the stack that ` +
    "scales its cluster (autoDiscovery.clusterName, or groups listed in autoscalingGroups), with at least one replica.",
  prevents:
    "A node group that can only stay at its creation size: nothing raises desiredSize, so a canary never schedules and no HPA scale-up " +
    "ever gets a GPU node.",
  remediationSteps:
    "Enable the Cluster Autoscaler (triton-platform:autoscaler.enabled, the default; components/autoscaler), or set the node group's min " +
    "equal to its max (gpu.scaling) when it is not meant to scale.",
  check: (resources) => {
    const releases = resources.map(scaledClusters).filter((x) => x !== undefined);
    const out: Finding[] = [];
    for (const r of resources) {
      const ng = propsOf(r, NODE_GROUP);
      const s = ng?.scalingConfig;
      if (!ng || typeof s?.maxSize !== "number" || s.maxSize <= (s.minSize ?? 0)) continue;
      const cluster = String(ng.clusterName ?? "");
      if (releases.some((x) => x.all || x.clusters.has(cluster))) continue;
      const found = releases.flatMap((x) => [...x.clusters]);
      out.push({
        path: "scalingConfig.maxSize",
        value: s.maxSize,
        message:
          `NodeGroup ${r.name}: scalingConfig.maxSize ${show(s.maxSize)} exceeds minSize ${show(s.minSize)}, but no ` +
          `${CLUSTER_AUTOSCALER_CHART.chart} release scales cluster ${show(cluster)}` +
          (found.length > 0 ? ` (releases found for ${found.map((c) => show(c)).join(", ")})` : ""),
        urn: r.urn,
      });
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [autoscalerPresentForScalingNodeGroups];
