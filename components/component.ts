// What a component is to the rest of the platform: one descriptor, registered once in
// components/registry.ts, that config/ (its settings sections and docs pages), index.ts (its
// build and outputs), the Firewall (its network needs) and the plan's summary (its lines)
// iterate over. Like cdk-eks-blueprints' ClusterAddOn: the stack is a list of these, in
// dependency order, and nothing outside the component's folder names what it creates.
//
// The stack's settings and what components hand to later ones are typed by two interfaces that
// each component extends from its own descriptor file (TypeScript declaration merging):
//
//   declare module "../component" {
//     interface StackSettings { gpu: v.InferOutput<typeof gpuSettings> }
//     interface Produced { gpuNodes: GpuNodesRef }
//   }
//
// so a component reads `ctx.settings.gpu` and `ctx.need("gpuNodes")` with their real types
// while this file, the registry and index.ts know no component.
import type * as pulumi from "@pulumi/pulumi";
import type * as v from "valibot";
import type { NetworkNeeds, SgRef } from "./network";
import { isSettingsError, keyPath, SettingsError, type SettingProblem } from "../lib/errors";
import { documentKeys } from "../lib/schema-doc";

/** The resolved settings of the stack, one entry per section; each component adds its own sections. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- extended by each component (declaration merging)
export interface StackSettings {}

/** What components hand to the components after them, by name; each producing component adds its entries. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- extended by each component (declaration merging)
export interface Produced {}

/** A section of the stack file (`triton-platform:<key>`) that a component owns. */
export interface SectionSpec {
  /** Its schema (types, defaults, rules and docs: lib/schema.ts). */
  readonly schema: v.GenericSchema;
  /** The docs page its key table is generated into (npm run docs); "" for none (the README documents it key by key). */
  readonly page: string;
}

/** A section owned by a component: its schema's output must be what StackSettings says of that key (checked by tsc). */
export function sectionSpec<K extends keyof StackSettings>(schema: v.GenericSchema<unknown, StackSettings[K]>, page = ""): SectionSpec {
  return { schema, page };
}

/** What a component's build, needs and outputs read: the stack's settings and what earlier components produced. */
export interface StackContext {
  /** The Pulumi stack name. */
  readonly stack: string;
  /** aws:region of the stack. */
  readonly region: string;
  readonly settings: StackSettings;
  /** What an earlier component produced; throws, naming both, when none did (a registry out of order). */
  need<K extends keyof Produced>(key: K): Produced[K];
  /** The same, or undefined when no earlier component produced it (an optional component that is off). */
  find<K extends keyof Produced>(key: K): Produced[K] | undefined;
  /** Every component's network needs, in registry order (what the Firewall composes). */
  networkNeeds(): readonly NetworkNeeds[];
  /** Every component's existing security groups, by symbolic name (what the Firewall's rules may name). */
  securityGroups(): Readonly<Record<SgRef, pulumi.Input<string>>>;
  /**
   * Construct a component (`build`) from the settings at `at` (a stack-file key path, e.g.
   * `["triton", "groups", 1]`): a SettingsError its resolver throws names each argument key as
   * the stack-file key it came from (`triton-platform:triton.groups[1].canary.image.tag`).
   * `from` names the arguments taken from elsewhere (`{ zones: "cluster.zones" }`). Every
   * build already runs at its component's own sections; this is for a finer place.
   */
  at<T>(at: readonly (string | number)[], build: () => T, from?: ArgumentKeys): T;
}

/**
 * Arguments of a component that come from another stack-file key than their own name under
 * the component's section: argument (its first segment) → the key path it is set at
 * (`"cluster.zones"`, or a key of another namespace such as `"aws:region"`).
 */
export type ArgumentKeys = Readonly<Record<string, string>>;

/** One line of the stack's summary: a label and its lines (the first beside the label, the others under it). */
export interface SummaryRow {
  readonly label: string;
  readonly lines: readonly string[];
}

/** What a component's summary reads: the resolved settings, without the Pulumi runtime. */
export interface SummaryContext {
  readonly stack: string;
  readonly region: string;
  readonly settings: StackSettings;
}

