// GPU capacity: an EKS managed node group on an NVIDIA AMI type, with its own launch template
// (IMDSv2, encrypted volumes, host tuning), node role, and a dedicated security group that
// other components (EFS, firewall) add their rules to.
import * as pulumi from "@pulumi/pulumi";
import { NodeGroup } from "@pulumi/aws/eks/nodeGroup";
import { LaunchTemplate, type LaunchTemplateArgs } from "@pulumi/aws/ec2/launchTemplate";
import { SecurityGroup } from "@pulumi/aws/ec2/securityGroup";
import { getSubnetsOutput } from "@pulumi/aws/ec2/getSubnets";
import { getSubnet } from "@pulumi/aws/ec2/getSubnet";
import { Role } from "@pulumi/aws/iam/role";
import { RolePolicyAttachment } from "@pulumi/aws/iam/rolePolicyAttachment";
import type { NodeGroupArgs } from "@pulumi/aws/eks/nodeGroup";
import {
  GPU_TAINT,
  GPU_TAINT_EKS_EFFECT,
  GPU_TOLERATION,
  NODE_LABEL_GPU_TYPE,
  NODE_LABEL_ROLE,
  NODE_ROLE_GPU,
  NODE_GROUP_ZONES_TAG,
  type GpuNodesRef,
} from "../contracts";
import {
  GPU_AMI_TYPES,
  PRIVATE_SUBNET_TAG,
  WORKER_NODE_MANAGED_POLICIES,
  awsPartition,
  managedPolicyArn,
  type GpuAmiTypeName,
} from "../upstream/eks";
import { IAM_POLICY_VERSION } from "../upstream/aws-iam";
import { gpuUserData } from "./user-data";

/** Arguments for a GPU node group. */
export interface GpuNodeGroupArgs {
  /** Name of the existing EKS cluster. */
  readonly clusterName: pulumi.Input<string>;
  /** VPC of the cluster (the security group and subnet lookup live there). */
  readonly vpcId: pulumi.Input<string>;
  /** The cluster security group; nodes keep it so control plane ↔ node traffic keeps working. */
  readonly clusterSecurityGroupId: pulumi.Input<string>;
  /** AWS region of the stack (for the IAM partition). */
  readonly region: string;
  /** Availability zones to spread the nodes over. */
  readonly zones: readonly string[];
  /** NVIDIA AMI type. @default "AL2023_x86_64_NVIDIA" */
  readonly amiType?: GpuAmiTypeName;
  /** EC2 instance types (one GPU model). */
  readonly instanceTypes: readonly string[];
  /** Value of the gpu-type node label, e.g. "nvidia-l4". */
  readonly gpuType: string;
  readonly scaling: { readonly min: number; readonly desired: number; readonly max: number };
  /** Size of the volume holding images and model caches, GiB. @default 200 */
  readonly rootVolumeGiB?: number;
  /** Nodes replaced at once during an update. @default 1 */
  readonly maxUnavailable?: number;
  /** IMDS hop limit: 2 lets pods on the node network reach IMDSv2 through one extra hop. @default 2 */
  readonly imdsHopLimit?: number;
  /** Tags for the instances and volumes the node group launches (provider defaultTags do not reach them). */
  readonly tags: Record<string, string>;
  /** Subnet ids to use instead of looking up the private subnets of `zones` in the VPC. */
  readonly subnetIds?: pulumi.Input<pulumi.Input<string>[]>;
}

export type ResolvedGpuNodeGroupArgs = Required<Omit<GpuNodeGroupArgs, "subnetIds">> & Pick<GpuNodeGroupArgs, "subnetIds">;

/** Apply defaults once and validate what the types cannot say. */
export function resolveGpuNodeGroupArgs(args: GpuNodeGroupArgs): ResolvedGpuNodeGroupArgs {
  const r: ResolvedGpuNodeGroupArgs = {
    ...args,
    amiType: args.amiType ?? "AL2023_x86_64_NVIDIA",
    rootVolumeGiB: args.rootVolumeGiB ?? 200,
    maxUnavailable: args.maxUnavailable ?? 1,
    imdsHopLimit: args.imdsHopLimit ?? 2,
  };
  const bad = (propertyPath: string, reason: string) => {
    throw new pulumi.InputPropertyError({ propertyPath, reason });
  };
  const { min, desired, max } = r.scaling;
  if (!(min <= desired && desired <= max)) bad("scaling", `must satisfy min <= desired <= max, got ${min}/${desired}/${max}`);
  if (r.instanceTypes.length === 0) bad("instanceTypes", "must name at least one instance type");
  if (r.zones.length === 0 && r.subnetIds === undefined) bad("zones", "must name at least one zone");
  if (r.imdsHopLimit < 1 || r.imdsHopLimit > 2) bad("imdsHopLimit", `must be 1 or 2 (a higher limit lets containers reach the node role), got ${r.imdsHopLimit}`);
  return r;
}

