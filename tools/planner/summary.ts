// The summary a person reads first in every plan, per stack: where it runs, which GPUs and how
// many, what each serving group runs (Triton release, replicas, HPA, per-pod resources, models,
// canary and its share), capacity, cost, gateway, monitoring, autoscaler and policies. Pure: from
// the resolved stack config, its capacity plan, its cost and the policy result, to rows of text,
// printed aligned in a terminal and as a Markdown list in the pull-request body. Never a secret:
// a receiver is named by its kind (and the Slack channel), never by its key or URL.
import * as path from "node:path";
import { GPU_AMI_TYPES } from "../../components/upstream/eks";
import type { CapacityPlan } from "../../config/capacity";
import { COST_EXCLUDES, usd, usdRange, type StackCost } from "../../config/cost";

/** What the summary reads of a resolved stack configuration (config/ loadConfig's output satisfies it). */
export interface SummaryConfig {
  readonly stack: string;
  readonly region: string;
  readonly environment?: string;
  readonly cluster: { readonly name: string; readonly zones: readonly string[] };
  readonly gpu: {
    readonly amiType: string;
    readonly instanceTypes: readonly string[];
    readonly gpuType?: string;
    readonly scaling: { readonly min: number; readonly desired?: number; readonly max: number };
    readonly operator: { readonly version: string };
  };
  readonly triton: {
    readonly groups: readonly {
      readonly name: string;
      readonly models?: readonly string[];
      readonly modelControlMode?: string;
      readonly image: { readonly tag: string };
      readonly replicas: number;
      readonly hpa?: { readonly min?: number; readonly max?: number };
      readonly gpu: { readonly type: string; readonly count: number };
      readonly cpu: string;
      readonly memory: string;
      readonly canary?: {
        readonly image?: { readonly tag: string };
        readonly models?: readonly string[];
        readonly replicas: number;
        /** The weighted canary share, where the schema has the key. */
        readonly trafficPercent?: number;
      };
    }[];
  };
  readonly gateway: {
    readonly mirrorPercent: number;
    readonly clientCidrs: readonly string[];
    readonly clientNamespaces?: readonly string[];
    readonly loadBalancerScheme?: string;
    readonly replicas: number;
  };
  readonly monitoring: {
    readonly retention: string;
    readonly prometheusReplicas?: number;
    readonly alerting: {
      readonly enabled: boolean;
      readonly replicas?: number;
      readonly pagerduty?: unknown;
      readonly slack?: { readonly channel?: string };
      readonly webhook?: unknown;
      readonly heartbeat?: unknown;
    };
  };
  readonly autoscaler?: {
    readonly enabled: boolean;
    readonly version?: string;
    readonly imageTag?: string;
    readonly replicas?: number;
    readonly expander?: string;
  };
}

/** The policy result of the stack: the rules evaluated with their levels, and the violations. */
export interface SummaryPolicy {
  readonly rules: readonly { readonly name: string; readonly level: string }[];
  readonly violations: readonly { readonly policy: string; readonly level: string }[];
  readonly levelsFile?: string;
}

export interface SummaryInput {
  readonly config: SummaryConfig;
  /** The capacity plan: the HPA ranges and GPUs per node are its (config/capacity.ts derives them once). */
  readonly capacity: CapacityPlan;
  readonly cost?: StackCost;
  readonly policy?: SummaryPolicy;
}

/** One row: a label and its lines (the first beside the label, the others under it). */
export interface SummaryRow {
  readonly label: string;
  readonly lines: readonly string[];
}

const list = (xs: readonly string[]) => (xs.length ? xs.join(", ") : "none");
const range = (min: number, max: number) => (min === max ? `${min}` : `${min}..${max}`);
const pct = (p: number) => `${p} %`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function placeRow(c: SummaryConfig): SummaryRow {
  const env = c.environment && c.environment !== c.stack ? ` (${c.environment})` : "";
  return { label: "stack", lines: [`${c.stack}${env} · ${c.region} · cluster ${c.cluster.name} · zones ${list(c.cluster.zones)}`] };
}

function gpuRow(c: SummaryConfig, capacity: CapacityPlan): SummaryRow {
  const g = c.gpu;
  const ng = capacity.nodeGroups[0];
  const perNode = ng && ng.instanceTypes.length ? range(ng.gpusPerNode.min, ng.gpusPerNode.max) : "?";
  const label = g.gpuType ?? ng?.instanceTypes[0]?.gpuLabel ?? "unknown GPU";
  const ami = GPU_AMI_TYPES[g.amiType as keyof typeof GPU_AMI_TYPES];
  const desired = g.scaling.desired !== undefined && g.scaling.desired !== g.scaling.min ? ` (desired ${g.scaling.desired})` : "";
  return {
    label: "GPU nodes",
    lines: [
      `${g.instanceTypes.join(" | ")} × ${range(g.scaling.min, g.scaling.max)} node${g.scaling.max === 1 ? "" : "s"}${desired} · ${perNode} × ${label} per node`,
      `AMI ${g.amiType}${ami ? ` (NVIDIA driver R${ami.driverBranch})` : ""} · GPU Operator ${g.operator.version}`,
    ],
  };
}

