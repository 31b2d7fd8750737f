// What a stack's change does to the running system, in the order `pulumi up` does it: which
// pods restart (a workload whose pod template changed, one that rolls onto a new content-hashed
// ConfigMap, the GPU pods of a replaced node group, a new workload starting), whether that is a
// rolling restart or all at once, and where it is downtime: a restart or replacement that takes
// the last replica of a workload, or the only node of a node group. A content-hashed ConfigMap
// rename is routine (its consumers roll), not a replacement a reviewer must weigh.
// Pure: a diff and the head's resources in, plain data out.
import type { RecordedResource } from "./record";
import type { ResourceChange, StackDiff } from "./diff";

const WORKLOAD = /^kubernetes:apps\/v1:(StatefulSet|Deployment)$/;
const HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler";
const NODE_GROUP = "aws:eks/nodeGroup:NodeGroup";
const GPU_RESOURCE = "nvidia.com/gpu";

export interface Restart {
  /** "StatefulSet vision", "Deployment gateway", "NodeGroup gpu". */
  what: string;
  /** Why it restarts, in a reviewer's words. */
  why: string;
  /** "rolling" (one pod at a time), "all at once" (replaced), "starts" (new), "nodes" (node replacement). */
  how: "rolling" | "all at once" | "starts" | "nodes";
  /** Pods (or nodes) at the workload's minimum: 1 makes a restart downtime. */
  minimum?: number;
}

export interface Impact {
  restarts: Restart[];
  /** Each line a reason the service (or part of it) goes down during `pulumi up`. */
  downtime: string[];
  /** Content-hashed renames: routine, each with the workloads that roll onto it. */
  routine: string[];
  /** The counts with content-hashed renames as updates (routine), not replacements. */
  counts: StackDiff["counts"];
}

const kindOf = (r: { type: string }) => r.type.split(":").pop() ?? r.type;
const metaName = (r: RecordedResource) => (r.props.metadata as { name?: string } | undefined)?.name ?? r.name;

/** A workload's minimum pods: its HPA's minReplicas, else its replicas (1 when unset, as Kubernetes defaults it). */
function minimumPods(w: RecordedResource, resources: readonly RecordedResource[]): number {
  const hpa = resources.find((r) => r.type === HPA && r.props.spec?.scaleTargetRef?.name === metaName(w));
  const min = hpa?.props.spec?.minReplicas;
  if (typeof min === "number") return min;
  const replicas = w.props.spec?.replicas;
  return typeof replicas === "number" ? replicas : 1;
}

const gpuPods = (w: RecordedResource) =>
  (w.props.spec?.template?.spec?.containers ?? []).some((c: any) => Number(c?.resources?.limits?.[GPU_RESOURCE] ?? 0) > 0);

/** The counts a reviewer weighs: a content-hashed rename is an update (its consumers roll), not a replacement. */
export function reviewCounts(changes: readonly ResourceChange[]): StackDiff["counts"] {
  const counts = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const c of changes) if (c.op !== "none") counts[c.contentHashed ? "update" : c.op]++;
  return counts;
}

