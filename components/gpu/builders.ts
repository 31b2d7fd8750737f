// Pure builders of the GPU components: resolved args in, plain resource arguments out (launch
// template, node group, security group, IAM documents, operator namespace, values and Helm
// release). Tests and the policy pack call them without the Pulumi runtime.
import type * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@pulumi/kubernetes";
import type { LaunchTemplateArgs } from "@pulumi/aws/ec2/launchTemplate";
import type { SecurityGroupArgs } from "@pulumi/aws/ec2/securityGroup";
import type { GetSubnetsOutputArgs } from "@pulumi/aws/ec2/getSubnets";
import type { RoleArgs } from "@pulumi/aws/iam/role";
import type { NodeGroupArgs } from "@pulumi/aws/eks/nodeGroup";
import type { ReleaseArgs } from "@pulumi/kubernetes/helm/v3";
import {
  GPU_RESOURCE,
  GPU_TAINT,
  GPU_TAINT_EKS_EFFECT,
  GPU_TOLERATION,
  NODE_GROUP_ZONES_TAG,
  NODE_LABEL_GPU_TYPE,
  NODE_LABEL_ROLE,
  NODE_ROLE_GPU,
} from "../contracts";
import { GPU_AMI_TYPES, PRIVATE_SUBNET_TAG, WORKER_NODE_MANAGED_POLICIES, awsPartition, managedPolicyArn } from "../upstream/eks";
import type { GpuAmiType, GpuAmiTypeName } from "../upstream/eks";
import { IAM_POLICY_VERSION } from "../upstream/aws-iam";
import { GPU_NODE_LABEL, NODE_TEMPLATE_TAG } from "../upstream/cluster-autoscaler";
import { GPU_OPERATOR_CHART, gpuOperatorChartValues, type GpuOperatorIntent } from "../upstream/gpu-operator";
import { helmRelease } from "../helm";
import { gpuUserData } from "./user-data";
import type { ResolvedGpuNodeGroupArgs, ResolvedGpuOperatorArgs } from "./schema";

// ---- GPU node group ----------------------------------------------------------------------
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

/** Pure: the node role's arguments. */
export function gpuNodeRoleArgs(): RoleArgs {
  return { assumeRolePolicy: nodeAssumeRolePolicy(), description: "EKS GPU worker nodes (triton-platform)" };
}

/** The managed policies of the node role: worker, CNI, ECR read-only; nothing else. */
export function nodeRolePolicyArns(region: string): string[] {
  const partition = awsPartition(region);
  return WORKER_NODE_MANAGED_POLICIES.map((n) => managedPolicyArn(partition, n));
}

/** Pure: the dedicated security group of the GPU nodes. */
export function gpuNodeSecurityGroupArgs(name: string, r: ResolvedGpuNodeGroupArgs): SecurityGroupArgs {
  return {
    vpcId: r.vpcId,
    // No rules of its own: egress and node ↔ control plane traffic come from the cluster
    // security group every node also carries; EFS and the firewall add their ingress here.
    description: `GPU nodes of ${r.gpuType} (triton-platform); rules added by the components that need them`,
    revokeRulesOnDelete: true,
    tags: { Name: name },
  };
}

/** Pure: the lookup of the private subnets of `zones` in the cluster VPC. */
export function privateSubnetQuery(vpcId: pulumi.Input<string>, zones: readonly string[]): GetSubnetsOutputArgs {
  return {
    filters: [
      { name: "vpc-id", values: [vpcId] },
      { name: "availability-zone", values: [...zones] },
      { name: `tag:${PRIVATE_SUBNET_TAG.key}`, values: [PRIVATE_SUBNET_TAG.value] },
    ],
  };
}

/** The role EC2 Auto Scaling launches a managed node group's instances with (EC2 Auto Scaling user guide, service-linked roles). */
export function autoScalingServiceLinkedRoleArn(partition: string, accountId: string): string {
  return `arn:${partition}:iam::${accountId}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling`;
}

/**
 * Key policy of the GPU nodes' volume key, as AWS requires it for volumes an Auto Scaling group
 * launches (EC2 Auto Scaling user guide, "Required AWS KMS key policy for use with encrypted
 * volumes"): the service-linked role may use the key and create grants for AWS resources only
 * (EBS attaches the volume through a grant). The account statement keeps the key administrable
 * (without it the key is unmanageable); it grants nothing to a principal whose IAM policies do
 * not. The node role gets nothing: the instance never calls KMS for its own volumes (EBS decrypts
 * them under the grant), so least privilege leaves it out.
 */
