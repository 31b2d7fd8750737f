// The plan diff: what `pulumi up` would do between two recorded plans, computed offline.
// Resources are matched by URN, or through their aliases (the engine's rule: an alias of a
// new resource that names an old URN makes it the same resource); for each update, the
// changed property paths with old → new values. The recorded resource options are honoured:
// a change under ignoreChanges is shown as ignored (and cannot force a replacement),
// replaceOnChanges adds replace-forcing paths, protect makes a delete or replacement fail,
// retainOnDelete leaves the cloud object behind, deleteBeforeReplace is named. List items are
// matched by identity (name, key, port, ...) and paths say so: `clusters[name=vision]`.
// Pure: two resources arrays in, plain data out.
import type { CostDelta } from "../../config/cost";
import { MASK } from "./fakes";
import { aliasUrn } from "./options";
import type { RecordedResource } from "./record";
import { replaceReasons } from "./replacement";

export type Segment = string | number;

/** A list item named by its identity field: `[name=vision-http]`. */
export interface IdSegment {
  id: string;
  value: string | number;
}

/** A displayed path segment: a key, a list position, or a list item by identity. */
export type PathSegment = Segment | IdSegment;

/**
 * Fields that identify a list item, in the order tried: the first one every item of both
 * lists has, with values unique within each list, matches the items (Kubernetes containers,
 * env, volumes and ports by name or port; tolerations by key; Envoy clusters, listeners,
 * routes and virtual hosts by name, mirror policies by cluster; volume mounts by path).
 * `alert|record`: alternatives, one per item (a PrometheusRule group's rules are alerts or
 * recording rules, each named by its own field).
 */
export const IDENTITY_FIELDS = ["name", "alert|record", "key", "containerPort", "port", "mountPath", "cluster_name", "cluster", "sid", "Sid"] as const;

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
  /** Both sides were base64 of text (an EC2 launch template's userData): `lines` diffs the decoded text. */
  decoded?: "base64";
  /** This change is (part of) what forces the replacement. */
  forcesReplacement?: true;
  /** `pulumi up` leaves this property alone (ignoreChanges): why, for the reader. */
  ignored?: string;
  /** The path with list positions (the head's, or the base's for a removal): what ignoreChanges paths match. */
  at?: Segment[];
}

/** What a delete, replacement or rename means for the running system, with what to do about it. */
export interface Warning {
  /** "downtime" (pods stop), "data" (stored data is lost), "blocked" (pulumi up will refuse), "note". */
  kind: "downtime" | "data" | "blocked" | "note";
  message: string;
}

export interface ResourceChange {
  /** "none": only ignored changes, `pulumi up` does nothing to it. */
  op: "create" | "update" | "replace" | "delete" | "none";
  urn: string;
  type: string;
  name: string;
  custom: boolean;
  /** For update/replace: what changed. */
  changes: PropertyChange[];
  /** For replace: the replace-forcing property paths that changed. */
  replaceReasons: string[];
  /** Matched with a base resource of another URN through an alias: that URN. */
  renamedFrom?: string;
  /** For replace: the old object is deleted before the new one exists (deleteBeforeReplace). */
  deleteBeforeReplace?: true;
  /**
   * A content-hashed object (ConfigMap/Secret whose name carries a hash of its data) replaced
   * under a new name: routine. The resources that reference it by name, which roll onto it.
   */
  contentHashed?: { from: string; to: string; consumers: string[] };
  warnings?: Warning[];
}

/** Secret fingerprints of one plan: urn → JSON(path segments) → fingerprint (record.ts). */
export type SecretFingerprints = Record<string, Record<string, string>>;

export interface ConfigChange {
  /** The stack-file key path, without the project's namespace: `gateway.mirrorPercent`, `triton.groups[name=vision].image.tag`. */
  key: string;
  kind: "add" | "remove" | "change";
  old?: unknown;
  new?: unknown;
  /** A secure: value: only that it changed is shown. */
  secret?: true;
}

/** A policy violation of the head, or of the base, marked against the other side. */
export interface PolicyDelta {
  /** In the head, not in the base. */
  new: DeltaViolation[];
  /** In the base, gone in the head. */
  fixed: DeltaViolation[];
  /** In both. */
  unchanged: DeltaViolation[];
}

export interface DeltaViolation {
  policy: string;
  level: string;
  resource: string;
  urn: string;
  path?: string;
  message: string;
}

export interface StackDiff {
  stack: string;
  /** The git ref the plan was compared with. */
  base: string;
  /** The stack had no stack file at the base revision: everything is a create. */
  newStack?: true;
  counts: { create: number; update: number; replace: number; delete: number };
  resources: ResourceChange[];
  /** The stack-file keys that changed, old → new (secure: values only as changed). */
  config: ConfigChange[];
  /** Violations marked new, fixed or already on the base (both evaluated with the head's rules and levels). */
  policy?: PolicyDelta;
  /** The base stack did not plan (its error): nothing could be compared. */
  baseError?: string;
  /** The GPU nodes' monthly on-demand cost, base → head, and its line ("+$1,323/month at minimum, ..."): config/cost.ts. */
  cost?: CostDelta & { text: string };
  /** The project's own plain-words lines about the change (Project.changes): shown under "What changes". */
  notes?: { text: string; keys: string[] }[];
}

