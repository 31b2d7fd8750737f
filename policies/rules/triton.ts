// Rules the Triton serving component makes enforceable. They apply to a Triton container
// (its command runs tritonserver, or its image is tritonserver) in any workload kind and any
// container list, and to every replicated workload whose pods carry TRITON_ALL_PODS, so they
// also catch a Triton Deployment or Job someone adds by hand beside the component. Running as
// non-root and image pinning are properties of every workload: policies/rules/workloads.ts.
import { GPU_RESOURCE as GPU, ROLLOUT_ANNOTATION } from "../../components/contracts";
import { findMirrorPolicies, mirroredPercent } from "../../components/upstream/envoy";
import { canarySplits, ENVOY_DATA_PATH, readableEnvoyConfig } from "./gateway";
import { ENVIRONMENT_LABEL } from "../../components/naming";
import { isTritonOptionRelease, parseFlag, TritonFlagError } from "../../components/upstream/tritonserver";
import { tritonReleaseOf } from "../../components/gpu/compatibility";
import { quantityValue } from "../../lib/quantity";
import { containersOf, metadataOf, podSpecsOf, podTemplateLabelsOf, propsOf, type Container, type PodSpec, type PropsOf } from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Resource, type Rule } from "./rule";
import { STATEFUL_SET as STS, POD_DISRUPTION_BUDGET as PDB, HORIZONTAL_POD_AUTOSCALER as HPA } from "./types";
import { commandLine, environmentsSchema, isTritonContainer, isTritonPodLabels, isWorkload, namespaceOf, objectNameOf, selects, type EnvConfig } from "./util";

const ZONE = "topology.kubernetes.io/zone";
const HOST = "kubernetes.io/hostname";

type StatefulSet = PropsOf<typeof STS>;

/** A Triton workload of any kind: its pods carry TRITON_ALL_PODS, or one of its containers runs tritonserver. */
function isTritonWorkload(r: Pick<Resource, "type" | "props">): boolean {
  if (!isWorkload(r)) return false;
  if (isTritonPodLabels(podTemplateLabelsOf(r))) return true;
  return podSpecsOf(r).some(({ spec, path }) => containersOf(spec, path).some(({ c }) => isTritonContainer(c)));
}

function describeWorkload(r: Pick<Resource, "props" | "name">): string {
  const m = metadataOf(r);
  return `${(r.props as { kind?: string }).kind ?? "workload"} ${m.namespace ? m.namespace + "/" : ""}${m.name ?? r.name}`;
}

/** The tritonserver containers (any container list) of any workload, with their pod spec and property paths. */
function tritonContainersOf(r: Pick<Resource, "type" | "props">): { c: Container; path: string; spec: PodSpec; specPath: string }[] {
  if (!isWorkload(r)) return [];
  return podSpecsOf(r).flatMap(({ spec, path }) =>
    spec ? containersOf(spec, path).flatMap(({ c, path: cp }) => (isTritonContainer(c) ? [{ c, path: cp, spec, specPath: path }] : [])) : [],
  );
}

const REPLICATED_KINDS: readonly string[] = ["Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"];

/** A replicated Triton workload (Deployment, StatefulSet, ReplicaSet, ReplicationController), its props read through the shared spec shape. */
function replicatedTritonOf(r: Pick<Resource, "type" | "props">): StatefulSet | undefined {
  return isTritonWorkload(r) && REPLICATED_KINDS.includes((r.props as { kind?: string }).kind as string) ? (r.props as StatefulSet) : undefined;
}

/** The --flag=value arguments of a tritonserver container. */
function flagArgs(c: Container): string[] {
  return commandLine(c).filter((a) => typeof a === "string" && a.startsWith("--"));
}

const environmentsByLabel = environmentsSchema("Environments (label triton-platform/environment) the rule applies to.");

function inEnvironments(r: Pick<Resource, "props">, cfg: EnvConfig): boolean {
  return cfg.environments.includes(metadataOf(r).labels?.[ENVIRONMENT_LABEL] as string);
}

