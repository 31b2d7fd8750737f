// Small schema builders whose messages read as rules ("must be an integer >= 1"), so a
// config error names the key, the rule and the value without post-processing.
// Built on valibot: the program validates its configuration on every `pulumi up` and every
// offline plan, and valibot loads in a few milliseconds where zod's full API took ~45 ms
// (measured with `npm run bench`; the plan's start-up is what pull requests wait for).
import * as v from "valibot";
import { QUANTITY } from "./quantity";
import { EXACT_VERSION } from "./version";
import { keyPath, problemLine, SettingsError, show, type SettingProblem } from "./errors";
import { distance as levenshtein } from "fastest-levenshtein";

/** Any schema this module builds: unknown input, typed output. */
export type Schema<T = unknown> = v.GenericSchema<unknown, T>;

export function integer(opts: { min?: number; max?: number } = {}) {
  const rule =
    opts.min !== undefined && opts.max !== undefined
      ? `must be an integer from ${opts.min} to ${opts.max}`
      : opts.min !== undefined
        ? `must be an integer >= ${opts.min}`
        : opts.max !== undefined
          ? `must be an integer <= ${opts.max}`
          : "must be an integer";
  // safeInteger: beyond 2^53 a config value is no longer the number written.
  return v.pipe(
    v.number(rule),
    v.safeInteger(rule),
    v.minValue(opts.min ?? Number.MIN_SAFE_INTEGER, rule),
    v.maxValue(opts.max ?? Number.MAX_SAFE_INTEGER, rule),
  );
}

export function number(opts: { min?: number; max?: number } = {}) {
  const rule =
    opts.min !== undefined && opts.max !== undefined
      ? `must be a number from ${opts.min} to ${opts.max}`
      : opts.min !== undefined
        ? `must be a number >= ${opts.min}`
        : "must be a number";
  // finite: a config value of 400 digits parses to Infinity, which is no setting.
  return v.pipe(v.number(rule), v.finite(rule), v.minValue(opts.min ?? -Infinity, rule), v.maxValue(opts.max ?? Infinity, rule));
}

export function str(rule = "must be a non-empty string") {
  return v.pipe(v.string(rule), v.minLength(1, rule));
}

export function pattern(re: RegExp, rule: string) {
  return v.pipe(v.string(rule), v.regex(re, rule));
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const rule = `must be one of ${values.map((x) => JSON.stringify(x)).join(", ")}`;
  return v.picklist(values, rule);
}

export function bool() {
  return v.boolean("must be true or false");
}

export function list<T extends Schema>(item: T, opts: { min?: number; what?: string } = {}) {
  const rule = opts.min ? `must be a list of at least ${opts.min} ${opts.what ?? "item"}(s)` : "must be a list";
  return v.pipe(v.array(item, rule), v.minLength(opts.min ?? 0, rule));
}

/** A list whose items must be unique (compared as given). */
export function uniqueList<T extends Schema>(item: T, opts: { min?: number; what?: string }, rule: string) {
  return v.pipe(
    list(item, opts),
    v.check((xs) => new Set(xs).size === xs.length, rule),
  );
}

/** The message a schema gives for a missing value (its own rule), e.g. for a required key. */
function ruleOf(schema: Schema | undefined): string {
  return (schema && v.safeParse(schema, undefined).issues?.[0]?.message) || "is required";
}

/** Marks an unknown key: every one is reported (a typo must not fall back to a default). */
export const UNKNOWN_KEY = "is not a known key (a typo would silently fall back to a default)";

/**
 * An object whose unknown keys are errors, each one reported. A missing required key is
 * reported with that key's own rule ("must be an integer >= 1, got nothing").
 */
export function section<const T extends v.ObjectEntries>(entries: T) {
  // The object's own message: mapping() has refused non-objects, so only a missing required
  // key (the issue's last path item) reaches it.
  const missingKey = (issue: v.BaseIssue<unknown>): string => {
    const at = issue.path?.[issue.path.length - 1];
    return ruleOf(at ? entries[at.key as string] : undefined);
  };
  // objectWithRest(never) rather than strictObject: the latter stops at the first unknown key.
  // The output type is the strict object's: the rest schema admits no value at all.
  return v.pipe(
    mapping(SECTION_RULE),
    // valibot skips these keys when it looks for unknown ones (prototype-pollution guard), so
    // they are reported here; the section's other checks then wait until they are gone.
    v.rawCheck<Record<string, unknown>>(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      for (const key of RESERVED_KEYS) {
        if (Object.hasOwn(dataset.value, key) && !Object.hasOwn(entries, key)) addIssue({ message: UNKNOWN_KEY, path: pathOf([key]) });
      }
    }),
    v.objectWithRest(entries, v.never(UNKNOWN_KEY), missingKey),
  ) as unknown as v.StrictObjectSchema<T, undefined>;
}

const RESERVED_KEYS = ["__proto__", "prototype", "constructor"];

/** An issue path from plain keys (config/index.ts reads only the keys). */
function pathOf(keys: (string | number)[]): [v.IssuePathItem, ...v.IssuePathItem[]] {
  return keys.map((key) => ({ type: "unknown", origin: "value", input: undefined, key, value: undefined })) as unknown as [
    v.IssuePathItem,
    ...v.IssuePathItem[],
  ];
}

