// The stack configuration: every `triton-platform:*` key, its rule and its default. Each
// top-level key is a section owned by one component (its descriptor's `sections`,
// components/registry.ts); they are composed here in registry order, then the rules that span
// sections (config/cross-section.ts) run over the whole.
import type * as v from "valibot";
import { refined, section } from "../lib/schema";
import type { StackSettings } from "../components/component";
import { REGISTRY } from "../components/registry";
import { CROSS_SECTION_RULES } from "./cross-section";

export { ENVIRONMENTS } from "../components/naming";

type SectionKey = keyof StackSettings;

/** Every component's sections, in registry order: key → its schema and docs page. */
const SECTION_SPECS = (() => {
  const specs: Partial<Record<SectionKey, { schema: v.GenericSchema; page: string; owner: string }>> = {};
  for (const d of REGISTRY) {
    for (const [key, spec] of Object.entries(d.sections ?? {}) as [SectionKey, { schema: v.GenericSchema; page: string }][]) {
      const taken = specs[key];
      if (taken) throw new Error(`components/registry.ts: section "${key}" of component ${d.name} is owned by ${taken.owner} already`);
      specs[key] = { ...spec, owner: d.name };
    }
  }
  return specs as Record<SectionKey, { schema: v.GenericSchema; page: string; owner: string }>;
})();

/** Each section's schema, by key (its own component's schema). */
export const sections = Object.fromEntries(Object.entries(SECTION_SPECS).map(([k, s]) => [k, s.schema])) as {
  readonly [K in SectionKey]: v.GenericSchema<unknown, StackSettings[K]>;
};

/** Every section, each checked by its own component's schema. */
export const sectionsSchema = section(sections as Record<SectionKey, v.GenericSchema<unknown, StackSettings[SectionKey]>>) as unknown as v.GenericSchema<
  unknown,
  StackSettings
>;

// Then the rules that span sections (config/cross-section.ts); each names the key it is about.
export const stackConfigSchema = refined(sectionsSchema, ...CROSS_SECTION_RULES.map((r) => r.check));

/** The validated, defaulted configuration that index.ts hands to the components. */
export type StackConfig = StackSettings & {
  /** The Pulumi stack name (dev, staging, prod, …). */
  stack: string;
  /** aws:region of the stack. */
  region: string;
};

// Keys of other namespaces that this program reads (and so validates).
export { awsRegion } from "../components/cluster/schema";

/** The docs page of each section (its key table is generated there by npm run docs); "" for none. */
export const SECTION_PAGES = Object.fromEntries(Object.entries(SECTION_SPECS).map(([k, s]) => [k, s.page])) as Readonly<Record<SectionKey, string>>;
