// The GPU components: GpuNodeGroup (EKS managed node group on an NVIDIA AMI type) and
// GpuOperator (the NVIDIA GPU Operator). schema.ts states their settings, builders.ts and
// user-data.ts build plain resource arguments, compatibility.ts checks Triton images against
// the AMI's driver; node-group.ts and operator.ts are the thin classes.
export * from "./schema";
export * from "./builders";
export * from "./user-data";
export * from "./compatibility";
import { sectionSpec, type ComponentDescriptor, type SummaryRow } from "../component";
import { gpuInstanceType } from "../upstream/ec2-gpu-instances";
import { GPU_AMI_TYPES } from "../upstream/eks";
import { list, range } from "../summary-text";
import { capacityPlan } from "./capacity";
import { COST_EXCLUDES, stackCost, usd, usdRange, type StackCost } from "./cost";
import { GpuNodeGroup } from "./node-group";
import { GpuOperator } from "./operator";
import { gpuSettings, type GpuSettings } from "./schema";
import { hostSoftwareOf } from "./builders";
import { longestServingGraceSeconds } from "../triton/schema";
import { longestRequestSeconds } from "../gateway/envoy-config";

export { GpuNodeGroup, GpuOperator };

// ---- the component's descriptor (components/registry.ts) --------------------------------

declare module "../component" {
  interface StackSettings {
    gpu: GpuSettings;
  }
  interface Produced {
    /** The GPU node group: its ref carries the security group, node role, labels and taint that serving, EFS and the firewall consume. */
    gpuNodes: GpuNodeGroup;
    gpuOperator: GpuOperator;
  }
}

/** GPU capacity (issue 3): the node group and the NVIDIA GPU Operator. */
export const gpuComponent: ComponentDescriptor = {
  name: "gpu",
  sections: { gpu: sectionSpec<"gpu">(gpuSettings, "docs/gpu-nodes.md") },
  policyDomains: ["gpu-nodes", "iam"],
  argumentKeys: { zones: "cluster.zones", region: "aws:region", clusterName: "cluster.name" },
  build(ctx) {
    const { gpu, cluster: clusterSettings } = ctx.settings;
    const cluster = ctx.need("cluster");
    const labels = ctx.need("labels");
    const gpuNodes = new GpuNodeGroup(
      "gpu",
      {
        clusterName: cluster.name,
        vpcId: cluster.vpcId,
        clusterSecurityGroupId: cluster.clusterSecurityGroupId,
        region: ctx.region,
        zones: clusterSettings.zones,
        amiType: gpu.amiType,
        instanceTypes: gpu.instanceTypes,
        gpuType: gpu.gpuType,
        // The autoscaler's node template for a group at zero: the fewest GPUs among its instance
        // types (loadConfig has refused unknown types already, so each one is in the facts table).
        gpusPerNode: Math.min(...gpu.instanceTypes.map((t) => gpuInstanceType(t)?.gpus ?? 1)),
        scaling: gpu.scaling,
        rootVolumeGiB: gpu.rootVolumeGiB,
        rootVolumeKmsKeyArn: gpu.rootVolumeKmsKeyArn,
        maxUnavailable: gpu.maxUnavailable,
        tags: ctx.need("tags"),
        // Kubelet's graceful node shutdown covers the serving pods' own termination (tritonShutdown).
        podShutdownSeconds: longestServingGraceSeconds(ctx.settings.triton.groups, longestRequestSeconds(ctx.settings.gateway)),
      },
      { provider: cluster.aws },
    );
    const gpuOperator = ctx.at(
      ["gpu", "operator"],
      () =>
        new GpuOperator(
          "gpu-operator",
          {
            version: gpu.operator.version,
            namespace: gpu.operator.namespace,
            labels,
            host: hostSoftwareOf(gpu.amiType),
            serviceMonitor: gpu.operator.serviceMonitor,
          },
          // After the nodes. Helm waits for the chart's own objects only, not for the operands the
          // operator starts on the GPU nodes (ClusterPolicy status is not awaited; components/gpu/builders.ts).
          { provider: cluster.k8s, dependsOn: [gpuNodes] },
        ),
      { host: "gpu.amiType" },
    );
    return { gpuNodes, gpuOperator };
  },
  summary: [
    {
      at: 20,
      row: ({ settings }) => {
        const g = settings.gpu;
        const ng = capacityPlan(settings).nodeGroups[0];
        const perNode = ng && ng.instanceTypes.length ? range(ng.gpusPerNode.min, ng.gpusPerNode.max) : "?";
        const label = g.gpuType ?? ng?.instanceTypes[0]?.gpuLabel ?? "unknown GPU";
        const ami = GPU_AMI_TYPES[g.amiType];
        const desired = g.scaling.desired !== undefined && g.scaling.desired !== g.scaling.min ? ` (desired ${g.scaling.desired})` : "";
        return {
          label: "GPU nodes",
          lines: [
            `${g.instanceTypes.join(" | ")} × ${range(g.scaling.min, g.scaling.max)} node${g.scaling.max === 1 ? "" : "s"}${desired} · ${perNode} × ${label} per node`,
            `AMI ${g.amiType}${ami ? ` (NVIDIA driver R${ami.driverBranch})` : ""} · GPU Operator ${g.operator.version}`,
          ],
        };
      },
    },
    {
      at: 40,
      row: ({ settings }) => {
        const { needed, available } = capacityPlan(settings).gpus;
        const short = [needed.min > available.min ? "minimum" : "", needed.max > available.max ? "maximum" : ""].filter(Boolean);
        return {
          label: "capacity",
          lines: [
            `GPUs needed ${range(needed.min, needed.max)}, available ${range(available.min, available.max)} (minimum..maximum)` +
              (short.length ? ` · short at the ${short.join(" and the ")} (see the plan's warnings)` : " · fits"),
          ],
        };
      },
    },
    { at: 50, row: ({ settings, region }) => costRow(stackCost({ ...settings, region })) },
  ],
  securityGroups: (ctx) => ({ gpuNodes: ctx.need("gpuNodes").ref.securityGroupId }),
  outputs(ctx) {
    const gpuNodes = ctx.need("gpuNodes");
    return {
      gpuNodeGroupName: gpuNodes.nodeGroup.nodeGroupName,
      gpuNodeSecurityGroupId: gpuNodes.securityGroupId,
      gpuNodeRoleArn: gpuNodes.nodeRoleArn,
      gpuNodeLabels: gpuNodes.labels,
      gpuNodeTaint: gpuNodes.taint,
      gpuOperatorNamespace: ctx.need("gpuOperator").namespace.metadata.name,
    };
  },
};