const SECTION_RULE = "must be an object (a YAML mapping)";

/**
 * A YAML mapping: valibot's object schemas take any non-null object, a list included, so a
 * section written as a list (`monitoring: []`) would pass as one with no keys set.
 */
export function mapping(rule: string) {
  return v.custom<Record<string, unknown>>((x) => x !== null && typeof x === "object" && !Array.isArray(x), rule);
}

/** What cross-field checks report through: a path below the checked value and a rule. */
export interface CheckContext {
  addIssue(issue: { path: (string | number)[]; message: string }): void;
}

/**
 * Run cross-field checks on a schema's output once its types are right (zod's superRefine):
 * they run beside failed value checks, so all problems are reported together, and each
 * names the key it is about through `ctx.addIssue`.
 */
export function refined<S extends Schema>(schema: S, ...checks: ((value: v.InferOutput<S>, ctx: CheckContext) => void)[]) {
  let out: v.GenericSchema<v.InferInput<S>, v.InferOutput<S>> = schema;
  for (const check of checks) {
    const action = v.rawCheck<v.InferOutput<S>>(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      check(dataset.value, { addIssue: ({ path, message }) => addIssue({ message, path: pathOf(path) }) });
    });
    out = v.pipe(out, action);
  }
  return out;
}

/** Kubernetes resource names (RFC 1123 labels). */
export const dnsLabel = pattern(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "must be a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters)");

/** Kubernetes quantities such as 16Gi, 500m, 2. */
export const quantity = pattern(QUANTITY, "must be a Kubernetes quantity such as 16Gi, 500m or 4");

/** Exact semantic version, no ranges: what is deployed must be reproducible. */
export const pinnedVersion = pattern(EXACT_VERSION, "must be an exact version such as 1.2.3 (no ranges, no 'latest')");

// ---- Documentation of a key ------------------------------------------------------------
/**
 * Document a key: its description (and, for a default that is derived rather than a literal,
 * how it is derived). `npm run docs` reads these into the docs pages' key tables and the
 * config descriptions of Pulumi.yaml, so the text is written once, beside the rule.
 */
export function doc<S extends Schema>(schema: S, description: string, opts: { default?: string } = {}): S {
  const actions: v.PipeAction<unknown, unknown, v.BaseIssue<unknown>>[] = [v.description(description)];
  if (opts.default !== undefined) actions.push(v.metadata({ defaultText: opts.default }));
  return v.pipe(schema, ...(actions as [never])) as unknown as S;
}

// ---- Credentials ------------------------------------------------------------------------
const SECRET_MARK = "credential";

/**
 * Mark a key as a credential, beside its schema: the stack configuration refuses it unless it
 * comes from a `secure:` value (config/index.ts, `secretKeyPaths`). Its rules show no value in
 * their errors: keep the schema to "a non-empty string" (a format rule would print the secret).
 */
export function secret<S extends Schema>(schema: S, description: string): S {
  return v.pipe(doc(schema, description), v.metadata({ [SECRET_MARK]: true })) as unknown as S;
}

type Walkable = {
  type?: string;
  pipe?: readonly Walkable[];
  wrapped?: Walkable;
  entries?: Record<string, Walkable>;
  item?: Walkable;
  metadata?: Record<string, unknown>;
};

/** Is `schema` (through its pipes and optional wrappers) marked by secret()? */
function isSecret(schema: Walkable): boolean {
  if (schema.type === "metadata" && schema.metadata?.[SECRET_MARK] === true) return true;
  if (schema.pipe) return schema.pipe.some((s, i) => (i === 0 ? isSecret(s) : s.type === "metadata" && isSecret(s)));
  return schema.wrapped ? isSecret(schema.wrapped) : false;
}

/**
 * The key paths below `schema` that secret() marks, each as its segments; a list item is "[]"
 * (`["alerting", "pagerduty", "routingKey"]`). What the stack configuration checks is set from `secure:`.
 */
export function secretKeyPaths(schema: Schema): string[][] {
  const out: string[][] = [];
  const walk = (s: Walkable, at: string[]) => {
    if (isSecret(s)) {
      out.push(at);
      return;
    }
    if (s.wrapped) walk(s.wrapped, at);
    for (const p of s.pipe ?? []) if (p !== s) walk(p, at);
    if (s.entries) for (const [k, e] of Object.entries(s.entries)) walk(e, [...at, k]);
    if (s.item) walk(s.item, [...at, "[]"]);
  };
  walk(schema, []);
  // A schema reached through two pipes (a section's objectWithRest under its pipe) is listed once.
  return [...new Map(out.map((p) => [p.join("."), p])).values()];
}

