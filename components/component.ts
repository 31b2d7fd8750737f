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
}

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
export function buildStack(registry: readonly ComponentDescriptor[], settings: StackSettings, stack: string, region: string): Record<string, unknown> {
  const produced: Partial<Produced> = {};
  const by: Partial<Record<keyof Produced, string>> = {};
  let current = "";
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
  };
  for (const d of registry) {
    current = d.name;
    const out = d.build?.(ctx) ?? {};
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