/** Strings longer than this, or with a newline, are shown as a line diff. */
export const LONG_VALUE = 120;

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const PLAIN_ID = /^[A-Za-z0-9_.:/#-]+$/;

/** Format path segments the way Pulumi prints property paths; a list item by identity as `[name=value]`. */
export function formatPath(segs: readonly PathSegment[]): string {
  let out = "";
  for (const s of segs) {
    if (typeof s === "object") out += `[${s.id}=${typeof s.value === "string" && PLAIN_ID.test(s.value) ? s.value : JSON.stringify(s.value)}]`;
    else if (typeof s === "number") out += `[${s}]`;
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

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The text a long base64 value encodes (an EC2 user data document, a gzip-free config), when it is
 * exactly that: canonical base64 of UTF-8 with no control characters but tab and line ends.
 * Anything else (binary, a hash, a token) stays as it is.
 */
export function base64Text(v: unknown): string | undefined {
  if (typeof v !== "string" || v.length <= LONG_VALUE || v.length % 4 !== 0 || !BASE64.test(v)) return undefined;
  const bytes = Buffer.from(v, "base64");
  if (bytes.toString("base64") !== v) return undefined;
  const text = bytes.toString("utf8");
  // eslint-disable-next-line no-control-regex
  if (!Buffer.from(text, "utf8").equals(bytes) || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return undefined;
  return text;
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

/** The field of `item` that `id` (an IDENTITY_FIELDS entry, maybe `a|b` alternatives) names it by, and its value; undefined if none or several. */
function identityOf(item: Record<string, unknown>, id: string): IdSegment | undefined {
  const found = id.split("|").filter((f) => typeof item[f] === "string" || typeof item[f] === "number");
  return found.length === 1 ? { id: found[0], value: item[found[0]] as string | number } : undefined;
}

/** The identity field (or `a|b` alternatives) shared by every item of both lists (unique in each), if any. */
export function identityField(a: readonly unknown[], b: readonly unknown[]): string | undefined {
  if (a.length + b.length === 0) return undefined;
  const all = [...a, ...b];
  if (!all.every(isObject)) return undefined;
  for (const f of IDENTITY_FIELDS) {
    const ok = [a, b].every((list) => {
      const seen = new Set<string>();
      for (const item of list as Record<string, unknown>[]) {
        const seg = identityOf(item, f);
        const k = seg && `${seg.id}=${String(seg.value)}`;
        if (!k || seen.has(k)) return false;
        seen.add(k);
      }
      return true;
    });
    if (ok) return f;
  }
  return undefined;
}

/**
 * Identity fields whose values may repeat in one list: a PrometheusRule group may hold one
 * alert of a name per serving group. Every item must have one of them.
 */
const REPEATABLE_IDENTITY = ["alert|record"] as const;

function repeatableIdentity(a: readonly unknown[], b: readonly unknown[]): string | undefined {
  if (a.length + b.length === 0 || ![...a, ...b].every(isObject)) return undefined;
  return REPEATABLE_IDENTITY.find((f) => [...a, ...b].every((x) => identityOf(x as Record<string, unknown>, f) !== undefined));
}

/**
 * The items of two lists paired by identity (`i` in the base, `j` in the head; one side absent
 * for an add or a remove), in the head's order, then the removed. Items sharing an identity are
 * paired equal ones first, then in order, and shown with their ordinal (`TritonTargetDown#2`).
 */
function matchItems(a: readonly unknown[], b: readonly unknown[], id: string): { i?: number; j?: number; seg: IdSegment }[] {
  const key = (x: unknown) => {
    const seg = identityOf(x as Record<string, unknown>, id)!;
    return { seg, k: `${seg.id}=${String(seg.value)}` };
  };
  const byKey = (list: readonly unknown[]) => {
    const m = new Map<string, number[]>();
    list.forEach((x, i) => m.set(key(x).k, [...(m.get(key(x).k) ?? []), i]));
    return m;
  };
  const olds = byKey(a);
  const news = byKey(b);
  const pairOf = new Map<number, number>(); // head index → base index
  for (const [k, js] of news) {
    const is = [...(olds.get(k) ?? [])];
    const left: number[] = [];
    for (const j of js) {
      const same = is.findIndex((i) => JSON.stringify(a[i]) === JSON.stringify(b[j]));
      if (same >= 0) pairOf.set(j, is.splice(same, 1)[0]);
      else left.push(j);
    }
    for (const j of left) if (is.length) pairOf.set(j, is.shift()!);
  }
  const paired = new Set(pairOf.values());
  const seg = (x: unknown, list: Map<string, number[]>, at: number): IdSegment => {
    const { seg: s, k } = key(x);
    const all = list.get(k)!;
    return all.length > 1 ? { id: s.id, value: `${String(s.value)}#${all.indexOf(at) + 1}` } : s;
  };
  return [...b.map((x, j) => ({ i: pairOf.get(j), j, seg: seg(x, news, j) })), ...a.flatMap((x, i) => (paired.has(i) ? [] : [{ i, seg: seg(x, olds, i) }]))];
}

const isScalar = (v: unknown) => v === null || (typeof v !== "object" && v !== undefined);

/** The property changes between two inputs objects; secrets compared by fingerprint, shown masked. */
export function diffProps(
  oldProps: Record<string, unknown>,
  newProps: Record<string, unknown>,
  oldFp: Record<string, string> = {},
  newFp: Record<string, string> = {},
): PropertyChange[] {
  const out: PropertyChange[] = [];
  // `shown`: the path as printed (items by identity); `at`: positions (head's; base's for a removal).
  const walk = (a: unknown, b: unknown, shown: PathSegment[], at: Segment[], atOld: Segment[]) => {
    if (a === MASK || b === MASK) {
      // Either side secret: never show the other side's value next to it either.
      const changed = a !== b || secretChanged(at, oldFp, newFp) || secretChanged(atOld, oldFp, newFp);
      if (changed)
        out.push({
          path: formatPath(shown),
          kind: a === undefined ? "add" : b === undefined ? "remove" : "change",
          old: a === undefined ? undefined : MASK,
          new: b === undefined ? undefined : MASK,
          secret: true,
          at: b === undefined ? atOld : at,
        });
      return;
    }
    if (a === undefined && b === undefined) return;
    if (a === undefined || b === undefined) {
      const c: PropertyChange = { path: formatPath(shown), kind: a === undefined ? "add" : "remove", old: a, new: b, at: a === undefined ? at : atOld };
      if (isLong(a ?? b)) c.lines = lineDiff(typeof a === "string" ? a : "", typeof b === "string" ? b : "");
      out.push(c);
      return;
    }
    if (isObject(a) && isObject(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], [...shown, k], [...at, k], [...atOld, k]);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const id = identityField(a, b) ?? repeatableIdentity(a, b);
      if (id) {
        // Matched by identity: an added item is one add (shown whole), not every field of every later position.
        for (const m of matchItems(a, b, id))
          walk(
            m.i === undefined ? undefined : a[m.i],
            m.j === undefined ? undefined : b[m.j],
            [...shown, m.seg],
            [...at, m.j ?? m.i!],
            [...atOld, m.i ?? m.j!],
          );
        return;
      }
      if (a.every(isScalar) && b.every(isScalar) && (a.length > 1 || b.length > 1)) {
        // A list of flags or names: one change, as a line diff of its items (a flag added in the middle is one "+" line).
        if (a.length === b.length && a.every((x, i) => x === b[i])) return;
        out.push({
          path: formatPath(shown),
          kind: "change",
          old: a,
          new: b,
          at,
          lines: lineDiff(a.map((x) => JSON.stringify(x)).join("\n"), b.map((x) => JSON.stringify(x)).join("\n")),
        });
        return;
      }
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], [...shown, i], [...at, i], [...atOld, i]);
      return;
    }
    if (a === b) return;
    // JSON held in a string (e.g. a provider's defaultTags) diffs by path inside it, so a
    // tag change reads defaultTags.tags.team, not a whole re-serialised document.
    const ja = embeddedJson(a);
    const jb = embeddedJson(b);
    if (ja !== undefined && jb !== undefined) {
      walk(ja, jb, shown, at, atOld);
      return;
    }
    if (typeof a === "object" || typeof b === "object" || JSON.stringify(a) !== JSON.stringify(b)) {
      const c: PropertyChange = { path: formatPath(shown), kind: "change", old: a, new: b, at };
      const [ta, tb] = [base64Text(a), base64Text(b)];
      // Base64 of text on both sides (user data): a reviewer reads the documents' line diff, not two blobs.
      if (ta !== undefined && tb !== undefined) {
        c.lines = lineDiff(ta, tb);
        c.decoded = "base64";
      }
      // A non-string side (a string that became an object) shows as its JSON, not "[object Object]".
      else if (isLong(a) || isLong(b)) c.lines = lineDiff(typeof a === "string" ? a : JSON.stringify(a), typeof b === "string" ? b : JSON.stringify(b));
      out.push(c);
    }
  };
  walk(oldProps, newProps, [], [], []);
  return out;
}

/**
 * A Pulumi property path (`spec.replicas`, `metadata.labels["app.kubernetes.io/name"]`,
 * `spec.template.spec.containers[0].image`, `*` and `[*]` wildcards) as segments.
 */
export function parsePropertyPath(p: string): Segment[] {
  const out: Segment[] = [];
  const re = /\.?([A-Za-z_$*][A-Za-z0-9_$-]*)|\[(\d+|\*)\]|\["((?:[^"\\]|\\.)*)"\]/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < p.length && (m = re.exec(p))) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(m[2] === "*" ? "*" : Number(m[2]));
    else out.push(JSON.parse(`"${m[3]}"`) as string);
  }
  return out;
}

