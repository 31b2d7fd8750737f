// Rules the firewall makes enforceable: Triton's ports are never open to the world, its
// metrics port is reachable only from the monitoring stack, and every Triton pod is
// selected by a NetworkPolicy.
import type { PolicyResource } from "@pulumi/policy";
import { MONITORING_NAMESPACE, PROMETHEUS_POD_LABELS, TRITON_ALL_PODS, TRITON_METRICS_PORT_NAME, TRITON_PORTS } from "../../components/contracts";
import { coversInternet } from "../../lib/cidr";
import { metadataOf, propsOf, securityGroupIngressOf, type NetworkPolicyPeer, type Opening, type PropsOf } from "./props";
import { stackRule, type Finding, type Rule } from "./rule";
import { NETWORK_POLICY, SECURITY_GROUP } from "./types";
import {
  isWorkload,
  maySelect,
  namespaceOf,
  nodeSecurityGroups,
  objectNameOf,
  ownedSecurityGroupIds,
  privilegedNamespacesSchema,
  selectorRequires,
  tritonWorkloads,
  type LabelSelector,
  type PrivilegedNamespacesConfig,
} from "./util";

/** The label the API server sets on every namespace to its name (immutable). */
const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";
const TRITON_PORT_RANGE = [TRITON_PORTS.http, TRITON_PORTS.metrics] as const; // 8000–8002
const ALL_PROTOCOLS = new Set(["-1", "all"]);

/** Could this selector select some Triton pod? (Every Triton pod carries TRITON_ALL_PODS; other labels vary.) */
function maySelectTriton(selector: LabelSelector | undefined): boolean {
  return maySelect(selector, TRITON_ALL_PODS);
}

/** Does the selector select Triton pods only (it requires every label of TRITON_ALL_PODS, by matchLabels or In)? */
const selectsOnlyTriton = (selector: LabelSelector | undefined): boolean => Object.entries(TRITON_ALL_PODS).every(([k, v]) => selectorRequires(selector, k, v));

type NetworkPolicy = PropsOf<typeof NETWORK_POLICY>;

function isIngressPolicy(np: NetworkPolicy): boolean {
  const types = np.spec?.policyTypes;
  return types ? types.includes("Ingress") : true; // absent policyTypes: Ingress is always implied
}

/** NetworkPolicies of the stack, with their typed props. */
function networkPolicies(resources: readonly PolicyResource[]): { r: PolicyResource; np: NetworkPolicy }[] {
  return resources.flatMap((r) => {
    const np = propsOf(r, NETWORK_POLICY);
    return np ? [{ r, np }] : [];
  });
}

/** Namespaces Triton runs in: those of Triton workloads and of policies that name Triton pods explicitly. */
function tritonNamespaces(resources: readonly PolicyResource[]): Set<string> {
  const out = new Set<string>();
  for (const w of tritonWorkloads(resources)) out.add(namespaceOf(w));
  for (const { r, np } of networkPolicies(resources)) {
    if (selectsOnlyTriton(np.spec?.podSelector)) out.add(namespaceOf(r));
  }
  return out;
}

/** Does a NetworkPolicy port entry cover Triton's metrics port? (No ports = all ports.) */
function coversMetrics(ports: readonly { port?: number | string; endPort?: number }[] | undefined): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if (p.port === undefined) return true;
    if (p.port === TRITON_PORTS.metrics || p.port === String(TRITON_PORTS.metrics) || p.port === TRITON_METRICS_PORT_NAME) return true;
    return typeof p.port === "number" && p.endPort !== undefined && p.port <= TRITON_PORTS.metrics && p.endPort >= TRITON_PORTS.metrics;
  });
}

/**
 * Exactly the Prometheus pods of the monitoring namespace, nothing wider: every namespace the peer selects is
 * named monitoring and every pod carries the Prometheus labels, whether written with matchLabels or with
 * matchExpressions (In with that one value); further terms only narrow the peer.
 */
function isPrometheusPeer(peer: NetworkPolicyPeer): boolean {
  if (peer.ipBlock) return false;
  return (
    selectorRequires(peer.namespaceSelector, NAMESPACE_NAME_LABEL, MONITORING_NAMESPACE) &&
    Object.entries(PROMETHEUS_POD_LABELS).every(([key, v]) => selectorRequires(peer.podSelector, key, v))
  );
}

const MANAGED_PREFIX_LIST = "aws:ec2/managedPrefixList:ManagedPrefixList";

