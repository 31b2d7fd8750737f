// What a rule of this pack is: a pure check (resources and settings in, findings out) plus
// what it prevents, and the thin adapter that turns the check into the @pulumi/policy
// validateResource / validateStack the engine calls. The offline planner calls `check`
// directly, so the pack and the planner share no state: a rule's findings are its return value.
import type { PolicyConfigSchema, PolicyResource, ResourceValidationArgs, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { TRITON_SERVER } from "./types";

/** A violation: where it is (the offending property path of the reported resource, and its value there) and what is wrong. */
export interface Finding {
  /** Property path in the resource's inputs, e.g. `spec.replicas` or `data["envoy.json"].admin.address`. */
  readonly path: string;
  /** The value found at `path` (null or undefined when absent). Secrets are never put here. */
  readonly value: unknown;
  /** What the engine shows: names the resource, the path and the value. */
  readonly message: string;
  /** The resource reported, for stack rules (a resource rule reports the resource it checked). */
  readonly urn?: string;
}

/** The part of a resource a resource rule reads (a PolicyResource and the engine's ResourceValidationArgs both have it). */
export type Resource = Pick<ResourceValidationArgs, "type" | "props" | "urn" | "name" | "provider">;

/** What every rule says about itself (the README table and the engine show it). */
interface RuleInfo {
  readonly name: string;
  /**
   * The domain the rule protects: the file it lives in, policies/rules/<domain>.ts (an open name: a new domain is a new
   * file there, listed once in ./index.ts; test/policy-layout.test.ts holds the two together).
   */
  readonly domain: string;
  readonly description: string;
  /** The failure in production the rule prevents. */
  readonly prevents: string;
  readonly remediationSteps: string;
  /** Thresholds and scopes, each with its default (the one place that states it); a stack's levels file overrides them. */
  readonly configSchema?: PolicyConfigSchema;
  /**
   * The stack setting a violation is fixed in, as a key of Pulumi.<stack>.yaml without the project prefix (names from
   * components/<c>/schema.ts): where the planner's SARIF locates the violation. `{group}`: the serving group whose
   * TritonServer component holds the offending resource; `{canary}`: `.canary` when that resource is the group's canary
   * track (see configKeyFor). Without it, a violation is located at the stack file's `config:`.
   */
  readonly configKey?: string;
}

/** The offending resource and its ancestors, nearest first: what a rule's configKey is resolved from. */
export type Ancestry = readonly { readonly type: string; readonly name: string; readonly props: { readonly metadata?: { readonly name?: string } } }[];

/**
 * A rule's configKey for a violation whose resource has `ancestry` (SARIF asks each rule): the template with `{group}`
 * and `{canary}` filled in; outside any serving group, the key of the list itself (`[name={group}]` and what follows dropped).
 */
export function configKeyFor(template: string | undefined, ancestry: Ancestry): string | undefined {
  if (!template || !template.includes("{")) return template;
  const group = ancestry.find((r) => r.type === TRITON_SERVER);
  if (!group) return template.replace(/\[name=\{group\}\].*$/, "").replace(/\{canary\}/g, "");
  const own = ancestry[0];
  const canary = own !== group && /-canary$/.test(own.props.metadata?.name ?? own.name);
  return template.replace(/\{group\}/g, group.name).replace(/\{canary\}/g, canary ? ".canary" : "");
}

/** What a planner asks a rule about a violation: the stack setting it is fixed in (its configKey, resolved). */
interface Located {
  readonly configKeyFor: (ancestry: Ancestry) => string | undefined;
}

/** A rule over one resource at a time. */
export type ResourceRule<S = any> = RuleInfo &
  ResourceValidationPolicy &
  Located & { readonly kind: "resource"; readonly check: (resource: Resource, settings: S) => readonly Finding[] };

/** A rule over the whole stack (it joins resources: a StatefulSet and the PDB that covers it). */
export type StackRule<S = any> = RuleInfo &
  StackValidationPolicy &
  Located & { readonly kind: "stack"; readonly check: (resources: readonly PolicyResource[], settings: S) => readonly Finding[] };

/** A rule of this pack: a Pulumi policy whose findings also come back from `check`. */
export type Rule = ResourceRule | StackRule;

/** No findings: shared, never mutated (most checks of most resources find nothing). */
export const NONE: readonly Finding[] = Object.freeze([]);

/** A resource rule; every rule is advisory in code, its level per stack comes from policies/config/<stack>.json. */
export function resourceRule<S = Record<string, never>>(spec: RuleInfo & { check: (resource: Resource, settings: S) => readonly Finding[] }): ResourceRule<S> {
  return {
    ...spec,
    kind: "resource",
    enforcementLevel: "advisory",
    configKeyFor: (ancestry) => configKeyFor(spec.configKey, ancestry),
    validateResource: (args, report) => {
      for (const f of spec.check(args, args.getConfig<S & object>())) report(f.message);
    },
  };
}

/** A stack rule; every rule is advisory in code, its level per stack comes from policies/config/<stack>.json. */
export function stackRule<S = Record<string, never>>(
  spec: RuleInfo & { check: (resources: readonly PolicyResource[], settings: S) => readonly Finding[] },
): StackRule<S> {
  return {
    ...spec,
    kind: "stack",
    enforcementLevel: "advisory",
    configKeyFor: (ancestry) => configKeyFor(spec.configKey, ancestry),
    validateStack: (args, report) => {
      for (const f of spec.check(args.resources, args.getConfig<S & object>())) report(f.message, f.urn);
    },
  };
}
