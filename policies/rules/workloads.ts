// Rules about every workload of every kind (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
// Job, CronJob, ReplicationController) and every container list (initContainers, containers,
// ephemeralContainers): the Pod Security Standards "restricted" profile, the namespaces'
// Pod Security Admission labels, pinned images and ServiceAccount tokens.
//
// The Pod Security checks implement kubernetes/pod-security-admission at tag v0.33.9
// (Kubernetes 1.33, the version the namespaces pin: components/upstream/pod-security.ts),
// policy/check_*.go, each check under the ID that file registers. Restricted includes baseline;
// where a restricted check overrides a baseline one (OverrideCheckIDs), only the restricted one runs.
import {
  BASELINE_CAPABILITIES,
  POD_SECURITY_LABEL_PREFIX,
  POD_SECURITY_MODES,
  RESTRICTED_VOLUME_SOURCES,
  SAFE_SYSCTLS,
  SELINUX_TYPES,
} from "../../components/upstream/pod-security";
import { containersOf, metadataOf, podMetadataOf, podSpecsOf, type Container, type PodSpec } from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Resource, type Rule } from "./rule";
import {
  isK8sObject,
  isTritonContainer,
  isWorkload,
  namespaceOf,
  objectNameOf,
  privilegedNamespacesSchema,
  show,
  type PrivilegedNamespacesConfig,
} from "./util";

type SecurityContext = NonNullable<Container["securityContext"]>;

const describe = (r: Pick<Resource, "props" | "name">): string => {
  const kind = (r.props as { kind?: string }).kind ?? "object";
  const m = metadataOf(r);
  return `${kind} ${m.namespace ? `${m.namespace}/` : ""}${m.name ?? r.name}`;
};

/** Does the rule judge this workload? Everything outside the privileged namespaces, and any workload that runs tritonserver. */
function inScope(r: Pick<Resource, "type" | "props">, privileged: readonly string[]): boolean {
  if (!isWorkload(r)) return false;
  if (!privileged.includes(namespaceOf(r))) return true;
  return podSpecsOf(r).some(({ spec, path }) => containersOf(spec, path).some(({ c }) => isTritonContainer(c)));
}

/** One Pod Security check: findings for one pod spec (path = the pod spec's path). */
type PodCheck = (
  spec: PodSpec,
  path: string,
  meta: { annotations?: Readonly<Record<string, string>> },
  metaPath: string,
) => { path: string; value: unknown; what: string }[];

const isWindows = (spec: PodSpec) => spec.os?.name === "windows";
const sc = (c: Container): SecurityContext => c.securityContext ?? {};

/**
 * Pod Security Standards at v1.33: baseline, then restricted (v0.33.9 policy/check_<ID>.go).
 * Baseline checks overridden by a restricted one (capabilities_baseline, hostPathVolumes,
 * seccompProfile_baseline) are left out, as Pod Security Admission leaves them out at restricted.
 */