/** A port open to a set of sources on one security group: the union of every rule of that group that covers the port. */
interface PortExposure {
  group: string;
  port: number;
  sources: string[];
  contributors: { r: PolicyResource; path: string; value: string }[];
}

/**
 * For each security group and each of `ports`, the union of the CIDRs (IPv4 and IPv6) and of the
 * entries of stack-defined prefix lists (a ManagedPrefixList the rule references, found among its
 * dependencies) that its ingress rules admit on that port. Prefix lists not defined in the stack
 * (AWS-managed ones) cannot be resolved offline and are left out.
 */
function exposures(resources: readonly PolicyResource[], ports: readonly number[]): PortExposure[] {
  const byKey = new Map<string, PortExposure>();
  for (const r of resources) {
    const lists = r.dependencies.filter((d) => d.type === MANAGED_PREFIX_LIST);
    for (const o of securityGroupIngressOf(r)) {
      const group = o.group ?? r.urn;
      const prefixCidrs = o.prefixLists.flatMap(({ path, id }) => {
        const list =
          lists.find((l) => (l.props as { name?: string }).name === id || l.name === id) ??
          (o.prefixLists.length === 1 && lists.length === 1 ? lists[0] : undefined);
        const entries = ((list?.props as { entries?: { cidr?: string }[] } | undefined)?.entries ?? []).map((e) => String(e.cidr));
        return entries.map((cidr) => ({ path, cidr, shown: `${id} (${cidr})` }));
      });
      const sources = [...o.cidrs.map((c) => ({ ...c, shown: c.cidr })), ...prefixCidrs];
      if (sources.length === 0) continue;
      for (const port of ports) {
        if (!covers(o, port)) continue;
        const key = `${group}\u0000${port}`;
        const e = byKey.get(key) ?? { group, port, sources: [], contributors: [] };
        byKey.set(key, e);
        for (const src of sources) {
          e.sources.push(src.cidr);
          e.contributors.push({ r, path: src.path, value: src.shown });
        }
      }
    }
  }
  return [...byKey.values()].filter((e) => coversInternet(e.sources));
}

/** Does an opening admit TCP on this port? (-1/all protocols admit every port.) */
function covers(o: Opening, port: number): boolean {
  const proto = String(o.protocol).toLowerCase();
  if (ALL_PROTOCOLS.has(proto)) return true;
  if (!["tcp", "6"].includes(proto)) return false;
  return (o.fromPort ?? 0) <= port && (o.toPort ?? 65535) >= port;
}

/** One finding per security group (its first exposed port), reported on the first contributing rule. */
function sgFindings(resources: readonly PolicyResource[], ports: readonly number[], what: string): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const e of exposures(resources, ports)) {
    if (seen.has(e.group)) continue;
    seen.add(e.group);
    const first = e.contributors[0];
    const all = [...new Set(e.contributors.map((c) => `${c.r.name} ${c.path}=${c.value}`))].join(", ");
    out.push({
      path: first.path,
      value: first.value,
      message:
        `${first.r.type.split(":").pop()} ${first.r.name}: ${first.path} is ${JSON.stringify(first.value)}; with the other ingress of security group ` +
        `${e.group.startsWith("urn:") ? first.r.name : e.group} on port ${e.port} (${all}) the sources cover the internet, on ${what}`,
      urn: first.r.urn,
    });
  }
  return out;
}

export const firewallNoWorldIngressOnTritonPorts = stackRule({
  name: "firewall-no-world-ingress-on-triton-ports",
  domain: "firewall",
  description:
    `No security group admits the internet to Triton's ports ${TRITON_PORT_RANGE[0]}-${TRITON_PORT_RANGE[1]}: judged per group and port by the ` +
    "union of every ingress rule's CIDRs (IPv4 and IPv6) and stack-defined prefix lists, not by a literal /0 (0.0.0.0/1 + 128.0.0.0/1 is the internet too).",
  prevents:
    "Inference, model control and metrics endpoints reachable from the internet or the whole address space (model theft, GPU abuse, " +
    "load/unload by anyone).",
  remediationSteps:
    "Admit Triton ports only from the cluster/gateway security group (components/firewall), and list client CIDRs in " + "triton-platform:gateway.clientCidrs.",
  check: (resources) => sgFindings(resources, [TRITON_PORTS.http, TRITON_PORTS.grpc, TRITON_PORTS.metrics], `Triton port range ${TRITON_PORT_RANGE.join("-")}`),
});

const SSH_PORT = 22;