export const tritonGpuLimitsEqualRequests = resourceRule({
  name: "triton-gpu-limits-equal-requests",
  domain: "triton",
  configKey: "triton.groups[name={group}].gpu",
  description: "Every tritonserver container has an nvidia.com/gpu limit, and any GPU request equals it.",
  prevents: "A Triton pod scheduled without a GPU (CPU fallback or crash at model load), or one the API server rejects at rollout time.",
  remediationSteps: "Set resources.limits['nvidia.com/gpu'] (and requests, if set, to the same value): the group's gpu.count does this.",
  check: (r) => {
    const out: Finding[] = [];
    for (const { c, path } of tritonContainersOf(r).filter((x) => !x.path.includes(".initContainers["))) {
      const limit = c.resources?.limits?.[GPU];
      const request = c.resources?.requests?.[GPU];
      if (limit === undefined || !(Number(limit) >= 1)) {
        const at = `${path}.resources.limits["${GPU}"]`;
        out.push({ path: at, value: limit, message: `${describeWorkload(r)}: ${at} is ${JSON.stringify(limit)}, must be an integer >= 1` });
      } else if (request !== undefined && String(request) !== String(limit)) {
        const at = `${path}.resources.requests["${GPU}"]`;
        out.push({
          path: at,
          value: request,
          message: `${describeWorkload(r)}: ${at} is ${JSON.stringify(request)} but limits is ` + `${JSON.stringify(limit)}; they must be equal`,
        });
      }
    }
    return out;
  },
});

export const tritonShmSized = resourceRule({
  name: "triton-shm-sized",
  domain: "triton",
  configKey: "triton.groups[name={group}].shmSize",
  description: "Triton pods mount a memory-backed emptyDir with a sizeLimit at /dev/shm, smaller than the container's memory limit.",
  prevents: "The 64 MiB default /dev/shm failing python-backend and large-batch requests, or an unbounded/oversized shm OOM-killing the pod.",
  remediationSteps: "Mount emptyDir {medium: Memory, sizeLimit: <shmSize>} at /dev/shm and keep shmSize below the memory limit (group keys shmSize, memory).",
  check: (r) => {
    const out: Finding[] = [];
    for (const { c, path, spec, specPath } of tritonContainersOf(r).filter((x) => x.path.includes(".containers["))) {
      const volumes = spec.volumes ?? [];
      const where = describeWorkload(r);
      const mount = (c.volumeMounts ?? []).find((m) => m.mountPath === "/dev/shm");
      if (!mount) {
        out.push({
          path: `${path}.volumeMounts`,
          value: c.volumeMounts,
          message: `${where}: ${path}.volumeMounts has no mount at /dev/shm (the ` + `default is 64 MiB)`,
        });
        continue;
      }
      const v = volumes.findIndex((x) => x.name === mount.name);
      const vol = volumes[v];
      const volPath = `${specPath}.volumes[${v}]`;
      const size = vol?.emptyDir?.sizeLimit;
      if (vol?.emptyDir?.medium !== "Memory" || !size) {
        const value = vol?.emptyDir ?? vol ?? null;
        const at = vol ? `${volPath}.emptyDir` : `${path}.volumeMounts`;
        out.push({
          path: at,
          value,
          message: `${where}: volume ${mount.name} at /dev/shm (${at}) is ${JSON.stringify(value)}, must be emptyDir ` + `{medium: Memory, sizeLimit}`,
        });
        continue;
      }
      const mem = c.resources?.limits?.memory;
      if (!mem || !(quantityValue(String(size)) < quantityValue(String(mem)))) {
        out.push({
          path: `${volPath}.emptyDir.sizeLimit`,
          value: size,
          message: `${where}: /dev/shm ${volPath}.emptyDir.sizeLimit ${size} must be below ${path}.resources.limits.memory (${mem ?? "unset"}); shm counts against it`,
        });
      }
    }
    return out;
  },
});

const startupSettings = { minStartupSeconds: { type: "integer", minimum: 1, default: 60, description: "Least start-up time the probe must allow." } } as const;

