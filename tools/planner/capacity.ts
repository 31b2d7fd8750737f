// The capacity block of a stack's plan report: the GPUs the serving groups need at their
// minimum and maximum against the GPU node groups' nodes × GPUs, and what one node offers a pod.
// The plan itself is the project's (config/capacity.ts, through Project.capacity); this file
// only prints it.
import type { CapacityPlan } from "../../config/capacity";

export type { CapacityPlan } from "../../config/capacity";

const cores = (m: number) => String(Math.round(m) / 1000);
const gib = (mib: number) => `${Math.round((mib / 1024) * 100) / 100}Gi`;

/** The human-readable block (indented two spaces, as the rest of a stack's report). */
export function formatCapacity(c: CapacityPlan): string[] {
  const { needed, available } = c.gpus;
  const lines = [
    `  capacity: GPUs needed ${needed.min} at minimum, ${needed.max} at maximum; available ${available.min} at minimum, ${available.max} at maximum`,
  ];
  for (const ng of c.nodeGroups) {
    lines.push(
      `    node group ${ng.name}: ${ng.nodes.min}..${ng.nodes.max} nodes × ${ng.gpusPerNode.min === ng.gpusPerNode.max ? ng.gpusPerNode.min : `${ng.gpusPerNode.min}-${ng.gpusPerNode.max}`} GPU`,
    );
    for (const t of ng.instanceTypes) {
      lines.push(
        `      ${t.type}: ${t.gpus} × ${t.gpuLabel} (${gib(t.gpuMemoryMiB)}), ${t.vcpu} vCPU, ${gib(t.memoryMiB)}; for pods ${cores(t.forPods.cpuMillis)} CPU, ` +
          `${gib(t.forPods.memoryMiB)} (after kube-reserved ${cores(t.reserved.cpuMillis)} CPU/${gib(t.reserved.memoryMiB)} and DaemonSets ${cores(t.daemonSets.cpuMillis)} CPU/${gib(t.daemonSets.memoryMiB)})`,
      );
    }
  }
  for (const g of c.groups) {
    lines.push(
      `    group ${g.name}: ${g.primary.min}..${g.primary.max} primary${g.canary ? ` + ${g.canary} canary` : ""} pods × ${g.perPod.gpus} GPU, ` +
        `${cores(g.perPod.cpuMillis)} CPU, ${gib(g.perPod.memoryMiB)} = ${g.gpus.min}..${g.gpus.max} GPUs`,
    );
  }
  return lines;
}
