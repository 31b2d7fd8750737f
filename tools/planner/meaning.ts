// A stack's change in plain words, from the stack-file keys that changed and the head's
// resources: a canary's traffic share and the gateway's mirror share as what they mean (with the
// routes of the gateway's bootstrap they touch), the GPU nodes' type and count, and a new or
// changed serving group as a card: its tritonserver command line (a line diff when it changed),
// models, per-pod resources, pods and share of the GPU cost. Pure: plain data in, lines out.
import { lineDiff, showValue, type ConfigChange, type ResourceChange, type StackDiff } from "./diff";
import type { RecordedResource } from "./record";

const STS = "kubernetes:apps/v1:StatefulSet";
const HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler";
const GROUP_KEY = /^triton\.groups\[name=([^\]]+)\]/;

const pct = (v: unknown) => (v === undefined ? "0" : JSON.stringify(v));

/** The routes of the gateway's bootstrap whose settings changed (paths `…routes[name=X]…`), counted once each: a route's canary twin (`X-canary`) is the same route. */
function changedRoutes(diff: StackDiff): number {
  const routes = new Set<string>();
  for (const r of diff.resources)
    for (const p of r.changes) for (const m of p.path.matchAll(/routes\[name=([^\]]+)\]/g)) routes.add(m[1].replace(/-canary$/, ""));
  return routes.size;
}

/** One line per change a reviewer reads as its meaning; the keys it comes from in `keys`. */
export interface Meaning {
  text: string;
  keys: string[];
}

export function plainChanges(diff: StackDiff): Meaning[] {
  const out: Meaning[] = [];
  const used = new Set<ConfigChange>();
  const routes = changedRoutes(diff);
  const onRoutes = routes ? ` on ${routes} route${routes === 1 ? "" : "s"}` : "";
  const take = (pred: (c: ConfigChange) => boolean) => diff.config.filter((c) => !used.has(c) && pred(c)).map((c) => (used.add(c), c));
  const gateway: string[] = [];
  const gatewayKeys: string[] = [];
  for (const c of take((c) => /\.canary\.trafficPercent$/.test(c.key) && GROUP_KEY.test(c.key))) {
    gateway.push(`${GROUP_KEY.exec(c.key)![1]} canary traffic ${pct(c.old)} → ${pct(c.new)} %`);
    gatewayKeys.push(c.key);
  }
  for (const c of take((c) => c.key === "gateway.mirrorPercent")) {
    gateway.push(`mirror ${pct(c.old)} → ${pct(c.new)} %`);
    gatewayKeys.push(c.key);
  }
  if (gateway.length) out.push({ text: `${gateway[0]}${onRoutes}${gateway.length > 1 ? `; ${gateway.slice(1).join("; ")}` : ""}`, keys: gatewayKeys });
  for (const c of take((c) => /^gpu\.instanceTypes(\[\d+\])?$/.test(c.key)))
    out.push({
      text: `GPU node instance type ${showValue(c.old).replace(/"/g, "")} → ${showValue(c.new).replace(/"/g, "")}: the node group is replaced`,
      keys: [c.key],
    });
  const scaling = take((c) => /^gpu\.scaling\.(min|max|desired)$/.test(c.key));
  if (scaling.length)
    out.push({
      text: `GPU nodes ${scaling.map((c) => `${c.key.split(".").pop()} ${pct(c.old)} → ${pct(c.new)}`).join(", ")}`,
      keys: scaling.map((c) => c.key),
    });
  for (const c of take((c) => /^triton\.groups\[name=[^\]]+\]$/.test(c.key) && c.kind !== "change"))
    out.push({ text: `${c.kind === "add" ? "new" : "removed"} serving group ${GROUP_KEY.exec(c.key)![1]}`, keys: [c.key] });
  return out;
}

/** The serving groups a diff adds or changes (their StatefulSets created or updated). */
export function changedGroups(diff: StackDiff): { name: string; change: ResourceChange }[] {
  return diff.resources
    .filter((r) => r.type === STS && (r.op === "create" || r.op === "update" || r.op === "replace"))
    .map((r) => ({ name: r.name, change: r }));
}

/** The tritonserver command line of a StatefulSet (command + args of its container named triton, else its first). */
export function commandLine(sts: RecordedResource): string[] {
  const containers = (sts.props.spec?.template?.spec?.containers ?? []) as { name?: string; command?: string[]; args?: string[] }[];
  const c = containers.find((x) => x.name === "triton") ?? containers[0];
  return c ? [...(c.command ?? []), ...(c.args ?? [])] : [];
}

