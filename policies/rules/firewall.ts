// Rules the firewall makes enforceable: Triton's ports are never open to the world, its
// metrics port is reachable only from the monitoring stack, and every Triton pod is
// selected by a NetworkPolicy.
import type { PolicyResource } from "@pulumi/policy";
import { MONITORING_NAMESPACE, PROMETHEUS_POD_LABELS, TRITON_ALL_PODS, TRITON_METRICS_PORT_NAME, TRITON_PORTS } from "../../components/contracts";
import { isWorldOpen } from "../../lib/cidr";
import { metadataOf, podTemplateLabelsOf, propsOf, securityGroupIngressOf, type NetworkPolicyPeer, type Opening, type PropsOf } from "./props";
import { resourceRule, stackRule, type Finding, type Rule } from "./rule";
import { DAEMON_SET, DEPLOYMENT, NETWORK_POLICY, STATEFUL_SET } from "./types";
import { isTritonPodLabels, namespaceOf, objectNameOf, selects, type LabelSelector } from "./util";

const TRITON_PORT_RANGE = [TRITON_PORTS.http, TRITON_PORTS.metrics] as const; // 8000–8002
const ALL_PROTOCOLS = new Set(["-1", "all"]);

function coversTritonPorts(o: Opening): boolean {
  if (ALL_PROTOCOLS.has(String(o.protocol).toLowerCase())) return true;
  if (!["tcp", "6"].includes(String(o.protocol).toLowerCase())) return false;
  const from = o.fromPort ?? 0;
  const to = o.toPort ?? 65535;
  return from <= TRITON_PORT_RANGE[1] && to >= TRITON_PORT_RANGE[0];
}

/** Could this selector select some Triton pod? (Every Triton pod carries TRITON_ALL_PODS; other labels vary.) */
function maySelectTriton(selector: LabelSelector | undefined): boolean {
  if (!selector) return false;
  return Object.entries(selector.matchLabels ?? {}).every(([key, v]) => !(key in TRITON_ALL_PODS) || (TRITON_ALL_PODS as Record<string, string>)[key] === v);
}

const WORKLOADS: readonly string[] = [DEPLOYMENT, STATEFUL_SET, DAEMON_SET];

type NetworkPolicy = PropsOf<typeof NETWORK_POLICY>;

function isIngressPolicy(np: NetworkPolicy): boolean {
  const types = np.spec?.policyTypes;
  return types ? types.includes("Ingress") : true; // absent policyTypes: Ingress is always implied
}

/** Triton workloads: pod templates carrying every TRITON_ALL_PODS label. */
function tritonWorkloads(resources: readonly PolicyResource[]): PolicyResource[] {
  return resources.filter((r) => {
    if (!WORKLOADS.includes(r.type)) return false;
    return isTritonPodLabels(podTemplateLabelsOf(r));
  });
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
    if (isTritonPodLabels(np.spec?.podSelector?.matchLabels)) out.add(namespaceOf(r));
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

/** Exactly the Prometheus pods of the monitoring namespace, nothing wider. */
function isPrometheusPeer(peer: NetworkPolicyPeer): boolean {
  if (peer.ipBlock) return false;
  const ns = peer.namespaceSelector?.matchLabels ?? {};
  const pods = peer.podSelector?.matchLabels ?? {};
  return (
    ns["kubernetes.io/metadata.name"] === MONITORING_NAMESPACE &&
    !peer.namespaceSelector?.matchExpressions?.length &&
    Object.entries(PROMETHEUS_POD_LABELS).every(([key, v]) => pods[key] === v)
  );
}

export const firewallNoWorldIngressOnTritonPorts = resourceRule({
  name: "firewall-no-world-ingress-on-triton-ports",
  domain: "firewall",
  description: "No security-group ingress from 0.0.0.0/0 or ::/0 (any /0) covers Triton's ports 8000-8002.",
  prevents:
    "Inference, model control and metrics endpoints reachable from the internet or the whole address space (model theft, GPU abuse, " +
    "load/unload by anyone).",
  remediationSteps:
    "Admit Triton ports only from the cluster/gateway security group (components/firewall), and list client CIDRs in " + "triton-platform:gateway.clientCidrs.",
  check: (r) =>
    securityGroupIngressOf(r)
      .filter(coversTritonPorts)
      .flatMap((o) =>
        o.cidrs
          .filter((c) => isWorldOpen(c.cidr))
          .map(({ path, cidr }) => ({
            path,
            value: cidr,
            message:
              `${r.type.split(":").pop()} ${r.name}: ${path} is ${JSON.stringify(cidr)}: ingress from it (protocol ${o.protocol}, ports ${o.fromPort ?? "all"}-${o.toPort ?? "all"}) ` +
              `covers Triton ports ${TRITON_PORT_RANGE[0]}-${TRITON_PORT_RANGE[1]}`,
          })),
      ),
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

export const firewallNetworkpolicySelectsEveryTritonPod = stackRule({
  name: "firewall-networkpolicy-selects-every-triton-pod",
  domain: "firewall",
  description: "Every Triton workload's pods are selected by an Ingress NetworkPolicy in their namespace.",
  prevents:
    "Triton pods that accept connections from any pod in the cluster because no policy selects them (Kubernetes allows all ingress to " + "unselected pods).",
  remediationSteps: "Create the firewall component for the namespace (default-deny-ingress plus the Triton allow rules) before the serving groups.",
  check: (resources) => {
    const policies = networkPolicies(resources).filter(({ np }) => isIngressPolicy(np));
    const out: Finding[] = [];
    for (const w of tritonWorkloads(resources)) {
      const ns = namespaceOf(w);
      const labels = podTemplateLabelsOf(w);
      const covered = policies.some(({ r, np }) => namespaceOf(r) === ns && selects(np.spec?.podSelector, labels));
      if (!covered) {
        const kind = (w.props as { kind?: string }).kind ?? w.type.split(":").pop();
        const message =
          `${kind} ${ns}/${objectNameOf(w)}: pods labelled ${JSON.stringify(labels)} (spec.template.metadata.labels) are selected ` +
          `by no Ingress NetworkPolicy in namespace ${ns}`;
        out.push({ path: "spec.template.metadata.labels", value: labels, message, urn: w.urn });
      }
    }
    return out;
  },
});

export const firewallRules: Rule[] = [firewallNoWorldIngressOnTritonPorts, firewallTritonMetricsOnlyFromMonitoring, firewallNetworkpolicySelectsEveryTritonPod];