export const firewallNoSshFromInternet = stackRule({
  name: "firewall-no-ssh-from-internet",
  domain: "firewall",
  description: "No security group admits the internet to SSH (port 22), judged by the union of its ingress CIDRs and prefix lists on that port.",
  prevents: "GPU (or any) nodes brute-forced or exploited over SSH from anywhere; node access goes through SSM Session Manager.",
  remediationSteps: "Remove the SSH ingress (use SSM Session Manager), or admit only a bastion's security group or an administrative range.",
  check: (resources) => sgFindings(resources, [SSH_PORT], "SSH port 22"),
});

export const firewallTritonMetricsOnlyFromMonitoring = stackRule({
  name: "firewall-triton-metrics-only-from-monitoring",
  domain: "firewall",
  description:
    `A NetworkPolicy that admits traffic to Triton's metrics port (${TRITON_PORTS.metrics}) admits only Prometheus pods of the ` +
    `${MONITORING_NAMESPACE} namespace.`,
  prevents: "Model names, request rates and GPU load readable by any pod or network, and scrape traffic that bypasses the monitoring stack.",
  remediationSteps:
    `Allow ${TRITON_PORTS.metrics} only from { namespaceSelector: kubernetes.io/metadata.name=${MONITORING_NAMESPACE}, ` +
    `podSelector: ${JSON.stringify(PROMETHEUS_POD_LABELS)} } (components/firewall).`,
  check: (resources) => {
    const namespaces = tritonNamespaces(resources);
    const out: Finding[] = [];
    for (const { r, np } of networkPolicies(resources)) {
      const ns = namespaceOf(r);
      if (!namespaces.has(ns) || !isIngressPolicy(np) || !maySelectTriton(np.spec?.podSelector)) continue;
      (np.spec?.ingress ?? []).forEach((rule, i) => {
        if (!coversMetrics(rule.ports)) return;
        const from = rule.from ?? [];
        const bad = from.length === 0 ? ["(any source)"] : from.filter((p) => !isPrometheusPeer(p)).map((p) => JSON.stringify(p));
        if (bad.length) {
          const message = `NetworkPolicy ${ns}/${metadataOf(r).name ?? r.name}: spec.ingress[${i}].from admits ${bad.join(", ")} to Triton's metrics port ${TRITON_PORTS.metrics}`;
          out.push({ path: `spec.ingress[${i}].from`, value: rule.from, message, urn: r.urn });
        }
      });
    }
    return out;
  },
});

// ---- default deny and allow-all peers ------------------------------------------------------

const isEmptySelector = (s: LabelSelector | undefined): boolean =>
  s !== undefined && s !== null && Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

export const firewallDefaultDeny = stackRule<PrivilegedNamespacesConfig>({
  name: "firewall-default-deny",
  domain: "firewall",
  description:
    "Every serving namespace (one that runs Triton, or any workload outside the privileged namespaces) has a default-deny NetworkPolicy for " +
    "ingress and for egress: podSelector {} with the policy type and no rules of that direction (one policy or two).",
  prevents:
    "Pods that no allow-rule names accepting connections from, or opening them to, anything: a new workload in the namespace (a Triton " +
    "Deployment added by hand), or one whose allow policy is renamed, is wide open (Kubernetes allows all traffic to and from unselected pods).",
  remediationSteps: "The firewall component creates default-deny-ingress and default-deny-egress in the serving namespace; keep both.",
  configSchema: { properties: { ...privilegedNamespacesSchema } },
  check: (resources, { privilegedNamespaces }) => {
    const namespaces = new Map<string, PolicyResource>();
    for (const w of tritonWorkloads(resources)) if (!namespaces.has(namespaceOf(w))) namespaces.set(namespaceOf(w), w);
    for (const w of resources)
      if (isWorkload(w) && !privilegedNamespaces.includes(namespaceOf(w)) && !namespaces.has(namespaceOf(w))) namespaces.set(namespaceOf(w), w);
    const policies = networkPolicies(resources);
    const out: Finding[] = [];
    for (const [ns, w] of namespaces) {
      const inNs = policies.filter(({ r, np }) => namespaceOf(r) === ns && isEmptySelector(np.spec?.podSelector));
      const denies = (dir: "Ingress" | "Egress") =>
        inNs.some(({ np }) => {
          const types = np.spec?.policyTypes ?? (dir === "Ingress" ? ["Ingress"] : np.spec?.egress ? ["Egress"] : []);
          const rules = dir === "Ingress" ? np.spec?.ingress : np.spec?.egress;
          return types.includes(dir) && (rules ?? []).length === 0;
        });
      for (const dir of ["Ingress", "Egress"] as const) {
        if (denies(dir)) continue;
        const kind = (w.props as { kind?: string }).kind;
        out.push({
          path: "metadata.namespace",
          value: ns,
          message: `${kind} ${ns}/${objectNameOf(w)}: metadata.namespace ${JSON.stringify(ns)} has no default-deny ${dir} NetworkPolicy (podSelector {}, policyTypes [${dir}], no ${dir.toLowerCase()} rules)`,
          urn: w.urn,
        });
      }
    }
    return out;
  },
});

