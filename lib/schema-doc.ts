// Reads a settings schema (built with lib/schema) back as documentation: every key with its
// type, default, rule and description. `npm run docs` renders these rows into the docs pages
// and Pulumi.yaml, so a key is documented where its rule and default are written.
import type * as v from "valibot";

/** One documented key. */
export interface KeyDoc {
  /** Path below the section, e.g. `groups[].image.tag` ("" for the section itself). */
  readonly key: string;
  /** `integer`, `string`, `"a" \| "b"`, `list of string`, `mapping`, `map of string`... */
  readonly type: string;
  /** `required`, `not set` (optional without default), or the default (JSON, or its documented derivation). */
  readonly default: string;
  /** The rules its value must satisfy, as the errors word them. */
  readonly rule: string;
  /** What it is for (doc()); "" when the schema gives none. */
  readonly description: string;
}

type AnySchema = v.GenericSchema & Record<string, unknown>;
type Item = { type: string; kind?: string } & Record<string, unknown>;

/** The schema and every action of its pipes, innermost schema first. */
function chainOf(s: AnySchema): Item[] {
  const pipe = s.pipe as Item[] | undefined;
  if (!pipe) return [s];
  const [head, ...rest] = pipe;
  return [...chainOf(head as unknown as AnySchema), ...rest.flatMap((x) => (x.kind === "schema" && x.pipe ? chainOf(x as unknown as AnySchema) : [x]))];
}

interface Unwrapped {
  /** The innermost schema (after optional). */
  core: Item[];
  description: string;
  defaultText?: string;
  optional: boolean;
  defaultValue?: unknown;
}

function unwrap(s: AnySchema): Unwrapped {
  let chain = chainOf(s);
  let description = "";
  let defaultText: string | undefined;
  let optional = false;
  let defaultValue: unknown;
  const take = (items: Item[]) => {
    for (const a of items) {
      if (a.type === "description" && typeof a.description === "string") description = a.description;
      if (a.type === "metadata" && typeof (a.metadata as { defaultText?: unknown })?.defaultText === "string") {
        defaultText = (a.metadata as { defaultText: string }).defaultText;
      }
    }
  };
  take(chain);
  while (chain[0].type === "optional" || chain[0].type === "exact_optional") {
    optional = true;
    if (chain[0].default !== undefined) defaultValue = typeof chain[0].default === "function" ? (chain[0].default as () => unknown)() : chain[0].default;
    chain = chainOf(chain[0].wrapped as AnySchema);
    take(chain);
  }
  return { core: chain, description, defaultText, optional, defaultValue };
}

const entriesOf = (chain: Item[]) => chain.find((x) => x.kind === "schema" && x.entries !== undefined)?.entries as Record<string, AnySchema> | undefined;
const recordOf = (chain: Item[]) => chain.find((x) => x.type === "record") as (Item & { value: AnySchema }) | undefined;

/**
 * A schema chosen by the value's shape (v.lazy, e.g. a model entry: a name or a mapping): documented
 * as the schemas it picks for a string and for a mapping.
 */
function lazyOptions(head: Item): { text: AnySchema; mapping: AnySchema } | undefined {
  if (head.type !== "lazy" || typeof head.getter !== "function") return undefined;
  const getter = head.getter as (input: unknown) => AnySchema;
  return { text: getter(""), mapping: getter({}) };
}

function typeOf(chain: Item[]): string {
  const head = chain[0];
  const lazy = lazyOptions(head);
  if (lazy) return `${typeOf(unwrap(lazy.text).core)} or mapping`;
  if (entriesOf(chain)) return "mapping";
  const rec = recordOf(chain);
  if (rec) return `map of ${typeOf(unwrap(rec.value).core)}`;
  switch (head.type) {
    case "number":
      return chain.some((a) => a.type === "safe_integer" || a.type === "integer") ? "integer" : "number";
    case "boolean":
      return "boolean";
    case "picklist":
      return (head.options as unknown[]).map((o) => JSON.stringify(o)).join(" \\| ");
    case "array": {
      const item = unwrap(head.item as AnySchema).core;
      const lazy = lazyOptions(item[0]);
      if (lazy) return `list of ${typeOf(unwrap(lazy.text).core)}s or mappings`;
      return `list of ${entriesOf(item) ? "mappings" : typeOf(item)}`;
    }
    default:
      return "string";
  }
}

function ruleOf(chain: Item[]): string {
  const messages: string[] = [];
  for (const a of chain) {
    // Schemas' messages (the type's rule) and checks' messages (uniqueness, cross-field words).
    if (typeof a.message === "string" && (a.kind === "schema" || a.type === "check") && !messages.includes(a.message)) messages.push(a.message);
  }
  // A list of scalars: each item's own rule too (a list of mappings documents its keys below).
  if (chain[0].type === "array") {
    const item = unwrap(chain[0].item as AnySchema).core;
    const lazy = lazyOptions(item[0]);
    if (lazy) messages.push(`each ${ruleOf(unwrap(lazy.text).core)}, or a mapping of the keys below`);
    else if (!entriesOf(item)) messages.push(`each ${ruleOf(item)}`);
  }
  // A mapping's rule ("must be an object") says nothing its type column does not.
  return entriesOf(chain) ? messages.filter((m) => !m.startsWith("must be an object")).join("; ") : messages.join("; ");
}

function defaultOf(u: Unwrapped): string {
  if (u.defaultText !== undefined) return u.defaultText;
  if (!u.optional) return "required";
  if (u.defaultValue === undefined) return "not set";
  return `\`${JSON.stringify(u.defaultValue)}\``;
}

/** Every key of a schema, depth first, in the order the schema declares them. */
export function documentKeys(schema: v.GenericSchema, prefix = ""): KeyDoc[] {
  const out: KeyDoc[] = [];
  const visit = (s: AnySchema, key: string) => {
    const u = unwrap(s);
    if (key !== "") out.push({ key, type: typeOf(u.core), default: defaultOf(u), rule: ruleOf(u.core), description: u.description });
    const entries = entriesOf(u.core);
    if (entries) for (const [k, child] of Object.entries(entries)) visit(child, key === "" ? k : `${key}.${k}`);
    if (u.core[0].type === "array") {
      const inner = unwrap(u.core[0].item as AnySchema);
      const lazy = lazyOptions(inner.core[0]);
      const item = lazy ? unwrap(lazy.mapping) : inner;
      const itemEntries = entriesOf(item.core);
      if (itemEntries) for (const [k, child] of Object.entries(itemEntries)) visit(child, `${key}[].${k}`);
    }
  };
  visit(schema as AnySchema, prefix);
  return out;
}

/** The schema's first-level keys (a section's keys), in order. */
export function keysOf(schema: v.GenericSchema): string[] {
  return Object.keys(entriesOf(unwrap(schema as AnySchema).core) ?? {});
}