function servingRow(c: SummaryConfig, capacity: CapacityPlan): SummaryRow {
  const lines: string[] = [];
  c.triton.groups.forEach((g, i) => {
    const hpa = capacity.groups[i].primary;
    const models = g.models?.length ? `models ${list(g.models)}` : `model control ${g.modelControlMode ?? "?"}`;
    lines.push(
      `${g.name}: Triton ${g.image.tag} · ${plural(g.replicas, "replica")}, HPA ${range(hpa.min, hpa.max)} · per pod ` +
        `${g.gpu.count} GPU (${g.gpu.type}), ${g.cpu} CPU, ${g.memory} · ${models}`,
    );
    if (g.canary) {
      const tag = g.canary.image?.tag ?? g.image.tag;
      const shares = [`mirror ${pct(c.gateway.mirrorPercent)} of requests`];
      if (g.canary.trafficPercent !== undefined) shares.push(`traffic ${pct(g.canary.trafficPercent)}`);
      const models = g.canary.models ? ` · models ${list(g.canary.models)}` : "";
      lines.push(`  canary: Triton ${tag}${tag === g.image.tag ? " (same release)" : ""} × ${g.canary.replicas} · ${shares.join(", ")}${models}`);
    }
  });
  return { label: "serving", lines: lines.length ? lines : ["no serving groups"] };
}

function capacityRow(capacity: CapacityPlan): SummaryRow {
  const { needed, available } = capacity.gpus;
  const short = [needed.min > available.min ? "minimum" : "", needed.max > available.max ? "maximum" : ""].filter(Boolean);
  return {
    label: "capacity",
    lines: [
      `GPUs needed ${range(needed.min, needed.max)}, available ${range(available.min, available.max)} (minimum..maximum)` +
        (short.length ? ` · short at the ${short.join(" and the ")} (see the plan's warnings)` : " · fits"),
    ],
  };
}

function costRow(cost: StackCost): SummaryRow {
  const lines: string[] = [];
  for (const ng of cost.nodeGroups) {
    const p = ng.priced;
    if (ng.monthlyUsd && p.hourlyUsd !== undefined) {
      const which = ng.prices.length > 1 ? `, the first of gpu.instanceTypes` : "";
      lines.push(
        `${usd(ng.monthlyUsd.min)}/month at minimum, ${usd(ng.monthlyUsd.max)}/month at maximum ` +
          `(${range(ng.nodes.min, ng.nodes.max)} × ${p.type}${which} at $${p.hourlyUsd}/h in ${cost.region})`,
      );
    } else {
      lines.push(`price unknown: ${p.type} has no on-demand price in ${cost.region} in the price table`);
    }
    if (ng.spread) {
      const s = ng.spread;
      lines.push(
        `  with the other instance types: ${usdRange({ min: s.low.min, max: s.high.min })}/month at minimum, ` +
          `${usdRange({ min: s.low.max, max: s.high.max })} at maximum (${s.cheapest} cheapest, ${s.dearest} dearest)`,
      );
    }
    const unknown = ng.unpriced.filter((t) => t !== p.type);
    if (unknown.length) lines.push(`  price unknown in ${cost.region}: ${list(unknown)}`);
  }
  lines.push(`on demand, ${cost.hoursPerMonth} h/month; prices: ${cost.source.source}, as of ${cost.source.asOf} (components/upstream/ec2-prices.ts)`);
  lines.push(`leaves out: ${COST_EXCLUDES.join(", ")}`);
  return { label: "cost", lines };
}

function gatewayRow(c: SummaryConfig): SummaryRow {
  const g = c.gateway;
  const lb = g.clientCidrs.length
    ? `${g.loadBalancerScheme ?? "internal"} load balancer for ${list(g.clientCidrs)}`
    : "no load balancer (no gateway.clientCidrs)";
  const inCluster = g.clientNamespaces?.length ? ` · in-cluster callers from ${list(g.clientNamespaces)}` : "";
  return { label: "gateway", lines: [`${lb} · ${plural(g.replicas, "replica")}${inCluster}`] };
}

function monitoringRow(c: SummaryConfig): SummaryRow {
  const m = c.monitoring;
  const a = m.alerting;
  const receivers: string[] = [];
  // Only whether each is set, never a value: keys and webhook URLs are secrets or near enough.
  if (a.pagerduty) receivers.push("pagerduty");
  if (a.slack) receivers.push(a.slack.channel ? `slack (${a.slack.channel})` : "slack");
  if (a.webhook) receivers.push("webhook");
  if (a.heartbeat) receivers.push("heartbeat");
  const alerting = a.enabled
    ? `Alertmanager × ${a.replicas ?? 1} → ${receivers.length ? receivers.join(", ") : "no receiver set"}`
    : "Alertmanager off (alerts evaluate in Prometheus only)";
  return { label: "monitoring", lines: [`retention ${m.retention} · ${plural(m.prometheusReplicas ?? 1, "Prometheus replica")} · ${alerting}`] };
}

