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

/**
 * A connection between two pod sets that the firewall guards, declared once (cdk8s-plus'
 * `PodConnections.allowTo`): it writes both sides. Ingress on `to`, in its own NetworkPolicy
 * `<to>-<name>-from-<from>`; egress on `from`, added to the caller's `<from>-egress` policy
 * (created with only this egress when the caller declares none). The side that is added to
 * need not be edited: a new component declares who calls it, and the caller's egress follows.
 */
export interface PodLink {
  /** What the connection is for ("serving"): the ingress policy is named after it. */
  readonly name: string;
  /** The calling pods. */
  readonly from: PodSet;
  /** The called pods. */
  readonly to: PodSet;
  /** At least one. */
  readonly ports: readonly PortSpec[];
}

/** `from` may open connections to `to` on `ports`, and `to` accepts them: both sides from one declaration. */
export const allowTo = (name: string, from: PodSet, to: PodSet, ports: readonly PortSpec[]): PodLink => ({ name, from, to, ports });

/** The NetworkPolicy name of a pod set's egress (where links add the caller's side). */
export const egressPolicyName = (pods: Pick<PodSet, "name">) => `${pods.name}-egress`;

/** The PodConnections a need's links and connections make, before their callers' egress is added (see withLinks). */
function linkIngress(l: PodLink): PodConnections {
  return { name: `${l.to.name}-${l.name}-from-${l.from.name}`, pods: l.to, allowFrom: [{ peers: [podsPeer(l.from)], ports: l.ports }] };
}

/**
 * Every need with its links written out as plain connections and security-group rules: the called side's ingress policy
 * first among the need's own connections, the caller's egress appended to its `<from>-egress`
 * policy wherever that is declared (or a new one at the end of the declaring need).
 */
export function withLinks(needs: readonly NetworkNeeds[]): NetworkNeeds[] {
  const out = needs.map((n): NetworkNeeds => {
    const { links, securityGroupLinks, ...rest } = n;
    const sg = (securityGroupLinks ?? []).map(sgLinkRules);
    return {
      ...rest,
      ...(links?.length ? { connections: [...links.map(linkIngress), ...(n.connections ?? [])] } : {}),
      ...(sg.length ? { securityGroupRules: [...(n.securityGroupRules ?? []), ...sg.map((r) => r.egress), ...sg.map((r) => r.ingress)] } : {}),
    };
  });
  needs.forEach((n, i) => {
    for (const l of n.links ?? []) {
      const egress = { peers: [podsPeer(l.to)], ports: l.ports };
      const name = egressPolicyName(l.from);
      const at = out.findIndex((o) => (o.connections ?? []).some((c) => c.name === name && c.pods.namespace === l.from.namespace));
      if (at >= 0) {
        out[at] = {
          ...out[at],
          connections: out[at].connections!.map((c) =>
            c.name === name && c.pods.namespace === l.from.namespace ? { ...c, allowTo: [...(c.allowTo ?? []), egress] } : c,
          ),
        };
      } else {
        out[i] = { ...out[i], connections: [...(out[i].connections ?? []), { name, pods: l.from, allowTo: [egress] }] };
      }
    }
  });
  return out;
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

/**
 * Traffic between two security groups, declared once: an egress rule on `from` and an ingress
 * rule on `to` (AWS checks both groups: a group without the egress rule drops what the other admits).
 */
export interface SgLink {
  readonly from: SgRef;
  readonly to: SgRef;
  readonly fromPort: number;
  readonly toPort: number;
  /** The egress rule on `from`: its resource name suffix and description. */
  readonly egress: { readonly name: string; readonly description: string };
  /** The ingress rule on `to`. */
  readonly ingress: { readonly name: string; readonly description: string };
}

/** The two rules of an SgLink: egress on `from`, ingress on `to`. */
export function sgLinkRules(l: SgLink): { egress: SgRuleSpec; ingress: SgRuleSpec } {
  const ports = { fromPort: l.fromPort, toPort: l.toPort };
  return {
    egress: { ...l.egress, direction: "egress", securityGroup: l.from, ...ports, peer: { securityGroup: l.to } },
    ingress: { ...l.ingress, direction: "ingress", securityGroup: l.to, ...ports, peer: { securityGroup: l.from } },
  };
}

/** Everything one component needs from the network. */
export interface NetworkNeeds {
  /** Which component declares these (named in error messages). */
  readonly component: string;
  /** Connections from another guarded pod set to these pods (or from these to another): both sides written from each. */
  readonly links?: readonly PodLink[];
  readonly connections?: readonly PodConnections[];
  readonly securityGroups?: readonly SecurityGroupNeed[];
  readonly securityGroupRules?: readonly SgRuleSpec[];
  /** Traffic between two groups: both rules from each (after securityGroupRules: every link's egress, then every link's ingress). */
  readonly securityGroupLinks?: readonly SgLink[];
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
