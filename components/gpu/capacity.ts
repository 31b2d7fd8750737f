// The capacity plan of a stack: what one GPU node offers a Triton pod (the instance type's
// facts, minus the EKS AMI's reserve, minus the DaemonSets on GPU nodes), how many GPUs the GPU
// node group has at its minimum and maximum, and how many the serving groups need at theirs.
// Pure: plain data in, plain data out. The cross-section rules (config/cross-section.ts) reject
// what can never run from capacityProblems; the planner prints capacityPlan; a cost estimate can
// multiply its node counts by a price.
import { hpaBounds } from "../triton/schema";
import { quantityValue } from "../../lib/quantity";
import { GPU_INSTANCE_TYPES, gpuInstanceType, nearestGpuInstanceType, type GpuInstanceType } from "../upstream/ec2-gpu-instances";
import {
  amiAllocatable,
  KARPENTER_VM_MEMORY_OVERHEAD,
  kubeReservedCpuMillis,
  kubeReservedMemoryMiB,
  vpcCniMaxPods,
  EVICTION_HARD_MEMORY_MIB,
  type NodeResources,
} from "../upstream/eks-ami";
import { gpuNodeDaemonSetRequests } from "../upstream/gpu-node-daemonsets";

/** What the plan reads of a resolved stack configuration (the parsed sections satisfy it). */
export interface CapacityInput {
  readonly gpu: {
    readonly instanceTypes: readonly string[];
    readonly gpuType?: string;
    readonly scaling: { readonly min: number; readonly max: number };
  };
  readonly triton: {
    readonly groups: readonly {
      readonly name: string;
      readonly replicas: number;
      readonly gpu: { readonly type: string; readonly count: number };
      readonly cpu: string;
      readonly memory: string;
      readonly hpa?: { readonly min?: number; readonly max?: number };
      readonly canary?: { readonly replicas: number };
    }[];
  };
  readonly modelRepository: { readonly backend: string };
}

export interface Range {
  readonly min: number;
  readonly max: number;
}

/** One instance type of a node group: its facts and what a Triton pod can have of one such node. */
export interface InstanceCapacity {
  readonly type: string;
  readonly vcpu: number;
  readonly memoryMiB: number;
  readonly gpus: number;
  readonly gpuLabel: string;
  readonly gpuMemoryMiB: number;
  /** The kubelet's capacity minus the EKS AMI's kube-reserved and eviction threshold (eks-ami.ts). */
  readonly nodeAllocatable: NodeResources;
  readonly reserved: { readonly cpuMillis: number; readonly memoryMiB: number };
  /** What the DaemonSets on a GPU node request (gpu-node-daemonsets.ts). */
  readonly daemonSets: { readonly cpuMillis: number; readonly memoryMiB: number };
  /** Allocatable left for Triton pods: nodeAllocatable minus the DaemonSets. An upper bound for memory (nominal memory). */
  readonly forPods: NodeResources;
  /** forPods memory after Karpenter's estimate of what the kernel keeps (a likely value, not a bound). */
  readonly forPodsMemoryEstimateMiB: number;
}

export interface NodeGroupCapacity {
  readonly name: string;
  readonly gpuType?: string;
  readonly instanceTypes: readonly InstanceCapacity[];
  /** Instance types the facts table does not know (a rejection; left out of every number). */
  readonly unknownInstanceTypes: readonly { readonly index: number; readonly type: string }[];
  readonly nodes: Range;
  /** GPUs of one node: the fewest and the most among the instance types. */
  readonly gpusPerNode: Range;
  /** GPUs at the minimum node count (with the fewest per node) and at the maximum (with the most). */
  readonly gpus: Range;
}

export interface ServingGroupDemand {
  readonly name: string;
  /** Index in triton.groups (for key paths). */
  readonly index: number;
  readonly gpuType: string;
  readonly perPod: { readonly gpus: number; readonly cpuMillis: number; readonly memoryMiB: number };
  /** Primary pods: hpa.min .. hpa.max. */
  readonly primary: Range;
  /** Canary pods (not autoscaled). */
  readonly canary: number;
  readonly pods: Range;
  readonly gpus: Range;
}

