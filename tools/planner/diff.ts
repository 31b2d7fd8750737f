// The plan diff: what `pulumi preview` would report between two recorded plans, computed
// offline. Resources are matched by URN (as the engine does without aliases); for each
// update, the changed property paths with old → new values. Pure: two resources arrays in,
// plain data out.
import { MASK } from "./fakes";
import type { RecordedResource } from "./record";
import { replaceReasons } from "./replacement";

export type Segment = string | number;

export interface PropertyChange {
  /** Pulumi's property-path notation: spec.selector.matchLabels["app.kubernetes.io/name"]. */
  path: string;
  kind: "add" | "remove" | "change";
  old?: unknown;
  new?: unknown;
  /** The value is a secret: old/new are MASK, the change was seen through fingerprints. */
  secret?: true;
  /** A line diff for long or multi-line strings (embedded YAML/JSON), lines prefixed "+ ", "- ", "  ". */
  lines?: string[];
  /** This change is (part of) what forces the replacement. */
  forcesReplacement?: true;
}

export interface ResourceChange {
  op: "create" | "update" | "replace" | "delete";
  urn: string;
  type: string;
  name: string;
  custom: boolean;
  /** For update/replace: what changed. */
  changes: PropertyChange[];
  /** For replace: the replace-forcing property paths that changed. */
  replaceReasons: string[];
}

/** Secret fingerprints of one plan: urn → JSON(path segments) → fingerprint (record.ts). */
export type SecretFingerprints = Record<string, Record<string, string>>;

export interface ConfigChange {
  key: string;
  /** Only secure: values are reported here; plain config shows through the resources it changes. */
  secret: true;
  kind: "add" | "remove" | "change";
}

export interface StackDiff {
  stack: string;
  /** The git ref the plan was compared with. */
  base: string;
  /** The stack had no stack file at the base revision: everything is a create. */
  newStack?: true;
  counts: { create: number; update: number; replace: number; delete: number };
  resources: ResourceChange[];
  config: ConfigChange[];
}

/** Strings longer than this, or with a newline, are shown as a line diff. */
export const LONG_VALUE = 120;

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Format path segments the way Pulumi prints property paths. */
export function formatPath(segs: readonly Segment[]): string {
  let out = "";
  for (const s of segs) {
    if (typeof s === "number") out += `[${s}]`;
    else if (IDENT.test(s)) out += (out ? "." : "") + s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Embedded JSON is compared pretty-printed, so a one-line policy document diffs by line. */
function asLines(s: string): string[] {
  const json = embeddedJson(s);
  return (json === undefined ? s : JSON.stringify(json, null, 2)).split("\n");
}

/**
 * A line diff (longest common subsequence) showing changed lines with `context` lines
 * around them; "…" marks skipped unchanged lines.
 */
export function lineDiff(oldText: string, newText: string, context = 2): string[] {
  const a = asLines(oldText);
  const b = asLines(newText);
  const n = a.length;
  const m = b.length;
  let ops: { t: " " | "-" | "+"; line: string }[];
  if (n * m > 4_000_000) {
    // Too large for the quadratic table: show it whole rather than stall the plan.
    ops = [...a.map((line) => ({ t: "-" as const, line })), ...b.map((line) => ({ t: "+" as const, line }))];
  } else {
    const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    ops = [];
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) {
        ops.push({ t: " ", line: a[i++] });
        j++;
      } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) {
        ops.push({ t: "-", line: a[i++] }); // removals before additions (>=), as `diff -u` prints them
      } else {
        ops.push({ t: "+", line: b[j++] });
      }
    }
  }
  const keep = ops.map((o, k) => o.t !== " " || ops.slice(Math.max(0, k - context), k + context + 1).some((x) => x.t !== " "));
  const out: string[] = [];
  ops.forEach((o, k) => {
    if (keep[k]) out.push(`${o.t} ${o.line}`);
    else if (keep[k - 1] !== false || k === 0) out.push("  …");
  });
  return out;
}