/** Node labels Triton pods select on. */
export function gpuNodeLabels(gpuType: string): Record<string, string> {
  return { [NODE_LABEL_ROLE]: NODE_ROLE_GPU, [NODE_LABEL_GPU_TYPE]: gpuType };
}

/** The GPU taint as the EKS API spells it. */
export function gpuNodeTaintEks(): { key: string; value: string; effect: string } {
  return { key: GPU_TAINT.key, value: GPU_TAINT.value, effect: GPU_TAINT_EKS_EFFECT };
}

/** Trust policy: only EC2 instances assume the node role. */
export function nodeAssumeRolePolicy(): string {
  return JSON.stringify({
    Version: IAM_POLICY_VERSION,
    Statement: [{ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }],
  });
}

/** The managed policies of the node role: worker, CNI, ECR read-only; nothing else. */
export function nodeRolePolicyArns(region: string): string[] {
  const partition = awsPartition(region);
  return WORKER_NODE_MANAGED_POLICIES.map((n) => managedPolicyArn(partition, n));
}

/** Pure: the launch template's arguments. */
export function gpuLaunchTemplateArgs(r: ResolvedGpuNodeGroupArgs, securityGroupIds: pulumi.Input<string>[]): LaunchTemplateArgs {
  const ami = GPU_AMI_TYPES[r.amiType];
  const volume = (size?: number) => ({
    volumeType: "gp3",
    ...(size === undefined ? {} : { volumeSize: size }),
    // Encrypted whatever the account's EBS default: model files and cached images are data.
    encrypted: "true",
    deleteOnTermination: "true",
  });
  const blockDeviceMappings = [
    ...("osDevice" in ami ? [{ deviceName: ami.osDevice, ebs: volume() }] : []),
    // Triton images are 10-20 GB each and a node keeps the previous one during a rollout;
    // a full disk evicts every pod on the node (DiskPressure).
    { deviceName: ami.dataDevice, ebs: volume(r.rootVolumeGiB) },
  ];
  const instanceTags = { ...r.tags, Name: `${r.gpuType}-gpu-node` };
  return {
    description: `GPU nodes (${r.amiType}, ${r.gpuType}) for triton-platform`,
    // No imageId: EKS picks the AMI for amiType and merges its bootstrap with this user data.
    userData: Buffer.from(gpuUserData(ami.family)).toString("base64"),
    vpcSecurityGroupIds: securityGroupIds,
    metadataOptions: {
      httpEndpoint: "enabled",
      // IMDSv2 only: a server-side request forgery in a pod cannot read node credentials with a plain GET.
      httpTokens: "required",
      httpPutResponseHopLimit: r.imdsHopLimit,
    },
    blockDeviceMappings,
    // Instances and volumes launched by the node group's Auto Scaling group get no provider defaultTags.
    tagSpecifications: [
      { resourceType: "instance", tags: instanceTags },
      { resourceType: "volume", tags: instanceTags },
    ],
    updateDefaultVersion: true,
  };
}

/** Pure: the managed node group's arguments. */
export function gpuNodeGroupArgs(
  r: ResolvedGpuNodeGroupArgs,
  refs: {
    clusterName: pulumi.Input<string>;
    nodeRoleArn: pulumi.Input<string>;
    subnetIds: pulumi.Input<pulumi.Input<string>[]>;
    /** Availability zones of subnetIds (nodeGroupZonesTag). */
    zones: pulumi.Input<string>;
    launchTemplate: { id: pulumi.Input<string>; version: pulumi.Input<string> };
  },
): NodeGroupArgs {
  return {
    clusterName: refs.clusterName,
    nodeRoleArn: refs.nodeRoleArn,
    subnetIds: refs.subnetIds,
    amiType: r.amiType,
    capacityType: "ON_DEMAND",
    instanceTypes: [...r.instanceTypes],
    scalingConfig: { minSize: r.scaling.min, desiredSize: r.scaling.desired, maxSize: r.scaling.max },
    labels: gpuNodeLabels(r.gpuType),
    // Only pods that tolerate the taint (Triton, GPU Operator operands) use the expensive nodes.
    taints: [gpuNodeTaintEks()],
    launchTemplate: refs.launchTemplate,
    // Every GPU node taken out is serving capacity lost; one at a time in a rollout.
    updateConfig: { maxUnavailable: r.maxUnavailable },
    // GPU nodes fail in ways kubelet does not see (XID errors, fallen-off-the-bus); EKS node
    // auto repair replaces them.
    nodeRepairConfig: { enabled: true },
    // The zones the nodes can run in, for policy gpu-nodes-span-zones (the API records only subnet ids).
    tags: { [NODE_GROUP_ZONES_TAG]: refs.zones },
  };
}