export interface CapacityPlan {
  readonly nodeGroups: readonly NodeGroupCapacity[];
  readonly groups: readonly ServingGroupDemand[];
  /** Every group's GPUs (needed) against every node group's (available), at minimum and maximum. */
  readonly gpus: { readonly needed: Range; readonly available: Range };
  /** What may not run although the configuration is accepted (HPA maxima beyond the node group, ...). */
  readonly warnings: readonly string[];
}

/** A rejection: the key path (under triton-platform:) and the rule with its numbers. */
export interface CapacityProblem {
  readonly path: (string | number)[];
  readonly message: string;
}

/** The one GPU node group of the stack's `gpu` section (a list, so more node groups add up). */
const NODE_GROUP = "gpu";

export function instanceCapacity(t: GpuInstanceType, opts: { efs: boolean }): InstanceCapacity {
  const maxPods = vpcCniMaxPods(t.enis, t.ipv4PerEni);
  const nodeAllocatable = amiAllocatable({ vcpu: t.vcpu, memoryMiB: t.memoryMiB, gpus: t.gpus, maxPods });
  const ds = gpuNodeDaemonSetRequests(opts);
  const forPods = {
    cpuMillis: nodeAllocatable.cpuMillis - ds.cpuMillis,
    memoryMiB: nodeAllocatable.memoryMiB - ds.memoryMiB,
    gpus: t.gpus,
    // Pod slots: the DaemonSets take some of them too (not counted: GPU pods run out of GPUs long before).
    pods: maxPods,
  };
  return {
    type: t.name,
    vcpu: t.vcpu,
    memoryMiB: t.memoryMiB,
    gpus: t.gpus,
    gpuLabel: t.gpuLabel,
    gpuMemoryMiB: t.gpuMemoryMiB,
    nodeAllocatable,
    reserved: { cpuMillis: kubeReservedCpuMillis(t.vcpu), memoryMiB: kubeReservedMemoryMiB(maxPods) + EVICTION_HARD_MEMORY_MIB },
    daemonSets: { cpuMillis: ds.cpuMillis, memoryMiB: ds.memoryMiB },
    forPods,
    forPodsMemoryEstimateMiB: Math.floor(forPods.memoryMiB - t.memoryMiB * KARPENTER_VM_MEMORY_OVERHEAD),
  };
}

function nodeGroupCapacity(cfg: CapacityInput): NodeGroupCapacity {
  const efs = cfg.modelRepository.backend === "efs";
  const known: InstanceCapacity[] = [];
  const unknown: { index: number; type: string }[] = [];
  cfg.gpu.instanceTypes.forEach((type, index) => {
    const t = gpuInstanceType(type);
    if (t) known.push(instanceCapacity(t, { efs }));
    else unknown.push({ index, type });
  });
  const per = known.map((t) => t.gpus);
  const gpusPerNode = known.length ? { min: Math.min(...per), max: Math.max(...per) } : { min: 0, max: 0 };
  const nodes = { min: cfg.gpu.scaling.min, max: cfg.gpu.scaling.max };
  return {
    name: NODE_GROUP,
    gpuType: cfg.gpu.gpuType,
    instanceTypes: known,
    unknownInstanceTypes: unknown,
    nodes,
    gpusPerNode,
    gpus: { min: nodes.min * gpusPerNode.min, max: nodes.max * gpusPerNode.max },
  };
}

