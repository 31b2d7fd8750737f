// Helpers shared by the rule modules. Rules read resource inputs as the engine sees them.
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";

/** A rule of this pack: a Pulumi policy plus what it prevents and its domain (for the README table). */
export type Rule = (ResourceValidationPolicy | StackValidationPolicy) & {
  /** The failure in production the rule prevents. */
  readonly prevents: string;
  /** gpu-nodes | model-repository | triton | monitoring | gateway | firewall | foundation */
  readonly domain: string;
};

/** A Kubernetes object (has apiVersion and kind), as opposed to a provider, Helm release or component. */
export function isK8sObject(type: string, props: Record<string, any>): boolean {
  return type.startsWith("kubernetes:") && typeof props.apiVersion === "string" && typeof props.kind === "string";
}

/** Provider references are `<provider urn>::<id>`; default providers are named default or default_<version>. */
export function usesDefaultProvider(provider: { name: string } | undefined): boolean {
  return provider === undefined || provider.name === "default" || provider.name.startsWith("default_");
}

/** Provider config objects reach the engine JSON-encoded; accept both forms. */
export function decodeJson(v: unknown): any {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}