export const tritonStartupProbe = resourceRule<{ minStartupSeconds: number }>({
  name: "triton-startup-probe",
  domain: "triton",
  configKey: "triton.groups[name={group}].modelLoadBudgetSeconds",
  description: "tritonserver containers have a startupProbe whose periodSeconds × failureThreshold covers a minimum model-load time (minStartupSeconds).",
  prevents: "The liveness probe killing a server that is still loading its models: a restart loop that never serves.",
  remediationSteps:
    `Add a startupProbe on /v2/health/ready allowing at least minStartupSeconds (default ` +
    `${startupSettings.minStartupSeconds.default}); raise the group's modelLoadBudgetSeconds (it sets failureThreshold).`,
  configSchema: { properties: startupSettings },
  check: (r, { minStartupSeconds }) => {
    const out: Finding[] = [];
    for (const { c, path } of tritonContainersOf(r).filter((x) => x.path.includes(".containers["))) {
      const p = c.startupProbe;
      if (!p) {
        out.push({ path: `${path}.startupProbe`, value: null, message: `${describeWorkload(r)}: ${path}.startupProbe is missing` });
        continue;
      }
      // Kubernetes defaults: periodSeconds 10, failureThreshold 3.
      const budget = (p.periodSeconds ?? 10) * (p.failureThreshold ?? 3);
      if (budget < minStartupSeconds) {
        out.push({
          path: `${path}.startupProbe`,
          value: { periodSeconds: p.periodSeconds, failureThreshold: p.failureThreshold },
          message: `${describeWorkload(r)}: ${path}.startupProbe allows ${budget}s (periodSeconds × failureThreshold), below ${minStartupSeconds}s`,
        });
      }
    }
    return out;
  },
});

export const tritonRealFlags = resourceRule({
  name: "triton-real-flags",
  domain: "triton",
  configKey: "triton.groups[name={group}].extraArgs",
  description: "Every --flag of a tritonserver container is a real, current tritonserver flag with a well-formed value.",
  prevents: "A pod that crash-loops at start because tritonserver refuses a flag copied from a blog post, or silently keeps a deprecated behaviour.",
  remediationSteps: "Use the flags in components/upstream/tritonserver.ts (FLAGS); fix or remove the named flag in the group's extraArgs.",
  check: (r) => {
    const out: Finding[] = [];
    for (const { c, path } of tritonContainersOf(r)) {
      // Checked against the image's release when the table covers it (a flag of a later release is refused), else any release.
      const release = tritonReleaseOf(String(c.image ?? ""));
      for (const a of flagArgs(c)) {
        try {
          parseFlag(a, { release: release !== undefined && isTritonOptionRelease(release) ? release : undefined });
        } catch (e) {
          if (!(e instanceof TritonFlagError)) throw e;
          out.push({ path: `${path}.args`, value: a, message: `${describeWorkload(r)}: ${path}.args has ${JSON.stringify(a)}: ${e.message}` });
        }
      }
    }
    return out;
  },
});