/** Value of NODE_GROUP_ZONES_TAG: the distinct zones, sorted, space separated (AWS tag values allow no commas). */
export function nodeGroupZonesTag(zones: readonly string[]): string {
  return [...new Set(zones)].sort().join(" ");
}

export class GpuNodeGroup extends pulumi.ComponentResource {
  readonly nodeGroup: NodeGroup;
  readonly launchTemplate: LaunchTemplate;
  readonly securityGroup: SecurityGroup;
  readonly role: Role;
  /** Dedicated security group of the GPU nodes: other components add ingress rules to it. */
  readonly securityGroupId: pulumi.Output<string>;
  readonly nodeRoleArn: pulumi.Output<string>;
  readonly labels: Record<string, string>;
  readonly taint: typeof GPU_TAINT;
  /** What other components need of the GPU nodes (components/contracts.ts). */
  readonly ref: GpuNodesRef;

  constructor(name: string, args: GpuNodeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:gpu:GpuNodeGroup", name, {}, opts);
    const r = resolveGpuNodeGroupArgs(args);

    this.securityGroup = new SecurityGroup(
      `${name}-nodes`,
      {
        vpcId: r.vpcId,
        // No rules of its own: egress and node ↔ control plane traffic come from the cluster
        // security group every node also carries; EFS and the firewall add their ingress here.
        description: `GPU nodes of ${r.gpuType} (triton-platform); rules added by the components that need them`,
        revokeRulesOnDelete: true,
        tags: { Name: `${name}-nodes` },
      },
      { parent: this },
    );

    this.role = new Role(`${name}-node`, { assumeRolePolicy: nodeAssumeRolePolicy(), description: "EKS GPU worker nodes (triton-platform)" }, { parent: this });
    const attachments = nodeRolePolicyArns(r.region).map(
      (policyArn) => new RolePolicyAttachment(`${name}-node-${policyArn.split("/").pop()}`, { role: this.role.name, policyArn }, { parent: this }),
    );

    this.launchTemplate = new LaunchTemplate(
      name,
      gpuLaunchTemplateArgs(r, [this.securityGroup.id, pulumi.output(r.clusterSecurityGroupId)]),
      { parent: this },
    );

    const subnetIds =
      r.subnetIds ??
      getSubnetsOutput(
        {
          filters: [
            { name: "vpc-id", values: [pulumi.output(r.vpcId)] },
            { name: "availability-zone", values: [...r.zones] },
            { name: `tag:${PRIVATE_SUBNET_TAG.key}`, values: [PRIVATE_SUBNET_TAG.value] },
          ],
        },
        { parent: this },
      ).ids.apply((ids) => {
        if (ids.length === 0) {
          throw new Error(
            `no private subnets (tag ${PRIVATE_SUBNET_TAG.key}=${PRIVATE_SUBNET_TAG.value}) in zones ${r.zones.join(", ")} of the cluster VPC`,
          );
        }
        return [...ids].sort();
      });

    // The zone of every subnet, looked up rather than assumed from `zones`: explicit subnetIds
    // (or a lookup that found subnets in fewer zones) must show up in the tag the policy reads.
    const zones = pulumi
      .output(subnetIds)
      .apply((ids) => Promise.all(ids.map((id) => getSubnet({ id }, { parent: this }).then((s) => s.availabilityZone))))
      .apply(nodeGroupZonesTag);

    this.nodeGroup = new NodeGroup(
      name,
      gpuNodeGroupArgs(r, {
        clusterName: r.clusterName,
        nodeRoleArn: this.role.arn,
        subnetIds,
        zones,
        launchTemplate: { id: this.launchTemplate.id, version: this.launchTemplate.latestVersion.apply((v) => String(v)) },
      }),
      {
        parent: this,
        // The node role must keep its policies until the nodes are gone, or they cannot drain.
        dependsOn: attachments,
        // A cluster autoscaler owns the desired size once the group exists.
        ignoreChanges: ["scalingConfig.desiredSize"],
      },
    );

    this.securityGroupId = this.securityGroup.id;
    this.nodeRoleArn = this.role.arn;
    this.labels = gpuNodeLabels(r.gpuType);
    this.taint = GPU_TAINT;
    this.ref = {
      securityGroupId: this.securityGroupId,
      nodeRoleArn: this.nodeRoleArn,
      nodeSelector: this.labels,
      taint: GPU_TAINT,
      toleration: GPU_TOLERATION,
    };
    this.registerOutputs({ securityGroupId: this.securityGroupId, nodeRoleArn: this.nodeRoleArn, labels: this.labels, taint: this.taint });
  }
}
