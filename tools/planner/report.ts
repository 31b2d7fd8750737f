// What the planner prints for a stack: its sections first (a summary a person reads, added by
// other modules through `REPORT_SECTIONS`), each violation, the policy levels it ran at, and
// the resource counts by type (with --verbose). The JSON form (--json / --output) carries all
// of it, versioned by REPORT_SCHEMA_VERSION.
import type { RecordedResource } from "./resource";
import type { Violation } from "./policy";
import { formatCapacity, type CapacityPlan } from "./capacity";

/**
 * The version of the JSON report (`--json`, `--output FILE`). Bumped when a field changes
 * meaning or goes; new fields do not bump it. 2: `schemaVersion`, `levelsFile`, `rules`,
 * `sections`, `error` per stack (1: the unversioned `{stacks}` of before).
 */
export const REPORT_SCHEMA_VERSION = 2;

/** One block of a stack's report, printed before everything else (e.g. the human summary). */
export interface ReportSection {
  /** Stable id, e.g. "summary", "capacity": the JSON key a consumer picks it by. */
  id: string;
  title: string;
  /** Terminal lines (printed indented under the title). */
  text: string[];
  /** Markdown lines for the pull-request comment; the text lines (as a list) when absent. */
  markdown?: string[];
  /** The section's data, for --json consumers. */
  data?: unknown;
}

/** What a section builder sees of a planned stack. */
export interface SectionInput {
  stack: string;
  /** `namespace:key` → string, as the program saw it (secure: values are placeholders). */
  config: Record<string, string>;
  /** The keys marked secret (with stack and config: what the project's loadConfig takes). */
  secretKeys: readonly string[];
  resources: readonly RecordedResource[];
  outputs: Record<string, unknown>;
  violations: readonly Violation[];
  rules: readonly RuleLevel[];
}

export type SectionBuilder = (input: SectionInput) => ReportSection | undefined;

/**
 * The hook for sections printed first in every plan, in this order, before the project's own
 * (Project.sections). Empty here: the human summary (region, GPU node groups, serving groups,
 * capacity, cost, ...) registers its builder(s) in this list or in the project. A builder
 * must be cheap (it runs in every plan) and pure.
 */
export const REPORT_SECTIONS: SectionBuilder[] = [];

/** A rule of the pack and the level it ran at for this stack ("disabled": not evaluated). */
export interface RuleLevel {
  name: string;
  level: string;
}

export interface StackReport {
  stack: string;
  outDir?: string;
  /** A configuration error (exit 2): nothing of this stack was planned; the other fields are empty. */
  error?: string;
  resources: number;
  countsByType: Record<string, number>;
  violations: Violation[];
  mandatory: number;
  advisory: number;
  /** The stack's capacity plan (GPUs needed and available), when the project computes one. */
  capacity?: CapacityPlan;
  /** What may go wrong although the plan is accepted (the capacity plan's and the program's, lib/warnings.ts); never changes the exit code. */
  warnings: string[];
  /** The levels file the policies ran at (relative to the project), or where the levels came from. */
  levelsFile?: string;
  /** Every rule of the pack with its effective level. */
  rules?: RuleLevel[];
  sections?: ReportSection[];
  /** Files written beside resources.json (relative to outDir): envoy.json, helm values, tritonserver args, graph. */
  artifacts?: string[];
}

export function countByType(resources: readonly RecordedResource[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of resources) counts[r.type] = (counts[r.type] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

export function stackReport(
  stack: string,
  resources: RecordedResource[],
  violations: Violation[],
  outDir?: string,
  extra: Pick<StackReport, "levelsFile" | "rules" | "sections" | "artifacts" | "capacity"> = {},
  programWarnings: string[] = [],
): StackReport {
  return {
    stack,
    outDir,
    resources: resources.length,
    countsByType: countByType(resources),
    violations,
    mandatory: violations.filter((v) => v.level === "mandatory").length,
    advisory: violations.filter((v) => v.level === "advisory").length,
    ...extra,
    warnings: [...(extra.capacity?.warnings ?? []), ...programWarnings],
  };
}

/** The report of a stack whose configuration is invalid: its error, nothing planned. */
export function errorReport(stack: string, error: string): StackReport {
  return { stack, error, resources: 0, countsByType: {}, violations: [], mandatory: 0, advisory: 0, warnings: [] };
}

/** The sections of a planned stack, from the registered builders. */
export function buildSections(input: SectionInput, builders: readonly SectionBuilder[] = REPORT_SECTIONS): ReportSection[] {
  return builders.map((b) => b(input)).filter((s): s is ReportSection => s !== undefined);
}

/** A value on one line, cut so a long document (an inline policy, a bootstrap) does not flood the report. */
function showValue(v: unknown): string {
  const s = JSON.stringify(v) ?? "null";
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
}

/** How many rules ran at each level: "41 rules: 38 mandatory, 3 advisory". */
export function rulesLine(r: StackReport): string | undefined {
  if (!r.rules) return undefined;
  const by: Record<string, number> = {};
  for (const x of r.rules) by[x.level] = (by[x.level] ?? 0) + 1;
  const parts = ["mandatory", "advisory", "remediate", "disabled"].filter((l) => by[l]).map((l) => `${by[l]} ${l}`);
  return `${r.rules.length} rules (${parts.join(", ")})${r.levelsFile ? ` from ${r.levelsFile}` : ""}`;
}

export interface TextOptions {
  /** Also print the resource counts by type. */
  verbose?: boolean;
}

export function formatText(r: StackReport, opts: TextOptions = {}): string {
  if (r.error) return `stack ${r.stack}: configuration error, not planned\n  ${r.error.replace(/\n/g, "\n  ")}`;
  const lines = [`stack ${r.stack}: ${r.resources} resources${r.outDir ? ` → ${r.outDir}` : ""}`];
  for (const s of r.sections ?? []) {
    lines.push(`  ${s.title}`);
    for (const l of s.text) lines.push(`    ${l}`);
  }
  if (r.capacity) lines.push(...formatCapacity(r.capacity));
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  if (opts.verbose) for (const [type, n] of Object.entries(r.countsByType)) lines.push(`  ${String(n).padStart(4)}  ${type}`);
  const rules = rulesLine(r);
  if (r.violations.length === 0) lines.push(`  policies: no violations${rules ? `; ${rules}` : ""}`);
  else lines.push(`  policies: ${r.mandatory} mandatory, ${r.advisory} advisory violation(s)${rules ? `; ${rules}` : ""}`);
  for (const v of r.violations) {
    lines.push(`  [${v.level}] ${v.policy}: ${v.resource || "(stack)"}`);
    if (v.path !== undefined) lines.push(`      at:  ${v.path} = ${showValue(v.value)}`);
    lines.push(`      ${v.message}`);
    if (v.remediation) lines.push(`      fix: ${v.remediation}`);
  }
  return lines.join("\n");
}
