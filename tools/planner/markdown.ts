// The pull-request comment: per stack a summary line (creates/updates/replaces/deletes and
// the policy verdict), a collapsible table of the changes, long values as diff blocks, and
// the policy violations with their remediation. GitHub-flavoured Markdown, as rendered in a
// PR comment or a job summary.
import { MASK } from "./fakes";
import { showValue, summaryLine, type PropertyChange, type ResourceChange, type StackDiff } from "./diff";
import type { StackReport } from "./report";

const OP_LABEL: Record<ResourceChange["op"], string> = {
  create: "🟢 create",
  update: "🟡 update",
  replace: "🟠 **replace**",
  delete: "🔴 **delete**",
};

/** Text inside a table cell: no pipes or newlines may break the row. */
function cell(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** Inline code that survives backticks in the value. */
function code(s: string): string {
  const fence = s.includes("`") ? "``" : "`";
  return `${fence}${fence === "``" ? " " : ""}${s}${fence === "``" ? " " : ""}${fence}`;
}

function verdict(r: StackReport): string {
  if (r.mandatory > 0) return `❌ ${r.mandatory} mandatory, ${r.advisory} advisory policy violation(s)`;
  if (r.advisory > 0) return `⚠️ ${r.advisory} advisory policy violation(s)`;
  return "✅ policies pass";
}

function changeCell(p: PropertyChange): string {
  const flag = p.forcesReplacement ? " ⚠️ forces replacement" : "";
  if (p.secret) return `${code(p.path)}: ${MASK} changed (secret, value not shown)${flag}`;
  if (p.lines) return `${code(p.path)}: long value, see diff below${flag}`;
  return `${code(p.path)}: ${code(showValue(p.old, 60))} → ${code(showValue(p.new, 60))}${flag}`;
}

function resourceRows(changes: readonly ResourceChange[]): string[] {
  const rows = ["| Change | Resource | Type | Properties |", "|---|---|---|---|"];
  for (const r of changes) {
    const props = r.changes.map(changeCell).join("<br>");
    const why = r.op === "replace" ? `replaced because ${r.replaceReasons.map(code).join(", ")} changed` : "";
    rows.push(`| ${OP_LABEL[r.op]} | ${cell(code(r.name))} | ${cell(code(r.type))} | ${cell([why, props].filter(Boolean).join("<br>"))} |`);
  }
  return rows;
}

function longValueDiffs(changes: readonly ResourceChange[]): string[] {
  const out: string[] = [];
  for (const r of changes) {
    for (const p of r.changes) {
      if (!p.lines) continue;
      const body = p.lines.map((l) => (l.startsWith("  …") ? "  …" : l)).join("\n");
      // A fence longer than any backtick run inside the value.
      const fence = "`".repeat(Math.max(3, ...(body.match(/`+/g) ?? []).map((m) => m.length + 1)));
      out.push("", `**${cell(r.name)}** ${code(p.path)}${p.forcesReplacement ? " (forces replacement)" : ""}`, "", `${fence}diff`, body, fence);
    }
  }
  return out;
}

function violations(r: StackReport): string[] {
  if (r.violations.length === 0) return [];
  const out = ["", `**Policy violations (${r.violations.length})**`, ""];
  for (const v of r.violations) {
    out.push(`- **${v.level}** ${code(v.policy)} on ${code(v.resource)}: ${v.message.replace(/\r?\n/g, " ")}`);
    if (v.remediation) out.push(`  - Fix: ${v.remediation.replace(/\r?\n/g, " ")}`);
  }
  return out;
}

/** One stack's section of the comment. `diff` is absent when no --base was given. */
export function stackMarkdown(r: StackReport, diff?: StackDiff): string {
  const lines: string[] = [];
  if (diff) {
    const changed = diff.resources.length + diff.config.length;
    lines.push(`### \`${r.stack}\`: ${summaryLine(diff)}; ${verdict(r)}`);
    if (diff.newStack) lines.push("", `New stack: no \`Pulumi.${r.stack}.yaml\` at the base revision.`);
    if (changed === 0) {
      lines.push("", `No changes against ${code(diff.base)}.`);
    } else {
      lines.push(
        "",
        `<details${diff.counts.replace + diff.counts.delete > 0 ? " open" : ""}><summary>${changed} change(s) against <code>${diff.base.replace(/</g, "&lt;")}</code></summary>`,
        "",
      );
      for (const c of diff.config)
        lines.push(`- config ${code(c.key)}: secret ${c.kind === "change" ? "changed" : c.kind === "add" ? "added" : "removed"} (value not shown)`);
      if (diff.config.length) lines.push("");
      if (diff.resources.length) lines.push(...resourceRows(diff.resources));
      lines.push(...longValueDiffs(diff.resources), "", "</details>");
    }
  } else {
    lines.push(`### \`${r.stack}\`: ${r.resources} resources; ${verdict(r)}`);
  }
  lines.push(...violations(r));
  return lines.join("\n");
}

/** The whole comment body: a heading, then every stack. */
export function planMarkdown(reports: readonly StackReport[], diffs?: ReadonlyMap<string, StackDiff>, base?: string): string {
  const head = base ? `## Offline plan against \`${base}\`` : "## Offline plan";
  const note =
    "_Computed by `npm run plan` without cloud credentials: the program's resources and the policy pack, not the live state. " +
    "Values the cloud assigns are placeholders._";
  return [head, "", note, ...reports.flatMap((r) => ["", stackMarkdown(r, diffs?.get(r.stack))])].join("\n") + "\n";
}