const POD_SECURITY_CHECKS: Record<string, PodCheck> = {
  // ---- baseline ----
  // check_hostNamespaces.go: spec.hostNetwork, hostPID, hostIPC must be unset or false.
  hostNamespaces: (spec, at) =>
    (["hostNetwork", "hostPID", "hostIPC"] as const).filter((k) => spec[k] === true).map((k) => ({ path: `${at}.${k}`, value: true, what: `${k}=true` })),
  // check_privileged.go: securityContext.privileged must be unset or false.
  privileged: (spec, at) =>
    containersOf(spec, at)
      .filter(({ c }) => sc(c).privileged === true)
      .map(({ c, path }) => ({ path: `${path}.securityContext.privileged`, value: true, what: `container ${c.name} privileged=true` })),
  // check_hostPorts.go: ports[*].hostPort must be unset or 0.
  hostPorts: (spec, at) =>
    containersOf(spec, at).flatMap(({ c, path }) =>
      (c.ports ?? []).flatMap((p, i) =>
        p.hostPort !== undefined && Number(p.hostPort) !== 0
          ? [{ path: `${path}.ports[${i}].hostPort`, value: p.hostPort, what: `container ${c.name} uses hostPort ${p.hostPort}` }]
          : [],
      ),
    ),
  // check_appArmorProfile.go: profile types RuntimeDefault or Localhost; annotations runtime/default, localhost/*, or empty.
  appArmorProfile: (spec, at, meta, metaPath) => {
    const ok = (t: unknown) => t === "RuntimeDefault" || t === "Localhost";
    const out: { path: string; value: unknown; what: string }[] = [];
    const podType = spec.securityContext?.appArmorProfile?.type;
    if (spec.securityContext?.appArmorProfile && !ok(podType))
      out.push({ path: `${at}.securityContext.appArmorProfile.type`, value: podType, what: `pod AppArmor profile ${show(podType)}` });
    for (const { c, path } of containersOf(spec, at)) {
      const t = sc(c).appArmorProfile?.type;
      if (sc(c).appArmorProfile && !ok(t))
        out.push({ path: `${path}.securityContext.appArmorProfile.type`, value: t, what: `container ${c.name} AppArmor profile ${show(t)}` });
    }
    for (const [k, v] of Object.entries(meta.annotations ?? {})) {
      if (k.startsWith("container.apparmor.security.beta.kubernetes.io/") && !(v === "" || v === "runtime/default" || v.startsWith("localhost/")))
        out.push({ path: `${metaPath}.annotations["${k}"]`, value: v, what: `AppArmor annotation ${k}=${v}` });
    }
    return out;
  },
  // check_seLinuxOptions.go (1.31+): type in the allowed set; user and role unset.
  seLinuxOptions: (spec, at) => {
    const out: { path: string; value: unknown; what: string }[] = [];
    const judge = (o: SecurityContext["seLinuxOptions"], path: string, who: string) => {
      if (!o) return;
      if (!SELINUX_TYPES.includes(o.type ?? "")) out.push({ path: `${path}.type`, value: o.type, what: `${who} SELinux type ${o.type}` });
      if (o.user) out.push({ path: `${path}.user`, value: o.user, what: `${who} sets SELinux user` });
      if (o.role) out.push({ path: `${path}.role`, value: o.role, what: `${who} sets SELinux role` });
    };
    judge(spec.securityContext?.seLinuxOptions, `${at}.securityContext.seLinuxOptions`, "pod");
    for (const { c, path } of containersOf(spec, at)) judge(sc(c).seLinuxOptions, `${path}.securityContext.seLinuxOptions`, `container ${c.name}`);
    return out;
  },
  // check_procMount.go: procMount unset or "Default" (the user-namespace relaxation is an opt-in of the API server, off by default).
  procMount: (spec, at) =>
    containersOf(spec, at)
      .filter(({ c }) => sc(c).procMount !== undefined && sc(c).procMount !== "Default")
      .map(({ c, path }) => ({ path: `${path}.securityContext.procMount`, value: sc(c).procMount, what: `container ${c.name} procMount ${sc(c).procMount}` })),
  // check_sysctls.go (1.32+): only the safe sysctls.
  sysctls: (spec, at) =>
    (spec.securityContext?.sysctls ?? [])
      .map((s, i) => ({ s, i }))
      .filter(({ s }) => !SAFE_SYSCTLS.includes(s.name as string))
      .map(({ s, i }) => ({ path: `${at}.securityContext.sysctls[${i}].name`, value: s.name, what: `sysctl ${s.name}` })),
  // check_windowsHostProcess.go: windowsOptions.hostProcess unset or false, pod and containers.
  windowsHostProcess: (spec, at) => {
    const out: { path: string; value: unknown; what: string }[] = [];
    if (spec.securityContext?.windowsOptions?.hostProcess === true)
      out.push({ path: `${at}.securityContext.windowsOptions.hostProcess`, value: true, what: "pod hostProcess=true" });
    for (const { c, path } of containersOf(spec, at))
      if (sc(c).windowsOptions?.hostProcess === true)
        out.push({ path: `${path}.securityContext.windowsOptions.hostProcess`, value: true, what: `container ${c.name} hostProcess=true` });
    return out;
  },
  // ---- restricted ----
  // check_restrictedVolumes.go (overrides hostPathVolumes): only the listed inline volume sources.
  restrictedVolumes: (spec, at) =>
    (spec.volumes ?? []).flatMap((v, i) => {
      const sources = Object.keys(v ?? {}).filter((k) => k !== "name");
      return sources.some((k) => RESTRICTED_VOLUME_SOURCES.includes(k))
        ? []
        : [{ path: `${at}.volumes[${i}]`, value: sources, what: `volume ${v.name} of type ${sources.join(", ") || "(none)"}` }];
    }),
  // check_allowPrivilegeEscalation.go (1.25+; not for Windows pods): must be false.
  allowPrivilegeEscalation: (spec, at) =>
    isWindows(spec)
      ? []
      : containersOf(spec, at)
          .filter(({ c }) => sc(c).allowPrivilegeEscalation !== false)
          .map(({ c, path }) => ({
            path: `${path}.securityContext.allowPrivilegeEscalation`,
            value: sc(c).allowPrivilegeEscalation,
            what: `container ${c.name} allowPrivilegeEscalation != false`,
          })),
  // check_runAsNonRoot.go: true at the pod, or at every container; an explicit false anywhere is refused.
  runAsNonRoot: (spec, at) => {
    const out: { path: string; value: unknown; what: string }[] = [];
    const pod = spec.securityContext?.runAsNonRoot;
    if (pod === false) out.push({ path: `${at}.securityContext.runAsNonRoot`, value: false, what: "pod runAsNonRoot=false" });
    for (const { c, path } of containersOf(spec, at)) {
      const v = sc(c).runAsNonRoot;
      if (v === false) out.push({ path: `${path}.securityContext.runAsNonRoot`, value: false, what: `container ${c.name} runAsNonRoot=false` });
      else if (v === undefined && pod !== true)
        out.push({ path: `${path}.securityContext.runAsNonRoot`, value: v, what: `pod or container ${c.name} must set runAsNonRoot=true` });
    }
    return out;
  },
  // check_runAsUser.go (1.23+): runAsUser must not be 0, pod or container.
  runAsUser: (spec, at) => {
    const out: { path: string; value: unknown; what: string }[] = [];
    if (spec.securityContext?.runAsUser === 0) out.push({ path: `${at}.securityContext.runAsUser`, value: 0, what: "pod runAsUser=0" });
    for (const { c, path } of containersOf(spec, at))
      if (sc(c).runAsUser === 0) out.push({ path: `${path}.securityContext.runAsUser`, value: 0, what: `container ${c.name} runAsUser=0` });
    return out;
  },
  // check_seccompProfile_restricted.go (1.25+; overrides seccompProfile_baseline): RuntimeDefault or Localhost, at the pod or every container.
  seccompProfile: (spec, at) => {
    if (isWindows(spec)) return [];
    const ok = (t: unknown) => t === "RuntimeDefault" || t === "Localhost";
    const out: { path: string; value: unknown; what: string }[] = [];
    const pod = spec.securityContext?.seccompProfile;
    if (pod && !ok(pod.type)) out.push({ path: `${at}.securityContext.seccompProfile.type`, value: pod.type, what: `pod seccomp profile ${show(pod.type)}` });
    for (const { c, path } of containersOf(spec, at)) {
      const p = sc(c).seccompProfile;
      if (p && !ok(p.type))
        out.push({ path: `${path}.securityContext.seccompProfile.type`, value: p.type, what: `container ${c.name} seccomp profile ${show(p.type)}` });
      else if (!p && !(pod && ok(pod.type)))
        out.push({
          path: `${path}.securityContext.seccompProfile`,
          value: null,
          what: `pod or container ${c.name} must set seccompProfile.type RuntimeDefault or Localhost`,
        });
    }
    return out;
  },
  // check_capabilities_restricted.go (1.25+; overrides capabilities_baseline): drop ALL; add nothing but NET_BIND_SERVICE.
  capabilities: (spec, at) => {
    if (isWindows(spec)) return [];
    const out: { path: string; value: unknown; what: string }[] = [];
    for (const { c, path } of containersOf(spec, at)) {
      const caps = sc(c).capabilities;
      if (!(caps?.drop ?? []).includes("ALL"))
        out.push({ path: `${path}.securityContext.capabilities.drop`, value: caps?.drop, what: `container ${c.name} must drop ALL capabilities` });
      const added = (caps?.add ?? []).filter((x) => x !== "NET_BIND_SERVICE");
      if (added.length) {
        const beyondBaseline = added.some((x) => !BASELINE_CAPABILITIES.includes(x));
        out.push({
          path: `${path}.securityContext.capabilities.add`,
          value: caps?.add,
          what: `container ${c.name} adds ${added.join(", ")}${beyondBaseline ? " (beyond even the baseline set)" : ""}`,
        });
      }
    }
    return out;
  },
};

