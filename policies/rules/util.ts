// Helpers shared by the rule modules (no rule lives here). Rules read resource inputs as
// the engine sees them; typed views of those inputs are in ./props.
import type { PolicyResource } from "@pulumi/policy";
import { MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE, NODE_LABEL_ROLE, NODE_ROLE_GPU, TRITON_ALL_PODS } from "../../components/contracts";
import { isGpuAmiType } from "../../components/upstream/eks";
import { metadataOf, podTemplateLabelsOf, propsOf } from "./props";

// Rule modules read decodeJson from here with the other helpers; it lives in ./props, which needs it and imports nothing of this module.
export { decodeJson } from "./props";
import { HELM_RELEASE, LAUNCH_TEMPLATE, NODE_GROUP, SECURITY_GROUP, SERVICE, STATEFUL_SET } from "./types";

/** A Kubernetes object (has apiVersion and kind), as opposed to a provider, Helm release or component. */
export function isK8sObject(type: string, props: { apiVersion?: unknown; kind?: unknown }): boolean {
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
export function isTritonPodLabels(labels: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(TRITON_ALL_PODS).every(([k, v]) => labels?.[k] === v);
}

/** A Helm release of `chart` (releases are recorded with their chart name in props.chart). */
export function isHelmChart(type: string, props: { chart?: unknown }, chart: string): boolean {
  return type === HELM_RELEASE && props.chart === chart;
}

/** Provider references are `<provider urn>::<id>`; default providers are named default or default_<version>. */
export function usesDefaultProvider(provider: { name: string } | undefined): boolean {
  return provider === undefined || provider.name === "default" || provider.name.startsWith("default_");
}

/** A value as messages show it: JSON, or "nothing" when absent. */
export function show(v: unknown): string {
  return v === undefined ? "nothing" : JSON.stringify(v);
}

// ---- Kubernetes label selectors ---------------------------------------------------------
export type LabelSelector = {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key?: string; readonly operator?: string; readonly values?: readonly string[] }[];
};

/** Does a label selector select an object with these labels? (Kubernetes semantics; {} selects all, none selects nothing.) */
export function selects(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const key = String(e.key); // as the property lookup would convert it
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    const val = labels[key];
    if (e.operator === "In" && !(has && (e.values ?? []).includes(val))) return false;
    if (e.operator === "NotIn" && has && (e.values ?? []).includes(val)) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}

/**
 * Does every object this selector selects carry `key=value`? True for matchLabels `key: value` and for an
 * `In` expression whose values are all `value` (Kubernetes ANDs matchLabels with every expression, so
 * any further term only narrows). A missing selector requires nothing (callers give it its meaning).
 */
export function selectorRequires(selector: LabelSelector | undefined, key: string, value: string): boolean {
  if (!selector) return false;
  if (selector.matchLabels?.[key] === value) return true;
  return (selector.matchExpressions ?? []).some(
    (e) => e.key === key && e.operator === "In" && (e.values ?? []).length > 0 && (e.values ?? []).every((v) => v === value),
  );
}

/**
 * Could this selector select some object whose labels include `fixed`? (Its other labels are free.)
 * Kubernetes semantics: matchLabels and every expression must hold; In/NotIn/Exists/DoesNotExist. A
 * missing selector selects nothing; an operator Kubernetes does not know is taken as matching.
 */
