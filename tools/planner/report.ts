// What the planner prints: resource counts by type, then each violation.
import type { RecordedResource } from "./record";
import type { Violation } from "./policy";
import { formatCapacity, type CapacityPlan } from "./capacity";

export interface StackReport {
  stack: string;
  outDir?: string;
  resources: number;
  countsByType: Record<string, number>;
  violations: Violation[];
  mandatory: number;
  advisory: number;
  /** The stack's capacity plan (GPUs needed and available), when the project computes one. */
  capacity?: CapacityPlan;
  /** What may go wrong although the plan is accepted (the capacity plan's and the program's, lib/warnings.ts); never changes the exit code. */
  warnings: string[];
}

export function countByType(resources: RecordedResource[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of resources) counts[r.type] = (counts[r.type] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

export function stackReport(
  stack: string,
  resources: RecordedResource[],
  violations: Violation[],
  outDir?: string,
  capacity?: CapacityPlan,
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
    ...(capacity ? { capacity } : {}),
    warnings: [...(capacity?.warnings ?? []), ...programWarnings],
  };
}

/** A value on one line, cut so a long document (an inline policy, a bootstrap) does not flood the report. */
function showValue(v: unknown): string {
  const s = JSON.stringify(v) ?? "null";
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
}

export function formatText(r: StackReport): string {
  const lines = [`stack ${r.stack}: ${r.resources} resources${r.outDir ? ` → ${r.outDir}` : ""}`];
  for (const [type, n] of Object.entries(r.countsByType)) lines.push(`  ${String(n).padStart(4)}  ${type}`);
  if (r.capacity) lines.push(...formatCapacity(r.capacity));
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  if (r.violations.length === 0) lines.push("  policies: no violations");
  else lines.push(`  policies: ${r.mandatory} mandatory, ${r.advisory} advisory violation(s)`);
  for (const v of r.violations) {
    lines.push(`  [${v.level}] ${v.policy}: ${v.resource || "(stack)"}`);
    if (v.path !== undefined) lines.push(`      at:  ${v.path} = ${showValue(v.value)}`);
    lines.push(`      ${v.message}`);
    if (v.remediation) lines.push(`      fix: ${v.remediation}`);
  }
  return lines.join("\n");
}