export const podSecurityRestricted = resourceRule<PrivilegedNamespacesConfig>({
  name: "pod-security-restricted",
  domain: "workloads",
  description:
    "Every pod template of every workload kind, in every container list, meets the Pod Security Standards restricted profile (baseline included) " +
    "at v1.33, outside the privileged node-agent namespaces; any workload that runs tritonserver meets it wherever it is.",
  prevents:
    "A container that runs as root, escalates privileges, keeps capabilities, shares the host's network/PID/IPC, mounts host paths or " +
    "binds host ports: a compromised model or backend owning the GPU node and every tenant on it (and a rollout Pod Security Admission refuses).",
  remediationSteps:
    "In the pod template: securityContext { runAsNonRoot: true, runAsUser: non-zero, seccompProfile: { type: RuntimeDefault } }; in every " +
    "container (init and ephemeral too): allowPrivilegeEscalation: false, capabilities.drop: [ALL]; no privileged, hostNetwork/PID/IPC, hostPort, " +
    "hostPath or other non-restricted volume types, unsafe sysctls, procMount, custom SELinux user/role or AppArmor Unconfined.",
  configSchema: { properties: { ...privilegedNamespacesSchema } },
  check: (r, { privilegedNamespaces }) => {
    if (!inScope(r, privilegedNamespaces)) return NONE;
    const meta = podMetadataOf(r);
    const out: Finding[] = [];
    for (const { spec, path } of podSpecsOf(r)) {
      if (!spec) continue;
      const metaPath = path.replace(/\.spec$/, ".metadata").replace(/^spec$/, "metadata");
      for (const [id, check] of Object.entries(POD_SECURITY_CHECKS)) {
        for (const f of check(spec, path, meta, metaPath)) {
          out.push({ path: f.path, value: f.value, message: `${describe(r)}: ${f.path} is ${show(f.value)}: Pod Security restricted check ${id} (${f.what})` });
        }
      }
    }
    return out;
  },
});