export function maySelect(selector: LabelSelector | undefined, fixed: Readonly<Record<string, string>>): boolean {
  if (!selector) return false;
  const pinned: Record<string, string> = { ...fixed };
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (Object.prototype.hasOwnProperty.call(pinned, k) && pinned[k] !== v) return false;
    pinned[k] = v;
  }
  for (const e of selector.matchExpressions ?? []) {
    const key = String(e.key);
    const values = e.values ?? [];
    const has = Object.prototype.hasOwnProperty.call(pinned, key);
    if (e.operator === "In" && (has ? !values.includes(pinned[key]) : values.length === 0)) return false;
    if (e.operator === "NotIn" && has && values.includes(pinned[key])) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  // Free keys: several In expressions on one key must share a value, and none of them may be excluded.
  const free = new Set((selector.matchExpressions ?? []).map((e) => String(e.key)).filter((k) => !Object.prototype.hasOwnProperty.call(pinned, k)));
  for (const key of free) {
    const on = (selector.matchExpressions ?? []).filter((e) => String(e.key) === key);
    const ins = on.filter((e) => e.operator === "In").map((e) => e.values ?? []);
    if (ins.length === 0) {
      if (on.some((e) => e.operator === "Exists") && on.some((e) => e.operator === "DoesNotExist")) return false;
      continue;
    }
    if (on.some((e) => e.operator === "DoesNotExist")) return false;
    const excluded = new Set(on.filter((e) => e.operator === "NotIn").flatMap((e) => e.values ?? []));
    if (!ins[0].some((v) => !excluded.has(v) && ins.every((vs) => vs.includes(v)))) return false;
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

// ---- Kubernetes objects across the stack --------------------------------------------------
// (stack rules of several domains join Triton StatefulSets with the Services that select them)

/** The namespace of a Kubernetes object ("default" when unset, as the API server defaults it). */
export const namespaceOf = (r: Pick<PolicyResource, "props">): string => metadataOf(r).namespace ?? "default";
/** The object's metadata.name, else the resource name. */
export const objectNameOf = (r: Pick<PolicyResource, "props" | "name">): string => metadataOf(r).name ?? r.name;

/** StatefulSets whose pods are Triton pods (TRITON_ALL_PODS). */
export function tritonStatefulSets(resources: readonly PolicyResource[]): PolicyResource[] {
  return resources.filter((r) => r.type === STATEFUL_SET && isTritonPodLabels(podTemplateLabelsOf(r)));
}

const selectorOf = (s: PolicyResource): Readonly<Record<string, string>> => propsOf(s, SERVICE)?.spec?.selector ?? {};

/**
 * Services by namespace and by one pair of their selector (the alphabetically first key):
 * a Service can select a pod only if that pair is among the pod's labels, so lookups visit
 * a few candidates instead of every resource (rules ask once per StatefulSet). Cached per
 * resources array (the one list an evaluation passes to every stack rule): a memo, not
 * state shared with anyone.
 */
const serviceIndexOf = new WeakMap<readonly PolicyResource[], Map<string, Map<string, PolicyResource[]>>>();
function serviceIndex(resources: readonly PolicyResource[]): Map<string, Map<string, PolicyResource[]>> {
  let index = serviceIndexOf.get(resources);
  if (index) return index;
  index = new Map();
  for (const s of resources) {
    if (s.type !== SERVICE) continue;
    const sel = selectorOf(s);
    const first = Object.keys(sel).sort()[0];
    if (first === undefined) continue;
    const byPair = index.get(namespaceOf(s)) ?? new Map<string, PolicyResource[]>();
    index.set(namespaceOf(s), byPair);
    const key = `${first}=${sel[first]}`;
    byPair.set(key, [...(byPair.get(key) ?? []), s]);
  }
  serviceIndexOf.set(resources, index);
  return index;
}

const positions = new WeakMap<readonly PolicyResource[], Map<PolicyResource, number>>();
function positionsOf(resources: readonly PolicyResource[]): Map<PolicyResource, number> {
  let p = positions.get(resources);
  if (!p) positions.set(resources, (p = new Map(resources.map((r, i) => [r, i]))));
  return p;
}

/** Services of a namespace whose (non-empty) selector selects pods with these labels, in the resources' order. */
export function servicesFor(resources: readonly PolicyResource[], ns: string, labels: Readonly<Record<string, string>>): PolicyResource[] {
  const byPair = serviceIndex(resources).get(ns);
  if (!byPair) return [];
  const out: PolicyResource[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const s of byPair.get(`${k}=${v}`) ?? []) {
      if (Object.entries(selectorOf(s)).every(([sk, sv]) => labels[sk] === sv)) out.push(s);
    }
  }
  // Keep the resources' order, as a scan would.
  const pos = positionsOf(resources);
  return out.sort((a, b) => pos.get(a)! - pos.get(b)!);
}

// ---- workloads of every kind ---------------------------------------------------------------

/** Kubernetes kinds that carry a pod template (or are a Pod), as their manifests' `kind`. */
export const WORKLOAD_KINDS: readonly string[] = ["Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "ReplicationController"];

/** A Kubernetes workload of any kind (a Pod or anything with a pod template). */
export function isWorkload(r: Pick<PolicyResource, "type" | "props">): boolean {
  const props = r.props as { apiVersion?: unknown; kind?: unknown };
  return isK8sObject(r.type, props) && WORKLOAD_KINDS.includes(props.kind as string);
}

/** What of a container its command line is made of. */
type CommandLine = { readonly command?: readonly string[]; readonly args?: readonly string[] };

/** A container's whole command line: command, then args. */
export const commandLine = (c: CommandLine): readonly string[] => [...(c.command ?? []), ...(c.args ?? [])];

/** Every value a container's command line gives `--<flag>=`, in order. */
export function flagValues(c: CommandLine, flag: string): string[] {
  return commandLine(c)
    .filter((a) => typeof a === "string" && a.startsWith(`${flag}=`))
    .map((a) => a.slice(flag.length + 1));
}

/** A tritonserver container: its command line runs tritonserver, or its image is a tritonserver image (any registry, tag or digest). */
export function isTritonContainer(c: CommandLine & { image?: string }): boolean {
  const line = commandLine(c);
  if (line.some((a) => typeof a === "string" && /(^|\/)tritonserver$/.test(a))) return true;
  const repo = String(c.image ?? "").split("@")[0];
  const name = repo.slice(repo.lastIndexOf("/") + 1).split(":")[0];
  return name === "tritonserver";
}

/** Triton workloads of every kind: pod labels carrying TRITON_ALL_PODS. */
export function tritonWorkloads(resources: readonly PolicyResource[]): PolicyResource[] {
  return resources.filter((r) => isWorkload(r) && isTritonPodLabels(podTemplateLabelsOf(r)));
}

/** Setting shared by the rules that exempt node-agent namespaces (their pods need the host by design). */
export interface PrivilegedNamespacesConfig {
  privilegedNamespaces: string[];
}

/** Namespaces whose workloads the stack lets run outside Pod Security "restricted" (node agents installed by Helm charts). */
export const privilegedNamespacesSchema = {
  privilegedNamespaces: {
    type: "array",
    items: { type: "string" },
    default: ["kube-system", "gpu-operator", MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE],
    description:
      "Namespaces exempt from Pod Security restricted (node agents: GPU Operator, node-exporter, CSI drivers; monitoring enforces baseline). " +
      "Triton containers are checked everywhere.",
  },
} as const;

// ---- security groups: the nodes', and those the stack creates ------------------------------

/** The security groups (ids as referenced) the launch templates of the stack's node groups attach: of GPU node groups, and of all. */
export function nodeSecurityGroups(resources: readonly PolicyResource[]): { gpu: Set<string>; all: Set<string>; gpuGroupUrns: Set<string> } {
  const gpu = new Set<string>();
  const all = new Set<string>();
  /** The SecurityGroup resources of the stack those GPU launch templates depend on (their ids may be unknown). */
  const gpuGroupUrns = new Set<string>();
  for (const ng of resources) {
    const props = propsOf(ng, NODE_GROUP);
    if (!props) continue;
    const isGpu = isGpuAmiType(props.amiType) || props.labels?.[NODE_LABEL_ROLE] === NODE_ROLE_GPU;
    for (const lt of ng.dependencies.filter((d) => d.type === LAUNCH_TEMPLATE)) {
      for (const sg of (lt.props as { vpcSecurityGroupIds?: unknown[] }).vpcSecurityGroupIds ?? []) {
        all.add(String(sg));
        if (isGpu) gpu.add(String(sg));
      }
      if (isGpu) for (const d of lt.dependencies) if (d.type === SECURITY_GROUP) gpuGroupUrns.add(d.urn);
    }
  }
  return { gpu, all, gpuGroupUrns };
}

/** Every security-group id a resource's inputs name (rule targets and sources, attached groups), without duplicates. */
function groupIdsNamed(r: PolicyResource): string[] {
  const p = r.props;
  const ids: unknown[] = [p.securityGroupId, p.referencedSecurityGroupId, p.sourceSecurityGroupId];
  for (const list of [p.vpcSecurityGroupIds, p.securityGroups, p.securityGroupIds]) if (Array.isArray(list)) ids.push(...list);
  for (const dir of [p.ingress, p.egress]) if (Array.isArray(dir)) for (const x of dir) if (Array.isArray(x?.securityGroups)) ids.push(...x.securityGroups);
  return [...new Set(ids.filter((x): x is string => typeof x === "string" && x !== ""))];
}

const ownedGroupsOf = new WeakMap<readonly PolicyResource[], Set<string>>();

/**
 * Ids of the security groups the stack creates (SecurityGroup resources of the same plan), as other resources reference them.
 * The engine's stack analysis passes outputs, which carry each group's `id`; where they do not (the offline plan records
 * inputs), ids are bound through dependencies: referencing a group the stack creates makes a resource depend on it, so a
 * resource that names ids while depending on no other group names foreign ones, and one that names a single unbound id
 * beside a single unbound SecurityGroup dependency names that group (repeated until nothing changes). Ids left undecided
 * count as foreign: the rules that ask refuse what they cannot prove is the stack's.
 */
export function ownedSecurityGroupIds(resources: readonly PolicyResource[]): Set<string> {
  const cached = ownedGroupsOf.get(resources);
  if (cached) return cached;
  const idOf = new Map<string, string>(); // group urn -> id
  const owned = new Map<string, string>(); // id -> group urn
  const foreign = new Set<string>();
  for (const r of resources) {
    const id = (r.props as { id?: unknown }).id;
    if (r.type === SECURITY_GROUP && typeof id === "string" && id !== "") {
      idOf.set(r.urn, id);
      owned.set(id, r.urn);
    }
  }
  const uses = resources.flatMap((r) => {
    const ids = groupIdsNamed(r);
    if (ids.length === 0) return [];
    return [{ ids, deps: [...new Set(r.dependencies.filter((d) => d.type === SECURITY_GROUP && d.urn !== r.urn).map((d) => d.urn))] }];
  });
  for (let changed = true; changed;) {
    changed = false;
    for (const u of uses) {
      const open = u.ids.filter((i) => !owned.has(i) && !foreign.has(i));
      if (open.length === 0) continue;
      const free = u.deps.filter((d) => !idOf.has(d));
      if (free.length === 0) {
        for (const i of open) foreign.add(i);
        changed = true;
      } else if (open.length === 1 && free.length === 1) {
        idOf.set(free[0], open[0]);
        owned.set(open[0], free[0]);
        changed = true;
      }
    }
  }
  const out = new Set(owned.keys());
  ownedGroupsOf.set(resources, out);
  return out;
}