/** Does a NetworkPolicy port list admit this port? (No ports = every port; named ports match Triton's names.) */
function admitsPort(ports: readonly { port?: number | string; endPort?: number; protocol?: string }[] | undefined, port: number, name: string): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? "TCP") !== "TCP") return false;
    if (p.port === undefined) return true;
    if (p.port === port || p.port === String(port) || p.port === name) return true;
    return typeof p.port === "number" && p.endPort !== undefined && p.port <= port && p.endPort >= port;
  });
}

/** Why a rule's peers admit everyone (or the internet), or undefined. */
function allowAll(peers: readonly NetworkPolicyPeer[] | undefined): string | undefined {
  if (!peers || peers.length === 0) return "no peers (every source)";
  for (const p of peers) {
    if (p.namespaceSelector && isEmptySelector(p.namespaceSelector) && (!p.podSelector || isEmptySelector(p.podSelector)))
      return `${JSON.stringify(p)} (every pod of every namespace)`;
  }
  const blocks = peers.filter((p) => p.ipBlock?.cidr);
  const cidrs = blocks.map((p) => String(p.ipBlock!.cidr));
  const except = blocks.flatMap((p) => (p.ipBlock!.except ?? []).map(String));
  if (cidrs.length && coversInternet(cidrs, except)) return `ipBlocks ${JSON.stringify(cidrs)} (whose union covers the internet)`;
  return undefined;
}

const SERVING_PORTS = [
  [TRITON_PORTS.http, "http"],
  [TRITON_PORTS.grpc, "grpc"],
] as const;

export const firewallNoAllowAllToTriton = stackRule({
  name: "firewall-no-allow-all-to-triton",
  domain: "firewall",
  description:
    `No NetworkPolicy that may select Triton pods admits everyone to Triton's serving ports ${TRITON_PORTS.http}/${TRITON_PORTS.grpc} (a rule without ` +
    "peers, an empty namespaceSelector, ipBlocks whose union covers the internet), and none lets Triton pods send to every destination on every port.",
  prevents: "Any pod of any namespace (or any address) calling Triton past the gateway, and a compromised Triton pod exfiltrating model weights anywhere.",
  remediationSteps:
    "Admit Triton's serving ports only from the gateway's pods (components/firewall composes this from the gateway's network needs), and " +
    "declare Triton's egress with its ports (DNS, HTTPS for S3/STS).",
  check: (resources) => {
    const namespaces = new Set(tritonWorkloads(resources).map(namespaceOf));
    const out: Finding[] = [];
    for (const { r, np } of networkPolicies(resources)) {
      const ns = namespaceOf(r);
      if (!namespaces.has(ns) || !maySelectTriton(np.spec?.podSelector)) continue;
      const where = `NetworkPolicy ${ns}/${metadataOf(r).name ?? r.name}`;
      if (isIngressPolicy(np)) {
        (np.spec?.ingress ?? []).forEach((rule, i) => {
          const ports = SERVING_PORTS.filter(([p, n]) => admitsPort(rule.ports, p, n)).map(([p]) => p);
          const why = ports.length ? allowAll(rule.from) : undefined;
          if (why)
            out.push({
              path: `spec.ingress[${i}].from`,
              value: rule.from ?? null,
              message: `${where}: spec.ingress[${i}].from admits ${why} to Triton ports ${ports.join(", ")}`,
              urn: r.urn,
            });
        });
      }
      if ((np.spec?.policyTypes ?? []).includes("Egress")) {
        (np.spec?.egress ?? []).forEach((rule, i) => {
          if ((rule.ports ?? []).length > 0) return; // limited ports (DNS, 443 to S3) are declared needs
          const why = allowAll(rule.to);
          if (why)
            out.push({
              path: `spec.egress[${i}]`,
              value: rule,
              message: `${where}: spec.egress[${i}] lets Triton pods reach ${why} on every port`,
              urn: r.urn,
            });
        });
      }
    }
    return out;
  },
});