/** Does an ignoreChanges path cover a change at `at` (the path itself or anything beneath it)? */
export function ignoreCovers(ignore: readonly Segment[], at: readonly Segment[]): boolean {
  if (ignore.length > at.length) return false;
  return ignore.every((s, i) => s === "*" || String(s) === String(at[i]));
}

/** Why a property is left to something else, where the planner knows (else the option's name). */
const IGNORE_REASONS: { type: RegExp; path: string; reason: string }[] = [
  { type: /^kubernetes:apps\/v1:(StatefulSet|Deployment)$/, path: "spec.replicas", reason: "the HPA owns it" },
  { type: /^aws:eks\/nodeGroup:NodeGroup$/, path: "scalingConfig.desiredSize", reason: "the cluster autoscaler owns it" },
];

function ignoreReason(type: string, ignorePath: string): string {
  const known = IGNORE_REASONS.find((r) => r.type.test(type) && r.path === ignorePath);
  return known ? `${known.reason} (ignoreChanges)` : `ignoreChanges: ${ignorePath}`;
}

/** "a.b" covers "a.b.c" and "a" (a whole subtree replaced), not "a.bc". */
function overlaps(changePath: string, reason: string): boolean {
  const norm = (p: string) => p.replace(/\[(\d+)\]/g, ".$1").replace(/\["([^"]*)"\]/g, ".$1");
  const c = norm(changePath);
  return c === reason || c.startsWith(reason + ".") || reason.startsWith(c + ".");
}

