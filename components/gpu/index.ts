// The GPU components: GpuNodeGroup (EKS managed node group on an NVIDIA AMI type) and
// GpuOperator (the NVIDIA GPU Operator). schema.ts states their settings, builders.ts and
// user-data.ts build plain resource arguments, compatibility.ts checks Triton images against
// the AMI's driver; node-group.ts and operator.ts are the thin classes.
export * from "./schema";
export * from "./builders";
export * from "./user-data";
export * from "./compatibility";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { gpuInstanceType } from "../upstream/ec2-gpu-instances";
import { GpuNodeGroup } from "./node-group";
import { GpuOperator } from "./operator";
import { gpuSettings, type GpuSettings } from "./schema";
import { hostSoftwareOf } from "./builders";

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
        maxUnavailable: gpu.maxUnavailable,
        tags: ctx.need("tags"),
      },
      { provider: cluster.aws },
    );
    const gpuOperator = new GpuOperator(
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
    );
    return { gpuNodes, gpuOperator };
  },
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
