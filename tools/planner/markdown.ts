// The pull-request comment: per stack a heading with the counts and the policy verdict, the
// report's sections (the human summary), the stack-file keys that changed (old → new), the
// policy violations marked new / fixed / already on the base, what deletes and replacements
// mean (downtime, data), then a collapsible table of the resource changes with long values
// as diff blocks and new objects as JSON blocks. GitHub-flavoured Markdown, as rendered in a
// PR comment or a job summary.
import { MASK } from "./fakes";
import {
  configLine,
  displayPath,
  isBlock,
  mergeRepeated,
  replaceNote,
  showValue,
  summaryLine,
  type MergedChange,
  type ResourceChange,
  type StackDiff,
} from "./diff";
import { rulesLine, type StackReport } from "./report";
import { restartsCell, reviewCounts, stackImpact, type Impact } from "./impact";
import { commandLine, createdSummary, groupCard, plainChanges } from "./meaning";
import type { RecordedResource } from "./record";
import { COST_EXCLUDES } from "../../config/cost";
import { EC2_PRICES_SOURCE } from "../../components/upstream/ec2-prices";

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

/**
 * Prose that GitHub must not take as HTML: `<environment>` in a fix text would be an unknown tag and
 * vanish. Outside code spans only (inside them GitHub shows the characters as they are).
 */