/** The URNs a head resource may have had at the base: its own aliases and those it inherits from its parent's. */
function aliasCandidates(r: RecordedResource, byUrn: ReadonlyMap<string, RecordedResource>, memo: Map<string, string[]>): string[] {
  const known = memo.get(r.urn);
  if (known) return known;
  memo.set(r.urn, []); // a cycle cannot recurse
  const out = (r.options?.aliases ?? []).map((a) => aliasUrn(r, a));
  const parent = r.parent ? byUrn.get(r.parent) : undefined;
  if (parent) {
    for (const pu of aliasCandidates(parent, byUrn, memo)) {
      // The engine's inherited aliases: the child under each old parent URN, its name's parent prefix renamed as well.
      out.push(aliasUrn(r, { parentUrn: pu }));
      const oldParentName = pu.split("::").slice(3).join("::");
      if (r.name.startsWith(parent.name) && oldParentName !== parent.name)
        out.push(aliasUrn(r, { parentUrn: pu, name: oldParentName + r.name.slice(parent.name.length) }));
    }
  }
  memo.set(r.urn, out);
  return out;
}

const STATEFUL_SET = "kubernetes:apps/v1:StatefulSet";
const SERVING_GROUP = "triton-platform:triton:TritonServer";
const DATA_TYPES = new Set(["aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2", "aws:efs/fileSystem:FileSystem", "kubernetes:core/v1:PersistentVolumeClaim"]);
const HASHED_NAME = /^(.*)-([0-9a-f]{6,})$/;

function metadataName(r: RecordedResource): string | undefined {
  const n = (r.props.metadata as { name?: unknown } | undefined)?.name;
  return typeof n === "string" ? n : undefined;
}

/** A ConfigMap or Secret renamed from one content hash to another: the old name's prefix, same. */
function contentHashedRename(type: string, old: RecordedResource, head: RecordedResource): { from: string; to: string } | undefined {
  if (type !== "kubernetes:core/v1:ConfigMap" && type !== "kubernetes:core/v1:Secret") return undefined;
  const from = metadataName(old);
  const to = metadataName(head);
  if (!from || !to || from === to) return undefined;
  const a = HASHED_NAME.exec(from);
  const b = HASHED_NAME.exec(to);
  return a && b && a[1] === b[1] ? { from, to } : undefined;
}