const PINNED_VERSION = /^v\d+\.\d+$/;

export const namespacePodSecurityRestricted = resourceRule<PrivilegedNamespacesConfig>({
  name: "namespace-pod-security-restricted",
  domain: "workloads",
  description:
    "Every Namespace outside the privileged node-agent namespaces enforces, warns and audits Pod Security restricted, each at a pinned " +
    "version (vX.Y, not latest); the stack creates no Kubernetes system namespace (default, kube-*), privileged or not.",
  prevents:
    "Namespaces that admit privileged pods (enforce privileged/baseline or no label), or whose restrictions shift with every control-plane " +
    "upgrade (version latest), so a workload that passed yesterday is refused, or a weaker one admitted, after an upgrade; a stack that " +
    "adopts kube-system or default and relabels it (its pods then run under the stack's Pod Security level, and deleting the stack deletes it).",
  remediationSteps:
    "Label the namespace pod-security.kubernetes.io/{enforce,warn,audit}: restricted and {enforce,warn,audit}-version: the pinned version " +
    "(components/namespace.ts, POD_SECURITY_VERSION in components/upstream/pod-security.ts).",
  configSchema: { properties: { ...privilegedNamespacesSchema } },
  check: (r, { privilegedNamespaces }) => {
    if (!isK8sObject(r.type, r.props) || (r.props as { kind?: string }).kind !== "Namespace") return NONE;
    const meta = metadataOf(r);
    const name = meta.name ?? r.name;
    if (name === "default" || name.startsWith("kube-"))
      return [
        {
          path: "metadata.name",
          value: name,
          message: `Namespace ${name}: metadata.name is a Kubernetes system namespace; the stack must create its own (triton.namespace, gpu.operator.namespace)`,
        },
      ];
    if (privilegedNamespaces.includes(name)) return NONE;
    const labels = meta.labels ?? {};
    const out: Finding[] = [];
    for (const mode of POD_SECURITY_MODES) {
      const level = labels[`${POD_SECURITY_LABEL_PREFIX}${mode}`];
      const version = labels[`${POD_SECURITY_LABEL_PREFIX}${mode}-version`];
      const at = `metadata.labels["${POD_SECURITY_LABEL_PREFIX}${mode}"]`;
      if (level !== "restricted")
        out.push({ path: at, value: level, message: `Namespace ${meta.name ?? r.name}: ${at} is ${show(level)}, must be "restricted"` });
      const vat = `metadata.labels["${POD_SECURITY_LABEL_PREFIX}${mode}-version"]`;
      if (typeof version !== "string" || !PINNED_VERSION.test(version))
        out.push({
          path: vat,
          value: version,
          message: `Namespace ${meta.name ?? r.name}: ${vat} is ${show(version)}, must pin a version such as v1.33 (not latest)`,
        });
    }
    return out;
  },
});

