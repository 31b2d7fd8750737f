// The pull-request comment: per stack a heading with the counts and the policy verdict, the
// report's sections (the human summary), the stack-file keys that changed (old → new), the
// policy violations marked new / fixed / already on the base, what deletes and replacements
// mean (downtime, data), then a collapsible table of the resource changes with long values
// as diff blocks and new objects as JSON blocks. GitHub-flavoured Markdown, as rendered in a
// PR comment or a job summary.
import { MASK } from "./fakes";
import { configLine, displayPath, isBlock, replaceNote, showValue, summaryLine, type PropertyChange, type ResourceChange, type StackDiff } from "./diff";
import { rulesLine, type StackReport } from "./report";

/** The marker the CI's sticky comment is found by (the first line of every body). */
export const COMMENT_MARKER = "<!-- triton-platform offline plan -->";

const OP_LABEL: Record<ResourceChange["op"], string> = {
  create: "🟢 create",
  update: "🟡 update",
  replace: "🟠 **replace**",
  delete: "🔴 **delete**",
  none: "⚪ no change",
};

const WARNING_LABEL = { downtime: "⛔ downtime", data: "🗑️ data loss", blocked: "🚫 blocked", note: "ℹ️ note" } as const;

/** Text inside a table cell: no pipes or newlines may break the row. */
function cell(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** Inline code that survives backticks in the value. */
function code(s: string): string {
  const fence = s.includes("`") ? "``" : "`";
  return `${fence}${fence === "``" ? " " : ""}${s}${fence === "``" ? " " : ""}${fence}`;
}

/**
 * A fenced block whose fence is longer than any backtick run inside, one entry per line: a
 * caller that indents the block (under a list item) indents every line of it, or the list ends
 * at the body's second line and the fence swallows what follows.
 */
function fenced(lang: string, body: string): string[] {
  const fence = "`".repeat(Math.max(3, ...(body.match(/`+/g) ?? []).map((m) => m.length + 1)));
  return [`${fence}${lang}`, ...body.split("\n"), fence];
}

function verdict(r: StackReport): string {
  if (r.error) return "❌ configuration error: not planned";
  if (r.mandatory > 0) return `❌ ${r.mandatory} mandatory, ${r.advisory} advisory policy violation(s)`;
  if (r.advisory > 0) return `⚠️ ${r.advisory} advisory policy violation(s)`;
  return "✅ policies pass";
}

function changeCell(p0: PropertyChange, r: ResourceChange): string {
  const p = { ...p0, path: displayPath(p0.path) };
  const flag = p.forcesReplacement && !r.contentHashed ? " ⚠️ forces replacement" : "";
  const ignored = p.ignored ? ` — _ignored: ${p.ignored}_` : "";
  if (p.secret) return `${code(p.path)}: ${MASK} changed (secret, value not shown)${flag}${ignored}`;
  if (p.lines) return `${code(p.path)}: see the diff below${flag}${ignored}`;
  if (isBlock(p.old) || isBlock(p.new))
    return `${code(p.path)}: ${p.kind === "add" ? "added" : p.kind === "remove" ? "removed" : "changed"}, see below${flag}${ignored}`;
  return `${code(p.path)}: ${code(showValue(p.old))} → ${code(showValue(p.new))}${flag}${ignored}`;
}

function resourceRows(changes: readonly ResourceChange[]): string[] {
  const rows = ["| Change | Resource | Type | Properties |", "|---|---|---|---|"];
  for (const r of changes) {
    const props = r.changes.map((p) => changeCell(p, r)).join("<br>");
    const why = r.op === "replace" ? replaceNote(r) : r.op === "none" ? "only ignored changes: `pulumi up` leaves it" : "";
    const renamed = r.renamedFrom ? `renamed from ${code(r.renamedFrom.split("::").pop() ?? "")} (aliases)` : "";
    const label = r.contentHashed ? "🔁 replace (content-hashed)" : OP_LABEL[r.op];
    rows.push(`| ${label} | ${cell(code(r.name))} | ${cell(code(r.type))} | ${cell([renamed, why, props].filter(Boolean).join("<br>"))} |`);
  }
  return rows;
}

/** The values a table cell cannot hold: line diffs of long strings, objects as JSON blocks. */
function valueBlocks(changes: readonly ResourceChange[]): string[] {
  const out: string[] = [];
  for (const r of changes) {
    for (const p of r.changes) {
      const head = `**${cell(r.name)}** ${code(displayPath(p.path))}${p.forcesReplacement && !r.contentHashed ? " (forces replacement)" : ""}${p.ignored ? ` (ignored: ${p.ignored})` : ""}`;
      if (p.lines) {
        out.push("", head, "", ...fenced("diff", p.lines.map((l) => (l.startsWith("  …") ? "  …" : l)).join("\n")));
      } else if (!p.secret && (isBlock(p.old) || isBlock(p.new))) {
        out.push("", head, "");
        if (p.kind === "change") out.push("was:", "", ...fenced("json", JSON.stringify(p.old, null, 2)), "", "now:", "");
        out.push(...fenced("json", JSON.stringify(p.kind === "remove" ? p.old : p.new, null, 2)));
      }
    }
  }
  return out;
}

function violationMark(diff: StackDiff | undefined, v: { policy: string; urn: string; path?: string }): string {
  if (!diff?.policy) return "";
  const same = (x: { policy: string; urn: string; path?: string }) => x.policy === v.policy && x.urn === v.urn && (x.path ?? "") === (v.path ?? "");
  if (diff.policy.new.some(same)) return "🆕 new ";
  if (diff.policy.unchanged.some(same)) return "already on the base: ";
  return "";
}

function violations(r: StackReport, diff?: StackDiff): string[] {
  const fixed = diff?.policy?.fixed ?? [];
  if (r.violations.length === 0 && fixed.length === 0) return [];
  const out = [
    "",
    `**Policy violations (${r.violations.length})**${diff?.policy ? ` — ${diff.policy.new.length} new, ${fixed.length} fixed, ${diff.policy.unchanged.length} already on the base` : ""}`,
    "",
  ];
  for (const v of r.violations) {
    out.push(
      `- ${violationMark(diff, v)}**${v.level}** ${code(v.policy)} on ${code(v.resource)}${v.path ? ` at ${code(v.path)}` : ""}: ${v.message.replace(/\r?\n/g, " ")}`,
    );
    if (v.remediation) out.push(`  - Fix: ${v.remediation.replace(/\r?\n/g, " ")}`);
  }
  for (const v of fixed) out.push(`- ✅ fixed: ~~${v.level} ${code(v.policy)} on ${code(v.resource)}~~`);
  return out;
}

function sections(r: StackReport): string[] {
  const out: string[] = [];
  for (const s of r.sections ?? []) out.push("", `**${s.title}**`, "", ...(s.markdown ?? s.text.map((l) => `- ${l}`)));
  return out;
}

export interface MarkdownOptions {
  /** Also list the resource counts by type. */
  verbose?: boolean;
}

/** One stack's section of the comment. `diff` is absent when no --base was given. */
export function stackMarkdown(r: StackReport, diff?: StackDiff, opts: MarkdownOptions = {}): string {
  const lines: string[] = [];
  if (r.error) {
    lines.push(`### \`${r.stack}\`: ${verdict(r)}`, "", "The other stacks were still planned. The error (exit 2):", "", ...fenced("text", r.error));
    return lines.join("\n");
  }
  if (diff?.baseError) {
    lines.push(`### \`${r.stack}\`: not compared; ${verdict(r)}`, "", `The base ${code(diff.base)} does not plan:`, "", ...fenced("text", diff.baseError));
  } else if (diff) {
    lines.push(`### \`${r.stack}\`: ${summaryLine(diff)}; ${verdict(r)}`);
    if (diff.newStack) lines.push("", `New stack: no \`Pulumi.${r.stack}.yaml\` at the base revision.`);
    if (diff.cost) lines.push("", `**GPU cost (on demand)**: ${diff.cost.text}`);
  } else {
    lines.push(`### \`${r.stack}\`: ${r.resources} resources; ${verdict(r)}`);
  }
  lines.push(...sections(r));
  if (diff && !diff.baseError) {
    if (diff.config.length) {
      // A new stack's keys are all new: folded, so the resources and verdict stay in view.
      if (diff.newStack) lines.push("", `<details><summary>Stack file (\`Pulumi.${r.stack}.yaml\`): ${diff.config.length} keys, all new</summary>`, "");
      else lines.push("", `**Stack file changes (\`Pulumi.${r.stack}.yaml\`)**`, "");
      for (const c of diff.config) {
        // A whole new (or removed) mapping, e.g. a serving group, as an indented block under its key.
        const whole = !c.secret && c.kind !== "change" ? (c.kind === "add" ? c.new : c.old) : undefined;
        if (isBlock(whole))
          lines.push(
            `- ${code(c.key)}: ${c.kind === "add" ? "added" : "removed"}`,
            "",
            ...fenced("json", JSON.stringify(whole, null, 2)).map((l) => `  ${l}`),
            "",
          );
        else lines.push(`- ${code(configLine(c))}`);
      }
      if (diff.newStack) lines.push("", "</details>");
    }
    const warnings = diff.resources.flatMap((c) => (c.warnings ?? []).map((w) => ({ c, w })));
    if (warnings.length) {
      lines.push("", "**What the deletes and replacements mean**", "");
      for (const { c, w } of warnings) lines.push(`- ${WARNING_LABEL[w.kind]} — ${OP_LABEL[c.op].replace(/\*/g, "")} ${code(c.name)}: ${w.message}`);
    }
    if (diff.resources.length === 0 && diff.config.length === 0) {
      lines.push("", `No changes against ${code(diff.base)}.`);
    } else if (diff.resources.length) {
      lines.push(
        "",
        `<details${diff.counts.replace + diff.counts.delete > 0 ? " open" : ""}><summary>${diff.resources.length} resource change(s) against <code>${diff.base.replace(/</g, "&lt;")}</code></summary>`,
        "",
        ...resourceRows(diff.resources),
        ...valueBlocks(diff.resources),
        "",
        "</details>",
      );
    }
  }
  lines.push(...violations(r, diff));
  const rules = rulesLine(r);
  if (rules) lines.push("", `<sub>Policies: ${rules}.</sub>`);
  if (opts.verbose) {
    lines.push("", `<details><summary>${r.resources} resources by type</summary>`, "", "| Type | Count |", "|---|---|");
    for (const [t, n] of Object.entries(r.countsByType)) lines.push(`| ${cell(code(t))} | ${n} |`);
    lines.push("", "</details>");
  }
  return lines.join("\n");
}

/** The whole comment body: the marker, a heading, then every stack. */
export function planMarkdown(reports: readonly StackReport[], diffs?: ReadonlyMap<string, StackDiff>, base?: string, opts: MarkdownOptions = {}): string {
  const head = base ? `## Offline plan against \`${base}\`` : "## Offline plan";
  const failed = reports.filter((r) => r.error).map((r) => code(r.stack));
  const note =
    "_Computed by `npm run plan` without cloud credentials: the program's resources and the policy pack, not the live state. " +
    "Values the cloud assigns are placeholders._";
  const errors = failed.length ? ["", `❌ ${failed.join(", ")}: configuration error (exit 2); every other stack is planned below.`] : [];
  return [COMMENT_MARKER, head, "", note, ...errors, ...reports.flatMap((r) => ["", stackMarkdown(r, diffs?.get(r.stack), opts)])].join("\n") + "\n";
}