export const tritonPdbExists = stackRule({
  name: "triton-pdb-exists",
  domain: "triton",
  description:
    "Every Triton StatefulSet is covered by a PodDisruptionBudget in its namespace whose selector (matchLabels and matchExpressions) " +
    "selects its pod template's labels.",
  prevents:
    "A node-group upgrade or drain evicting every replica of a serving group at once, including when a PDB exists but its selector " +
    "misses the pods (a typo, a renamed label).",
  remediationSteps:
    "Create a policy/v1 PodDisruptionBudget in the StatefulSet's namespace whose spec.selector selects " +
    "spec.template.metadata.labels (the component does, maxUnavailable 1).",
  check: (resources) => {
    // Index each PDB with matchLabels under its rarest entry, so a StatefulSet checks a few
    // candidates, not every PDB: the stack's cost stays linear in its serving groups. PDBs
    // that select by expressions only (or select everything, {}) are checked per namespace.
    const pdbs = resources.flatMap((r) => {
      const p = propsOf(r, PDB);
      return p ? [{ ns: p.metadata?.namespace, selector: p.spec?.selector, sel: Object.entries<string>(p.spec?.selector?.matchLabels ?? {}) }] : [];
    });
    const entryKey = (ns: string | undefined, k: string, v: string) => JSON.stringify([ns, k, v]);
    const freq = new Map<string, number>();
    for (const p of pdbs) for (const [k, v] of p.sel) freq.set(entryKey(p.ns, k, v), (freq.get(entryKey(p.ns, k, v)) ?? 0) + 1);
    const byKey = new Map<string, typeof pdbs>();
    const byNamespace = new Map<string | undefined, typeof pdbs>();
    const push = <K>(m: Map<K, typeof pdbs>, key: K, p: (typeof pdbs)[number]) => (m.get(key) ?? m.set(key, []).get(key)!).push(p);
    for (const p of pdbs) {
      if (p.sel.length === 0) push(byNamespace, p.ns, p);
      else
        push(
          byKey,
          p.sel.map(([k, v]) => entryKey(p.ns, k, v)).reduce((a, b) => (freq.get(b)! < freq.get(a)! ? b : a)),
          p,
        );
    }
    const out: Finding[] = [];
    for (const r of resources) {
      const sts = replicatedTritonOf(r);
      if (!sts) continue;
      const ns = sts.metadata?.namespace;
      const labels = podTemplateLabelsOf(r);
      const candidates = [...Object.entries(labels).flatMap(([k, v]) => byKey.get(entryKey(ns, k, v)) ?? []), ...(byNamespace.get(ns) ?? [])];
      if (!candidates.some((p) => selects(p.selector, labels))) {
        out.push({
          path: "spec.template.metadata.labels",
          value: labels,
          message:
            `${describeWorkload(r)}: no PodDisruptionBudget in namespace ${ns} selects its pod labels ${JSON.stringify(labels)} ` +
            `(spec.template.metadata.labels)`,
          urn: r.urn,
        });
      }
    }
    return out;
  },
});

const minReplicasSettings = {
  ...environmentsByLabel,
  minReplicas: { type: "integer", minimum: 1, default: 3, description: "Least replicas of a primary Triton StatefulSet." },
} as const;

export const tritonMinReplicas = resourceRule<EnvConfig & { minReplicas: number }>({
  name: "triton-min-replicas",
  domain: "triton",
  configKey: "triton.groups[name={group}]{canary}.replicas",
  description: "In the listed environments (default: production), a primary Triton StatefulSet and its autoscaler keep at least minReplicas replicas.",
  prevents: "One pod (or one zone) being the whole serving capacity: any restart or zone event is an outage.",
  remediationSteps:
    `Raise the group's replicas and hpa.min to at least minReplicas (default ${minReplicasSettings.minReplicas.default}, ` +
    `in ${minReplicasSettings.environments.default.join(", ")}; policies/config/<environment>.json may set its own).`,
  configSchema: { properties: minReplicasSettings },
  check: (r, cfg) => {
    if (!inEnvironments(r, cfg)) return NONE;
    const out: Finding[] = [];
    const sts = replicatedTritonOf(r);
    if (sts && sts.spec?.template?.metadata?.labels?.track !== "canary") {
      const n = sts.spec?.replicas ?? 1;
      if (n < cfg.minReplicas) {
        out.push({
          path: "spec.replicas",
          value: n,
          message: `${describeWorkload(r)}: spec.replicas is ${n}, must be >= ${cfg.minReplicas} ` + `in ${sts.metadata?.labels?.[ENVIRONMENT_LABEL]}`,
        });
      }
    }
    const hpa = propsOf(r, HPA);
    if (hpa && isTritonPodLabels(hpa.metadata?.labels) && hpa.metadata?.labels?.track !== "canary") {
      const n = hpa.spec?.minReplicas ?? 1;
      if (n < cfg.minReplicas) {
        out.push({
          path: "spec.minReplicas",
          value: n,
          message: `HorizontalPodAutoscaler ${hpa.metadata?.name ?? r.name}: spec.minReplicas is ` + `${n}, must be >= ${cfg.minReplicas}`,
        });
      }
    }
    return out;
  },
});