// ---- images ------------------------------------------------------------------------------------

/** Tags that name a moving target (a branch or channel), not a release. */
const MOVING_TAGS =
  /^(latest|main|master|dev|develop|development|nightly|edge|stable|head|trunk|snapshot|unstable|canary|testing|rolling|current|release)([-_.].*)?$/i;

/** The tag and digest of an image reference (registry host ports are not tags). */
export function imageParts(image: string): { repo: string; tag?: string; digest?: string } {
  const [repoTag, digest] = image.split("@");
  const slash = repoTag.lastIndexOf("/");
  const colon = repoTag.indexOf(":", slash + 1);
  return colon < 0 ? { repo: repoTag, digest } : { repo: repoTag.slice(0, colon), tag: repoTag.slice(colon + 1), digest };
}

/** Why an image reference is not pinned, or undefined when it is (a sha256 digest, or a release tag: has a digit, is no branch name). */
export function unpinnedReason(image: unknown): string | undefined {
  if (typeof image !== "string" || image.trim() === "") return "no image";
  const { tag, digest } = imageParts(image.trim());
  if (digest !== undefined) return /^sha256:[a-f0-9]{64}$/.test(digest) ? undefined : `digest ${digest} is not sha256:<64 hex>`;
  if (tag === undefined || tag === "") return "no tag (means latest)";
  if (MOVING_TAGS.test(tag)) return `tag ${tag} names a branch or channel, not a release`;
  if (!/\d/.test(tag)) return `tag ${tag} has no version number`;
  return undefined;
}

export const containerImagesPinned = resourceRule({
  name: "container-images-pinned",
  domain: "workloads",
  configKey: "triton.groups[name={group}]{canary}.image.tag",
  description:
    "Every container of every workload (init and ephemeral containers, the gateway's and Triton's alike) runs an image pinned to a release tag " +
    "or a sha256 digest: no latest, no untagged image, no branch-like tag (main, nightly, edge, ...).",
  prevents: "Pods on different nodes running different code after a re-pull, and unreviewed upgrades (or a pushed-over tag) on the next restart.",
  remediationSteps: "Set an exact release tag (Triton image.tag such as 25.01-py3, gateway image tag such as v1.37.1), or better a digest (image@sha256:...).",
  check: (r) => {
    if (!isWorkload(r)) return NONE;
    return podSpecsOf(r).flatMap(({ spec, path }) =>
      containersOf(spec, path).flatMap(({ c, path: cp }) => {
        const why = unpinnedReason(c.image);
        return why ? [{ path: `${cp}.image`, value: c.image, message: `${describe(r)}: ${cp}.image is ${show(c.image)}: ${why}` }] : [];
      }),
    );
  },
});