function autoscalerRow(c: SummaryConfig): SummaryRow {
  const a = c.autoscaler;
  if (!a) return { label: "autoscaler", lines: ["none in this revision"] };
  if (!a.enabled)
    return { label: "autoscaler", lines: [`off: the GPU node group stays at its creation size (${c.gpu.scaling.desired ?? c.gpu.scaling.min} nodes)`] };
  const v = [a.version ? `chart ${a.version}` : "", a.imageTag ? `image ${a.imageTag}` : ""].filter(Boolean).join(", ");
  return {
    label: "autoscaler",
    lines: [`Cluster Autoscaler${v ? ` (${v})` : ""} · ${plural(a.replicas ?? 1, "replica")}${a.expander ? ` · expander ${a.expander}` : ""}`],
  };
}

const LEVELS = ["mandatory", "advisory", "remediate", "disabled"];

function policyRow(p: SummaryPolicy): SummaryRow {
  const by = (xs: readonly { level: string }[]) => {
    const n: Record<string, number> = {};
    for (const x of xs) n[x.level] = (n[x.level] ?? 0) + 1;
    return [...LEVELS, ...Object.keys(n).filter((l) => !LEVELS.includes(l))].filter((l) => n[l]).map((l) => `${n[l]} ${l}`);
  };
  const evaluated = p.rules.filter((r) => r.level !== "disabled").length;
  const rules = `${evaluated} of ${plural(p.rules.length, "rule")} evaluated (${by(p.rules).join(", ")})${p.levelsFile ? ` from ${p.levelsFile}` : ""}`;
  const v = p.violations.length
    ? `${plural(p.violations.length, "violation")}: ${by(p.violations).join(", ")} (${list([...new Set(p.violations.map((x) => x.policy))])})`
    : "no violations";
  return { label: "policies", lines: [`${rules} · ${v}`] };
}

/** The summary's rows, in reading order. */
export function summaryRows(input: SummaryInput): SummaryRow[] {
  const c = input.config;
  const rows = [placeRow(c), gpuRow(c, input.capacity), servingRow(c, input.capacity)];
  rows.push(capacityRow(input.capacity));
  if (input.cost) rows.push(costRow(input.cost));
  rows.push(gatewayRow(c), monitoringRow(c), autoscalerRow(c));
  if (input.policy) rows.push(policyRow(input.policy));
  return rows;
}

/** Terminal lines: labels in a column, continuation lines under the value. */
export function summaryText(rows: readonly SummaryRow[]): string[] {
  const width = Math.max(...rows.map((r) => r.label.length)) + 2;
  return rows.flatMap((r) => r.lines.map((l, i) => `${(i === 0 ? r.label : "").padEnd(width)}${l}`));
}

/** Markdown: one bullet per row, its further lines as nested bullets (GitHub renders it as is). */
export function summaryMarkdown(rows: readonly SummaryRow[]): string[] {
  const esc = (s: string) => s.replace(/([\\`*_<>|[\]])/g, "\\$1");
  return rows.flatMap((r) => [`- **${r.label}**: ${esc(r.lines[0].trim())}`, ...r.lines.slice(1).map((l) => `  - ${esc(l.trim())}`)]);
}

// ---- the report section ------------------------------------------------------------------
/** What the planner hands a section builder (its SectionInput), as far as the summary reads it. */
export interface SummarySectionInput {
  readonly stack: string;
  /** `namespace:key` → string, as the program saw it. */
  readonly config: Record<string, string>;
  readonly secretKeys: readonly string[];
  readonly violations: readonly { readonly policy: string; readonly level: string }[];
  readonly rules: readonly { readonly name: string; readonly level: string }[];
}

/** The planner's ReportSection, structurally. */
export interface SummarySection {
  id: string;
  title: string;
  text: string[];
  markdown: string[];
  /** The rows and the cost (the capacity plan is the report's own `capacity`). */
  data: { rows: SummaryRow[]; cost: StackCost };
}

/**
 * The summary section of a stack of the project at `root`: its resolved config, capacity plan and
 * cost from the project's own config modules (already loaded by the program's run, as
 * Project.capacity does), then the pure rows above. Cheap: one more parse of a config already parsed.
 */
export function summarySectionAt(root: string): (input: SummarySectionInput) => SummarySection {
  return (input) => {
    /* eslint-disable @typescript-eslint/no-require-imports -- the project's modules, by path, as the program loads them */
    const { loadConfig } = require(path.join(root, "config")) as typeof import("../../config");
    const { capacityPlan } = require(path.join(root, "config", "capacity")) as typeof import("../../config/capacity");
    const { stackCost } = require(path.join(root, "config", "cost")) as typeof import("../../config/cost");
    /* eslint-enable @typescript-eslint/no-require-imports */
    const config = loadConfig(input.config, input.stack, [...input.secretKeys]);
    const capacity = capacityPlan(config);
    const cost = stackCost(config);
    const rows = summaryRows({ config, capacity, cost, policy: { rules: input.rules, violations: input.violations } });
    return { id: "summary", title: "summary", text: summaryText(rows), markdown: summaryMarkdown(rows), data: { rows, cost } };
  };
}
