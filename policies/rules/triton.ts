// Rules the Triton serving component makes enforceable. They read StatefulSets whose pods
// carry TRITON_ALL_PODS (app.kubernetes.io/name=triton), so they also catch a Triton
// workload someone adds by hand beside the component.
import { GPU_RESOURCE as GPU } from "../../components/contracts";
import { ENVIRONMENT_LABEL } from "../../components/naming";
import { parseFlag, TritonFlagError } from "../../components/upstream/tritonserver";
import { quantityValue } from "../../lib/quantity";
import { environmentsSchema, isTritonPodLabels, reportAt, selects, type EnvConfig, type Rule } from "./util";
import { STATEFUL_SET as STS, POD_DISRUPTION_BUDGET as PDB, HORIZONTAL_POD_AUTOSCALER as HPA } from "./types";

const ZONE = "topology.kubernetes.io/zone";
const HOST = "kubernetes.io/hostname";

/** A StatefulSet whose pods are Triton pods. */
function isTritonStatefulSet(type: string, props: Record<string, any>): boolean {
  return type === STS && isTritonPodLabels(props.spec?.template?.metadata?.labels);
}

function describeSts(props: Record<string, any>, name: string): string {
  return `StatefulSet ${props.metadata?.namespace ? props.metadata.namespace + "/" : ""}${props.metadata?.name ?? name}`;
}

/** Containers of a pod template with their property paths. */
function containers(props: Record<string, any>): { c: Record<string, any>; path: string }[] {
  return (props.spec?.template?.spec?.containers ?? []).map((c: Record<string, any>, i: number) => ({ c, path: `spec.template.spec.containers[${i}]` }));
}

/** The tritonserver container(s): those whose command or first arg is tritonserver. */
function tritonContainers(props: Record<string, any>): { c: Record<string, any>; path: string }[] {
  return containers(props).filter(({ c }) => [...(c.command ?? []), ...(c.args ?? [])].some((a: string) => /(^|\/)tritonserver$/.test(a)));
}

/** The --flag=value arguments of a tritonserver container. */
function flagArgs(c: Record<string, any>): string[] {
  return [...(c.command ?? []), ...(c.args ?? [])].filter((a: string) => typeof a === "string" && a.startsWith("--"));
}

const environmentsByLabel = environmentsSchema("Environments (label triton-platform/environment) the rule applies to.");

function inEnvironments(props: Record<string, any>, cfg: EnvConfig): boolean {
  return cfg.environments.includes(props.metadata?.labels?.[ENVIRONMENT_LABEL]);
}

