// Pure builders of the Firewall: the declared network needs in, plain NetworkPolicy manifests
// and security-group rule specs (with symbolic groups) out, so the tests and the policy pack
// can prove "never world-open" without the Pulumi runtime. Nothing here names a component.
import type * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@pulumi/kubernetes";
import { parseCidr } from "../../lib/cidr";
import type { Connection, Peer, PodConnections, PodSet, SecurityGroupNeed, SgRef, SgRuleSpec } from "../network";
import { DEFAULT_DENY, DEFAULT_DENY_EGRESS, guardedNamespaces, policyResourceSuffix, type ResolvedFirewallArgs } from "./schema";

/** A NetworkPolicy manifest with plain metadata (what the builders return). */
export type NetworkPolicy = k8s.types.input.networking.v1.NetworkPolicy & {
  metadata: { name: string; namespace: string; labels: Record<string, string> };
};
type PolicyPeer = k8s.types.input.networking.v1.NetworkPolicyPeer;
type PolicyRule = { from?: PolicyPeer[]; to?: PolicyPeer[]; ports: { protocol: string; port: number }[] };

const namespaceSelector = (ns: string) => ({ matchLabels: { "kubernetes.io/metadata.name": ns } });
const podsSelector = (pods: Pick<PodSet, "labels">) => ({ matchLabels: { ...pods.labels } });

/** A peer as a NetworkPolicyPeer, seen from pods in `from`: pods of another namespace take both selectors (AND). */
function policyPeer(r: ResolvedFirewallArgs, peer: Exclude<Peer, { kind: "anywhere" }>, from: string): PolicyPeer {
  switch (peer.kind) {
    case "pods":
      return peer.pods.namespace === from
        ? { podSelector: podsSelector(peer.pods) }
        : { namespaceSelector: namespaceSelector(peer.pods.namespace), podSelector: podsSelector(peer.pods) };
    case "clusterDns":
      return { namespaceSelector: namespaceSelector(r.dns.namespace), podSelector: { matchLabels: { ...r.dns.podLabels } } };
    case "namespace":
      return { namespaceSelector: namespaceSelector(peer.namespace) };
    case "cidr":
      return { ipBlock: { cidr: peer.cidr } };
  }
}

/** One rule, or none for a connection without peers (an empty `from`/`to` would admit everyone). */
function policyRules(r: ResolvedFirewallArgs, c: PodConnections, connections: readonly Connection[], side: "from" | "to"): PolicyRule[] {
  return connections.flatMap((conn): PolicyRule[] => {
    if (conn.peers.length === 0) return [];
    const ports = conn.ports.map((p) => ({ protocol: p.protocol, port: p.port }));
    // `anywhere` (validated to stand alone): a rule without peers, i.e. any source or destination.
    if (conn.peers.some((p) => p.kind === "anywhere")) return [{ ports }];
    const peers = conn.peers.map((p) => policyPeer(r, p as Exclude<Peer, { kind: "anywhere" }>, c.pods.namespace));
    return [{ [side]: peers, ports }];
  });
}

function policy(r: ResolvedFirewallArgs, namespace: string, name: string, spec: NetworkPolicy["spec"]): NetworkPolicy {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace, labels: { ...r.labels, "app.kubernetes.io/component": "firewall" } },
    spec,
  };
}

/** Pure: every NetworkPolicy, in the order they are created. */
export function networkPolicies(r: ResolvedFirewallArgs): NetworkPolicy[] {
  return [
    // Everything in the namespace is closed unless a declared need opens it: a new pod (or
    // a new port) is unreachable until its component declares who may reach it.
    ...guardedNamespaces(r).map((ns) => policy(r, ns, DEFAULT_DENY, { podSelector: {}, policyTypes: ["Ingress"] })),
    ...r.needs.flatMap((n) =>
      (n.connections ?? []).map((c) =>
        policy(r, c.pods.namespace, c.name, {
          podSelector: podsSelector(c.pods),
          policyTypes: [...(c.allowFrom ? ["Ingress"] : []), ...(c.allowTo ? ["Egress"] : [])],
          ...(c.allowFrom ? { ingress: policyRules(r, c, c.allowFrom, "from") } : {}),
          ...(c.allowTo ? { egress: policyRules(r, c, c.allowTo, "to") } : {}),
        }),
      ),
    ),
    // Egress too, in the serving namespace: a pod nobody declared reaches nothing (every pod there declares its egress).
    policy(r, r.namespace, DEFAULT_DENY_EGRESS, { podSelector: {}, policyTypes: ["Egress"] }),
  ];
}

/** Resource name of a NetworkPolicy under the Firewall `name`: `<name>-[<namespace>-]<policy>`, no namespace for the home one. */
export function networkPolicyResourceName(name: string, r: Pick<ResolvedFirewallArgs, "namespace">, np: NetworkPolicy): string {
  return `${name}-${policyResourceSuffix(r.namespace, np.metadata.namespace, np.metadata.name)}`;
}

/** Pure: the security groups the needs declare, to be created. */
export function securityGroupsToCreate(r: Pick<ResolvedFirewallArgs, "needs">): SecurityGroupNeed[] {
  return r.needs.flatMap((n) => [...(n.securityGroups ?? [])]);
}

/** Pure: every security-group rule the firewall creates. */
export function securityGroupRules(r: Pick<ResolvedFirewallArgs, "needs">): SgRuleSpec[] {
  return r.needs.flatMap((n) => [...(n.securityGroupRules ?? [])]);
}

/** The aws.vpc.SecurityGroup{Ingress,Egress}Rule arguments of a spec, given the real group ids. */
export function securityGroupRuleArgs(spec: SgRuleSpec, ids: Readonly<Record<SgRef, pulumi.Input<string> | undefined>>) {
  const peer =
    "cidr" in spec.peer
      ? parseCidr(spec.peer.cidr)!.family === 6
        ? { cidrIpv6: spec.peer.cidr }
        : { cidrIpv4: spec.peer.cidr }
      : { referencedSecurityGroupId: ids[spec.peer.securityGroup] };
  return {
    securityGroupId: ids[spec.securityGroup]!,
    ipProtocol: "tcp",
    fromPort: spec.fromPort,
    toPort: spec.toPort,
    description: spec.description,
    ...peer,
  };
}