/** A serving group's card for the comment: what it runs and what it takes. */
export function groupCard(
  sts: RecordedResource,
  head: readonly RecordedResource[],
  base: RecordedResource | undefined,
  gpuMonthlyUsd?: number,
): { title: string; lines: string[]; command: string[] } {
  const name = (sts.props.metadata as { name?: string })?.name ?? sts.name;
  const spec = sts.props.spec?.template?.spec ?? {};
  const c = (spec.containers ?? []).find((x: any) => x.name === "triton") ?? spec.containers?.[0] ?? {};
  const req = c.resources?.limits ?? c.resources?.requests ?? {};
  const hpa = head.find((r) => r.type === HPA && r.props.spec?.scaleTargetRef?.name === name)?.props.spec;
  const pods = hpa ? `${hpa.minReplicas}..${hpa.maxReplicas} pods (HPA)` : `${sts.props.spec?.replicas ?? 1} pod(s)`;
  const models = commandLine(sts)
    .filter((a) => a.startsWith("--load-model="))
    .map((a) => a.slice("--load-model=".length));
  const gpus = Number(req["nvidia.com/gpu"] ?? 0);
  const share =
    gpuMonthlyUsd !== undefined && gpus > 0 && hpa
      ? ` · ≈ $${Math.round(gpuMonthlyUsd * gpus * hpa.minReplicas).toLocaleString("en-US")}..$${Math.round(gpuMonthlyUsd * gpus * hpa.maxReplicas).toLocaleString("en-US")}/month of GPU nodes`
      : "";
  const lines = [
    `image ${c.image ?? "?"}`,
    `models ${models.length ? models.join(", ") : "(as the repository has them)"}`,
    `per pod ${gpus} GPU, ${req.cpu ?? "?"} CPU, ${req.memory ?? "?"} · ${pods}${share}`,
  ];
  const now = commandLine(sts);
  const command = base ? lineDiff(commandLine(base).join("\n"), now.join("\n"), 1) : now;
  return { title: `${base ? "changed" : "new"} StatefulSet ${name}`, lines, command };
}

const qty = (r: Record<string, unknown> | undefined) =>
  r
    ? Object.entries(r)
        .map(([k, v]) => `${k === "nvidia.com/gpu" ? "GPU" : k} ${String(v)}`)
        .join(", ")
    : "";

/** What a created resource is, in a line a reviewer reads in its table row (workloads, autoscalers, disruption budgets, services, config). */
export function createdSummary(r: RecordedResource | undefined): string {
  if (!r) return "";
  const p = r.props ?? {};
  const spec = p.spec ?? {};
  switch (r.type) {
    case HPA: {
      const t = spec.scaleTargetRef ?? {};
      const metrics = (spec.metrics ?? []).map((m: any) => {
        const x = m[m.type === "Pods" ? "pods" : m.type === "External" ? "external" : m.type === "Object" ? "object" : "resource"] ?? {};
        const name = x.metric?.name ?? x.name ?? m.type;
        const target = x.target ?? {};
        return `${name} ${target.averageValue ?? target.value ?? (target.averageUtilization !== undefined ? `${target.averageUtilization} %` : "?")}`;
      });
      return `scales ${t.kind ?? "?"} ${t.name ?? "?"} ${spec.minReplicas ?? 1}..${spec.maxReplicas ?? "?"} replicas${metrics.length ? ` on ${metrics.join(", ")}` : ""}`;
    }
    case "kubernetes:policy/v1:PodDisruptionBudget": {
      const labels = Object.entries(spec.selector?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(", ");
      const budget = spec.maxUnavailable !== undefined ? `at most ${spec.maxUnavailable} unavailable` : `at least ${spec.minAvailable ?? "?"} available`;
      return `${budget} of the pods ${labels ? `with ${labels}` : "it selects"}`;
    }
    case STS:
    case "kubernetes:apps/v1:Deployment":
    case "kubernetes:apps/v1:DaemonSet": {
      const containers = (spec.template?.spec?.containers ?? []) as any[];
      const replicas = r.type === "kubernetes:apps/v1:DaemonSet" ? "one pod per node" : `${spec.replicas ?? 1} replica(s)`;
      return [
        replicas,
        ...containers.map(
          (c) =>
            `container ${c.name}: ${c.image ?? "?"}${c.resources?.limits || c.resources?.requests ? ` (${qty(c.resources.limits ?? c.resources.requests)})` : ""}`,
        ),
      ].join("; ");
    }
    case "kubernetes:core/v1:Service": {
      const ports = ((spec.ports ?? []) as any[]).map((x) => `${x.name ?? ""}${x.name ? " " : ""}${x.port}→${x.targetPort ?? x.port}`).join(", ");
      return `${spec.type ?? "ClusterIP"}${ports ? ` ports ${ports}` : ""}`;
    }
    case "kubernetes:core/v1:ConfigMap":
    case "kubernetes:core/v1:Secret":
      return `keys ${Object.keys(p.data ?? p.stringData ?? {}).join(", ") || "(none)"}`;
    default:
      return "";
  }
}
