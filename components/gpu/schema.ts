// Settings of the GPU components, written once: their types, defaults, rules and documentation.
// The stack config's `gpu` section (config/schema.ts composes gpuSettings) and a direct caller of
// GpuNodeGroup or GpuOperator resolve through the same entries, so each default has one line.
// Rules that read other sections (prod floors vs cluster.zones, Triton images vs the AMI's
// driver, the DCGM double scrape) live in config/.
import type * as pulumi from "@pulumi/pulumi";
import * as v from "valibot";
import { DCGM_SCRAPED_BY_MONITORING } from "../contracts";
import { GPU_AMI_TYPE_NAMES, GPU_BY_INSTANCE_FAMILY, instanceFamily } from "../upstream/eks";
import {
  bool,
  checkSettings,
  dnsLabel,
  doc,
  integer,
  list,
  oneOf,
  parseSettings,
  pattern,
  pinnedVersion,
  refined,
  section,
  str,
  type DeepReadonly,
} from "../../lib/schema";
import { uniqueList } from "../../lib/schema";
import { KMS_KEY_ARN } from "../model-repository/policies";
import type { CheckContext, Schema } from "../../lib/schema";
import { SettingsError, show, type SettingProblem } from "../../lib/errors";
import { K8S_DEFAULT_GRACE_SECONDS } from "./user-data";

/** Plain settings as a caller may pass them: nothing is mutated, so readonly arrays are welcome. */

const instanceType = pattern(/^[a-z][a-z0-9-]*\.[a-z0-9]+$/, "must be an EC2 instance type such as g5.xlarge");
const knownFamilies = Object.keys(GPU_BY_INSTANCE_FAMILY).join(", ");

// ---- GPU node group ----------------------------------------------------------------------
const scaling = refined(
  section({
    min: doc(integer({ min: 0 }), "Fewest nodes; prod: at least one per cluster zone, so losing a zone leaves GPU capacity."),
    desired: doc(integer({ min: 0 }), "Nodes at creation; the cluster autoscaler owns it afterwards (ignoreChanges)."),
    max: doc(integer({ min: 1 }), "Most nodes the autoscaler may add."),
  }),
  (s, ctx) => {
    if (s.min > s.desired) ctx.addIssue({ path: ["min"], message: `must be <= desired (${s.desired})` });
    if (s.desired > s.max) ctx.addIssue({ path: ["desired"], message: `must be <= max (${s.max})` });
  },
);

/** Keys of the node group that the stack file's `gpu` section and a direct caller set alike. */
const nodeGroupEntries = {
  amiType: doc(
    v.optional(oneOf(GPU_AMI_TYPE_NAMES), "AL2023_x86_64_NVIDIA"),
    "EKS AMI type of the GPU nodes. It decides the user-data format, the data volume's device, the NVIDIA driver branch " +
      "(checked against the Triton images) and what the GPU Operator installs. AL2 AMIs reached end of support on 2025-11-26.",
  ),
  instanceTypes: doc(
    uniqueList(instanceType, { min: 1, what: "instance type" }, "must not repeat an instance type"),
    `EC2 instance types, all with the same GPU model (one gpu-type label per node group; known families: ${knownFamilies}).`,
  ),
  gpuType: doc(
    v.optional(dnsLabel),
    "Value of the triton-platform/gpu-type node label the serving groups select on, e.g. nvidia-l4. Must match the instance types' GPU. " +
      "A stack refuses instance types the GPU facts table does not list (capacity plan); a direct caller of GpuNodeGroup with such a type must set it.",
    { default: "from the instance family (g4dn → nvidia-t4, g5 → nvidia-a10g, g6 → nvidia-l4, …)" },
  ),
  scaling: doc(scaling, "Node count of the managed node group: min <= desired <= max."),
  rootVolumeGiB: doc(
    v.optional(integer({ min: 50, max: 16384 }), 200),
    "Size of the encrypted gp3 volume holding container images, kubelet state and model caches, GiB. Triton images are 10-20 GB " +
      "and a node keeps the previous one during a rollout; a full disk evicts every pod on the node (DiskPressure).",
  ),
  rootVolumeKmsKeyArn: doc(
    v.optional(pattern(KMS_KEY_ARN, "must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), not an alias")),
    "Customer-managed KMS key of the GPU nodes' EBS volumes (launch template kmsKeyId). An existing key's policy must let the account's " +
      "AWSServiceRoleForAutoScaling use it and create grants for AWS resources (EC2 Auto Scaling user guide, key policy for encrypted volumes).",
    { default: "a key the stack creates: rotation on, usable only by the EC2 Auto Scaling service-linked role (and the account's administrators)" },
  ),
  maxUnavailable: doc(
    v.optional(integer({ min: 1 }), 1),
    "GPU nodes replaced at once during an update (every node taken out is serving capacity lost); prod: must be 1.",
  ),
};

