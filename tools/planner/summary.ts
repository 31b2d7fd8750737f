// The summary a person reads first in every plan, per stack, rendered: rows of text (a label
// and its lines), printed aligned in a terminal and as a Markdown list in the pull-request body.
// The rows are the project's (its components write them; Project.sections hands them over); the
// planner adds one of its own, the policy result. Pure, and it knows no project.

/** One row: a label and its lines (the first beside the label, the others under it). */
export interface SummaryRow {
  readonly label: string;
  readonly lines: readonly string[];
}

/** The policy result of the stack: the rules evaluated with their levels, and the violations. */
export interface SummaryPolicy {
  readonly rules: readonly { readonly name: string; readonly level: string }[];
  readonly violations: readonly { readonly policy: string; readonly level: string }[];
  readonly levelsFile?: string;
}

const list = (xs: readonly string[]) => (xs.length ? xs.join(", ") : "none");
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const LEVELS = ["mandatory", "advisory", "remediate", "disabled"];

/** The policy row: how many rules ran at each level, and the violations by level and rule. */
export function policyRow(p: SummaryPolicy): SummaryRow {
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
  /** The rows, then whatever the project adds (this repository: the cost; the capacity plan is the report's own `capacity`). */
  data: { rows: SummaryRow[] } & Record<string, unknown>;
}

/** The summary section of a stack: the project's rows, then the policy row, rendered; `data` beside the rows in the JSON. */
export function summarySection(input: SummarySectionInput, rows: readonly SummaryRow[], data: Record<string, unknown> = {}): SummarySection {
  const all = [...rows, policyRow({ rules: input.rules, violations: input.violations })];
  return { id: "summary", title: "summary", text: summaryText(all), markdown: summaryMarkdown(all), data: { rows: all, ...data } };
}