/** A string holding a JSON object or array (provider config, policy documents), parsed; else undefined. */
function embeddedJson(v: unknown): object | undefined {
  if (typeof v !== "string") return undefined;
  const t = v.trim();
  if (!((t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]")))) return undefined;
  try {
    return JSON.parse(t) as object;
  } catch {
    return undefined;
  }
}

function isLong(v: unknown): v is string {
  return typeof v === "string" && (v.includes("\n") || v.length > LONG_VALUE);
}

/** Did any secret at or beneath (or above) `prefix` change between the two plans? */
function secretChanged(prefix: readonly Segment[], oldFp: Record<string, string>, newFp: Record<string, string>): boolean {
  const related = (key: string) => {
    const segs = JSON.parse(key) as Segment[];
    const n = Math.min(segs.length, prefix.length);
    for (let i = 0; i < n; i++) if (String(segs[i]) !== String(prefix[i])) return false;
    return true;
  };
  const keys = new Set([...Object.keys(oldFp), ...Object.keys(newFp)].filter(related));
  return [...keys].some((k) => oldFp[k] !== newFp[k]);
}

/** The property changes between two inputs objects; secrets compared by fingerprint, shown masked. */
export function diffProps(
  oldProps: Record<string, unknown>,
  newProps: Record<string, unknown>,
  oldFp: Record<string, string> = {},
  newFp: Record<string, string> = {},
): PropertyChange[] {
  const out: PropertyChange[] = [];
  const walk = (a: unknown, b: unknown, at: Segment[]) => {
    if (a === MASK || b === MASK) {
      // Either side secret: never show the other side's value next to it either.
      const changed = a !== b || secretChanged(at, oldFp, newFp);
      if (changed)
        out.push({
          path: formatPath(at),
          kind: a === undefined ? "add" : b === undefined ? "remove" : "change",
          old: a === undefined ? undefined : MASK,
          new: b === undefined ? undefined : MASK,
          secret: true,
        });
      return;
    }
    if (a === undefined && b === undefined) return;
    if (a === undefined || b === undefined) {
      const c: PropertyChange = { path: formatPath(at), kind: a === undefined ? "add" : "remove", old: a, new: b };
      if (isLong(a ?? b)) c.lines = lineDiff(typeof a === "string" ? a : "", typeof b === "string" ? b : "");
      out.push(c);
      return;
    }
    if (isObject(a) && isObject(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], [...at, k]);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], [...at, i]);
      return;
    }
    if (a === b) return;
    // JSON held in a string (e.g. a provider's defaultTags) diffs by path inside it, so a
    // tag change reads defaultTags.tags.team, not a whole re-serialised document.
    const ja = embeddedJson(a);
    const jb = embeddedJson(b);
    if (ja !== undefined && jb !== undefined) {
      walk(ja, jb, at);
      return;
    }
    if (typeof a === "object" || typeof b === "object" || JSON.stringify(a) !== JSON.stringify(b)) {
      const c: PropertyChange = { path: formatPath(at), kind: "change", old: a, new: b };
      // A non-string side (a string that became an object) shows as its JSON, not "[object Object]".
      if (isLong(a) || isLong(b)) c.lines = lineDiff(typeof a === "string" ? a : JSON.stringify(a), typeof b === "string" ? b : JSON.stringify(b));
      out.push(c);
    }
  };
  walk(oldProps, newProps, []);
  return out;
}

/** "a.b" covers "a.b.c" and "a" (a whole subtree replaced), not "a.bc". */
function overlaps(changePath: string, reason: string): boolean {
  const norm = (p: string) => p.replace(/\[(\d+)\]/g, ".$1").replace(/\["([^"]*)"\]/g, ".$1");
  const c = norm(changePath);
  return c === reason || c.startsWith(reason + ".") || reason.startsWith(c + ".");
}