export const tritonZoneSpread = resourceRule<EnvConfig>({
  name: "triton-zone-spread",
  domain: "triton",
  description: "In production, Triton pods are spread across zones (DoNotSchedule) and across hosts.",
  prevents: "The scheduler packing every replica into one zone or onto one node, so a single failure takes the group down.",
  remediationSteps: `Add topologySpreadConstraints on ${ZONE} (whenUnsatisfiable: DoNotSchedule) and ${HOST} (the component does).`,
  configSchema: { properties: { ...environmentsByLabel } },
  check: (r, cfg) => {
    const sts = replicatedTritonOf(r);
    if (!sts || !inEnvironments(r, cfg)) return NONE;
    const out: Finding[] = [];
    const path = "spec.template.spec.topologySpreadConstraints";
    const tsc = sts.spec?.template?.spec?.topologySpreadConstraints ?? [];
    const zone = tsc.find((t) => t.topologyKey === ZONE);
    if (!zone || zone.whenUnsatisfiable !== "DoNotSchedule") {
      const has = zone ? `${ZONE} with whenUnsatisfiable ${zone.whenUnsatisfiable}` : `no ${ZONE}`;
      out.push({ path, value: tsc, message: `${describeWorkload(r)}: ${path} has ${has}; needs ${ZONE} with DoNotSchedule` });
    }
    if (!tsc.some((t) => t.topologyKey === HOST)) out.push({ path, value: tsc, message: `${describeWorkload(r)}: ${path} has no ${HOST} constraint` });
    return out;
  },
});

export const tritonExplicitModelControl = resourceRule<EnvConfig>({
  name: "triton-explicit-model-control",
  domain: "triton",
  description:
    "In production, tritonserver never polls its repository: --model-control-mode is explicit with each model named by --load-model, or none " +
    "(the upstream default: what the repository holds at start, and no load/unload API); poll is refused.",
  prevents:
    "Whatever folder lands in the model bucket going live while the server runs (mode poll), including half-uploaded or untested models, " +
    "or every model of the repository loaded at once (explicit with --load-model=* or none named).",
  remediationSteps: "Keep the group's modelControlMode explicit and list its models (or none, which loads the repository only at start).",
  configSchema: { properties: { ...environmentsByLabel } },
  check: (r, cfg) => {
    if (!isTritonWorkload(r) || !inEnvironments(r, cfg)) return NONE;
    const out: Finding[] = [];
    for (const { c, path } of tritonContainersOf(r).filter((x) => x.path.includes(".containers["))) {
      const flags = flagArgs(c);
      const written = flags.filter((a) => a.startsWith("--model-control-mode="));
      // The parser lower-cases the value (std::tolower); unset is none (the upstream default). A repeated flag is judged by its worst value.
      const modes = written.map((a) => a.slice("--model-control-mode=".length).toLowerCase());
      const mode = modes.find((m) => m !== "none" && m !== "explicit") ?? (modes.includes("explicit") ? "explicit" : "none");
      const loads = flags.filter((a) => a.startsWith("--load-model=")).map((a) => a.slice("--load-model=".length));
      if (mode === "none") continue; // loads what the repository holds at start; no load/unload API, no polling
      if (mode !== "explicit") {
        out.push({
          path: `${path}.args`,
          value: written,
          message: `${describeWorkload(r)}: ${path}.args has --model-control-mode=${mode}, must be explicit (or none)`,
        });
      } else if (loads.length === 0 || loads.includes("*")) {
        out.push({
          path: `${path}.args`,
          value: loads,
          message: `${describeWorkload(r)}: ${path}.args loads ${loads.length ? "every model (*)" : "no model"}; name each model with --load-model`,
        });
      }
    }
    return out;
  },
});

const HPA_TYPES: readonly string[] = [HPA, "kubernetes:autoscaling/v1:HorizontalPodAutoscaler"];