/** The summary's cost row: the GPU nodes' on-demand price at the scaling minimum and maximum (./cost.ts). */
function costRow(cost: StackCost): SummaryRow {
  const lines: string[] = [];
  for (const ng of cost.nodeGroups) {
    const p = ng.priced;
    if (ng.monthlyUsd && p.hourlyUsd !== undefined) {
      const which = ng.prices.length > 1 ? `, the first of gpu.instanceTypes` : "";
      lines.push(
        `${usd(ng.monthlyUsd.min)}/month at minimum, ${usd(ng.monthlyUsd.max)}/month at maximum ` +
          `(${range(ng.nodes.min, ng.nodes.max)} × ${p.type}${which} at $${p.hourlyUsd}/h in ${cost.region})`,
      );
    } else {
      lines.push(`price unknown: ${p.type} has no on-demand price in ${cost.region} in the price table`);
    }
    if (ng.spread) {
      const s = ng.spread;
      lines.push(
        `  with the other instance types: ${usdRange({ min: s.low.min, max: s.high.min })}/month at minimum, ` +
          `${usdRange({ min: s.low.max, max: s.high.max })} at maximum (${s.cheapest} cheapest, ${s.dearest} dearest)`,
      );
    }
    const unknown = ng.unpriced.filter((t) => t !== p.type);
    if (unknown.length) lines.push(`  price unknown in ${cost.region}: ${list(unknown)}`);
  }
  lines.push(`on demand, ${cost.hoursPerMonth} h/month; prices: ${cost.source.source}, as of ${cost.source.asOf} (components/upstream/ec2-prices.ts)`);
  lines.push(`leaves out: ${COST_EXCLUDES.join(", ")}`);
  return { label: "cost", lines };
}