/** Compare two plans of one stack: creates, updates (with paths), replacements, deletes. */
export function diffResources(
  base: readonly RecordedResource[],
  head: readonly RecordedResource[],
  fingerprints: { base?: SecretFingerprints; head?: SecretFingerprints } = {},
): ResourceChange[] {
  const before = new Map(base.map((r) => [r.urn, r]));
  const after = new Set(head.map((r) => r.urn));
  const changes: ResourceChange[] = [];
  const entry = (op: ResourceChange["op"], r: RecordedResource, props: PropertyChange[] = [], reasons: string[] = []): ResourceChange => ({
    op,
    urn: r.urn,
    type: r.type,
    name: r.name,
    custom: r.custom,
    changes: props,
    replaceReasons: reasons,
  });
  for (const r of head) {
    const old = before.get(r.urn);
    if (!old) {
      changes.push(entry("create", r));
      continue;
    }
    const oldFp = fingerprints.base?.[r.urn] ?? {};
    const newFp = fingerprints.head?.[r.urn] ?? {};
    const props = diffProps(old.props, r.props, oldFp, newFp);
    if (props.length === 0) continue;
    const reasons = replaceReasons(r.type, old.props, r.props, (p) => secretChanged(p.split("."), oldFp, newFp));
    for (const c of props) if (reasons.some((p) => overlaps(c.path, p))) c.forcesReplacement = true;
    changes.push(entry(reasons.length > 0 ? "replace" : "update", r, props, reasons));
  }
  // Deletes last, in the base's order (Pulumi deletes after creating and updating).
  for (const r of base) if (!after.has(r.urn)) changes.push(entry("delete", r));
  return changes;
}

export function countChanges(changes: readonly ResourceChange[]): StackDiff["counts"] {
  const counts = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const c of changes) counts[c.op]++;
  return counts;
}

/** Secure config values whose ciphertext changed (the only trace a secret's change leaves offline). */
export function diffSecureConfig(base: Record<string, string>, head: Record<string, string>): ConfigChange[] {
  const keys = [...new Set([...Object.keys(base), ...Object.keys(head)])].sort();
  return keys
    .filter((k) => base[k] !== head[k])
    .map((key) => ({
      key,
      secret: true as const,
      kind: base[key] === undefined ? ("add" as const) : head[key] === undefined ? ("remove" as const) : ("change" as const),
    }));
}

// ---- terminal text -------------------------------------------------------------------

export const OP_SYMBOL: Record<ResourceChange["op"], string> = { create: "+", update: "~", replace: "+-", delete: "-" };

/** A value as a reviewer reads it: JSON, shortened; secrets as MASK. */
export function showValue(v: unknown, max = 80): string {
  if (v === MASK) return MASK;
  const s = v === undefined ? "(none)" : JSON.stringify(v);
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

export function summaryLine(d: StackDiff): string {
  const c = d.counts;
  return `${c.create} to create, ${c.update} to update, ${c.replace} to replace, ${c.delete} to delete`;
}

/** The terminal rendering of one stack's diff. */
export function formatDiffText(d: StackDiff): string {
  const lines = [`stack ${d.stack} against ${d.base}${d.newStack ? " (new stack)" : ""}: ${summaryLine(d)}`];
  for (const c of d.config)
    lines.push(`  ~ config ${c.key}: secret ${c.kind === "change" ? "changed" : c.kind === "add" ? "added" : "removed"} (value not shown)`);
  for (const r of d.resources) {
    lines.push(`  ${OP_SYMBOL[r.op].padEnd(2)} ${r.type} ${r.name}${r.op === "replace" ? `  (replaced: ${r.replaceReasons.join(", ")} changed)` : ""}`);
    for (const p of r.changes) {
      const flag = p.forcesReplacement ? "  [forces replacement]" : "";
      if (p.lines) {
        lines.push(`        ${p.path}:${flag}`);
        for (const l of p.lines) lines.push(`          ${l}`);
      } else {
        lines.push(`        ${p.path}: ${showValue(p.old)} → ${showValue(p.new)}${p.secret ? " (secret changed)" : ""}${flag}`);
      }
    }
  }
  if (d.resources.length === 0 && d.config.length === 0) lines.push("  no changes");
  return lines.join("\n");
}