/** The paths (segments, list items indexed) where `input` sets a value at one of `paths` (secretKeyPaths' form). */
export function setAt(input: unknown, paths: readonly (readonly string[])[]): (string | number)[][] {
  const out: (string | number)[][] = [];
  const walk = (cur: unknown, rest: readonly string[], at: (string | number)[]) => {
    if (rest.length === 0) {
      if (cur !== undefined) out.push(at);
      return;
    }
    if (cur === null || typeof cur !== "object") return;
    const [k, ...tail] = rest;
    if (k === "[]") {
      if (Array.isArray(cur)) cur.forEach((x, i) => walk(x, tail, [...at, i]));
    } else if (Object.hasOwn(cur, k)) walk((cur as Record<string, unknown>)[k], tail, [...at, k]);
  };
  for (const p of paths) walk(input, p, []);
  return out;
}

// ---- Parsing into SettingProblems ------------------------------------------------------
function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

/** The keys a section of `schema` knows at `path` (list items by index): its object's entries, found through pipes, wrappers, lists and unions. */
export function knownKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] {
  /** What a valibot schema exposes to walk it: a pipe's items, a wrapper's schema, a union's options, an object's entries, a list's item. */
  interface Walkable {
    kind?: string;
    pipe?: readonly Walkable[];
    wrapped?: Walkable;
    options?: readonly Walkable[];
    entries?: Record<string, Walkable>;
    item?: Walkable;
  }
  const out = new Set<string>();
  const walk = (s: Walkable | undefined, rest: readonly PropertyKey[], depth: number): void => {
    if (!s || typeof s !== "object" || depth > 64) return;
    for (const x of s.pipe ?? []) if (x !== s && x?.kind === "schema") walk(x, rest, depth + 1);
    if (s.wrapped) walk(s.wrapped, rest, depth + 1);
    for (const o of s.options ?? []) walk(o, rest, depth + 1);
    const entries = s.entries;
    if (entries && typeof entries === "object") {
      if (rest.length === 0) Object.keys(entries).forEach((k) => out.add(k));
      else if (typeof rest[0] === "string" && Object.hasOwn(entries, rest[0])) walk(entries[rest[0]], rest.slice(1), depth + 1);
    }
    if (s.item && rest.length > 0 && typeof rest[0] === "number") walk(s.item, rest.slice(1), depth + 1);
  };
  walk(schema as Walkable, path, 0);
  return [...out];
}

/** The known key nearest an unknown one (Levenshtein distance, case ignored), when it is near enough to be a typo. */
export function nearestKey(unknown: string, known: readonly string[]): string | undefined {
  let best: { key: string; d: number } | undefined;
  for (const k of known) {
    const d = levenshtein(unknown.toLowerCase(), k.toLowerCase());
    if (!best || d < best.d) best = { key: k, d };
  }
  return best && best.d <= Math.max(2, Math.floor(unknown.length / 3)) ? best.key : undefined;
}

/** A valibot issue as a SettingProblem, its key written after `root` (with `schema`, an unknown key names the nearest known one). */
export function issueProblem(issue: v.BaseIssue<unknown>, input: unknown, root: string, schema?: unknown): SettingProblem {
  const items = issue.path ?? [];
  const path = items.map((p) => p.key as PropertyKey);
  const key = keyPath(path, root);
  // An unknown key: the rule is the message; its value is beside the point.
  if (issue.message === UNKNOWN_KEY) {
    const near = schema && path.length ? nearestKey(String(path[path.length - 1]), knownKeysAt(schema, path.slice(0, -1))) : undefined;
    return { key, rule: near ? `${UNKNOWN_KEY}; did you mean ${keyPath([...path.slice(0, -1), near], root)}?` : UNKNOWN_KEY };
  }
  // A bad key of a mapping (e.g. a tag key): show the key, not its value.
  const last = items[items.length - 1];
  const shown = last?.origin === "key" && last.value !== undefined ? last.key : valueAt(input, path);
  return { key, rule: issue.message, value: { shown: show(shown) } };
}

/** Validate `input` against `schema`: its output, or every problem (each once) with keys after `root`. */
export function checkSettings<S extends Schema>(
  schema: S,
  input: unknown,
  root = "",
): { success: true; output: v.InferOutput<S> } | { success: false; problems: SettingProblem[] } {
  const parsed = v.safeParse(schema, input);
  if (parsed.success) return { success: true, output: parsed.output };
  // A value can break two checks of one rule (Infinity: finite and the bound); say it once.
  const seen = new Set<string>();
  const problems: SettingProblem[] = [];
  for (const issue of parsed.issues) {
    const p = issueProblem(issue, input, root, schema);
    const line = problemLine(p);
    if (!seen.has(line)) {
      seen.add(line);
      problems.push(p);
    }
  }
  return { success: false, problems };
}

/**
 * Resolve a component's settings through its schema: defaults applied and rules checked by
 * the same module the stack configuration composes, so a direct caller of the component and
 * a stack file get the same default from the same line. Throws SettingsError naming `subject`.
 */
export function parseSettings<S extends Schema>(schema: S, input: unknown, subject: string): v.InferOutput<S> {
  const r = checkSettings(schema, input);
  if (!r.success) throw new SettingsError(subject, r.problems);
  return r.output;
}

/** A schema's input type as a component's public Args take it: readonly all the way down. */
export type DeepReadonly<T> = T extends readonly (infer I)[]
  ? readonly DeepReadonly<I>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;