export const tritonRules: Rule[] = [
  {
    name: "triton-gpu-limits-equal-requests",
    domain: "triton",
    description: "Every tritonserver container has an nvidia.com/gpu limit, and any GPU request equals it.",
    prevents: "A Triton pod scheduled without a GPU (CPU fallback or crash at model load), or one the API server rejects at rollout time.",
    remediationSteps: "Set resources.limits['nvidia.com/gpu'] (and requests, if set, to the same value): the group's gpu.count does this.",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props)) return;
      for (const { c, path } of tritonContainers(args.props)) {
        const limit = c.resources?.limits?.[GPU];
        const request = c.resources?.requests?.[GPU];
        if (limit === undefined || !(Number(limit) >= 1)) {
          reportAt(report, { path: `${path}.resources.limits["${GPU}"]`, value: limit }, `${describeSts(args.props, args.name)}: ${path}.resources.limits["${GPU}"] is ${JSON.stringify(limit)}, must be an integer >= 1`);
        } else if (request !== undefined && String(request) !== String(limit)) {
          reportAt(report, { path: `${path}.resources.requests["${GPU}"]`, value: request }, `${describeSts(args.props, args.name)}: ${path}.resources.requests["${GPU}"] is ${JSON.stringify(request)} but limits is ${JSON.stringify(limit)}; they must be equal`);
        }
      }
    },
  },
  {
    name: "triton-shm-sized",
    domain: "triton",
    description: "Triton pods mount a memory-backed emptyDir with a sizeLimit at /dev/shm, smaller than the container's memory limit.",
    prevents: "The 64 MiB default /dev/shm failing python-backend and large-batch requests, or an unbounded/oversized shm OOM-killing the pod.",
    remediationSteps: "Mount emptyDir {medium: Memory, sizeLimit: <shmSize>} at /dev/shm and keep shmSize below the memory limit (group keys shmSize, memory).",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props)) return;
      const volumes: Record<string, any>[] = args.props.spec?.template?.spec?.volumes ?? [];
      for (const { c, path } of tritonContainers(args.props)) {
        const where = describeSts(args.props, args.name);
        const mount = (c.volumeMounts ?? []).find((m: Record<string, any>) => m.mountPath === "/dev/shm");
        if (!mount) {
          reportAt(report, { path: `${path}.volumeMounts`, value: c.volumeMounts }, `${where}: ${path}.volumeMounts has no mount at /dev/shm (the default is 64 MiB)`);
          continue;
        }
        const v = volumes.findIndex((x) => x.name === mount.name);
        const vol = volumes[v];
        const volPath = `spec.template.spec.volumes[${v}]`;
        const size = vol?.emptyDir?.sizeLimit;
        if (vol?.emptyDir?.medium !== "Memory" || !size) {
          const value = vol?.emptyDir ?? vol ?? null;
          reportAt(report, { path: vol ? `${volPath}.emptyDir` : `${path}.volumeMounts`, value }, `${where}: volume ${mount.name} at /dev/shm (${vol ? `${volPath}.emptyDir` : `${path}.volumeMounts`}) is ${JSON.stringify(value)}, must be emptyDir {medium: Memory, sizeLimit}`);
          continue;
        }
        const mem = c.resources?.limits?.memory;
        if (!mem || !(quantityValue(String(size)) < quantityValue(String(mem)))) {
          reportAt(report, { path: `${volPath}.emptyDir.sizeLimit`, value: size }, `${where}: /dev/shm ${volPath}.emptyDir.sizeLimit ${size} must be below ${path}.resources.limits.memory (${mem ?? "unset"}); shm counts against it`);
        }
      }
    },
  },
  {
    name: "triton-startup-probe",
    domain: "triton",
    description: "tritonserver containers have a startupProbe whose periodSeconds × failureThreshold covers a minimum model-load time.",
    prevents: "The liveness probe killing a server that is still loading its models: a restart loop that never serves.",
    remediationSteps: "Add a startupProbe on /v2/health/ready; raise the group's modelLoadBudgetSeconds (it sets failureThreshold).",
    enforcementLevel: "advisory",
    configSchema: {
      properties: { minStartupSeconds: { type: "integer", minimum: 1, default: 60, description: "Least start-up time the probe must allow." } },
    },
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props)) return;
      const { minStartupSeconds } = args.getConfig<{ minStartupSeconds: number }>();
      for (const { c, path } of tritonContainers(args.props)) {
        const p = c.startupProbe;
        if (!p) {
          reportAt(report, { path: `${path}.startupProbe`, value: null }, `${describeSts(args.props, args.name)}: ${path}.startupProbe is missing`);
          continue;
        }
        // Kubernetes defaults: periodSeconds 10, failureThreshold 3.
        const budget = (p.periodSeconds ?? 10) * (p.failureThreshold ?? 3);
        if (budget < minStartupSeconds) {
          reportAt(report, { path: `${path}.startupProbe`, value: { periodSeconds: p.periodSeconds, failureThreshold: p.failureThreshold } }, `${describeSts(args.props, args.name)}: ${path}.startupProbe allows ${budget}s (periodSeconds × failureThreshold), below ${minStartupSeconds}s`);
        }
      }
    },
  },
  {
    name: "triton-image-pinned",
    domain: "triton",
    description: "Triton containers run an image pinned to a release tag or a digest, never latest or untagged.",
    prevents: "Pods on different nodes running different Triton releases after a re-pull, and unreviewed upgrades on restart.",
    remediationSteps: "Set the group's image.tag to a release such as 25.01-py3 (optionally image.digest).",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props)) return;
      for (const { c, path } of containers(args.props)) {
        const image = String(c.image ?? "");
        const [repoTag, digest] = image.split("@");
        const lastSlash = repoTag.lastIndexOf("/");
        const colon = repoTag.indexOf(":", lastSlash + 1);
        const tag = colon < 0 ? undefined : repoTag.slice(colon + 1);
        if (digest ? !/^sha256:[a-f0-9]{64}$/.test(digest) : tag === undefined || tag === "latest" || tag === "") {
          reportAt(report, { path: `${path}.image`, value: image }, `${describeSts(args.props, args.name)}: ${path}.image is ${JSON.stringify(image)}, must carry a release tag (not latest) or a sha256 digest`);
        }
      }
    },
  },
  {
    name: "triton-non-root",
    domain: "triton",
    description: "Triton containers run as a non-root user without privilege escalation, with all capabilities dropped.",
    prevents: "A compromised model or backend gaining root on a GPU node shared with other tenants' models.",
    remediationSteps: "Set runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, capabilities.drop: [ALL] (the component does).",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props)) return;
      const pod = args.props.spec?.template?.spec?.securityContext ?? {};
      for (const { c, path } of containers(args.props)) {
        const sc = c.securityContext ?? {};
        const where = describeSts(args.props, args.name);
        const nonRoot = sc.runAsNonRoot ?? pod.runAsNonRoot;
        const uid = sc.runAsUser ?? pod.runAsUser;
        if (nonRoot !== true) reportAt(report, { path: `${path}.securityContext.runAsNonRoot`, value: nonRoot }, `${where}: ${path}.securityContext.runAsNonRoot is ${JSON.stringify(nonRoot)} (pod and container), must be true`);
        if (uid === 0) reportAt(report, { path: `${path}.securityContext.runAsUser`, value: uid }, `${where}: ${path}.securityContext.runAsUser is 0 (root)`);
        if (sc.allowPrivilegeEscalation !== false) reportAt(report, { path: `${path}.securityContext.allowPrivilegeEscalation`, value: sc.allowPrivilegeEscalation }, `${where}: ${path}.securityContext.allowPrivilegeEscalation is ${JSON.stringify(sc.allowPrivilegeEscalation)}, must be false`);
        if (!(sc.capabilities?.drop ?? []).includes("ALL")) reportAt(report, { path: `${path}.securityContext.capabilities.drop`, value: sc.capabilities?.drop }, `${where}: ${path}.securityContext.capabilities.drop is ${JSON.stringify(sc.capabilities?.drop)}, must include ALL`);
      }
    },
  },
  {
    name: "triton-real-flags",
    domain: "triton",
    description: "Every --flag of a tritonserver container is a real, current tritonserver flag with a well-formed value.",
    prevents: "A pod that crash-loops at start because tritonserver refuses a flag copied from a blog post, or silently keeps a deprecated behaviour.",
    remediationSteps: "Use the flags in components/upstream/tritonserver.ts (FLAGS); fix or remove the named flag in the group's extraArgs.",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props)) return;
      for (const { c, path } of tritonContainers(args.props)) {
        for (const a of flagArgs(c)) {
          try {
            parseFlag(a);
          } catch (e) {
            if (!(e instanceof TritonFlagError)) throw e;
            reportAt(report, { path: `${path}.args`, value: a }, `${describeSts(args.props, args.name)}: ${path}.args has ${JSON.stringify(a)}: ${e.message}`);
          }
        }
      }
    },
  },
  {
    name: "triton-pdb-exists",
    domain: "triton",
    description: "Every Triton StatefulSet is covered by a PodDisruptionBudget in its namespace whose selector (matchLabels and matchExpressions) selects its pod template's labels.",
    prevents: "A node-group upgrade or drain evicting every replica of a serving group at once, including when a PDB exists but its selector misses the pods (a typo, a renamed label).",
    remediationSteps: "Create a policy/v1 PodDisruptionBudget in the StatefulSet's namespace whose spec.selector selects spec.template.metadata.labels (the component does, maxUnavailable 1).",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      // Index each PDB with matchLabels under its rarest entry, so a StatefulSet checks a few
      // candidates, not every PDB: the stack's cost stays linear in its serving groups. PDBs
      // that select by expressions only (or select everything, {}) are checked per namespace.
      const pdbs = args.resources
        .filter((r) => r.type === PDB)
        .map((p) => ({ ns: p.props.metadata?.namespace, selector: p.props.spec?.selector, sel: Object.entries<string>(p.props.spec?.selector?.matchLabels ?? {}) }));
      const entryKey = (ns: string, k: string, v: string) => JSON.stringify([ns, k, v]);
      const freq = new Map<string, number>();
      for (const p of pdbs) for (const [k, v] of p.sel) freq.set(entryKey(p.ns, k, v), (freq.get(entryKey(p.ns, k, v)) ?? 0) + 1);
      const byKey = new Map<string, typeof pdbs>();
      const byNamespace = new Map<string, typeof pdbs>();
      const push = <K>(m: Map<K, typeof pdbs>, key: K, p: (typeof pdbs)[number]) => (m.get(key) ?? m.set(key, []).get(key)!).push(p);
      for (const p of pdbs) {
        if (p.sel.length === 0) push(byNamespace, p.ns, p);
        else push(byKey, p.sel.map(([k, v]) => entryKey(p.ns, k, v)).reduce((a, b) => (freq.get(b)! < freq.get(a)! ? b : a)), p);
      }
      for (const r of args.resources) {
        if (!isTritonStatefulSet(r.type, r.props)) continue;
        const ns = r.props.metadata?.namespace;
        const labels: Record<string, string> = r.props.spec?.template?.metadata?.labels ?? {};
        const candidates = [...Object.entries(labels).flatMap(([k, v]) => byKey.get(entryKey(ns, k, v)) ?? []), ...(byNamespace.get(ns) ?? [])];
        if (!candidates.some((p) => selects(p.selector, labels))) {
          reportAt(
            report,
            { path: "spec.template.metadata.labels", value: labels },
            `${describeSts(r.props, r.name)}: no PodDisruptionBudget in namespace ${ns} selects its pod labels ${JSON.stringify(labels)} (spec.template.metadata.labels)`,
            r.urn,
          );
        }
      }
    },
  },
  {
    name: "triton-min-replicas",
    domain: "triton",
    description: "In production, a primary Triton StatefulSet and its autoscaler keep at least a minimum number of replicas.",
    prevents: "One pod (or one zone) being the whole serving capacity: any restart or zone event is an outage.",
    remediationSteps: "Raise the group's replicas and hpa.min to at least the minimum (3) in prod.",
    enforcementLevel: "advisory",
    configSchema: {
      properties: {
        ...environmentsByLabel,
        minReplicas: { type: "integer", minimum: 1, default: 3, description: "Least replicas of a primary Triton StatefulSet." },
      },
    },
    validateResource: (args, report) => {
      const cfg = args.getConfig<EnvConfig & { minReplicas: number }>();
      if (!inEnvironments(args.props, cfg)) return;
      if (isTritonStatefulSet(args.type, args.props) && args.props.spec?.template?.metadata?.labels?.track !== "canary") {
        const n = args.props.spec?.replicas ?? 1;
        if (n < cfg.minReplicas) reportAt(report, { path: "spec.replicas", value: n }, `${describeSts(args.props, args.name)}: spec.replicas is ${n}, must be >= ${cfg.minReplicas} in ${args.props.metadata.labels[ENVIRONMENT_LABEL]}`);
      }
      if (args.type === HPA && isTritonPodLabels(args.props.metadata?.labels) && args.props.metadata?.labels?.track !== "canary") {
        const n = args.props.spec?.minReplicas ?? 1;
        if (n < cfg.minReplicas) reportAt(report, { path: "spec.minReplicas", value: n }, `HorizontalPodAutoscaler ${args.props.metadata?.name ?? args.name}: spec.minReplicas is ${n}, must be >= ${cfg.minReplicas}`);
      }
    },
  },
  {
    name: "triton-zone-spread",
    domain: "triton",
    description: "In production, Triton pods are spread across zones (DoNotSchedule) and across hosts.",
    prevents: "The scheduler packing every replica into one zone or onto one node, so a single failure takes the group down.",
    remediationSteps: `Add topologySpreadConstraints on ${ZONE} (whenUnsatisfiable: DoNotSchedule) and ${HOST} (the component does).`,
    enforcementLevel: "advisory",
    configSchema: { properties: { ...environmentsByLabel } },
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props) || !inEnvironments(args.props, args.getConfig<EnvConfig>())) return;
      const tsc: Record<string, any>[] = args.props.spec?.template?.spec?.topologySpreadConstraints ?? [];
      const zone = tsc.find((t) => t.topologyKey === ZONE);
      if (!zone || zone.whenUnsatisfiable !== "DoNotSchedule") {
        reportAt(report, { path: "spec.template.spec.topologySpreadConstraints", value: tsc }, `${describeSts(args.props, args.name)}: spec.template.spec.topologySpreadConstraints has ${zone ? `${ZONE} with whenUnsatisfiable ${zone.whenUnsatisfiable}` : `no ${ZONE}`}; needs ${ZONE} with DoNotSchedule`);
      }
      if (!tsc.some((t) => t.topologyKey === HOST)) reportAt(report, { path: "spec.template.spec.topologySpreadConstraints", value: tsc }, `${describeSts(args.props, args.name)}: spec.template.spec.topologySpreadConstraints has no ${HOST} constraint`);
    },
  },
  {
    name: "triton-explicit-model-control",
    domain: "triton",
    description: "In production, tritonserver runs with --model-control-mode=explicit and names each model with --load-model.",
    prevents: "Whatever folder lands in the model bucket going live (mode none/poll), including half-uploaded or untested models.",
    remediationSteps: "Keep the group's modelControlMode explicit and list its models.",
    enforcementLevel: "advisory",
    configSchema: { properties: { ...environmentsByLabel } },
    validateResource: (args, report) => {
      if (!isTritonStatefulSet(args.type, args.props) || !inEnvironments(args.props, args.getConfig<EnvConfig>())) return;
      for (const { c, path } of tritonContainers(args.props)) {
        const flags = flagArgs(c);
        const mode = flags.find((a) => a.startsWith("--model-control-mode="))?.split("=")[1];
        const loads = flags.filter((a) => a.startsWith("--load-model=")).map((a) => a.slice("--load-model=".length));
        if (mode !== "explicit") reportAt(report, { path: `${path}.args`, value: flags.filter((a) => a.startsWith("--model-control-mode=")) }, `${describeSts(args.props, args.name)}: ${path}.args has --model-control-mode=${mode ?? "(unset: none)"}, must be explicit`);
        else if (loads.length === 0 || loads.includes("*")) reportAt(report, { path: `${path}.args`, value: loads }, `${describeSts(args.props, args.name)}: ${path}.args loads ${loads.length ? "every model (*)" : "no model"}; name each model with --load-model`);
      }
    },
  },
];