export function gpuVolumeKeyPolicy(partition: string, accountId: string): Record<string, unknown> {
  const slr = autoScalingServiceLinkedRoleArn(partition, accountId);
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      { Sid: "EnableIamPolicies", Effect: "Allow", Principal: { AWS: `arn:${partition}:iam::${accountId}:root` }, Action: "kms:*", Resource: "*" },
      {
        Sid: "AutoScalingUsesTheKey",
        Effect: "Allow",
        Principal: { AWS: slr },
        Action: ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
        Resource: "*",
      },
      {
        Sid: "AutoScalingAttachesVolumes",
        Effect: "Allow",
        Principal: { AWS: slr },
        Action: "kms:CreateGrant",
        Resource: "*",
        Condition: { Bool: { "kms:GrantIsForAWSResource": "true" } },
      },
    ],
  };
}

/** The volume key the stack creates when gpu.rootVolumeKmsKeyArn is not given; `policy` is gpuVolumeKeyPolicy's JSON. */
export function gpuVolumeKeyArgs<T>(policy: T) {
  return {
    description: "EBS volumes of the triton-platform GPU nodes (images, kubelet state, model caches)",
    policy,
    // Rotation: a key leaked in year one no longer decrypts new volumes in year two.
    enableKeyRotation: true,
    // Longest window: deleting the key makes every volume (and snapshot) it encrypted unreadable.
    deletionWindowInDays: 30,
  };
}