/** What deleting (or replacing) a resource means, for the kinds whose loss a reviewer must see. */
function lossWarnings(op: "delete" | "replace", r: RecordedResource, renamedTo?: RecordedResource): Warning[] {
  const out: Warning[] = [];
  const gone = op === "delete" ? "deleted" : "deleted and re-created";
  const aliasHint = renamedTo
    ? ` If \`${r.name}\` was renamed to \`${renamedTo.name}\`, give the new one \`aliases: [{ name: "${r.name}" }]\` so Pulumi keeps it${
        r.type === SERVING_GROUP || r.type === STATEFUL_SET
          ? " (its Kubernetes objects are still re-created when their metadata.name changes: bring the new group up and move traffic before removing the old)"
          : ""
      }.`
    : "";
  if (r.type === SERVING_GROUP) {
    out.push({
      kind: "downtime",
      message: `serving group \`${r.name}\` is ${gone}: its StatefulSets, Services and pods go, and requests routed to it fail until clients move.${aliasHint}`,
    });
  } else if (r.type === STATEFUL_SET) {
    out.push({
      kind: "downtime",
      message: `StatefulSet \`${metadataName(r) ?? r.name}\` is ${gone}: every pod of it stops${op === "replace" ? " at once (no rolling update)" : ""}.${aliasHint}`,
    });
  } else if (DATA_TYPES.has(r.type)) {
    const force = r.props.forceDestroy === true;
    const what = r.type.startsWith("aws:s3/")
      ? "bucket and every object in it"
      : r.type.startsWith("aws:efs/")
        ? "file system and its files"
        : "volume and its data";
    out.push({
      kind: "data",
      message:
        `${r.type.split(":").pop()} \`${r.name}\` is ${gone}: the ${what} ${op === "delete" ? "are lost" : "are lost (the new one starts empty)"}` +
        (r.type.startsWith("aws:s3/") && !force
          ? " (without forceDestroy the provider refuses to delete a non-empty bucket, so `pulumi up` fails there)"
          : "") +
        `.${aliasHint}`,
    });
  }
  return out;
}

/** Compare two plans of one stack: creates, updates (with paths), replacements, deletes; the resource options honoured. */
export function diffResources(
  base: readonly RecordedResource[],
  head: readonly RecordedResource[],
  fingerprints: { base?: SecretFingerprints; head?: SecretFingerprints } = {},
): ResourceChange[] {
  const before = new Map(base.map((r) => [r.urn, r]));
  const headByUrn = new Map(head.map((r) => [r.urn, r]));
  const matched = new Set<string>();
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
  const memo = new Map<string, string[]>();
  const creates: ResourceChange[] = [];
  for (const r of head) {
    let old = before.get(r.urn);
    let renamedFrom: string | undefined;
    if (!old && (r.options?.aliases || r.parent)) {
      renamedFrom = aliasCandidates(r, headByUrn, memo).find((u) => before.has(u) && !headByUrn.has(u));
      old = renamedFrom ? before.get(renamedFrom) : undefined;
    }
    if (!old) {
      const c = entry("create", r);
      creates.push(c);
      changes.push(c);
      continue;
    }
    matched.add(old.urn);
    const oldFp = fingerprints.base?.[old.urn] ?? {};
    const newFp = fingerprints.head?.[r.urn] ?? {};
    const props = diffProps(old.props, r.props, oldFp, newFp);
    if (props.length === 0 && !renamedFrom) continue;
    // ignoreChanges: the engine keeps the old value of these paths (so they cannot force a replacement either).
    const ignores = (r.options?.ignoreChanges ?? []).map((p) => ({ p, segs: parsePropertyPath(p) }));
    for (const c of props) {
      const hit = ignores.find((i) => ignoreCovers(i.segs, c.at ?? []));
      if (hit) c.ignored = ignoreReason(r.type, hit.p);
    }
    const ignoredPath = (dotted: string) => ignores.some((i) => ignoreCovers(i.segs, dotted.split(".")));
    const reasons = replaceReasons(r.type, old.props, r.props, (p) => secretChanged(p.split("."), oldFp, newFp)).filter((p) => !ignoredPath(p));
    // replaceOnChanges: any change under these paths replaces ("*": any change at all).
    for (const roc of r.options?.replaceOnChanges ?? []) {
      const segs = parsePropertyPath(roc);
      if (props.some((c) => !c.ignored && (roc === "*" || ignoreCovers(segs, c.at ?? [])))) reasons.push(`${roc} (replaceOnChanges)`);
    }
    for (const c of props) {
      if (!c.ignored && reasons.some((p) => overlaps(c.path, p.replace(/ \(replaceOnChanges\)$/, "")) || p === "* (replaceOnChanges)"))
        c.forcesReplacement = true;
    }
    const live = props.filter((c) => !c.ignored);
    const op: ResourceChange["op"] = reasons.length > 0 ? "replace" : live.length > 0 || renamedFrom ? "update" : "none";
    const e = entry(op, r, props, reasons);
    if (renamedFrom) e.renamedFrom = renamedFrom;
    if (op === "replace") {
      if (r.options?.deleteBeforeReplace) e.deleteBeforeReplace = true;
      const hashed = contentHashedRename(r.type, old, r);
      if (hashed) {
        const to = JSON.stringify(hashed.to);
        e.contentHashed = {
          ...hashed,
          consumers: head.filter((x) => x.urn !== r.urn && x.custom && JSON.stringify(x.props).includes(to)).map((x) => `${x.type.split(":").pop()} ${x.name}`),
        };
      } else {
        const w = lossWarnings("replace", r);
        if (e.deleteBeforeReplace) w.push({ kind: "downtime", message: "deleteBeforeReplace: the old object is deleted before the new one exists." });
        if (r.options?.protect)
          w.push({ kind: "blocked", message: "protected (protect: true): `pulumi up` refuses to replace it; unprotect it first if this is intended." });
        if (w.length) e.warnings = w;
      }
    }
    changes.push(e);
  }
  // Positions were for matching options' paths; what is reported is the path by identity.
  for (const c of changes) for (const p of c.changes) delete p.at;
  // Deletes last, in the base's order (Pulumi deletes after creating and updating).
  const sameKind = (a: RecordedResource, b: ResourceChange) =>
    a.type === b.type && (a.parent?.split("::")[2] ?? "") === (headByUrn.get(b.urn)?.parent?.split("::")[2] ?? "");
  for (const r of base) {
    if (headByUrn.has(r.urn) || matched.has(r.urn)) continue;
    const e = entry("delete", r);
    const created = creates.filter((c) => sameKind(r, c));
    const w = lossWarnings("delete", r, created.length === 1 ? headByUrn.get(created[0].urn) : undefined);
    if (r.options?.protect)
      w.push({ kind: "blocked", message: "protected (protect: true): `pulumi up` refuses to delete it; unprotect it first if this is intended." });
    if (r.options?.retainOnDelete) w.push({ kind: "note", message: "retainOnDelete: Pulumi stops managing it; the object itself stays." });
    if (w.length) e.warnings = w;
    changes.push(e);
  }
  return changes;
}

