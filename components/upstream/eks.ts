// Amazon EKS and EC2 names the GPU node group relies on, in one place: managed node group
// AMI types and what each ships, the taint effect spelling of the EKS API, the AWS managed
// policies of a worker node, nodeadm's user-data format, and GPU instance families.
// Sources: botocore eks service-2.json (amiType, taint effect), awslabs/amazon-eks-ami
// (nodeadm, NVIDIA driver branches), bottlerocket-os/bottlerocket (variants, settings).

/** How a node image is bootstrapped, which decides the user-data format. */
export type AmiFamily = "al2023" | "al2" | "bottlerocket";

export interface GpuAmiType {
  readonly family: AmiFamily;
  /**
   * NVIDIA driver branch (e.g. 580 for R580) of the EKS-optimized release a new node group
   * launches. EKS picks the latest release for the cluster version; older releases may carry
   * an older branch, so bump this when AWS moves a branch and cite where.
   */
  readonly driverBranch: number;
  readonly driverSource: string;
  /** What the image already ships: the GPU Operator must not install these a second time. */
  readonly ships: { readonly driver: boolean; readonly toolkit: boolean; readonly devicePlugin: boolean };
  /** Block device that holds container images and kubelet state (sized for Triton images and model caches). */
  readonly dataDevice: string;
  /** The OS volume when it is a separate device (Bottlerocket); encrypted, left at the image's size. */
  readonly osDevice?: string;
}

export const GPU_AMI_TYPES = {
  AL2023_x86_64_NVIDIA: {
    family: "al2023",
    driverBranch: 580,
    driverSource: "EKS user guide (ml-eks-optimized-ami): accelerated AMIs include NVIDIA driver 580; amazon-eks-ami PR #2509 moved 1.29/1.30 to 580 too",
    // "The EKS-optimized AL2023 NVIDIA AMIs do not include the NVIDIA Kubernetes device plugin."
    ships: { driver: true, toolkit: true, devicePlugin: false },
    dataDevice: "/dev/xvda",
  },
  AL2_x86_64_GPU: {
    family: "al2",
    driverBranch: 570,
    driverSource: "amazon-eks-ami issue #2379: the last AL2 GPU AMI releases (2025-10) carry the 570 branch; AL2 AMIs reached end of support 2025-11-26",
    ships: { driver: true, toolkit: true, devicePlugin: false },
    dataDevice: "/dev/xvda",
  },
  BOTTLEROCKET_x86_64_NVIDIA: {
    family: "bottlerocket",
    driverBranch: 580,
    driverSource: "bottlerocket v1.53.0 release notes: all nvidia variants migrated to R580 (#4733)",
    // The aws-k8s-*-nvidia variants run the NVIDIA device plugin as a host service; a second
    // device plugin DaemonSet conflicts with it (bottlerocket issue #4309).
    ships: { driver: true, toolkit: true, devicePlugin: true },
    dataDevice: "/dev/xvdb",
    osDevice: "/dev/xvda",
  },
} as const satisfies Record<string, GpuAmiType>;

export type GpuAmiTypeName = keyof typeof GPU_AMI_TYPES;
export const GPU_AMI_TYPE_NAMES = Object.keys(GPU_AMI_TYPES) as [GpuAmiTypeName, ...GpuAmiTypeName[]];

export function isGpuAmiType(v: unknown): v is GpuAmiTypeName {
  return typeof v === "string" && Object.prototype.hasOwnProperty.call(GPU_AMI_TYPES, v);
}

/** The AWS managed policies a worker node needs, and nothing more. */
export const WORKER_NODE_MANAGED_POLICIES = ["AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly"] as const;

export type AwsPartition = "aws" | "aws-cn" | "aws-us-gov";
export function awsPartition(region: string): AwsPartition {
  if (region.startsWith("cn-")) return "aws-cn";
  if (region.startsWith("us-gov-")) return "aws-us-gov";
  return "aws";
}
export function managedPolicyArn(partition: AwsPartition, name: string): string {
  return `arn:${partition}:iam::aws:policy/${name}`;
}

/** nodeadm (AL2023): the MIME part type EKS merges with its own NodeConfig, and the API version. */
export const NODEADM = { contentType: "application/node.eks.aws", apiVersion: "node.eks.aws/v1alpha1", kind: "NodeConfig" } as const;

/** Subnets for internal load balancers carry this tag by EKS convention: they are the private ones. */
export const PRIVATE_SUBNET_TAG = { key: "kubernetes.io/role/internal-elb", value: "1" } as const;

/**
 * NVIDIA GPU of each EC2 instance family (EC2 accelerated-computing instance docs). The value
 * becomes the node's gpu-type label, which Triton groups select on.
 */
export const GPU_BY_INSTANCE_FAMILY: Readonly<Record<string, string>> = {
  g4dn: "nvidia-t4",
  g5: "nvidia-a10g",
  g6: "nvidia-l4",
  gr6: "nvidia-l4",
  g6e: "nvidia-l40s",
  p4d: "nvidia-a100",
  p4de: "nvidia-a100",
  p5: "nvidia-h100",
  p5e: "nvidia-h200",
  p5en: "nvidia-h200",
};

/** "g5.12xlarge" → "g5". */
export function instanceFamily(instanceType: string): string {
  return instanceType.split(".")[0];
}