export function stackImpact(diff: StackDiff, head: readonly RecordedResource[]): Impact {
  const byUrn = new Map(head.map((r) => [r.urn, r]));
  const restarts: Restart[] = [];
  const downtime: string[] = [];
  const routine: string[] = [];
  const seen = new Set<string>();
  const add = (r: Restart) => {
    const known = restarts.find((x) => x.what === r.what);
    if (known) {
      if (!known.why.includes(r.why)) known.why += `; ${r.why}`;
      return;
    }
    seen.add(r.what);
    restarts.push(r);
    if (r.how !== "starts" && r.how !== "nodes" && (r.how === "all at once" || (r.minimum ?? 2) <= 1))
      downtime.push(
        `${r.what}: ${r.how === "all at once" ? "every pod stops at once (replaced)" : `its only ${r.minimum === 1 ? "replica" : "pod"} restarts`} — ${r.why}`,
      );
  };
  // 1. Content-hashed ConfigMaps: their consumers roll first (the gateway's bootstrap, say).
  for (const c of diff.resources.filter((x) => x.contentHashed)) {
    routine.push(`${kindOf(c)} ${c.contentHashed!.to} replaces ${c.contentHashed!.from} (content-hashed name)`);
    for (const consumer of c.contentHashed!.consumers) {
      const w = head.find((r) => `${kindOf(r)} ${r.name}` === consumer && WORKLOAD.test(r.type));
      add({
        what: w ? `${kindOf(w)} ${metaName(w)}` : consumer,
        why: `rolls onto ConfigMap ${c.contentHashed!.to}`,
        how: "rolling",
        ...(w ? { minimum: minimumPods(w, head) } : {}),
      });
    }
  }
  // 2. Workloads whose pod template changed, or that are replaced or new.
  for (const c of diff.resources.filter((x) => WORKLOAD.test(x.type))) {
    const w = byUrn.get(c.urn);
    const what = `${kindOf(c)} ${w ? metaName(w) : c.name}`;
    if (c.op === "create") add({ what, why: "new", how: "starts", ...(w ? { minimum: minimumPods(w, head) } : {}) });
    else if (c.op === "replace") add({ what, why: `replaced because ${c.replaceReasons.join(", ")} changed`, how: "all at once" });
    else if (c.op === "update" && w) {
      const template = c.changes.filter((p) => !p.ignored && p.path.startsWith("spec.template"));
      if (template.length)
        add({
          what,
          why: `pod template: ${template
            .slice(0, 3)
            .map((p) => p.path.replace(/^spec\.template\.spec\./, "").replace(/^spec\.template\./, ""))
            .join(", ")}${template.length > 3 ? ` and ${template.length - 3} more` : ""}`,
          how: "rolling",
          minimum: minimumPods(w, head),
        });
    }
  }
  // 3. Replaced GPU node groups: new nodes come up, the old ones drain, and every GPU pod moves.
  for (const c of diff.resources.filter((x) => x.type === NODE_GROUP && x.op === "replace")) {
    const ng = byUrn.get(c.urn);
    const min = (ng?.props.scalingConfig as { minSize?: number } | undefined)?.minSize ?? 1;
    restarts.push({
      what: `NodeGroup ${c.name}`,
      why: `replaced because ${c.replaceReasons.join(", ")} changed: new nodes, then the old drain`,
      how: "nodes",
      minimum: min,
    });
    for (const w of head.filter((r) => WORKLOAD.test(r.type) && gpuPods(r))) {
      const what = `${kindOf(w)} ${metaName(w)}`;
      const minimum = minimumPods(w, head);
      if (seen.has(what)) continue;
      seen.add(what);
      restarts.push({ what, why: `its pods move to the new nodes of NodeGroup ${c.name}`, how: "rolling", minimum });
      if (minimum <= 1 || min <= 1)
        downtime.push(
          `${what}: ${minimum <= 1 ? "its only replica" : "its pods"} ${min <= 1 ? `on the only node of NodeGroup ${c.name}` : ""} stop${minimum <= 1 ? "s" : ""} when the old node drains, until the new pod has loaded its models`
            .replace(/\s+/g, " ")
            .trim(),
        );
    }
  }
  // Deletes of workloads are downtime for what they served (diff.ts words them; named here too).
  for (const c of diff.resources.filter((x) => x.op === "delete" && WORKLOAD.test(x.type))) downtime.push(`${kindOf(c)} ${c.name}: deleted, every pod stops`);
  return { restarts, downtime, routine, counts: reviewCounts(diff.resources) };
}

/** The restarts as one short cell: "Deployment gateway (rolling), StatefulSet detect (starts)". */
export function restartsCell(i: Impact): string {
  if (i.restarts.length === 0) return "none";
  return i.restarts.map((r) => `${r.what} (${r.how === "nodes" ? "nodes replaced" : r.how})`).join(", ");
}