function groupDemand(g: CapacityInput["triton"]["groups"][number], index: number): ServingGroupDemand {
  const primary = hpaBounds(g.replicas, g.hpa);
  const canary = g.canary?.replicas ?? 0;
  const pods = { min: primary.min + canary, max: primary.max + canary };
  return {
    name: g.name,
    index,
    gpuType: g.gpu.type,
    perPod: { gpus: g.gpu.count, cpuMillis: Math.round(quantityValue(g.cpu) * 1000), memoryMiB: quantityValue(g.memory) / 2 ** 20 },
    primary,
    canary,
    pods,
    gpus: { min: pods.min * g.gpu.count, max: pods.max * g.gpu.count },
  };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** The capacity plan of a stack, with its warnings. */
export function capacityPlan(cfg: CapacityInput): CapacityPlan {
  const nodeGroups = [nodeGroupCapacity(cfg)];
  const groups = cfg.triton.groups.map(groupDemand);
  const needed = { min: sum(groups.map((g) => g.gpus.min)), max: sum(groups.map((g) => g.gpus.max)) };
  const available = { min: sum(nodeGroups.map((n) => n.gpus.min)), max: sum(nodeGroups.map((n) => n.gpus.max)) };
  return { nodeGroups, groups, gpus: { needed, available }, warnings: capacityWarnings(nodeGroups, groups, needed, available) };
}

// ---- wording -----------------------------------------------------------------------------
/** Cores from millicores, as a quantity a person reads: 15.805, 6. */
export const cores = (m: number) => String(Math.round(m) / 1000);
/** GiB from MiB, two decimals at most: 57.5Gi, 24Gi. */
export const gib = (mib: number) => `${Math.round((mib / 1024) * 100) / 100}Gi`;

const carriers = (ng: NodeGroupCapacity, g: ServingGroupDemand) => (ng.gpuType === undefined || ng.gpuType === g.gpuType ? ng.instanceTypes : []);

function demandText(groups: readonly ServingGroupDemand[], at: "min" | "max"): string {
  return groups.map((g) => `${g.name}: ${g.primary[at]} primary${g.canary ? ` + ${g.canary} canary` : ""} × ${g.perPod.gpus} GPU`).join("; ");
}

function supplyText(ng: NodeGroupCapacity, at: "min" | "max"): string {
  const per = ng.gpusPerNode[at];
  const types = ng.instanceTypes.filter((t) => t.gpus === per).map((t) => t.type);
  return `gpu.scaling.${at} ${ng.nodes[at]} node(s) × ${per} GPU (${types.join(", ")}) = ${ng.gpus[at]}`;
}

function capacityWarnings(nodeGroups: readonly NodeGroupCapacity[], groups: readonly ServingGroupDemand[], needed: Range, available: Range): string[] {
  const out: string[] = [];
  const ng = nodeGroups[0];
  if (ng.instanceTypes.length === 0) return out;
  if (needed.max > available.max) {
    out.push(
      `triton.groups need ${needed.max} GPUs at their HPA maxima (${demandText(groups, "max")}), the GPU node group has at most ` +
        `${available.max} (${supplyText(ng, "max")}): pods beyond that stay Pending`,
    );
  }
  if (needed.min > available.min && needed.min <= available.max) {
    out.push(
      `triton.groups need ${needed.min} GPUs at their minimum (${demandText(groups, "min")}), the GPU node group starts with ` +
        `${available.min} (${supplyText(ng, "min")}): ${needed.min - available.min} GPU(s) of pods wait for the cluster autoscaler to add nodes`,
    );
  }
  for (const g of groups) {
    const types = carriers(ng, g);
    const fitting = types.filter((t) => fits(g, t.forPods));
    if (fitting.length > 0 && fitting.length < types.length) {
      const not = types.filter((t) => !fitting.includes(t)).map((t) => t.type);
      out.push(
        `triton.groups[${g.index}] (${g.name}): its pods fit no node of ${not.join(", ")}; only ${fitting.map((t) => t.type).join(", ")} nodes can run them`,
      );
    }
    const tight = fitting.filter((t) => g.perPod.memoryMiB > t.forPodsMemoryEstimateMiB).map((t) => `${t.type}: ~${gib(t.forPodsMemoryEstimateMiB)}`);
    if (tight.length > 0) {
      out.push(
        `triton.groups[${g.index}].memory (${g.name}, ${gib(g.perPod.memoryMiB)}) is above what a node likely allocates once the kernel's share is ` +
          `taken (Karpenter's ${KARPENTER_VM_MEMORY_OVERHEAD * 100} % estimate; ${tight.join(", ")}): the pod may not schedule`,
      );
    }
  }
  return out;
}

function fits(g: ServingGroupDemand, node: NodeResources): boolean {
  return g.perPod.gpus <= node.gpus && g.perPod.cpuMillis <= node.cpuMillis && g.perPod.memoryMiB <= node.memoryMiB;
}

// ---- rejections --------------------------------------------------------------------------
const FAMILIES = [...new Set(GPU_INSTANCE_TYPES.map((t) => t.family))].join(", ");

/** What can never run: each problem names the key to change and the numbers. */
export function capacityProblems(cfg: CapacityInput, plan: CapacityPlan = capacityPlan(cfg)): CapacityProblem[] {
  const out: CapacityProblem[] = [];
  const ng = plan.nodeGroups[0];
  for (const { index, type } of ng.unknownInstanceTypes) {
    const near = nearestGpuInstanceType(type);
    out.push({
      path: ["gpu", "instanceTypes", index],
      message:
        `must be an NVIDIA GPU instance type EKS offers (families ${FAMILIES}: components/upstream/ec2-gpu-instances.ts)` +
        (near ? `; did you mean ${near}?` : ""),
    });
  }
  if (ng.instanceTypes.length === 0) return out;

  for (const g of plan.groups) {
    const types = carriers(ng, g);
    if (types.length === 0) continue; // triton.groups[].gpu.type's own rule reports it
    const base = ["triton", "groups", g.index];
    const best = <K extends "gpus" | "cpuMillis" | "memoryMiB">(k: K) => types.reduce((a, t) => (t.forPods[k] > a.forPods[k] ? t : a));
    const gpu = best("gpus");
    const cpu = best("cpuMillis");
    const mem = best("memoryMiB");
    let single = true;
    if (g.perPod.gpus > gpu.gpus) {
      single = false;
      out.push({
        path: [...base, "gpu", "count"],
        message: `must fit one GPU node: ${g.name}'s pods request ${g.perPod.gpus} GPUs, the most one node of gpu.instanceTypes has is ${gpu.gpus} (${gpu.type})`,
      });
    }
    if (g.perPod.cpuMillis > cpu.forPods.cpuMillis) {
      single = false;
      out.push({
        path: [...base, "cpu"],
        message:
          `must fit one GPU node's allocatable CPU: ${g.name}'s pods request ${cores(g.perPod.cpuMillis)} cores, the most a node offers is ` +
          `${cores(cpu.forPods.cpuMillis)} (${cpu.type}: ${cpu.vcpu} vCPUs − ${cores(cpu.reserved.cpuMillis)} kube-reserved − ${cores(cpu.daemonSets.cpuMillis)} DaemonSets)`,
      });
    }
    if (g.perPod.memoryMiB > mem.forPods.memoryMiB) {
      single = false;
      out.push({
        path: [...base, "memory"],
        message:
          `must fit one GPU node's allocatable memory: ${g.name}'s pods request ${gib(g.perPod.memoryMiB)}, the most a node offers is at most ` +
          `${gib(mem.forPods.memoryMiB)} (${mem.type}: ${gib(mem.memoryMiB)} − ${gib(mem.reserved.memoryMiB)} kube-reserved and eviction threshold − ` +
          `${gib(mem.daemonSets.memoryMiB)} DaemonSets)`,
      });
    }
    if (single && !types.some((t) => fits(g, t.forPods))) {
      out.push({
        path: [...base, "cpu"],
        message:
          `must fit one GPU node together with gpu.count and memory: no single instance type of gpu.instanceTypes offers ${g.perPod.gpus} GPU, ` +
          `${cores(g.perPod.cpuMillis)} cores and ${gib(g.perPod.memoryMiB)} at once (${types.map((t) => `${t.type}: ${t.forPods.gpus} GPU, ${cores(t.forPods.cpuMillis)} cores, ${gib(t.forPods.memoryMiB)}`).join("; ")})`,
      });
    }
  }

  const { needed, available } = plan.gpus;
  if (needed.min > available.max) {
    out.push({
      path: ["gpu", "scaling", "max"],
      message:
        `must hold the serving groups' minimum: they need ${needed.min} GPUs at their minimum (${demandText(plan.groups, "min")}), ` +
        `the GPU node group has at most ${available.max} (${supplyText(ng, "max")})`,
    });
  }
  return out;
}