export function countChanges(changes: readonly ResourceChange[]): StackDiff["counts"] {
  const counts = { create: 0, update: 0, replace: 0, delete: 0 };
  for (const c of changes) if (c.op !== "none") counts[c.op]++;
  return counts;
}

const isSecureLeaf = (v: unknown): v is { secure: unknown } => isObject(v) && Object.keys(v).length === 1 && "secure" in v;

/** Stack values with `secure:` leaves as MASK, and each leaf's ciphertext by position (to see it changed). */
function maskSecure(values: Record<string, unknown>): { values: Record<string, unknown>; fp: Record<string, string> } {
  const fp: Record<string, string> = {};
  const walk = (v: unknown, at: Segment[]): unknown => {
    if (isSecureLeaf(v)) {
      fp[JSON.stringify(at)] = JSON.stringify(v.secure);
      return MASK;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...at, i]));
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, [...at, k])]));
    return v;
  };
  return { values: walk(values, []) as Record<string, unknown>, fp };
}

/**
 * The stack-file keys that changed between two stack files' `config:` mappings, as the
 * reviewer wrote them: `gateway.mirrorPercent` (the project's namespace dropped), list items
 * by identity (`triton.groups[name=vision].image.tag`); a `secure:` value only as changed
 * (its ciphertext differs; re-encrypting the same value also counts).
 */
export function diffConfig(base: Record<string, unknown>, head: Record<string, unknown>, projectName?: string): ConfigChange[] {
  const short = (values: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [projectName && k.startsWith(`${projectName}:`) ? k.slice(projectName.length + 1) : k, v]));
  const a = maskSecure(short(base));
  const b = maskSecure(short(head));
  return diffProps(a.values, b.values, a.fp, b.fp).map((c) => {
    // A namespaced top-level key (aws:region) reads as written, not as ["aws:region"].
    const key = c.path.replace(/^\["([^"]+)"\]\.?/, (_, k: string) => k + (c.path.length > k.length + 4 && c.path[k.length + 4] !== "[" ? "." : ""));
    if (c.secret) return { key, kind: c.kind, secret: true as const };
    return { key, kind: c.kind, ...(c.old !== undefined ? { old: c.old } : {}), ...(c.new !== undefined ? { new: c.new } : {}) };
  });
}

/** @deprecated by diffConfig (which covers every key): secure config values whose ciphertext changed. */
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

/** The key a violation is matched by across base and head: the rule, the resource, the property. */
const violationKey = (v: DeltaViolation) => `${v.policy}\u0000${v.urn}\u0000${v.path ?? ""}`;

/** Mark the head's violations new or already on the base, and list the base's that are fixed. */
export function policyDelta(base: readonly DeltaViolation[], head: readonly DeltaViolation[]): PolicyDelta {
  const pick = (v: DeltaViolation): DeltaViolation => ({
    policy: v.policy,
    level: v.level,
    resource: v.resource,
    urn: v.urn,
    ...(v.path !== undefined ? { path: v.path } : {}),
    message: v.message,
  });
  const inBase = new Set(base.map(violationKey));
  const inHead = new Set(head.map(violationKey));
  return {
    new: head.filter((v) => !inBase.has(violationKey(v))).map(pick),
    fixed: base.filter((v) => !inHead.has(violationKey(v))).map(pick),
    unchanged: head.filter((v) => inBase.has(violationKey(v))).map(pick),
  };
}

