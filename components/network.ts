// Network needs: what a component's pods must reach and be reached by, declared by the
// component itself (as cdk8s-plus' PodConnections.allowFrom/allowTo), and the security-group
// rules it needs between symbolic groups. Pure data: a component's folder has a function that
// returns its NetworkNeeds, index.ts hands every component's needs to the Firewall, and the
// Firewall composes them into NetworkPolicies and security-group rules without knowing any
// component. A pod that nobody declares stays closed by the firewall's default-deny ingress.

import { createHash } from "node:crypto";

// ---- Pods and peers ---------------------------------------------------------------------
/** Pods of one namespace, selected by labels (all of them: a matchLabels selector). */
export interface PodSet {
  /** Short name of the pods ("triton", "gateway"): what declarations name their policies after. */
  readonly name: string;
  readonly namespace: string;
  /** Labels every selected pod carries; at least one (an empty selector would select every pod). */
  readonly labels: Readonly<Record<string, string>>;
}

/** The other side of a connection. */
export type Peer =
  /** Pods of a PodSet (in another namespace too). */
  | { readonly kind: "pods"; readonly pods: PodSet }
  /** Every pod of a namespace. */
  | { readonly kind: "namespace"; readonly namespace: string }
  /** An address range outside the cluster (never a /0: say `anywhere` for that). */
  | { readonly kind: "cidr"; readonly cidr: string }
  /** The cluster DNS pods (the Firewall knows where they run). */
  | { readonly kind: "clusterDns" }
  /** Any source or destination; only alone in its connection. */
  | { readonly kind: "anywhere" };

export const podsPeer = (pods: PodSet): Peer => ({ kind: "pods", pods });
export const namespacePeer = (namespace: string): Peer => ({ kind: "namespace", namespace });
export const cidrPeer = (cidr: string): Peer => ({ kind: "cidr", cidr });
export const CLUSTER_DNS: Peer = { kind: "clusterDns" };
export const ANYWHERE: Peer = { kind: "anywhere" };

export interface PortSpec {
  readonly protocol: "TCP" | "UDP";
  readonly port: number;
}
export const tcp = (port: number): PortSpec => ({ protocol: "TCP", port });
export const udp = (port: number): PortSpec => ({ protocol: "UDP", port });

/**
 * Some peers on some ports: one NetworkPolicy rule. A connection without peers admits
 * nothing and is left out (in a NetworkPolicy an empty `from` would admit everyone).
 */
export interface Connection {
  readonly peers: readonly Peer[];
  /** At least one: a rule without ports would open every port. */
  readonly ports: readonly PortSpec[];
}

/** Cluster DNS over UDP and TCP (large answers fall back to TCP). */
export const DNS_PORTS: readonly PortSpec[] = [udp(53), tcp(53)];
/** Egress to the cluster DNS: what every pod resolving a Service name needs. */
export const dnsEgress = (): Connection => ({ peers: [CLUSTER_DNS], ports: DNS_PORTS });

/** The connections of one pod set: one NetworkPolicy named `name` in the pods' namespace. */
export interface PodConnections {
  /** The NetworkPolicy's name, unique in its namespace ("triton-serving-from-gateway"). */
  readonly name: string;
  readonly pods: PodSet;
  /** Ingress rules: who may reach these pods, on which ports (policyTypes gets Ingress). */
  readonly allowFrom?: readonly Connection[];
  /** Egress rules: what these pods may reach (policyTypes gets Egress: anything else is denied). */
  readonly allowTo?: readonly Connection[];
}

// ---- Security groups --------------------------------------------------------------------
/**
 * A symbolic security group: "gpuNodes" (the GPU nodes' group), "cluster" (the EKS cluster
 * group of the general nodes), or one a component declares for the Firewall to create.
 */
export type SgRef = string;

/** A security group a component needs created (the Firewall creates it, in the cluster's VPC). */
export interface SecurityGroupNeed {
  /** How rules refer to it ("gatewayLb"). */
  readonly ref: SgRef;
  /** Resource name suffix ("gateway-lb"). */
  readonly name: string;
  readonly description: string;
}

/** One security-group rule (TCP), as data with symbolic groups. */
export interface SgRuleSpec {
  /** Stable resource name suffix. */
  readonly name: string;
  readonly direction: "ingress" | "egress";
  /** The group the rule belongs to. */
  readonly securityGroup: SgRef;
  readonly fromPort: number;
  readonly toPort: number;
  /** The other side: a CIDR (never a /0) or another group. */
  readonly peer: { readonly cidr: string } | { readonly securityGroup: SgRef };
  readonly description: string;
}

/** Everything one component needs from the network. */
export interface NetworkNeeds {
  /** Which component declares these (named in error messages). */
  readonly component: string;
  readonly connections?: readonly PodConnections[];
  readonly securityGroups?: readonly SecurityGroupNeed[];
  readonly securityGroupRules?: readonly SgRuleSpec[];
}

/** A CIDR as a resource-name fragment: 10.10.0.0/16 → 10-10-0-0-16. */
const cidrSlug = (cidr: string) => cidr.replace(/[^0-9a-zA-Z]+/g, "-").replace(/-+$/, "");

/**
 * A resource-name part for each CIDR of a list: its slug, unless two CIDRs of the list share
 * one (`0.0.0.0/1` and `0::/1` both read `0-0-0-0-1`), in which case each of those also gets
 * a hash of the CIDR, so the names stay distinct (two resources with one name fail the
 * deployment) and the usual, distinct ones keep the names they have always had.
 */
export function cidrNames(cidrs: readonly string[]): string[] {
  const slugs = cidrs.map(cidrSlug);
  const count = new Map<string, number>();
  for (const s of slugs) count.set(s, (count.get(s) ?? 0) + 1);
  return slugs.map((s, i) => (count.get(s)! > 1 ? `${s}-${createHash("sha256").update(cidrs[i]).digest("hex").slice(0, 8)}` : s));
}