/** A component as the platform sees it. */
export interface ComponentDescriptor {
  /** Its name (its folder under components/), named in errors. */
  readonly name: string;
  /** The stack-file sections it owns, by key, in the order they are documented. */
  readonly sections?: Readonly<Partial<Record<keyof StackSettings, SectionSpec>>>;
  /** The policy domains (policies/rules/<domain>.ts) whose rules protect what it creates, by name. */
  readonly policyDomains?: readonly string[];
  /**
   * The arguments of its components that hold another key's value than their own name under its
   * sections (`{ zones: "cluster.zones", region: "aws:region" }`), for the errors of its build: an
   * argument key that is its section's key needs no entry (a component that spreads its section
   * needs none). See StackContext.at.
   */
  readonly argumentKeys?: ArgumentKeys;
  /**
   * Creates its ComponentResource(s) from the settings and what earlier components produced,
   * and returns what it hands on. Runs in registry order (the order resources are registered).
   */
  build?(ctx: StackContext): Partial<Produced> | void;
  /** The existing security groups it owns, by the symbolic name network needs use (SgRef: "cluster", "gpuNodes"). */
  securityGroups?(ctx: StackContext): Readonly<Record<SgRef, pulumi.Input<string>>>;
  /** What its pods need from the network (components/network.ts); the Firewall composes every component's. */
  network?(ctx: StackContext): NetworkNeeds | undefined;
  /** Its stack outputs, by name, read after every component is built. */
  outputs?(ctx: StackContext): Record<string, unknown>;
  /**
   * Its lines of the plan's summary, each with where it stands (`at`: lower first; the summary
   * reads place, GPUs, serving, capacity, cost, then the edges: not the dependency order).
   */
  readonly summary?: readonly { readonly at: number; row(ctx: SummaryContext): SummaryRow }[];
}

/**
 * Build every component of `registry` in order under `settings`, and return the stack outputs
 * (every component's, merged). Wiring only: what a component needs it takes from the context.
 */