export function text(s: string): string {
  return s
    .replace(/\r?\n/g, " ")
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")))
    .join("");
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

/** The items a merged change stands for: "on 6 routes (vision-http, vision-grpc, … 4 more)". */
function overText(p: MergedChange): string {
  if (!p.over) return "";
  const { list, values } = p.over;
  const shown = values.slice(0, 3).join(", ") + (values.length > 3 ? `, … ${values.length - 3} more` : "");
  return ` on ${values.length} ${list} (${shown})`;
}

function changeCell(p0: MergedChange, r: ResourceChange): string {
  const p = { ...p0, path: displayPath(p0.path) };
  const flag = p.forcesReplacement && !r.contentHashed ? " ⚠️ forces replacement" : "";
  const ignored = p.ignored ? ` — _ignored: ${p.ignored}_` : "";
  const on = overText(p0);
  if (p.secret) return `${code(p.path)}: ${MASK} changed (secret, value not shown)${on}${flag}${ignored}`;
  if (p.lines) return `${code(p.path)}: see the diff below${on}${flag}${ignored}`;
  if (isBlock(p.old) || isBlock(p.new))
    return p0.over && p.kind !== "change"
      ? `${code(p.path)}: ${p.kind === "add" ? "added" : "removed"}: ${on.replace(/^ on /, "")}, see below${flag}${ignored}`
      : `${code(p.path)}: ${p.kind === "add" ? "added" : p.kind === "remove" ? "removed" : "changed"}${on}, see below${flag}${ignored}`;
  return `${code(p.path)}: ${code(showValue(p.old))} → ${code(showValue(p.new))}${on}${flag}${ignored}`;
}

function resourceRows(changes: readonly ResourceChange[], created: (r: ResourceChange) => string = () => ""): string[] {
  // The type under the name (not a column of its own): the properties get the width.
  const rows = ["| Change | Resource | Properties |", "|---|---|---|"];
  for (const r of changes) {
    const props = mergeRepeated(r.changes)
      .map((p) => changeCell(p, r))
      .join("<br>");
    const why = r.op === "replace" ? replaceNote(r) : r.op === "none" ? "only ignored changes: `pulumi up` leaves it" : "";
    const renamed = r.renamedFrom ? `renamed from ${code(r.renamedFrom.split("::").pop() ?? "")} (aliases)` : "";
    const label = r.contentHashed ? "🔁 replace (content-hashed)" : OP_LABEL[r.op];
    const what = r.op === "create" ? created(r) : "";
    rows.push(`| ${label} | ${cell(`${code(r.name)}<br><sub>${text(r.type)}</sub>`)} | ${cell([renamed, why, what, props].filter(Boolean).join("<br>"))} |`);
  }
  return rows;
}

/** The values a table cell cannot hold: line diffs of long strings, objects as JSON blocks (one for a merged change: its first item). */
function valueBlocks(changes: readonly ResourceChange[]): string[] {
  const out: string[] = [];
  for (const r of changes) {
    for (const p of mergeRepeated(r.changes)) {
      const first = p.over ? ` (the first of ${p.over.values.length}: ${p.over.id}=${p.over.values[0]}; the others alike)` : "";
      const head = `**${cell(r.name)}** ${code(displayPath(p.path))}${p.decoded ? " (base64, decoded)" : ""}${first}${p.forcesReplacement && !r.contentHashed ? " (forces replacement)" : ""}${p.ignored ? ` (ignored: ${p.ignored})` : ""}`;
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
    out.push(`- ${violationMark(diff, v)}**${v.level}** ${code(v.policy)} on ${code(v.resource)}${v.path ? ` at ${code(v.path)}` : ""}: ${text(v.message)}`);
    if (v.remediation) out.push(`  - Fix: ${text(v.remediation)}`);
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
  /** Each stack's head resources (for what restarts, and the serving groups' command lines). */
  resources?: ReadonlyMap<string, readonly RecordedResource[]>;
  /** The commit planned (in CI the merge commit of the pull request): named in the footer. */
  commit?: string;
  /** The most characters the body may have (GitHub's comment limit is 65,536); cut between sections only. */
  limit?: number;
}

/** Where a long body may be cut: between sections, never inside a fence or <details>. */
export const CUT = "<!-- cut -->";

const capacityShort = (r: StackReport) => r.violations.filter((v) => v.policy === "gpu-capacity-holds-serving-pods");

function capacityCell(r: StackReport): string {
  const short = capacityShort(r);
  const g = r.capacity?.gpus;
  const nums = g ? `${g.needed.max} of ${g.available.max} GPUs at max` : "";
  if (short.length) return `${short.some((v) => v.level === "mandatory") ? "❌" : "⚠️"} short: ${nums}`;
  return g ? `✅ ${nums}` : "—";
}

function verdictCell(r: StackReport, diff?: StackDiff): string {
  if (r.error) return "❌ config error";
  const fresh = diff?.policy?.new.length ?? 0;
  if (r.mandatory > 0) return `❌ ${r.mandatory} mandatory${fresh ? ` (${fresh} new)` : ""}`;
  if (r.advisory > 0) return `⚠️ ${r.advisory} advisory${fresh ? ` (${fresh} new)` : ""}`;
  return "✅ pass";
}

function countsText(c: StackDiff["counts"]): string {
  const parts = (["create", "update", "replace", "delete"] as const).filter((k) => c[k]).map((k) => `${c[k]} ${k}`);
  return parts.length ? parts.join(" · ") : "no resource change";
}

function costCell(d?: StackDiff): string {
  const c = d?.cost;
  if (!c) return "—";
  if (c.min === undefined || c.max === undefined) return cell(c.text);
  const sign = (n: number) => `${n < 0 ? "−" : "+"}$${Math.abs(Math.round(n)).toLocaleString("en-US")}`;
  if (Math.round(c.min) === 0 && Math.round(c.max) === 0) return "±$0";
  return Math.round(c.min) === Math.round(c.max) ? `${sign(c.min)}/mo` : `${sign(c.min)}..${sign(c.max)}/mo`;
}

const changed = (d?: StackDiff) => !!d && (!!d.baseError || d.newStack || d.resources.length > 0 || d.config.length > 0);

/** Stacks in review order: changed first (prod first among them, then staging, dev, the rest by name), then the unchanged. */
export function reviewOrder(reports: readonly StackReport[], diffs?: ReadonlyMap<string, StackDiff>): StackReport[] {
  const rank = (s: string) => ["prod", "production", "staging", "dev"].indexOf(s);
  const key = (r: StackReport) => [r.error || changed(diffs?.get(r.stack)) ? 0 : 1, rank(r.stack) < 0 ? 9 : rank(r.stack)] as const;
  return [...reports].sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1] || a.stack.localeCompare(b.stack));
}

/** The overview: one row per changed (or failing) stack, what it costs, whether it is safe, what restarts and goes down. */
export function overview(reports: readonly StackReport[], diffs: ReadonlyMap<string, StackDiff> | undefined, impacts: ReadonlyMap<string, Impact>): string[] {
  const rows = ["| Stack | Changes | GPU cost | Policies | Capacity | Restarts | Downtime |", "|---|---|---|---|---|---|---|"];
  const unchanged: string[] = [];
  for (const r of reviewOrder(reports, diffs)) {
    const d = diffs?.get(r.stack);
    if (!r.error && diffs && !changed(d)) {
      unchanged.push(`${code(r.stack)} (${verdictCell(r)})`);
      continue;
    }
    const i = impacts.get(r.stack);
    const changes = r.error
      ? "not planned"
      : d?.baseError
        ? "base does not plan"
        : d
          ? countsText(i?.counts ?? reviewCounts(d.resources))
          : `${r.resources} resources`;
    const down = i?.downtime.length ? `⛔ ${cell(i.downtime.map((x) => x.split(":")[0]).join(", "))}` : i ? "none" : "—";
    rows.push(
      `| [**${r.stack}**](#stack-${r.stack}) | ${changes} | ${costCell(d)} | ${verdictCell(r, d)} | ${r.error ? "—" : capacityCell(r)} | ${i ? cell(restartsCell(i)) : "—"} | ${down} |`,
    );
  }
  const out = rows.length > 2 ? rows : [];
  if (unchanged.length) out.push("", `Unchanged: ${unchanged.join(", ")}.`);
  return out;
}

function impactLines(i: Impact): string[] {
  if (i.restarts.length === 0 && i.downtime.length === 0 && i.routine.length === 0) return [];
  const out = ["", "**Impact and rollout** (in the order `pulumi up` applies it)", ""];
  let n = 1;
  for (const r of i.restarts)
    out.push(
      `${n++}. ${code(r.what)} — ${r.how === "starts" ? "starts" : r.how === "nodes" ? "replaced" : r.how === "all at once" ? "restarts all at once" : "rolling restart"}: ${text(r.why)}${r.minimum !== undefined && r.how !== "nodes" ? ` (minimum ${r.minimum} pod${r.minimum === 1 ? "" : "s"})` : ""}`,
    );
  for (const d of i.downtime) out.push(`- ⛔ **downtime** — ${text(d)}`);
  for (const x of i.routine) out.push(`- 🔁 routine: ${text(x)}`);
  return out;
}

function groupCards(r: StackReport, diff: StackDiff, head: readonly RecordedResource[]): string[] {
  const out: string[] = [];
  // One GPU's share of the node group's monthly cost at its maximum (the nodes' price over their GPUs).
  const gpus = r.capacity?.gpus.available.max;
  const perGpu = diff.cost?.head && gpus ? diff.cost.head.max / gpus : undefined;
  for (const c of diff.resources.filter((x) => x.type === "kubernetes:apps/v1:StatefulSet" && (x.op === "create" || x.op === "update" || x.op === "replace"))) {
    const sts = head.find((r) => r.urn === c.urn);
    if (!sts || commandLine(sts).length === 0) continue;
    const argsChange = c.changes.find((p) => /containers\[name=triton\]\.(args|command)$/.test(p.path) && p.lines);
    if (c.op !== "create" && !argsChange) continue;
    const card = groupCard(sts, head, undefined, perGpu);
    out.push(
      "",
      `<details${c.op === "create" ? " open" : ""}><summary><b>${c.op === "create" ? "New" : "Changed"} serving StatefulSet <code>${sts.name}</code></b>: ${text(card.lines[2])}</summary>`,
      "",
      ...card.lines.slice(0, 2).map((l) => `- ${text(l)}`),
      "",
      ...(argsChange ? fenced("diff", argsChange.lines!.join("\n")) : fenced("sh", card.command.join(" \\\n  "))),
      "",
      "</details>",
    );
  }
  return out;
}

/** One stack's section of the comment. `diff` is absent when no --base was given. */
export function stackMarkdown(r: StackReport, diff?: StackDiff, opts: MarkdownOptions = {}): string {
  const lines: string[] = [];
  const anchor = ` <a id="stack-${r.stack}"></a>`;
  if (r.error) {
    // Each problem (`  - <key> <rule>`, lib/errors.ts) as a list item that wraps, its key as code; any other error as it is.
    const problems = r.error.split("\n").map((l) => /^ {2}- (\S+) (.*)$/.exec(l));
    const listed = problems.length > 1 && problems.slice(1).every((m) => m !== null);
    lines.push(
      `### \`${r.stack}\`: ${verdict(r)}${anchor}`,
      "",
      "The other stacks were still planned. The error (exit 2):",
      "",
      ...(listed ? [text(r.error.split("\n")[0]), "", ...problems.slice(1).map((m) => `- ${code(m![1])} ${text(m![2])}`)] : fenced("text", r.error)),
    );
    return lines.join("\n");
  }
  const head = opts.resources?.get(r.stack) ?? [];
  const impact = diff && !diff.baseError ? stackImpact(diff, head) : undefined;
  if (diff?.baseError) {
    lines.push(
      `### \`${r.stack}\`: not compared; ${verdict(r)}${anchor}`,
      "",
      `The base ${code(diff.base)} does not plan:`,
      "",
      ...fenced("text", diff.baseError),
    );
  } else if (diff) {
    lines.push(`### \`${r.stack}\`: ${summaryLine({ ...diff, counts: impact!.counts })}; ${verdict(r)}${anchor}`);
    if (diff.newStack) lines.push("", `New stack: no \`Pulumi.${r.stack}.yaml\` at the base revision.`);
    if (diff.cost) lines.push("", `**GPU cost (on demand)**: ${diff.cost.text}`);
  } else {
    lines.push(`### \`${r.stack}\`: ${r.resources} resources; ${verdict(r)}${anchor}`);
    lines.push(...sections(r)); // no base: the summary is what there is to read
  }
  // A capacity shortfall first: the keys and numbers of what would not run.
  const short = capacityShort(r);
  if (short.length)
    lines.push(
      "",
      ...short.map((v) => `> ${v.level === "mandatory" ? "❌" : "⚠️"} **Capacity shortfall (${v.level})** at ${code("gpu.scaling.max")}: ${text(v.message)}`),
    );
  if (impact) lines.push(...impactLines(impact));
  if (diff && !diff.baseError) {
    const meanings = [...plainChanges(diff), ...(diff.notes ?? [])];
    if (meanings.length) {
      lines.push("", "**What changes**", "");
      for (const m of meanings) lines.push(`- ${text(m.text)} (${m.keys.map(code).join(", ")})`);
    }
    lines.push(...groupCards(r, diff, head));
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
      for (const { c, w } of warnings) lines.push(`- ${WARNING_LABEL[w.kind]} — ${OP_LABEL[c.op].replace(/\*/g, "")} ${code(c.name)}: ${text(w.message)}`);
    }
  }
  lines.push(...violations(r, diff));
  if (diff && !diff.baseError) {
    if (diff.resources.length === 0 && diff.config.length === 0) {
      lines.push("", `No changes against ${code(diff.base)}.`);
    } else if (diff.resources.length) {
      const serious = diff.resources.some((c) => (c.op === "replace" && !c.contentHashed) || c.op === "delete");
      lines.push(
        "",
        `<details${serious ? " open" : ""}><summary>${diff.resources.length} resource change(s) against <code>${diff.base.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</code>, with the raw values</summary>`,
        "",
        ...resourceRows(diff.resources, (c) => text(createdSummary(head.find((x) => x.urn === c.urn)))),
        ...valueBlocks(diff.resources),
        "",
        "</details>",
      );
    }
  }
  const summary = diff ? sections(r) : [];
  if (summary.length) lines.push("", `<details><summary>Stack summary (${r.resources} resources)</summary>`, ...summary, "", "</details>");
  const rules = rulesLine(r);
  if (rules) lines.push("", `<sub>Policies: ${text(rules)}.</sub>`);
  if (opts.verbose) {
    lines.push("", `<details><summary>${r.resources} resources by type</summary>`, "", "| Type | Count |", "|---|---|");
    for (const [t, n] of Object.entries(r.countsByType)) lines.push(`| ${cell(code(t))} | ${n} |`);
    lines.push("", "</details>");
  }
  return lines.join("\n");
}

