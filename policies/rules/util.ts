// Helpers shared by the rule modules. Rules read resource inputs as the engine sees them.
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { TRITON_ALL_PODS } from "../../components/contracts";
import { HELM_RELEASE } from "./types";

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

/** Settings of a rule that applies only in some environments. */
export interface EnvConfig {
  environments: string[];
}

/** The configSchema entry of EnvConfig (production only by default), described for its rule. */
export function environmentsSchema(description: string) {
  return { environments: { type: "array", items: { type: "string" }, default: ["prod"], description } } as const;
}

/** Pod labels of a Triton pod (every label of TRITON_ALL_PODS). */
export function isTritonPodLabels(labels: Record<string, string> | undefined): boolean {
  return Object.entries(TRITON_ALL_PODS).every(([k, v]) => labels?.[k] === v);
}

/** A Helm release of `chart` (releases are recorded with their chart name in props.chart). */
export function isHelmChart(type: string, props: Record<string, any>, chart: string): boolean {
  return type === HELM_RELEASE && props.chart === chart;
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

/** Where a violation is: the offending property path of the reported resource, and its value there. */
export interface Finding {
  /** Property path in the resource's inputs, e.g. `spec.replicas` or `data["envoy.json"].admin.address`. */
  readonly path: string;
  /** The value found at `path` (null when absent). Secrets are never put here. */
  readonly value: unknown;
}

type ReportViolation = (message: string, urn?: string) => void;
let reporting: Finding | undefined;

/**
 * Report a violation together with its property path and value. The Pulumi engine receives
 * the message (which names both); the offline evaluator also reads them structured, through
 * currentFinding(), while `report` runs: reports are synchronous, so nothing interleaves.
 */
export function reportAt(report: ReportViolation, at: Finding, message: string, urn?: string): void {
  reporting = { path: at.path, value: at.value === undefined ? null : at.value };
  try {
    report(message, urn);
  } finally {
    reporting = undefined;
  }
}

/** The finding of the violation being reported right now, if the rule used reportAt. */
export function currentFinding(): Finding | undefined {
  return reporting;
}

/** A value as messages show it: JSON, or "nothing" when absent. */
export function show(v: unknown): string {
  return v === undefined ? "nothing" : JSON.stringify(v);
}

// ---- Kubernetes label selectors ---------------------------------------------------------
export type LabelSelector = { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };

/** Does a label selector select an object with these labels? (Kubernetes semantics; {} selects all, none selects nothing.) */
export function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const val = labels[e.key];
    if (e.operator === "In" && !(has && (e.values ?? []).includes(val))) return false;
    if (e.operator === "NotIn" && has && (e.values ?? []).includes(val)) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}

const parsedDocuments = new Map<string, unknown>();

/**
 * Parse an embedded document (e.g. the Envoy bootstrap in a ConfigMap) once per evaluation:
 * several rules read the same one. The result is shared, so callers must treat it as
 * read-only. Parse errors are thrown (and not cached).
 */
export function parseEmbeddedOnce(text: string, parse: (text: string) => unknown): unknown {
  if (parsedDocuments.has(text)) return parsedDocuments.get(text);
  const parsed = parse(text);
  if (parsedDocuments.size >= 16) parsedDocuments.clear();
  parsedDocuments.set(text, parsed);
  return parsed;
}