export function buildStack(
  registry: readonly ComponentDescriptor[],
  settings: StackSettings,
  stack: string,
  region: string,
  keyRoot = "",
): Record<string, unknown> {
  const produced: Partial<Produced> = {};
  const by: Partial<Record<keyof Produced, string>> = {};
  let current = "";
  // The stack's keys are read only when a build fails (the documented keys of every section).
  const keys = () => stackKeysOf(registry, keyRoot);
  // The place the component being built takes its settings from: its sections, or a finer one (ctx.at).
  let scope: KeyScope = { at: [], from: {} };
  const ctx: StackContext = {
    stack,
    region,
    settings,
    need(key) {
      if (!(key in produced)) throw new Error(`component ${current} needs "${String(key)}", which no component before it in components/registry.ts produces`);
      return produced[key]!;
    },
    find: (key) => produced[key],
    networkNeeds: () => networkNeedsOf(registry, ctx),
    securityGroups: () => {
      const groups: Record<SgRef, pulumi.Input<string>> = {};
      for (const d of registry) Object.assign(groups, d.securityGroups?.(ctx));
      return groups;
    },
    at(at, build, from = {}) {
      const outer = scope;
      scope = { at: [...at], from: { ...outer.from, ...from }, sections: outer.sections };
      try {
        return atStackKeys(scope, keys, build);
      } finally {
        scope = outer;
      }
    },
  };
  for (const d of registry) {
    current = d.name;
    scope = { at: [], from: d.argumentKeys ?? {}, sections: Object.keys(d.sections ?? {}) };
    const out = (d.build ? atStackKeys(scope, keys, () => d.build!(ctx)) : undefined) ?? {};
    for (const k of Object.keys(out) as (keyof Produced)[]) {
      if (k in produced) throw new Error(`component ${d.name} produces "${String(k)}", which ${by[k]} produces already`);
      by[k] = d.name;
    }
    Object.assign(produced, out);
  }
  current = "outputs";
  const outputs: Record<string, unknown> = {};
  for (const d of registry) {
    for (const [k, value] of Object.entries(d.outputs?.(ctx) ?? {})) {
      if (k in outputs) throw new Error(`component ${d.name} exports "${k}", which another component exports already`);
      outputs[k] = value;
    }
  }
  // By name, as a module's named exports are listed: the order a reader of outputs.json looks them up in.
  return Object.fromEntries(Object.entries(outputs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Every component's summary rows, in reading order (their `at`; registry order among equals). */
export function summaryRowsOf(registry: readonly ComponentDescriptor[], ctx: SummaryContext): SummaryRow[] {
  const parts = registry.flatMap((d) => d.summary ?? []);
  return parts
    .map((p, i) => ({ p, i }))
    .sort((a, b) => a.p.at - b.p.at || a.i - b.i)
    .map(({ p }) => p.row(ctx));
}

/** Every component's network needs, in registry order (what the Firewall is given). */
export function networkNeedsOf(registry: readonly ComponentDescriptor[], ctx: StackContext): NetworkNeeds[] {
  return registry.flatMap((d) => {
    const n = d.network?.(ctx);
    return n ? [n] : [];
  });
}

// ---- errors at their stack-file keys ------------------------------------------------------
// A component's resolver names its own arguments (`kmsKeyArn`): right for a direct caller, but
// the person running a stack must change a key of the stack file. Every build runs inside a
// scope that says where its arguments come from, and a SettingsError thrown there is re-keyed
// once, here: a new component gets it with its sections, with nothing to write.

/** Where the component being built takes its arguments from. */
export interface KeyScope {
  /** A key path its argument keys are below (ctx.at); [] for the component's own sections. */
  readonly at: readonly (string | number)[];
  /** Arguments set at another key (ArgumentKeys). */
  readonly from: ArgumentKeys;
  /** The sections it owns (an argument key below one of them is that section's key). */
  readonly sections?: readonly string[];
}

/** Every key the stack file can set, as its docs name them (`triton.groups[].canary.image.tag`), and the root keys are written after. */
interface StackKeys {
  readonly documented: ReadonlySet<string>;
  /** The documented keys that are maps (`tags`): any key below one is a stack key too. */
  readonly maps: ReadonlySet<string>;
  readonly root: string;
}

const stackKeysCache = new WeakMap<readonly ComponentDescriptor[], Map<string, StackKeys>>();
function stackKeysOf(registry: readonly ComponentDescriptor[], root: string): StackKeys {
  const byRoot = stackKeysCache.get(registry) ?? new Map<string, StackKeys>();
  stackKeysCache.set(registry, byRoot);
  const cached = byRoot.get(root);
  if (cached) return cached;
  const keys = collectStackKeys(registry, root);
  byRoot.set(root, keys);
  return keys;
}

function collectStackKeys(registry: readonly ComponentDescriptor[], root: string): StackKeys {
  const documented = new Set<string>();
  const maps = new Set<string>();
  const add = (key: string, type: string) => {
    documented.add(key);
    if (type.startsWith("map of")) maps.add(key);
  };
  for (const d of registry) {
    for (const [section, spec] of Object.entries<SectionSpec>(d.sections ?? {})) {
      for (const k of documentKeys(spec.schema, section)) add(k.key, k.type);
    }
  }
  return { documented, maps, root };
}

/** `a.b[2].c` → ["a", "b", 2, "c"] (lib/errors keyPath's inverse). */
function segmentsOf(key: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of key.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]);
  return out;
}

/** A key path as the docs list it: list indices as `[]`. */
const documentedForm = (path: readonly (string | number)[]) => keyPath(path.map((p) => (typeof p === "number" ? "[]" : p))).replace(/\.\[\]/g, "[]");

/**
 * The stack-file key of a component's argument key under `scope`, or undefined when it is no key
 * of the stack file (a reference the program passes, such as a VPC id: a program error, kept as is).
 */
export function stackKeyOf(registry: readonly ComponentDescriptor[], argumentKey: string, scope: Partial<KeyScope>, root = ""): string | undefined {
  return placeKey(argumentKey, { at: scope.at ?? [], from: scope.from ?? {}, sections: scope.sections }, stackKeysOf(registry, root));
}

function placeKey(argumentKey: string, scope: KeyScope, keys: StackKeys): string | undefined {
  const path = segmentsOf(argumentKey);
  if (path.length === 0) return undefined;
  const [first, ...rest] = path;
  const elsewhere = typeof first === "string" ? scope.from[first] : undefined;
  if (elsewhere !== undefined) {
    const full = [...segmentsOf(elsewhere), ...rest];
    // Another namespace's key (aws:region) is written as it is.
    return elsewhere.includes(":") ? elsewhere + keyPath(rest, rest.length && typeof rest[0] === "string" ? "." : "") : keyPath(full, keys.root);
  }
  const candidates = scope.at.length > 0 ? [[...scope.at, ...path]] : (scope.sections ?? []).map((s) => [s, ...path]);
  // An argument named after a section it owns is that section (environment, tags.team).
  if (scope.at.length === 0 && scope.sections?.includes(String(first))) candidates.unshift(path);
  const isKey = (c: readonly (string | number)[]) =>
    keys.documented.has(documentedForm(c)) || c.some((_, i) => i > 0 && keys.maps.has(documentedForm(c.slice(0, i))));
  const found = candidates.find(isKey);
  return found && keyPath(found, keys.root);
}

/** Run `build`; a SettingsError it throws comes out with its keys at the stack file (those it can place). */
function atStackKeys<T>(scope: KeyScope, keys: () => StackKeys, build: () => T): T {
  try {
    return build();
  } catch (e) {
    // Re-keyed once: an inner scope (ctx.at) already wrote stack keys, which are no arguments.
    if (!isSettingsError(e) || (e as SettingsError & { [STACK_KEYED]?: true })[STACK_KEYED]) throw e;
    const details: SettingProblem[] = e.details.map((p) => {
      const key = placeKey(p.key, scope, keys());
      return key === undefined ? p : { ...p, key };
    });
    const rekeyed = new SettingsError(`invalid stack configuration (${e.subject.replace(/^invalid /, "")})`, details);
    (rekeyed as SettingsError & { [STACK_KEYED]?: true })[STACK_KEYED] = true;
    throw rekeyed;
  }
}

const STACK_KEYED = Symbol("stack-keyed");