export const imagePullPolicyWithTag = resourceRule({
  name: "image-pull-always-with-tag",
  domain: "workloads",
  description: "A container with imagePullPolicy Always names its image by digest (advisory: with a tag, Always re-resolves the tag on every start).",
  prevents: "A restarted pod silently running whatever the tag points at now, and pod starts that fail when the registry is unreachable.",
  remediationSteps: "Pin the image by digest, or use imagePullPolicy IfNotPresent with a release tag.",
  check: (r) => {
    if (!isWorkload(r)) return NONE;
    return podSpecsOf(r).flatMap(({ spec, path }) =>
      containersOf(spec, path).flatMap(({ c, path: cp }) => {
        if (c.imagePullPolicy !== "Always" || imageParts(String(c.image ?? "")).digest) return [];
        return [
          {
            path: `${cp}.imagePullPolicy`,
            value: "Always",
            message: `${describe(r)}: ${cp}.imagePullPolicy is "Always" with image ${show(c.image)} (a tag, no digest)`,
          },
        ];
      }),
    );
  },
});

// ---- ServiceAccount tokens -----------------------------------------------------------------------

const tokenSettings = {
  ...privilegedNamespacesSchema,
  needToken: {
    type: "array",
    items: { type: "string" },
    default: [] as string[],
    description: "ServiceAccounts (namespace/name) whose pods need a Kubernetes API token.",
  },
} as const;

export const serviceAccountTokenNotMounted = stackRule<PrivilegedNamespacesConfig & { needToken: string[] }>({
  name: "service-account-token-not-mounted",
  domain: "workloads",
  description:
    "Pods outside the privileged namespaces do not mount a Kubernetes API token: automountServiceAccountToken is false on the pod, or unset " +
    "there and false on its ServiceAccount (unless the ServiceAccount is listed in needToken).",
  prevents: "A compromised model server or gateway calling the Kubernetes API with its pod's token (discovery, Secret reads where RBAC allows).",
  remediationSteps: "Set automountServiceAccountToken: false on the pod spec (the components do) or on the ServiceAccount; list real API clients in needToken.",
  configSchema: { properties: tokenSettings },
  check: (resources, { privilegedNamespaces, needToken }) => {
    const accounts = new Map<string, unknown>();
    for (const r of resources) {
      if (isK8sObject(r.type, r.props) && (r.props as { kind?: string }).kind === "ServiceAccount")
        accounts.set(`${namespaceOf(r)}/${objectNameOf(r)}`, (r.props as { automountServiceAccountToken?: unknown }).automountServiceAccountToken);
    }
    const out: Finding[] = [];
    for (const r of resources) {
      if (!isWorkload(r) || privilegedNamespaces.includes(namespaceOf(r))) continue;
      for (const { spec, path } of podSpecsOf(r)) {
        const sa = `${namespaceOf(r)}/${spec?.serviceAccountName ?? "default"}`;
        if (needToken.includes(sa)) continue;
        const pod = spec?.automountServiceAccountToken;
        const effective = pod ?? accounts.get(sa) ?? true;
        if (effective === false) continue;
        out.push({
          path: `${path}.automountServiceAccountToken`,
          value: pod,
          message: `${describe(r)}: ${path}.automountServiceAccountToken is ${show(pod)} and ServiceAccount ${sa} automounts ${show(accounts.get(sa))}: the pod gets an API token`,
          urn: r.urn,
        });
      }
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  podSecurityRestricted,
  namespacePodSecurityRestricted,
  containerImagesPinned,
  imagePullPolicyWithTag,
  serviceAccountTokenNotMounted,
];
