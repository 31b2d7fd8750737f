// What the gateway pods need from the network: the serving listeners (8000/8001) reached only
// by the configured clients, the metrics listener only by Prometheus, the /ready listener by
// NLB health checks and the kubelet; egress to DNS and the Triton pods only. On AWS, with
// client CIDRs: the NLB's own frontend security group (admitting only them) and the rules
// between it and the cluster group the gateway pods run in. The Firewall composes these.
import { GATEWAY_METRICS, GATEWAY_POD_LABELS, GATEWAY_PORTS, TRITON_PORTS } from "../contracts";
import { ANYWHERE, cidrNames, cidrPeer, dnsEgress, namespacePeer, podsPeer, tcp, type NetworkNeeds, type PodSet, type SgRuleSpec } from "../network";
import { ENVOY_READY_PORT } from "./envoy-config";

/** The NLB's frontend security group, as the gateway's needs declare it (Firewall.securityGroupIds key). */
export const GATEWAY_LB_SECURITY_GROUP = "gatewayLb";

/** The gateway pods in `namespace`. */
export function gatewayPods(namespace: string): PodSet {
  return { name: "gateway", namespace, labels: { ...GATEWAY_POD_LABELS } };
}

export interface GatewayNetworkArgs {
  /** The gateway pods (gatewayPods). */
  readonly pods: PodSet;
  /** Client networks (the gateway's clientCidrs): its NLB and its pods admit them. */
  readonly clientCidrs: readonly string[];
  /** Namespaces whose pods may call the gateway (clientNamespaces). */
  readonly clientNamespaces: readonly string[];
  /** Pods that scrape the metrics listener (Prometheus). */
  readonly scrapedBy: PodSet;
  /** The pods the gateway routes to (Triton). */
  readonly upstream: PodSet;
}

/** Pure: the gateway's network needs. */
export function gatewayNetworkNeeds(a: GatewayNetworkArgs): NetworkNeeds {
  const { pods } = a;
  const serving = [tcp(GATEWAY_PORTS.http), tcp(GATEWAY_PORTS.grpc)];
  return {
    component: "gateway",
    connections: [
      {
        name: `${pods.name}-ingress`,
        pods,
        allowFrom: [
          // Without clients this admits nobody (and the Firewall renders no rule for it).
          { peers: [...a.clientCidrs.map(cidrPeer), ...a.clientNamespaces.map(namespacePeer)], ports: serving },
          { peers: [podsPeer(a.scrapedBy)], ports: [tcp(GATEWAY_METRICS.port)] },
          // /ready only (the listener 404s every other path): NLB health checks come from the
          // load balancer's own addresses, kubelet probes from the node.
          { peers: [ANYWHERE], ports: [tcp(ENVOY_READY_PORT)] },
        ],
      },
      {
        name: `${pods.name}-egress`,
        pods,
        // Envoy resolves the headless Services and talks to Triton; its static config needs no API server.
        allowTo: [dnsEgress(), { peers: [podsPeer(a.upstream)], ports: [tcp(TRITON_PORTS.http), tcp(TRITON_PORTS.grpc)] }],
      },
    ],
    ...(a.clientCidrs.length > 0 ? loadBalancerNeeds(a.clientCidrs) : {}),
  };
}

/** The NLB's frontend group: each client CIDR in, and out only to the gateway pods (IP targets) and their /ready. */
function loadBalancerNeeds(clientCidrs: readonly string[]): Pick<NetworkNeeds, "securityGroups" | "securityGroupRules"> {
  const lb = GATEWAY_LB_SECURITY_GROUP;
  const { http, grpc } = GATEWAY_PORTS;
  const names = cidrNames(clientCidrs);
  const rules: SgRuleSpec[] = [
    ...clientCidrs.map((cidr, i): SgRuleSpec => ({
      name: `gateway-lb-from-${names[i]}`,
      direction: "ingress",
      securityGroup: lb,
      fromPort: http,
      toPort: grpc,
      peer: { cidr },
      description: `Gateway HTTP/gRPC from client network ${cidr}`,
    })),
    {
      name: "gateway-lb-to-pods",
      direction: "egress",
      securityGroup: lb,
      fromPort: http,
      toPort: grpc,
      peer: { securityGroup: "cluster" },
      description: "NLB to gateway pods (IP targets)",
    },
    {
      name: "gateway-lb-health-to-pods",
      direction: "egress",
      securityGroup: lb,
      fromPort: ENVOY_READY_PORT,
      toPort: ENVOY_READY_PORT,
      peer: { securityGroup: "cluster" },
      description: "NLB health checks to the gateway's /ready listener",
    },
    {
      name: "cluster-gateway-from-lb",
      direction: "ingress",
      securityGroup: "cluster",
      fromPort: http,
      toPort: grpc,
      peer: { securityGroup: lb },
      description: "Gateway pods from their NLB",
    },
    {
      name: "cluster-gateway-health-from-lb",
      direction: "ingress",
      securityGroup: "cluster",
      fromPort: ENVOY_READY_PORT,
      toPort: ENVOY_READY_PORT,
      peer: { securityGroup: lb },
      description: "Gateway /ready from NLB health checks",
    },
  ];
  // Rules are separate resources, never inline: inline and standalone rules on one group fight
  // each other on every update.
  return { securityGroups: [{ ref: lb, name: "gateway-lb", description: "Triton gateway NLB: client CIDRs to 8000/8001 only" }], securityGroupRules: rules };
}
