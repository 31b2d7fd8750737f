// What a rule of this pack is: a pure check (resources and settings in, findings out) plus
// what it prevents, and the thin adapter that turns the check into the @pulumi/policy
// validateResource / validateStack the engine calls. The offline planner calls `check`
// directly, so the pack and the planner share no state: a rule's findings are its return value.
import type { PolicyConfigSchema, PolicyResource, ResourceValidationArgs, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";

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
  /** The domain the rule protects, and the file it lives in: policies/rules/<domain>.ts. */
  readonly domain:
    | "foundation"
    | "gpu-nodes"
    | "autoscaler"
    | "model-repository"
    | "triton"
    | "monitoring"
    | "gateway"
    | "firewall"
    | "workloads"
    | "exposure"
    | "rbac"
    | "iam"
    | "secrets";
  readonly description: string;
  /** The failure in production the rule prevents. */
  readonly prevents: string;
  readonly remediationSteps: string;
  /** Thresholds and scopes, each with its default (the one place that states it); a stack's levels file overrides them. */
  readonly configSchema?: PolicyConfigSchema;
}

/** A rule over one resource at a time. */
export type ResourceRule<S = any> = RuleInfo &
  ResourceValidationPolicy & { readonly kind: "resource"; readonly check: (resource: Resource, settings: S) => readonly Finding[] };

/** A rule over the whole stack (it joins resources: a StatefulSet and the PDB that covers it). */
export type StackRule<S = any> = RuleInfo &
  StackValidationPolicy & { readonly kind: "stack"; readonly check: (resources: readonly PolicyResource[], settings: S) => readonly Finding[] };

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
    validateStack: (args, report) => {
      for (const f of spec.check(args.resources, args.getConfig<S & object>())) report(f.message, f.urn);
    },
  };
}