export const hpaTargetExists = stackRule({
  name: "hpa-target-exists",
  domain: "triton",
  configKey: "triton.groups[name={group}].hpa",
  description:
    "Every HorizontalPodAutoscaler's spec.scaleTargetRef names a workload of that apiVersion and kind (for Triton, a StatefulSet) " +
    "that the stack creates in the HPA's namespace.",
  prevents: "An autoscaler that scales nothing (a renamed group, a typo, a wrong kind): serving stays at its initial replicas while the queue grows.",
  remediationSteps:
    "Point scaleTargetRef at the group's StatefulSet: apiVersion apps/v1, kind StatefulSet, name = the group's workload name " +
    "(components/triton/builders.ts tritonHorizontalPodAutoscaler).",
  check: (resources) => {
    const byKey = new Set(resources.filter((r) => r.type.startsWith("kubernetes:")).map((r) => JSON.stringify([r.type, namespaceOf(r), objectNameOf(r)])));
    const out: Finding[] = [];
    for (const hpa of resources.filter((r) => HPA_TYPES.includes(r.type))) {
      // v1 and v2 spell scaleTargetRef alike (apiVersion, kind, name).
      const ref = (hpa.props as PropsOf<typeof HPA>).spec?.scaleTargetRef ?? {};
      const type = `kubernetes:${ref.apiVersion ?? ""}:${ref.kind ?? ""}`;
      if (byKey.has(JSON.stringify([type, namespaceOf(hpa), ref.name]))) continue;
      out.push({
        path: "spec.scaleTargetRef",
        value: ref,
        message: `HorizontalPodAutoscaler ${namespaceOf(hpa)}/${objectNameOf(hpa)}: spec.scaleTargetRef ${JSON.stringify(ref)} names no ${ref.kind ?? "workload"} ${ref.name ?? "(unnamed)"} in namespace ${namespaceOf(hpa)}`,
        urn: hpa.urn,
      });
    }
    return out;
  },
});

const rolloutSettings = {
  ...environmentsByLabel,
  minStageMinutes: {
    type: "integer",
    minimum: 1,
    default: 30,
    description: "Least minDurationMinutes of every stage: a shorter stage is one whose gates never get a window, a skipped stage.",
  },
} as const;

interface DeclaredRollout {
  stage?: string;
  stages?: { name?: string; mirrorPercent?: number; trafficPercent?: number; minDurationMinutes?: number }[];
}

type Exposure = { path: string; what: "mirror" | "split"; percent: number; urn: string; name: string };

/**
 * Mirror and split shares per canary group in the gateway's bootstrap(s), from one walk of every
 * route (clusters <group>-canary-http|grpc): each canary then looks its group up, so the rule
 * stays linear in groups × routes.
 */
function canaryExposureByGroup(resources: readonly Resource[]): Map<string, Exposure[]> {
  const out = new Map<string, Exposure[]>();
  const add = (cluster: string, e: Exposure) => {
    const m = /^(.+)-canary-(http|grpc)$/.exec(cluster);
    if (m) (out.get(m[1]) ?? out.set(m[1], []).get(m[1])!).push(e);
  };
  for (const r of resources) {
    const config = readableEnvoyConfig(r);
    if (!config) continue;
    const name = `ConfigMap ${metadataOf(r).name ?? r.name}`;
    for (const s of canarySplits(config)) add(s.cluster, { path: s.path, what: "split", percent: s.percent, urn: r.urn, name });
    for (const { path, policy } of findMirrorPolicies(config))
      add(String(policy.cluster), {
        path: `${ENVOY_DATA_PATH}${path.replace(/^\$/, "")}`,
        what: "mirror",
        percent: mirroredPercent(policy),
        urn: r.urn,
        name,
      });
  }
  return out;
}

