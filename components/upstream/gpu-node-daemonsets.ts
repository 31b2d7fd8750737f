// The DaemonSets that run on this stack's (tainted) GPU nodes, and what each pod requests: what
// the scheduler subtracts from a GPU node's allocatable before a Triton pod can land. Read
// 2026-12-01. A pod's request is max(sum of its containers, largest init container). A container
// without a request counts as 0 when the scheduler checks fit (NodeResourcesFit sums the
// requests; its non-zero defaults apply to scoring only), so "unset" rows below are 0 for fit,
// although those pods still use CPU and memory (BestEffort: first evicted under pressure).

export interface DaemonSetRequests {
  readonly name: string;
  /** Who installs it: this stack, or the cluster (an EKS add-on the stack expects). */
  readonly installedBy: "stack" | "cluster";
  /** Only in stacks whose model repository is EFS (the EFS CSI node plugin). */
  readonly when?: "efs";
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  /** Where the numbers come from, or why they are unknown. */
  readonly source: string;
}

export const GPU_NODE_DAEMONSETS: readonly DaemonSetRequests[] = [
  {
    name: "aws-node (Amazon VPC CNI)",
    installedBy: "cluster",
    // aws-node 25m + aws-eks-nodeagent 25m (its resources default to .Values.resources); the
    // init container aws-vpc-cni-init (25m) is smaller than their sum.
    cpuMillis: 50,
    memoryMiB: 0,
    source:
      "aws/amazon-vpc-cni-k8s v1.23.0 charts/aws-vpc-cni: values.yaml resources.requests.cpu 25m, init/nodeAgent resources {} " +
      "(templates/daemonset.yaml: default .Values.resources); no memory request. The EKS add-on's manifest is assumed to match the chart.",
  },
  {
    name: "ebs-csi-node (Amazon EBS CSI driver)",
    installedBy: "cluster",
    // ebs-plugin 10m/40Mi, node-driver-registrar and liveness-probe 10m/32Mi each; the node
    // plugin tolerates every taint (node.tolerateAllTaints: true).
    cpuMillis: 30,
    memoryMiB: 104,
    source:
      "kubernetes-sigs/aws-ebs-csi-driver helm-chart-aws-ebs-csi-driver-2.64.0: values.yaml node.resources requests 10m/40Mi; " +
      "templates/_node.tpl sidecar defaults 10m/32Mi (node-driver-registrar, liveness-probe). The EKS add-on is assumed to match the chart.",
  },
  {
    name: "eks-pod-identity-agent",
    installedBy: "cluster",
    cpuMillis: 0,
    memoryMiB: 0,
    source: "aws/eks-pod-identity-agent v0.1.37 charts/eks-pod-identity-agent/values.yaml: resources {} (unset), tolerations operator Exists.",
  },
  {
    name: "kube-proxy",
    installedBy: "cluster",
    cpuMillis: 0,
    memoryMiB: 0,
    source:
      "unknown: the EKS kube-proxy add-on's manifest is not published in a repository read here; counted as 0, so a node's " +
      "allocatable after DaemonSets is that much too high.",
  },
  {
    name: "GPU Operator operands (device plugin, container toolkit, dcgm, dcgm-exporter, GFD, MIG manager, validator, node status exporter)",
    installedBy: "stack",
    cpuMillis: 0,
    memoryMiB: 0,
    source:
      "NVIDIA/gpu-operator v25.10.1 and v26.7.0 deployments/gpu-operator/values.yaml: resources {} for every operand; the stack " +
      "sets none (components/gpu/builders.ts).",
  },
  {
    name: "node-feature-discovery worker (GPU Operator subchart)",
    installedBy: "stack",
    cpuMillis: 5,
    memoryMiB: 64,
    source:
      "NVIDIA/gpu-operator v25.10.1 (NFD v0.18.2) and v26.7.0 (NFD 0.19.0) deployments/gpu-operator/charts/node-feature-discovery/" +
      "values.yaml worker.resources requests 5m/64Mi; nfd.enabled true by default and not changed by the stack.",
  },
  {
    name: "prometheus-node-exporter (kube-prometheus-stack subchart)",
    installedBy: "stack",
    cpuMillis: 0,
    memoryMiB: 0,
    source:
      "shared/reference/charts/prometheus-node-exporter-4.56.1/values.yaml: resources {}, tolerations NoSchedule Exists (so it runs " +
      "on the GPU nodes); the stack sets none (components/monitoring).",
  },
  {
    name: "efs-csi-node (Amazon EFS CSI driver)",
    installedBy: "stack",
    when: "efs",
    cpuMillis: 0,
    memoryMiB: 0,
    source:
      "shared/reference/charts/aws-efs-csi-driver-3.2.1/values.yaml: node.resources {} and sidecars' resources {}; the stack sets " +
      "tolerations only (components/model-repository/efs.ts).",
  },
];

/** What the DaemonSets on one GPU node request together, for a stack with or without EFS. */
export function gpuNodeDaemonSetRequests(opts: { efs: boolean }): { cpuMillis: number; memoryMiB: number; daemonSets: readonly DaemonSetRequests[] } {
  const daemonSets = GPU_NODE_DAEMONSETS.filter((d) => d.when === undefined || (d.when === "efs" && opts.efs));
  return {
    cpuMillis: daemonSets.reduce((n, d) => n + d.cpuMillis, 0),
    memoryMiB: daemonSets.reduce((n, d) => n + d.memoryMiB, 0),
    daemonSets,
  };
}
