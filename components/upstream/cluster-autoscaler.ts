// Kubernetes Cluster Autoscaler on AWS: chart coordinates, the IAM actions its AWS provider
// calls, the ASG tags it discovers and reads, and its expanders, in one place.
//
// Sources (read 2026-12-01 with git in a snapshot of kubernetes/autoscaler):
// - chart: tag cluster-autoscaler-chart-9.59.0 (commit 5a0b98e4), cluster-autoscaler/charts/cluster-autoscaler/
//   Chart.yaml (version 9.59.0, appVersion 1.35.0), values.yaml (identical to
//   shared/reference/charts/cluster-autoscaler-9.59.0/values.yaml), templates/deployment.yaml and pdb.yaml;
// - the autoscaler at the chart's appVersion: tag cluster-autoscaler-1.35.0 (commit 25fc5c74),
//   cluster-autoscaler/cloudprovider/aws/README.md ("Full Cluster Autoscaler Features Policy",
//   "Auto-Discovery Setup", "Special note on GPU instances"), aws_manager.go (buildNodeFromTemplate,
//   extract*FromAsg), aws_cloud_provider.go (GPULabel, Pricing), expander/expander.go and
//   expander/factory/expander_factory.go.

export const CLUSTER_AUTOSCALER_CHART = {
  repo: "https://kubernetes.github.io/autoscaler",
  chart: "cluster-autoscaler",
  version: "9.59.0",
} as const;

/**
 * The image chart 9.59.0 runs by default (values.yaml image.tag; the chart's appVersion 1.35.0).
 * Upstream "recommend[s] using Cluster Autoscaler with the Kubernetes control plane version for
 * which it was meant" (cluster-autoscaler/README.md, Releases, at cluster-autoscaler-1.35.0), i.e.
 * the same minor, latest patch; its table pairs Kubernetes 1.33 with chart 9.47.0+, 1.34 with 9.51.0+.
 */
export const CLUSTER_AUTOSCALER_IMAGE_TAG = "v1.35.0";

/**
 * Read actions of the README's "Full Cluster Autoscaler Features Policy" (auto-discovery with the
 * dynamic EC2 instance list, the default), exactly as listed there at cluster-autoscaler-1.35.0.
 * None of the autoscaling/ec2 describe calls supports resource-level permissions (Resource "*").
 */
export const CLUSTER_AUTOSCALER_READ_ACTIONS = [
  "autoscaling:DescribeAutoScalingGroups",
  "autoscaling:DescribeAutoScalingInstances",
  "autoscaling:DescribeLaunchConfigurations",
  "autoscaling:DescribeScalingActivities",
  "ec2:DescribeImages",
  "ec2:DescribeInstanceTypes",
  "ec2:DescribeLaunchTemplateVersions",
  "ec2:GetInstanceTypesFromInstanceRequirements",
  "eks:DescribeNodegroup",
] as const;

/**
 * The README's second block, the one it says to restrict "by either specifying Auto Scaling Group
 * ARNs … or using tag based conditionals": the only calls that change capacity.
 */
export const CLUSTER_AUTOSCALER_SCALING_ACTIONS = ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"] as const;

/** eks:DescribeNodegroup, the one read action with a resource type (nodegroup ARNs), scoped to the cluster's own groups. */
export const DESCRIBE_NODEGROUP = "eks:DescribeNodegroup";

/** Auto-discovery tag keys (README "Auto-Discovery Setup"; the chart's default autoDiscovery.tags). */
export const DISCOVERY_ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled";
export function discoveryClusterTag(clusterName: string): string {
  return `k8s.io/cluster-autoscaler/${clusterName}`;
}
/**
 * The values EKS gives those tags on the Auto Scaling group a managed node group creates
 * (`k8s.io/cluster-autoscaler/enabled=true`, `k8s.io/cluster-autoscaler/<cluster>=owned`; EKS
 * user guide, managed node groups; read, not checked against an account). The scaling grant
 * requires both, so the role scales only groups EKS made for this cluster.
 */
export const DISCOVERY_TAG_VALUES = { enabled: "true", cluster: "owned" } as const;

/**
 * Node-template tags the AWS provider reads from an ASG to build a node for a group that has no
 * node to copy (scale from zero; aws_manager.go extractLabelsFromAsg, extractTaintsFromAsg,
 * extractAllocatableResourcesFromAsg). A taint's value is `<value>:<Effect>` with the Kubernetes
 * effect spelling (NoSchedule), or it is ignored.
 */
export const NODE_TEMPLATE_TAG = {
  label: (label: string) => `k8s.io/cluster-autoscaler/node-template/label/${label}`,
  taint: (key: string) => `k8s.io/cluster-autoscaler/node-template/taint/${key}`,
  resource: (resource: string) => `k8s.io/cluster-autoscaler/node-template/resources/${resource}`,
} as const;

/**
 * The GPU label of the AWS provider (aws_cloud_provider.go GPULabel). A node that carries it but
 * advertises no nvidia.com/gpu yet is counted as unready rather than as a node without GPUs
 * (processors/customresources/gpu_processor.go), so the autoscaler does not scale up again while
 * the device plugin starts (README, "Special note on GPU instances": label the node at join).
 */
export const GPU_NODE_LABEL = "k8s.amazonaws.com/accelerator";

/**
 * Expanders of expander.go AvailableExpanders (plus least-nodes, registered by the factory).
 * - price: the AWS provider's Pricing() returns ErrNotImplemented, and the factory then calls
 *   klog.Fatalf: the autoscaler exits at start. Not usable on AWS.
 * - priority: picks groups by regexes in the ConfigMap cluster-autoscaler-priority-expander
 *   (chart value expanderPriorities); a cost order must be written there by hand.
 * - least-waste: the option that leaves the least CPU and memory idle (waste.go: CPU and memory
 *   only, GPUs are not scored); among groups that fit the pending pods, the smallest instances.
 */
export const EXPANDERS_USABLE_ON_AWS = ["least-waste", "least-nodes", "most-pods", "random"] as const;
export const PRICE_EXPANDER_UNSUPPORTED = "price";