/** Pure: the launch template's arguments; `kmsKeyId` the volumes' customer-managed key. */
export function gpuLaunchTemplateArgs(
  r: ResolvedGpuNodeGroupArgs,
  securityGroupIds: pulumi.Input<string>[],
  kmsKeyId: pulumi.Input<string>,
): LaunchTemplateArgs {
  const ami: GpuAmiType = GPU_AMI_TYPES[r.amiType];
  const volume = (size?: number) => ({
    volumeType: "gp3",
    ...(size === undefined ? {} : { volumeSize: size }),
    // Encrypted whatever the account's EBS default: model files and cached images are data.
    encrypted: "true",
    kmsKeyId,
    deleteOnTermination: "true",
  });
  const blockDeviceMappings = [
    ...(ami.osDevice !== undefined ? [{ deviceName: ami.osDevice, ebs: volume() }] : []),
    // Triton images are 10-20 GB each and a node keeps the previous one during a rollout;
    // a full disk evicts every pod on the node (DiskPressure).
    { deviceName: ami.dataDevice, ebs: volume(r.rootVolumeGiB) },
  ];
  const instanceTags = { ...r.tags, Name: `${r.gpuType}-gpu-node` };
  return {
    description: `GPU nodes (${r.amiType}, ${r.gpuType}) for triton-platform`,
    // No imageId: EKS picks the AMI for amiType and merges its bootstrap with this user data.
    userData: Buffer.from(gpuUserData(ami.family, r.podShutdownSeconds)).toString("base64"),
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
    labels: gpuNodeGroupLabels(r.gpuType),
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

/**
 * Labels the node group gives its nodes: the ones Triton selects on, and the Cluster
 * Autoscaler's GPU label, so that a GPU node whose device plugin has not yet advertised
 * nvidia.com/gpu counts as not ready rather than as a node without GPUs (no second scale-up).
 */
export function gpuNodeGroupLabels(gpuType: string): Record<string, string> {
  return { ...gpuNodeLabels(gpuType), [GPU_NODE_LABEL]: gpuType };
}

/** A tag on the node group's Auto Scaling group. */
export interface AsgTag {
  readonly key: string;
  readonly value: string;
}

/**
 * Node-template tags for the Cluster Autoscaler on the node group's Auto Scaling group: what a new
 * node of the group will look like when there is none to copy (the group at zero, or after an
 * autoscaler restart). The AWS provider reads labels, taints and resources from these ASG tags
 * (components/upstream/cluster-autoscaler.ts). For a managed node group it also asks EKS
 * (eks:DescribeNodegroup) for the group's labels and taints, but EKS copies neither onto the ASG,
 * and that call fails where the cluster's VPC has no route to the EKS API (the upstream README's
 * note on private clusters); these tags keep scale-from-zero working without it. The GPU count
 * is tagged when the caller knows it; otherwise the autoscaler takes it from the instance type
 * (ec2:DescribeInstanceTypes). Not propagated to instances: they are for the autoscaler.
 */
export function autoscalerNodeTemplateTags(gpuType: string, gpusPerNode?: number): AsgTag[] {
  const labels = Object.entries(gpuNodeGroupLabels(gpuType)).map(([k, v]) => ({ key: NODE_TEMPLATE_TAG.label(k), value: v }));
  // The Kubernetes effect spelling: the autoscaler ignores a taint tag whose value is not <value>:<NoSchedule|NoExecute|PreferNoSchedule>.
  const taint = { key: NODE_TEMPLATE_TAG.taint(GPU_TAINT.key), value: `${GPU_TAINT.value}:${GPU_TAINT.effect}` };
  const gpus = gpusPerNode === undefined ? [] : [{ key: NODE_TEMPLATE_TAG.resource(GPU_RESOURCE), value: String(gpusPerNode) }];
  return [...labels, taint, ...gpus];
}

/** A Pulumi resource name for an ASG tag key: `<node group>-asg-<key with / . : as ->`. */
export function asgTagResourceName(nodeGroupName: string, key: string): string {
  return `${nodeGroupName}-asg-${key.replace(/^k8s\.io\/cluster-autoscaler\/node-template\//, "").replace(/[/.:]+/g, "-")}`;
}

/** Value of NODE_GROUP_ZONES_TAG: the distinct zones, sorted, space separated (AWS tag values allow no commas). */
export function nodeGroupZonesTag(zones: readonly string[]): string {
  return [...new Set(zones)].sort().join(" ");
}

// ---- GPU Operator ------------------------------------------------------------------------
/** What the GPU nodes' image already provides (the AMI table's `ships`). */
export type GpuHostSoftware = GpuAmiType["ships"];

/** What an EKS AMI type ships. */
export function hostSoftwareOf(amiType: GpuAmiTypeName): GpuHostSoftware {
  return GPU_AMI_TYPES[amiType].ships;
}

/** Pure: what the operator installs, from what the host has. */
export function gpuOperatorIntent(r: ResolvedGpuOperatorArgs): GpuOperatorIntent {
  return {
    driver: r.host.driver ? { enabled: false } : { enabled: true, version: r.driverVersion },
    toolkit: !r.host.toolkit,
    devicePlugin: !r.host.devicePlugin,
    // CDI on: the chart default of v25.10.1 and v26.7.0 alike, i.e. what the stack already ran with, now stated.
    cdi: true,
    // Set explicitly: the chart's default for serviceMonitor differs between versions.
    dcgmExporter: { enabled: true, serviceMonitor: r.serviceMonitor },
    // Every operand must run on the tainted GPU nodes, or the node never advertises nvidia.com/gpu.
    tolerations: [{ ...GPU_TOLERATION }],
  };
}

/** Pure: the chart values. */
export function gpuOperatorValues(r: ResolvedGpuOperatorArgs): Record<string, unknown> {
  return gpuOperatorChartValues(gpuOperatorIntent(r));
}

/** Pure: the operator's namespace. */
export function gpuOperatorNamespace(r: ResolvedGpuOperatorArgs): k8s.types.input.core.v1.Namespace {
  return {
    metadata: {
      name: r.namespace,
      labels: {
        ...r.labels,
        // The operands (device plugin, dcgm-exporter, validators) mount host paths and run
        // privileged by design; "privileged" is the only Pod Security level they pass.
        "pod-security.kubernetes.io/enforce": "privileged",
      },
    },
  };
}

/** Pure: the operator's Helm release (release name = chart name, gpu-operator). */
export function gpuOperatorRelease(r: ResolvedGpuOperatorArgs, namespace: pulumi.Input<string>): ReleaseArgs {
  return helmRelease({
    chart: GPU_OPERATOR_CHART,
    version: r.version,
    namespace,
    values: gpuOperatorValues(r),
    // atomic: Helm waits for the objects the chart renders (the operator Deployment, NFD, the
    // ClusterPolicy object) and rolls those back when they fail. It does NOT wait for the operands
    // (device plugin, validators, dcgm-exporter): the operator creates those DaemonSets later, and
    // this stack does not await the ClusterPolicy's status.state = "ready" (CLUSTER_POLICY_READINESS)
    // either. A release that applied can still leave GPU nodes without nvidia.com/gpu: check
    // `kubectl get clusterpolicies.nvidia.com cluster-policy -o jsonpath='{.status.state}'`.
    atomic: true,
    timeout: 900,
  });
}