/** A source of ingress to a group: a CIDR, a prefix list, or another security group (or the group itself, `self`), with its path. */
function ingressSources(r: PolicyResource, o: Opening, n: number): { path: string; kind: "cidr" | "prefix list" | "group"; value: string }[] {
  const raw = r.props as {
    referencedSecurityGroupId?: string;
    sourceSecurityGroupId?: string;
    self?: boolean;
    securityGroupId?: string;
    ingress?: { securityGroups?: string[]; self?: boolean }[];
  };
  const out: { path: string; kind: "cidr" | "prefix list" | "group"; value: string }[] = [
    ...o.cidrs.map((c) => ({ path: c.path, kind: "cidr" as const, value: c.cidr })),
    ...o.prefixLists.map((l) => ({ path: l.path, kind: "prefix list" as const, value: l.id })),
  ];
  if (r.type === SECURITY_GROUP) {
    (raw.ingress?.[n]?.securityGroups ?? []).forEach((g, i) => out.push({ path: `ingress[${n}].securityGroups[${i}]`, kind: "group", value: String(g) }));
  } else {
    if (raw.referencedSecurityGroupId !== undefined)
      out.push({ path: "referencedSecurityGroupId", kind: "group", value: String(raw.referencedSecurityGroupId) });
    if (raw.sourceSecurityGroupId !== undefined) out.push({ path: "sourceSecurityGroupId", kind: "group", value: String(raw.sourceSecurityGroupId) });
  }
  return out;
}

const TRITON_PORT_LIST = [TRITON_PORTS.http, TRITON_PORTS.grpc, TRITON_PORTS.metrics];

export const firewallTritonPortsOnlyFromStackGroups = stackRule({
  name: "firewall-triton-ports-only-from-stack-groups",
  domain: "firewall",
  description:
    `On the security groups of the GPU nodes (those their launch templates attach), Triton's ports ${TRITON_PORT_RANGE[0]}-${TRITON_PORT_RANGE[1]} admit ` +
    "only security groups the stack knows the members of: a group it creates (the gateway's load balancer) or one its node groups' launch templates " +
    "attach (the EKS cluster security group of the nodes the gateway and Prometheus run on, the GPU nodes' own). No CIDR, no prefix list (its " +
    "entries change outside the plan), no other group.",
  prevents:
    "Inference, model control and metrics reachable from whatever a foreign security group or a customer-managed prefix list comes to hold, or from " +
    "a whole address range, past the gateway and Prometheus: invisible in the plan, and not covered by the internet check.",
  remediationSteps:
    "Remove the ingress; Triton's ports are opened by components/firewall from the gateway's and Prometheus' network needs (the cluster security " +
    "group); callers go through the gateway (triton-platform:gateway.clientCidrs).",
  check: (resources) => {
    const nodes = nodeSecurityGroups(resources);
    if (nodes.gpu.size === 0) return [];
    const owned = ownedSecurityGroupIds(resources);
    const gpuGroupUrns = nodes.gpuGroupUrns;
    const out: Finding[] = [];
    for (const r of resources) {
      securityGroupIngressOf(r).forEach((o, n) => {
        const target = r.type === SECURITY_GROUP ? ((r.props as { id?: string }).id ?? r.urn) : o.group;
        const onGpu = r.type === SECURITY_GROUP ? gpuGroupUrns.has(r.urn) || nodes.gpu.has(String(target)) : target !== undefined && nodes.gpu.has(target);
        if (!onGpu) return;
        const ports = TRITON_PORT_LIST.filter((p) => covers(o, p));
        if (ports.length === 0) return;
        for (const src of ingressSources(r, o, n)) {
          if (src.kind === "group" && (owned.has(src.value) || nodes.all.has(src.value) || src.value === target)) continue;
          const why =
            src.kind === "group"
              ? "a security group the stack neither creates nor attaches to its nodes"
              : src.kind === "prefix list"
                ? "a prefix list, whose entries change outside the plan"
                : "an address range, not the gateway's or Prometheus' security group";
          out.push({
            path: src.path,
            value: src.value,
            message:
              `${r.type.split(":").pop()} ${r.name}: ${src.path} is ${JSON.stringify(src.value)} (${why}), admitted to Triton port(s) ${ports.join(", ")} ` +
              `of the GPU nodes' security group ${r.type === SECURITY_GROUP ? r.name : target}`,
            urn: r.urn,
          });
        }
      });
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  firewallNoWorldIngressOnTritonPorts,
  firewallNoSshFromInternet,
  firewallTritonMetricsOnlyFromMonitoring,
  firewallDefaultDeny,
  firewallNoAllowAllToTriton,
  firewallTritonPortsOnlyFromStackGroups,
];