// ---- terminal text -------------------------------------------------------------------

export const OP_SYMBOL: Record<ResourceChange["op"], string> = { create: "+", update: "~", replace: "+-", delete: "-", none: "=" };

/** A scalar as a reviewer reads it, whole: JSON; secrets as MASK. */
export function showValue(v: unknown, max = Infinity): string {
  if (v === MASK) return MASK;
  const s = v === undefined ? "(none)" : JSON.stringify(v);
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

/**
 * A long path as a reviewer scans it: the root key, the outermost and the innermost list
 * items by identity, and what follows (`data["envoy.json"] … listeners[name=http] …
 * routes[name=vision-http].route.timeout`). The JSON report keeps the whole path.
 */
export function displayPath(p: string, max = 100): string {
  if (p.length <= max) return p;
  const ids = [...p.matchAll(/\.?[A-Za-z_$][\w$]*\[[A-Za-z_]+=(?:"(?:[^"\\]|\\.)*"|[^\]]*)\]/g)];
  if (ids.length < 3) return p;
  const root = /^[A-Za-z_$][\w$]*(\["(?:[^"\\]|\\.)*"\])?/.exec(p)?.[0] ?? "";
  const first = ids[0];
  const last = ids[ids.length - 1];
  const strip = (m: string) => m.replace(/^\./, "");
  return `${root} … ${strip(first[0])} … ${strip(p.slice(last.index))}`;
}

/** A property change standing for several of one resource that differ only in list items' identities. */
export interface MergedChange extends PropertyChange {
  /** The items it stands for: the list (`routes`), the identity field and each item's value, in order. */
  over?: { list: string; id: string; values: string[] };
}

const ID_TOKEN = /(\[[A-Za-z_]+=(?:"(?:[^"\\]|\\.)*"|[^\]]*)\])/;

/**
 * Identical changes at paths that differ in list items only (`5 → 10` at
 * `routes[name=a]…numerator`, `routes[name=b]…numerator`, …) as one, with the items it covers
 * (named by the list whose items differ most):
 * so a two-key change reads once, with its count. Three or more added or removed items of one
 * list are merged the same way (their values differ: the first stands for them). Order: the first of each group.
 */
export function mergeRepeated(changes: readonly PropertyChange[]): MergedChange[] {
  const groups = new Map<string, { tokens: string[][]; members: PropertyChange[] }>();
  const order: (string | PropertyChange)[] = [];
  for (const c of changes) {
    const tokens = c.path.split(ID_TOKEN);
    const pattern = tokens.map((t, i) => (i % 2 === 1 ? t.replace(/=.*\]$/, "=*]") : t)).join("");
    const blockish = c.kind !== "change" && (isBlock(c.old) || isBlock(c.new));
    const same = blockish ? "" : JSON.stringify([c.old, c.new, c.lines, c.secret]);
    const key = `${c.kind}|${pattern}|${same}|${c.forcesReplacement ?? ""}|${c.ignored ?? ""}`;
    if (tokens.length < 2) {
      order.push(c);
      continue;
    }
    if (!groups.has(key)) {
      groups.set(key, { tokens: [], members: [] });
      order.push(key);
    }
    groups.get(key)!.tokens.push(tokens);
    groups.get(key)!.members.push(c);
  }
  return order.flatMap((o): MergedChange[] => {
    if (typeof o !== "string") return [o];
    const { tokens, members } = groups.get(o)!;
    // Two added or removed items are shown each (two alerts read better whole); from three on, the first stands for them.
    const blockish = members[0].kind !== "change" && (isBlock(members[0].old) || isBlock(members[0].new));
    if (members.length === 1 || (blockish && members.length < 3)) return members;
    const varying = tokens[0].map((_, i) => i).filter((i) => i % 2 === 1 && tokens.some((t) => t[i] !== tokens[0][i]));
    if (varying.length === 0) return members;
    // Named by the list whose items differ most (routes, not the listeners or mirror clusters they sit with); the innermost on a tie.
    const distinct = (i: number) => new Set(tokens.map((t) => t[i])).size;
    const v = varying.reduce((best, i) => (distinct(i) >= distinct(best) ? i : best));
    const id = /^\[([A-Za-z_]+)=/.exec(tokens[0][v])![1];
    const list = /([A-Za-z_$][\w$]*)$/.exec(tokens[0][v - 1])?.[1] ?? "items";
    const path = tokens[0].map((t, i) => (varying.includes(i) ? t.replace(/=.*\]$/, "=*]") : t)).join("");
    const values = tokens.map((t) => t[v].slice(id.length + 2, -1).replace(/^"(.*)"$/, "$1"));
    return [{ ...members[0], path, over: { list, id, values } }];
  });
}

/** Objects and lists are shown as an indented JSON block, not squeezed onto one line. */
export function isBlock(v: unknown): boolean {
  return v !== null && typeof v === "object";
}

export function summaryLine(d: StackDiff): string {
  const c = d.counts;
  const ignored = d.resources.filter((r) => r.op === "none").length;
  return `${c.create} to create, ${c.update} to update, ${c.replace} to replace, ${c.delete} to delete${ignored ? ` (${ignored} with ignored changes only)` : ""}`;
}

/** A config change as one line: `gateway.mirrorPercent: 5 → 10`. */
export function configLine(c: ConfigChange): string {
  if (c.secret) return `${c.key}: secret ${c.kind === "change" ? "changed" : c.kind === "add" ? "added" : "removed"} (value not shown)`;
  if (c.kind === "add") return `${c.key}: added ${showValue(c.new)}`;
  if (c.kind === "remove") return `${c.key}: removed (was ${showValue(c.old)})`;
  return `${c.key}: ${showValue(c.old)} → ${showValue(c.new)}`;
}

/** What kind of replacement: a routine content-hashed rename, or one that deletes the running object. */
export function replaceNote(r: ResourceChange): string {
  if (r.contentHashed)
    return `new content-hashed name ${r.contentHashed.to} (was ${r.contentHashed.from}): ${r.contentHashed.consumers.length ? `${r.contentHashed.consumers.join(", ")} roll${r.contentHashed.consumers.length === 1 ? "s" : ""} onto it` : "nothing references it"}; routine`;
  return `replaced because ${r.replaceReasons.join(", ")} changed${r.deleteBeforeReplace ? " (deleted first: deleteBeforeReplace)" : ""}`;
}

function blockLines(v: unknown, indent: string): string[] {
  return JSON.stringify(v, null, 2)
    .split("\n")
    .map((l) => indent + l);
}

function propertyText(p: PropertyChange, r: ResourceChange): string[] {
  const flag = p.forcesReplacement && !r.contentHashed ? "  [forces replacement]" : "";
  const ignored = p.ignored ? ` — ignored: ${p.ignored}` : "";
  const at = displayPath(p.path);
  const decoded = p.decoded ? " (base64, decoded)" : "";
  if (p.lines) return [`        ${at}:${decoded}${flag}${ignored}`, ...p.lines.map((l) => `          ${l}`)];
  if (p.secret) return [`        ${at}: ${MASK} → ${MASK} (secret changed)${flag}${ignored}`];
  if (isBlock(p.old) || isBlock(p.new)) {
    const out = [`        ${at}: ${p.kind === "add" ? "added" : p.kind === "remove" ? "removed" : "changed"}${flag}${ignored}`];
    if (p.kind !== "add") out.push(...(p.kind === "change" ? ["          was:"] : []), ...blockLines(p.old, "          "));
    if (p.kind !== "remove") out.push(...(p.kind === "change" ? ["          now:"] : []), ...blockLines(p.new, "          "));
    return out;
  }
  return [`        ${at}: ${showValue(p.old)} → ${showValue(p.new)}${flag}${ignored}`];
}

/** The terminal rendering of one stack's diff: config keys first, then policy changes, then resources. */
export function formatDiffText(d: StackDiff): string {
  const lines = [`stack ${d.stack} against ${d.base}${d.newStack ? " (new stack)" : ""}: ${d.baseError ? "not compared" : summaryLine(d)}`];
  if (d.baseError) lines.push(`  the base does not plan: ${d.baseError}`);
  if (d.cost) lines.push(`  GPU cost (on demand): ${d.cost.text}`);
  if (d.config.length) {
    lines.push("  config:");
    for (const c of d.config) lines.push(`    ${configLine(c)}`);
  }
  if (d.policy && d.policy.new.length + d.policy.fixed.length + d.policy.unchanged.length > 0) {
    lines.push(`  policies: ${d.policy.new.length} new, ${d.policy.fixed.length} fixed, ${d.policy.unchanged.length} already on the base`);
    for (const [mark, list] of [
      ["new", d.policy.new],
      ["fixed", d.policy.fixed],
      ["on base", d.policy.unchanged],
    ] as const)
      for (const v of list) lines.push(`    ${mark.padEnd(7)} [${v.level}] ${v.policy}: ${v.resource}${v.path ? ` at ${v.path}` : ""}`);
  }
  for (const r of d.resources) {
    const note = r.op === "replace" ? `  (${replaceNote(r)})` : r.op === "none" ? "  (only ignored changes: pulumi up leaves it)" : "";
    const renamed = r.renamedFrom ? `  (renamed from ${r.renamedFrom.split("::").pop()} through its aliases)` : "";
    lines.push(`  ${OP_SYMBOL[r.op].padEnd(2)} ${r.type} ${r.name}${renamed}${note}`);
    for (const w of r.warnings ?? []) lines.push(`        ⚠ ${w.kind}: ${w.message}`);
    for (const p of r.changes) lines.push(...propertyText(p, r));
  }
  if (d.resources.length === 0 && d.config.length === 0 && !d.baseError) lines.push("  no changes");
  return lines.join("\n");
}
