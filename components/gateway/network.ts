// What the gateway pods need from the network: the serving listeners (8000/8001) reached only
// by the configured clients, the metrics listener only by Prometheus, the /ready listener by
// NLB health checks and the kubelet; egress to DNS and the Triton pods only. On AWS, with
// client CIDRs: the NLB's own frontend security group (admitting only them) and the rules
// between it and the cluster group the gateway pods run in. The Firewall composes these.
import { GATEWAY_METRICS, GATEWAY_POD_LABELS, GATEWAY_PORTS } from "../contracts";
import {
  ANYWHERE,
  cidrNames,
  cidrPeer,
  dnsEgress,
  egressPolicyName,
  namespacePeer,
  podsPeer,
  tcp,
  type NetworkNeeds,
  type PodSet,
  type SgLink,
  type SgRuleSpec,
} from "../network";
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
        name: egressPolicyName(pods),
        pods,
        // Envoy resolves the headless Services; its static config needs no API server. What it
        // routes to (Triton) is added here by the callee's link (components/network.ts allowTo).
        allowTo: [dnsEgress()],
      },
    ],
    ...(a.clientCidrs.length > 0 ? loadBalancerNeeds(a.clientCidrs) : {}),
  };
}

/** The NLB's frontend group: each client CIDR in, and out only to the gateway pods (IP targets) and their /ready. */
function loadBalancerNeeds(clientCidrs: readonly string[]): Pick<NetworkNeeds, "securityGroups" | "securityGroupRules" | "securityGroupLinks"> {
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
  ];
  // The NLB to the pods' cluster group, each connection once: egress on the NLB's group, ingress on the cluster's.
  const links: SgLink[] = [
    {
      from: lb,
      to: "cluster",
      fromPort: http,
      toPort: grpc,
      egress: { name: "gateway-lb-to-pods", description: "NLB to gateway pods (IP targets)" },
      ingress: { name: "cluster-gateway-from-lb", description: "Gateway pods from their NLB" },
    },
    {
      from: lb,
      to: "cluster",
      fromPort: ENVOY_READY_PORT,
      toPort: ENVOY_READY_PORT,
      egress: { name: "gateway-lb-health-to-pods", description: "NLB health checks to the gateway's /ready listener" },
      ingress: { name: "cluster-gateway-health-from-lb", description: "Gateway /ready from NLB health checks" },
    },
  ];
  // Rules are separate resources, never inline: inline and standalone rules on one group fight
  // each other on every update.
  return {
    securityGroups: [{ ref: lb, name: "gateway-lb", description: "Triton gateway NLB: client CIDRs to 8000/8001 only" }],
    securityGroupRules: rules,
    securityGroupLinks: links,
  };
}