/** The body cut to `limit` characters between sections (CUT lines), the footer kept; what was left out named. */
export function fitComment(head: string, sections: readonly string[], footer: string, limit: number): string {
  let body = head;
  const left: string[] = [];
  for (const s of sections) {
    const next = `${body}\n\n${CUT}\n${s}`;
    if (left.length === 0 && next.length + footer.length + 300 <= limit) body = next;
    else left.push(/<a id="stack-([^"]+)">/.exec(s)?.[1] ?? "a section");
  }
  if (left.length)
    body += `\n\n${CUT}\n> ✂️ Cut at GitHub's comment limit: ${left.map(code).join(", ")} not shown here; the whole plan is in the job summary and the \`offline-plan\` artifact.`;
  return `${body}\n\n${footer}\n`;
}

/** The whole comment body: the marker, a heading, the overview, then every changed stack; the footer names the commit planned. */
export function planMarkdown(reports: readonly StackReport[], diffs?: ReadonlyMap<string, StackDiff>, base?: string, opts: MarkdownOptions = {}): string {
  const head = base ? `## Offline plan against \`${base}\`` : "## Offline plan";
  const failed = reports.filter((r) => r.error).map((r) => code(r.stack));
  const impacts = new Map<string, Impact>();
  for (const r of reports) {
    const d = diffs?.get(r.stack);
    if (d && !d.baseError && !r.error) impacts.set(r.stack, stackImpact(d, opts.resources?.get(r.stack) ?? []));
  }
  const errors = failed.length ? ["", `❌ ${failed.join(", ")}: configuration error (exit 2); every other stack is planned below.`] : [];
  const priced = reports.some((r) => diffs?.get(r.stack)?.cost);
  const costNote = priced
    ? `<sub>GPU cost: GPU nodes on demand, at the stack's minimum..maximum, per month of 730 h; prices: ${text(`${EC2_PRICES_SOURCE.source}, as of ${EC2_PRICES_SOURCE.asOf}`)}; leaves out ${COST_EXCLUDES.join(", ")}.</sub>`
    : "";
  const top = [COMMENT_MARKER, head, ...errors, "", ...overview(reports, diffs, impacts), ...(costNote ? ["", costNote] : [])].join("\n");
  const stacks = reviewOrder(reports, diffs)
    .filter((r) => !diffs || r.error || changed(diffs.get(r.stack)))
    .map((r) => stackMarkdown(r, diffs?.get(r.stack), opts));
  const note =
    "<sub>Computed by `npm run plan` without cloud credentials: the program's resources and the policy pack, not the live state; values the cloud assigns are placeholders." +
    (opts.commit ? ` Planned commit \`${opts.commit.slice(0, 12)}\`${base ? ` (the pull request merged into \`${base}\`, as CI checks it out)` : ""}.` : "") +
    "</sub>";
  return fitComment(top, stacks, note, opts.limit ?? 64_000); // room for the comment workflow's footer under GitHub's 65,536
}
