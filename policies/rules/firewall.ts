// Rules the firewall makes enforceable: Triton's ports are never open to the world, its
// metrics port is reachable only from the monitoring stack, and every Triton pod is
// selected by a NetworkPolicy.
import type { PolicyResource } from "@pulumi/policy";
import { MONITORING_NAMESPACE, PROMETHEUS_POD_LABELS, TRITON_ALL_PODS, TRITON_METRICS_PORT_NAME, TRITON_PORTS } from "../../components/contracts";
import { isWorldOpen } from "../../lib/cidr";
import { reportAt, selects, type LabelSelector, type Rule } from "./util";
import { NETWORK_POLICY, SECURITY_GROUP, SECURITY_GROUP_INGRESS_RULE, SECURITY_GROUP_RULE } from "./types";

const TRITON_PORT_RANGE = [TRITON_PORTS.http, TRITON_PORTS.metrics] as const; // 8000–8002
const ALL_PROTOCOLS = new Set(["-1", "all"]);

/** An ingress permission as the three AWS resource shapes express it. */
interface Opening {
  /** Each source CIDR with its property path. */
  cidrs: { path: string; cidr: string }[];
  protocol: string;
  fromPort?: number;
  toPort?: number;
}

function coversTritonPorts(o: Opening): boolean {
  if (ALL_PROTOCOLS.has(String(o.protocol).toLowerCase())) return true;
  if (!["tcp", "6"].includes(String(o.protocol).toLowerCase())) return false;
  const from = o.fromPort ?? 0;
  const to = o.toPort ?? 65535;
  return from <= TRITON_PORT_RANGE[1] && to >= TRITON_PORT_RANGE[0];
}

/** CIDR list fields of an object, each entry with its property path. */
function cidrsAt(o: Record<string, any>, fields: string[], prefix = ""): { path: string; cidr: string }[] {
  return fields.flatMap((f) => {
    const v = o[f];
    if (Array.isArray(v)) return v.map((cidr: string, i: number) => ({ path: `${prefix}${f}[${i}]`, cidr }));
    return typeof v === "string" && v ? [{ path: `${prefix}${f}`, cidr: v }] : [];
  });
}

/** Ingress openings of an AWS security-group resource (standalone rule, legacy rule, or inline). */
export function sgIngressOpenings(type: string, props: Record<string, any>): Opening[] {
  if (type === SECURITY_GROUP_INGRESS_RULE) {
    return [{ cidrs: cidrsAt(props, ["cidrIpv4", "cidrIpv6"]), protocol: props.ipProtocol, fromPort: props.fromPort, toPort: props.toPort }];
  }
  if (type === SECURITY_GROUP_RULE && props.type === "ingress") {
    return [{ cidrs: cidrsAt(props, ["cidrBlocks", "ipv6CidrBlocks"]), protocol: props.protocol, fromPort: props.fromPort, toPort: props.toPort }];
  }
  if (type === SECURITY_GROUP) {
    return (props.ingress ?? []).map((i: Record<string, any>, n: number) => ({
      cidrs: cidrsAt(i, ["cidrBlocks", "ipv6CidrBlocks"], `ingress[${n}].`),
      protocol: i.protocol,
      fromPort: i.fromPort,
      toPort: i.toPort,
    }));
  }
  return [];
}

/** Could this selector select some Triton pod? (Every Triton pod carries TRITON_ALL_PODS; other labels vary.) */
function maySelectTriton(selector: LabelSelector | undefined): boolean {
  if (!selector) return false;
  return Object.entries(selector.matchLabels ?? {}).every(([key, v]) => !(key in TRITON_ALL_PODS) || (TRITON_ALL_PODS as Record<string, string>)[key] === v);
}

const WORKLOADS = ["kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:StatefulSet", "kubernetes:apps/v1:DaemonSet"];

function isIngressPolicy(np: Record<string, any>): boolean {
  const types: string[] | undefined = np.spec?.policyTypes;
  return types ? types.includes("Ingress") : true; // absent policyTypes: Ingress is always implied
}

/** Triton workloads: pod templates carrying every TRITON_ALL_PODS label. */
function tritonWorkloads(resources: PolicyResource[]) {
  return resources.filter((r) => {
    if (!WORKLOADS.includes(r.type)) return false;
    const labels = r.props.spec?.template?.metadata?.labels ?? {};
    return Object.entries(TRITON_ALL_PODS).every(([key, v]) => labels[key] === v);
  });
}

/** Namespaces Triton runs in: those of Triton workloads and of policies that name Triton pods explicitly. */
function tritonNamespaces(resources: PolicyResource[]): Set<string> {
  const out = new Set<string>();
  for (const w of tritonWorkloads(resources)) out.add(w.props.metadata?.namespace ?? "default");
  for (const np of resources.filter((r) => r.type === NETWORK_POLICY)) {
    const ml = np.props.spec?.podSelector?.matchLabels ?? {};
    if (Object.entries(TRITON_ALL_PODS).every(([key, v]) => ml[key] === v)) out.add(np.props.metadata?.namespace ?? "default");
  }
  return out;
}