export const tritonCanaryRolloutInOrder = stackRule<EnvConfig & { minStageMinutes: number }>({
  name: "triton-canary-rollout-in-order",
  domain: "triton",
  configKey: "triton.groups[name={group}].canary.rollout",
  description:
    "In the listed environments (default: production), a canary's declared rollout (annotation " +
    `${ROLLOUT_ANNOTATION} on its StatefulSet) starts with a stage that serves no real traffic, never lowers a share from one stage to the next, ` +
    "gives every stage at least minStageMinutes, and the gateway sends the canary no larger mirror or split share than the current stage declares.",
  prevents:
    "A canary jumping to a split of real traffic without a mirror stage, a stage that is skipped in effect (no window for its gates), " +
    "or the gateway running a later stage's share while the stack file still names an earlier stage.",
  remediationSteps:
    "Declare the stages in order (mirror first, shares rising), each with minDurationMinutes of at least minStageMinutes " +
    `(default ${rolloutSettings.minStageMinutes.default}); set gateway.mirrorPercent and canary.trafficPercent to the current stage's shares ` +
    "and move canary.rollout.stage one step per pull request.",
  configSchema: { properties: rolloutSettings },
  check: (resources, cfg) => {
    const out: Finding[] = [];
    let exposure: Map<string, Exposure[]> | undefined;
    for (const r of resources) {
      const sts = propsOf(r, STS);
      const raw = sts?.metadata?.annotations?.[ROLLOUT_ANNOTATION];
      if (!sts || raw === undefined || !inEnvironments(r, cfg)) continue;
      const at = `metadata.annotations["${ROLLOUT_ANNOTATION}"]`;
      const name = `StatefulSet ${sts.metadata?.name ?? r.name}`;
      let d: DeclaredRollout;
      try {
        d = JSON.parse(raw) as DeclaredRollout;
      } catch (e) {
        out.push({ urn: r.urn, path: at, value: raw.slice(0, 200), message: `${name}: ${at} is not valid JSON (${(e as Error).message})` });
        continue;
      }
      const stages = d.stages ?? [];
      const first = stages[0];
      if (first && (first.trafficPercent ?? 0) > 0)
        out.push({
          urn: r.urn,
          path: `${at}.stages[0].trafficPercent`,
          value: first.trafficPercent,
          message: `${name}: ${at}.stages[0].trafficPercent: the first stage (${first.name}) splits ${first.trafficPercent} % of real traffic to the canary; prod starts with a mirror-only stage`,
        });
      stages.forEach((s, i) => {
        const prev = stages[i - 1];
        for (const k of ["mirrorPercent", "trafficPercent"] as const)
          if (prev && (s[k] ?? 0) < (prev[k] ?? 0))
            out.push({
              urn: r.urn,
              path: `${at}.stages[${i}].${k}`,
              value: s[k] ?? 0,
              message: `${name}: ${at}.stages[${i}].${k}: stage ${s.name} lowers ${k} to ${s[k] ?? 0} from ${prev.name}'s ${prev[k] ?? 0} (stages only raise the canary's share; a lower share is a rollback)`,
            });
        if ((s.minDurationMinutes ?? 0) < cfg.minStageMinutes)
          out.push({
            urn: r.urn,
            path: `${at}.stages[${i}].minDurationMinutes`,
            value: s.minDurationMinutes,
            message: `${name}: ${at}.stages[${i}].minDurationMinutes: stage ${s.name} runs ${s.minDurationMinutes} min, less than ${cfg.minStageMinutes} min: its gates get no window, the stage is skipped in effect`,
          });
      });
      const current = stages.find((s) => s.name === d.stage);
      if (!current) {
        out.push({
          urn: r.urn,
          path: `${at}.stage`,
          value: d.stage,
          message: `${name}: ${at}.stage: the current stage ${String(d.stage)} is not one of the declared stages`,
        });
        continue;
      }
      const group = sts.metadata?.labels?.["app.kubernetes.io/instance"] ?? "";
      const cap = { mirror: current.mirrorPercent ?? 0, split: current.trafficPercent ?? 0 };
      const seen = new Set<string>();
      exposure ??= canaryExposureByGroup(resources);
      for (const e of exposure.get(group) ?? []) {
        if (e.percent <= cap[e.what] || seen.has(`${e.urn} ${e.what}`)) continue;
        seen.add(`${e.urn} ${e.what}`);
        out.push({
          urn: e.urn,
          path: e.path,
          value: e.percent,
          message: `${e.name}: ${e.path} ${e.what === "mirror" ? "mirrors" : "splits"} ${e.percent} % to ${group}'s canary, above its current stage ${current.name} (${cap[e.what]} %): a later stage's share without moving canary.rollout.stage`,
        });
      }
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  tritonGpuLimitsEqualRequests,
  tritonShmSized,
  tritonStartupProbe,
  tritonRealFlags,
  tritonPdbExists,
  tritonMinReplicas,
  tritonZoneSpread,
  tritonExplicitModelControl,
  hpaTargetExists,
  tritonCanaryRolloutInOrder,
];