const HOP_LIMIT_RULE = "must be 1 or 2 (2 already lets every pod on the pod network reach the node role; a higher limit adds nothing)";

/** Keys only a direct caller of GpuNodeGroup sets (the stack file has no such key). */
const nodeGroupArgsEntries = {
  imdsHopLimit: doc(
    v.optional(v.pipe(v.number(HOP_LIMIT_RULE), v.integer(HOP_LIMIT_RULE), v.minValue(1, HOP_LIMIT_RULE), v.maxValue(2, HOP_LIMIT_RULE)), 1),
    "IMDSv2 PUT response hop limit of the launch template. 1: only the node's own processes and hostNetwork pods (VPC CNI, " +
      "kube-proxy, the EKS Pod Identity agent) get an IMDSv2 token; a pod on the pod network is one hop further (its veth) and " +
      "gets none, so it cannot read the node role's credentials (EKS security best practices: IMDSv2 with hop limit 1 when pods " +
      "use IRSA, as every pod of this stack does; the EBS CSI node plugin falls back to the Kubernetes API for its metadata). " +
      "2: every pod on the node reaches IMDS and the node role; only for a stated need of a pod that reads instance metadata itself.",
  ),
  gpusPerNode: doc(
    v.optional(integer({ min: 1 })),
    "GPUs of one node of the instance types, tagged on the Auto Scaling group for the Cluster Autoscaler's scale-from-zero " +
      "(k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu).",
    { default: "untagged: the autoscaler reads the instance type's GPU count from EC2 (ec2:DescribeInstanceTypes)" },
  ),
  zones: doc(
    list(str()),
    "Availability zones to spread the nodes over: the private subnets of the cluster VPC in them are looked up. " + "At least one unless subnetIds are given.",
  ),
};

/** One GPU model per group, and the gpu-type label it gets. */
function oneGpuModel(g: { readonly instanceTypes: readonly string[]; readonly gpuType?: string }, ctx: CheckContext): void {
  // Triton selects nodes by the gpu-type label, so a mislabelled node runs a model built for
  // another GPU (TensorRT plans are GPU-specific).
  const gpus = new Set<string>();
  g.instanceTypes.forEach((t, i) => {
    const gpu = GPU_BY_INSTANCE_FAMILY[instanceFamily(t)];
    if (gpu) gpus.add(gpu);
    else if (g.gpuType === undefined) {
      ctx.addIssue({
        path: ["instanceTypes", i],
        message: `is not an NVIDIA GPU instance family this stack knows (${knownFamilies}); set gpu.gpuType to label it`,
      });
    }
  });
  if (gpus.size > 1) {
    ctx.addIssue({ path: ["instanceTypes"], message: `must all have the same GPU model (one gpu-type label per node group), got ${[...gpus].join(", ")}` });
  } else if (gpus.size === 1 && g.gpuType !== undefined && !gpus.has(g.gpuType)) {
    ctx.addIssue({ path: ["gpuType"], message: `must match the instance types' GPU (${[...gpus][0]})` });
  }
}

/** The GPU-model rule, then gpuType derived from the instance family when it is not set. */
function withGpuType<S extends Schema<{ instanceTypes: string[]; gpuType?: string }>>(schema: S) {
  return v.pipe(
    refined(schema, oneGpuModel),
    v.transform((g) => ({ ...g, gpuType: g.gpuType ?? GPU_BY_INSTANCE_FAMILY[instanceFamily(g.instanceTypes[0])] })),
  );
}