/** Does a NetworkPolicy port entry cover Triton's metrics port? (No ports = all ports.) */
function coversMetrics(ports: { port?: number | string; endPort?: number }[] | undefined): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if (p.port === undefined) return true;
    if (p.port === TRITON_PORTS.metrics || p.port === String(TRITON_PORTS.metrics) || p.port === TRITON_METRICS_PORT_NAME) return true;
    return typeof p.port === "number" && p.endPort !== undefined && p.port <= TRITON_PORTS.metrics && p.endPort >= TRITON_PORTS.metrics;
  });
}

/** Exactly the Prometheus pods of the monitoring namespace, nothing wider. */
function isPrometheusPeer(peer: Record<string, any>): boolean {
  if (peer.ipBlock) return false;
  const ns = peer.namespaceSelector?.matchLabels ?? {};
  const pods = peer.podSelector?.matchLabels ?? {};
  return (
    ns["kubernetes.io/metadata.name"] === MONITORING_NAMESPACE &&
    !(peer.namespaceSelector?.matchExpressions?.length) &&
    Object.entries(PROMETHEUS_POD_LABELS).every(([key, v]) => pods[key] === v)
  );
}

export const firewallRules: Rule[] = [
  {
    name: "firewall-no-world-ingress-on-triton-ports",
    domain: "firewall",
    description: "No security-group ingress from 0.0.0.0/0 or ::/0 (any /0) covers Triton's ports 8000-8002.",
    prevents: "Inference, model control and metrics endpoints reachable from the internet or the whole address space (model theft, GPU abuse, load/unload by anyone).",
    remediationSteps: "Admit Triton ports only from the cluster/gateway security group (components/firewall), and list client CIDRs in triton-platform:gateway.clientCidrs.",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      for (const o of sgIngressOpenings(args.type, args.props)) {
        if (!coversTritonPorts(o)) continue;
        for (const { path, cidr } of o.cidrs.filter((c) => isWorldOpen(c.cidr))) {
          reportAt(
            report,
            { path, value: cidr },
            `${args.type.split(":").pop()} ${args.name}: ${path} is ${JSON.stringify(cidr)}: ingress from it (protocol ${o.protocol}, ports ${o.fromPort ?? "all"}-${o.toPort ?? "all"}) covers Triton ports ${TRITON_PORT_RANGE[0]}-${TRITON_PORT_RANGE[1]}`,
          );
        }
      }
    },
  },
  {
    name: "firewall-triton-metrics-only-from-monitoring",
    domain: "firewall",
    description: `A NetworkPolicy that admits traffic to Triton's metrics port (${TRITON_PORTS.metrics}) admits only Prometheus pods of the ${MONITORING_NAMESPACE} namespace.`,
    prevents: "Model names, request rates and GPU load readable by any pod or network, and scrape traffic that bypasses the monitoring stack.",
    remediationSteps: `Allow ${TRITON_PORTS.metrics} only from { namespaceSelector: kubernetes.io/metadata.name=${MONITORING_NAMESPACE}, podSelector: ${JSON.stringify(PROMETHEUS_POD_LABELS)} } (components/firewall).`,
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      const namespaces = tritonNamespaces(args.resources);
      for (const np of args.resources.filter((r) => r.type === NETWORK_POLICY)) {
        const ns = np.props.metadata?.namespace ?? "default";
        if (!namespaces.has(ns) || !isIngressPolicy(np.props) || !maySelectTriton(np.props.spec?.podSelector)) continue;
        (np.props.spec?.ingress ?? []).forEach((rule: Record<string, any>, i: number) => {
          if (!coversMetrics(rule.ports)) return;
          const from: Record<string, any>[] = rule.from ?? [];
          const bad = from.length === 0 ? ["(any source)"] : from.filter((p) => !isPrometheusPeer(p)).map((p) => JSON.stringify(p));
          if (bad.length) reportAt(report, { path: `spec.ingress[${i}].from`, value: rule.from }, `NetworkPolicy ${ns}/${np.props.metadata?.name ?? np.name}: spec.ingress[${i}].from admits ${bad.join(", ")} to Triton's metrics port ${TRITON_PORTS.metrics}`, np.urn);
        });
      }
    },
  },
  {
    name: "firewall-networkpolicy-selects-every-triton-pod",
    domain: "firewall",
    description: "Every Triton workload's pods are selected by an Ingress NetworkPolicy in their namespace.",
    prevents: "Triton pods that accept connections from any pod in the cluster because no policy selects them (Kubernetes allows all ingress to unselected pods).",
    remediationSteps: "Create the firewall component for the namespace (default-deny-ingress plus the Triton allow rules) before the serving groups.",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      const policies = args.resources.filter((r) => r.type === NETWORK_POLICY && isIngressPolicy(r.props));
      for (const w of tritonWorkloads(args.resources)) {
        const ns = w.props.metadata?.namespace ?? "default";
        const labels = w.props.spec?.template?.metadata?.labels ?? {};
        const covered = policies.some((np) => (np.props.metadata?.namespace ?? "default") === ns && selects(np.props.spec?.podSelector, labels));
        if (!covered) {
          reportAt(report, { path: "spec.template.metadata.labels", value: labels }, `${w.props.kind ?? w.type.split(":").pop()} ${ns}/${w.props.metadata?.name ?? w.name}: pods labelled ${JSON.stringify(labels)} (spec.template.metadata.labels) are selected by no Ingress NetworkPolicy in namespace ${ns}`, w.urn);
        }
      }
    },
  },
];
