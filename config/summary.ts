// The stack's summary, as every component writes its own rows (its descriptor's `summary`,
// components/registry.ts), in reading order; the planner adds its policy row and renders them
// (tools/planner/summary.ts), reaching this module through Project.sections.
import { summaryRowsOf, type SummaryRow } from "../components/component";
import { REGISTRY } from "../components/registry";
import { stackCost, type StackCost } from "../components/gpu/cost";
import { loadConfig, type StackConfig } from "./index";

/** The components' summary rows of a resolved stack configuration, in reading order. */
export function summaryRows(config: StackConfig): SummaryRow[] {
  const { stack, region, ...settings } = config;
  return summaryRowsOf(REGISTRY, { stack, region, settings });
}

/** A stack's summary rows from its raw configuration, and its cost (the JSON report's data beside the rows). */
export function stackSummary(raw: Record<string, string>, stack: string, secretKeys: string[]): { rows: SummaryRow[]; cost: StackCost } {
  const config = loadConfig(raw, stack, secretKeys);
  return { rows: summaryRows(config), cost: stackCost(config) };
}
