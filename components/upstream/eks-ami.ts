// What the EKS-optimized AMI's bootstrap keeps from the pods on a node: nodeadm's (AL2023)
// kube-reserved CPU and memory, its hard eviction threshold, and the max pods both follow from.
// Source: awslabs/amazon-eks-ami at tag v20260724 (81fec2e8, 2026-07-23), read 2026-12-01:
// - nodeadm/internal/kubelet/config.go `withDefaultReservedResources`: kubeReserved
//   cpu = getCPUMillicoresToReserve, memory = getMemoryMebibytesToReserve(maxPods) = 11 × maxPods
//   + 255 MiB, ephemeral-storage 1Gi; systemReservedCgroup /system but no systemReserved values
//   (nothing else is subtracted); `defaultKubeletSubConfig` evictionHard memory.available 100Mi.
// - `getCPUMillicoresToReserve`: 6 % of the first core, 1 % of the second, 0.5 % of cores 3-4,
//   0.25 % of every core above 4 (integer millicores per range).
// - nodeadm/internal/kubelet/eni_max_pods.go `calculateStandardMaxPods`: ENIs × (IPv4 per ENI − 1)
//   + 2, from the embedded instance-info.jsonl (ec2-gpu-instances.ts records both numbers).
//   The reserve is computed from this value even when a kubelet drop-in (spec.kubelet.config)
//   sets its own maxPods: the drop-in is merged after withDefaultReservedResources.
// AL2 (end of support) and Bottlerocket bootstrap nodes differently; the same numbers are
// assumed for them here, not checked.
// Checked against an independent implementation: Karpenter v1.14.1's instance-types.md
// resources (AL2023) equal these numbers after its VM memory overhead (test/capacity-plan.test.ts).

/** One node's schedulable resources (the node's allocatable as the scheduler sees it). */
export interface NodeResources {
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  readonly gpus: number;
  readonly pods: number;
}

/** The kubelet's hard eviction threshold for memory (memory.available), MiB: subtracted from allocatable. */
export const EVICTION_HARD_MEMORY_MIB = 100;

/** nodeadm's max pods for the VPC CNI (no custom maxPodsExpression): ENIs × (IPv4 per ENI − 1) + 2. */
export function vpcCniMaxPods(enis: number, ipv4PerEni: number): number {
  return enis * (ipv4PerEni - 1) + 2;
}

const CPU_RANGES = [0, 1000, 2000, 4000] as const;
/** Hundredths of a percent reserved of each range above (the last applies to every core above 4). */
const CPU_RESERVE_PER_10000 = [600, 100, 50, 25] as const;

/** kube-reserved CPU, millicores, for a node of `vcpu` cores (getCPUMillicoresToReserve). */
export function kubeReservedCpuMillis(vcpu: number): number {
  const total = vcpu * 1000;
  let reserved = 0;
  CPU_RANGES.forEach((start, i) => {
    const end = i + 1 < CPU_RANGES.length ? CPU_RANGES[i + 1] : total;
    if (total <= start) return;
    // Integer division per range, as Go's int arithmetic does.
    reserved += Math.trunc(((Math.min(total, end) - start) * CPU_RESERVE_PER_10000[i]) / 10000);
  });
  return reserved;
}

/** kube-reserved memory, MiB, for a node that may run `maxPods` pods (getMemoryMebibytesToReserve). */
export function kubeReservedMemoryMiB(maxPods: number): number {
  return 11 * maxPods + 255;
}

/**
 * Allocatable of a node with the EKS AMI's reserve: capacity − kube-reserved (− eviction-hard for
 * memory). `memoryMiB` is the capacity the kubelet sees; with the EC2 nominal memory this is an
 * upper bound (the kernel keeps part of it: Karpenter estimates 7.5 %, below).
 */
export function amiAllocatable(node: { vcpu: number; memoryMiB: number; gpus: number; maxPods: number }): NodeResources {
  return {
    cpuMillis: node.vcpu * 1000 - kubeReservedCpuMillis(node.vcpu),
    memoryMiB: node.memoryMiB - kubeReservedMemoryMiB(node.maxPods) - EVICTION_HARD_MEMORY_MIB,
    gpus: node.gpus,
    pods: node.maxPods,
  };
}

/**
 * Share of the nominal memory the kernel and firmware keep, as Karpenter estimates it: its
 * VM_MEMORY_OVERHEAD_PERCENT setting, "subtracted from the total memory for all instance types
 * when cached information is unavailable", default 0.075 (aws/karpenter-provider-aws v1.14.1,
 * website/content/en/docs/reference/settings.md). An estimate, not a fact of the AMI: the
 * capacity plan warns (does not reject) on requests above it.
 */
export const KARPENTER_VM_MEMORY_OVERHEAD = 0.075;