/** Settings of a GpuNodeGroup (what resolveGpuNodeGroupArgs parses). */
export const gpuNodeGroupSettings = withGpuType(section({ ...nodeGroupEntries, ...nodeGroupArgsEntries }));
export type GpuNodeGroupSettings = v.InferOutput<typeof gpuNodeGroupSettings>;
export type GpuNodeGroupSettingsInput = DeepReadonly<v.InferInput<typeof gpuNodeGroupSettings>>;

/** Arguments for a GPU node group: its settings (documented in the schema above) and what the stack wires in. */
export interface GpuNodeGroupArgs extends GpuNodeGroupSettingsInput {
  /** Name of the existing EKS cluster. */
  readonly clusterName: pulumi.Input<string>;
  /** VPC of the cluster (the security group and subnet lookup live there). */
  readonly vpcId: pulumi.Input<string>;
  /** The cluster security group; nodes keep it so control plane ↔ node traffic keeps working. */
  readonly clusterSecurityGroupId: pulumi.Input<string>;
  /** AWS region of the stack (for the IAM partition). */
  readonly region: string;
  /** Tags for the instances and volumes the node group launches (provider defaultTags do not reach them). */
  readonly tags: Readonly<Record<string, string>>;
  /** Subnet ids to use instead of looking up the private subnets of `zones` in the VPC. */
  readonly subnetIds?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * The longest terminationGracePeriodSeconds among the pods these nodes run (the stack passes
   * its serving pods'): kubelet's graceful node shutdown gives regular pods that much (user-data.ts
   * nodeShutdownGrace). A direct caller that leaves it out gets Kubernetes' default, 30 s.
   */
  readonly podShutdownSeconds?: number;
}

/** The node group's settings with their defaults applied, and the references passed through. */
export type ResolvedGpuNodeGroupArgs = GpuNodeGroupSettings &
  Pick<GpuNodeGroupArgs, "clusterName" | "vpcId" | "clusterSecurityGroupId" | "region" | "tags" | "subnetIds"> & { readonly podShutdownSeconds: number };

const subject = (cls: string, name?: string) => `invalid arguments of ${cls}${name === undefined ? "" : ` "${name}"`}`;

/** Apply the defaults and rules of the schema once; every problem is reported in one SettingsError. */
export function resolveGpuNodeGroupArgs(args: GpuNodeGroupArgs, name?: string): ResolvedGpuNodeGroupArgs {
  const { clusterName, vpcId, clusterSecurityGroupId, region, tags, subnetIds, podShutdownSeconds, ...settings } = args;
  // checkSettings, not parseSettings: the zones rule below reads subnetIds (a reference, not a
  // setting), and its problem is reported together with the schema's.
  const parsed = checkSettings(gpuNodeGroupSettings, settings);
  const problems: SettingProblem[] = parsed.success ? [] : [...parsed.problems];
  // The one rule that reads a reference: explicit subnets make the zone lookup unnecessary.
  if (subnetIds === undefined && Array.isArray(settings.zones) && settings.zones.length === 0) {
    problems.push({ key: "zones", rule: "must name at least one zone (or pass subnetIds)", value: { shown: show(settings.zones) } });
  }
  if (podShutdownSeconds !== undefined && !(Number.isInteger(podShutdownSeconds) && podShutdownSeconds >= 0)) {
    problems.push({ key: "podShutdownSeconds", rule: "must be a whole number of seconds, 0 or more", value: { shown: show(podShutdownSeconds) } });
  }
  if (!parsed.success || problems.length > 0) throw new SettingsError(subject("GpuNodeGroup", name), problems);
  return {
    ...parsed.output,
    clusterName,
    vpcId,
    clusterSecurityGroupId,
    region,
    tags,
    subnetIds,
    podShutdownSeconds: podShutdownSeconds ?? K8S_DEFAULT_GRACE_SECONDS,
  };
}

// ---- GPU Operator ------------------------------------------------------------------------
/** Keys of the operator that the stack file's `gpu.operator` and a direct caller set alike. */
const operatorEntries = {
  version: doc(pinnedVersion, "Exact gpu-operator chart version, e.g. v26.7.0 (NVIDIA's Helm repository https://helm.ngc.nvidia.com/nvidia)."),
  namespace: doc(
    v.optional(dnsLabel, "gpu-operator"),
    "Namespace the operator and its operands run in (Pod Security level privileged: the operands mount host paths).",
  ),
  serviceMonitor: doc(
    // Off while the monitoring component scrapes dcgm-exporter itself: two scrapes double every
    // GPU series and every GPU alert. A direct caller without that component sets it to true.
    v.optional(bool(), !DCGM_SCRAPED_BY_MONITORING),
    "Have the operator create dcgm-exporter's ServiceMonitor (needs the Prometheus Operator CRDs). Off because the monitoring " +
      "component scrapes the exporter itself (DCGM_SCRAPED_BY_MONITORING); in a stack, true is an error (double scrape).",
  ),
};

/** What the node image ships (the AMI table's `ships`): the operator installs the rest. */
const host = section({
  driver: doc(bool(), "The image ships the NVIDIA driver (every EKS NVIDIA AMI does)."),
  toolkit: doc(bool(), "The image ships the NVIDIA container toolkit (every EKS NVIDIA AMI does)."),
  devicePlugin: doc(bool(), "The image runs the Kubernetes device plugin itself (Bottlerocket's nvidia variants do; AL2/AL2023 do not)."),
});

/** Keys only a direct caller of GpuOperator sets (index.ts derives host from gpu.amiType). */
const operatorArgsEntries = {
  host: doc(host, "What the GPU nodes' image already provides (hostSoftwareOf(amiType) for an EKS AMI type); a second copy breaks GPU access."),
  driverVersion: doc(
    v.optional(pinnedVersion),
    "Driver version the operator installs when the host has none (custom or plain images), e.g. 580.105.08; refused when the host ships one.",
  ),
};

/** Settings of a GpuOperator (what resolveGpuOperatorArgs parses). */
export const gpuOperatorSettings = refined(section({ ...operatorEntries, ...operatorArgsEntries }), (s, ctx) => {
  // An unpinned driver changes with the chart's default on every chart bump.
  if (!s.host.driver && s.driverVersion === undefined) {
    ctx.addIssue({ path: ["driverVersion"], message: "must pin the driver the operator installs on a host without one (host.driver is false)" });
  }
  if (s.host.driver && s.driverVersion !== undefined) {
    ctx.addIssue({ path: ["driverVersion"], message: "must not be set when the node image ships its driver (the operator would not use it)" });
  }
});
export type GpuOperatorSettings = v.InferOutput<typeof gpuOperatorSettings>;
export type GpuOperatorSettingsInput = DeepReadonly<v.InferInput<typeof gpuOperatorSettings>>;

/** Arguments for the GPU Operator: its settings (documented in the schema above) and the stack's labels. */
export interface GpuOperatorArgs extends GpuOperatorSettingsInput {
  /** Standard labels of the stack (naming.ts standardLabels). */
  readonly labels: Readonly<Record<string, string>>;
}

export type ResolvedGpuOperatorArgs = GpuOperatorSettings & Pick<GpuOperatorArgs, "labels">;

/** Apply the defaults and rules of the schema once; every problem is reported in one SettingsError. */
export function resolveGpuOperatorArgs(args: GpuOperatorArgs, name?: string): ResolvedGpuOperatorArgs {
  const { labels, ...settings } = args;
  return { ...parseSettings(gpuOperatorSettings, settings, subject("GpuOperator", name)), labels };
}

// ---- The stack file's `gpu` section ------------------------------------------------------
export const gpuOperatorSection = doc(section(operatorEntries), "The NVIDIA GPU Operator: a pinned Helm release in a namespace of its own.");

/** The `gpu` section of the stack configuration (composed by config/schema.ts). */
export const gpuSettings = doc(
  withGpuType(section({ ...nodeGroupEntries, operator: gpuOperatorSection })),
  "GPU node group (EKS managed, NVIDIA AMI type) and the NVIDIA GPU Operator.",
);
export type GpuSettings = v.InferOutput<typeof gpuSettings>;
export type GpuSettingsInput = v.InferInput<typeof gpuSettings>;
