// The Firewall's arguments: where cluster DNS runs, and the network needs the components
// declare (components/network.ts), checked before anything is created. The Firewall knows no
// component: every pod, port and group it opens comes from a declaration, and the rules here
// are the ones any declaration must keep (no world-open CIDR, no rule without ports, no
// empty pod selector, names that cannot collide, groups that exist).
import type * as pulumi from "@pulumi/pulumi";
import * as v from "valibot";
import { isWorldOpen, parseCidr } from "../../lib/cidr";
import { dnsLabel, doc, integer, list, mapping, oneOf, parseSettings, refined, section, str, type CheckContext, type DeepReadonly } from "../../lib/schema";
import { withLinks, type NetworkNeeds, type SgRef } from "../network";

const LABELS_RULE = "must be a mapping of label keys to values";
const labels = v.pipe(mapping(LABELS_RULE), v.record(str(), v.string(LABELS_RULE), LABELS_RULE));
/** A pod selector: at least one label, since an empty one selects every pod of the namespace. */
const selectorLabels = v.pipe(
  labels,
  v.check((l) => Object.keys(l).length > 0, "must select by at least one label (an empty selector selects every pod of the namespace)"),
);

const podSet = section({
  name: doc(dnsLabel, "Short name of the pods; declarations name their policies after it."),
  namespace: doc(dnsLabel, "Namespace of the pods."),
  labels: doc(selectorLabels, "Labels every selected pod carries."),
});

const CIDR_RULE = "must be a CIDR such as 10.0.0.0/16 or 2001:db8::/32";
/** A CIDR peer: never a /0 (a declaration says `anywhere` when it means it, so it is reviewed as such). */
const cidr = v.pipe(
  v.string(CIDR_RULE),
  v.check((s) => parseCidr(s) !== undefined, CIDR_RULE),
  v.check((s) => !isWorldOpen(s), "must not be a world-open range (/0): declare the networks, or the anywhere peer"),
);

const PEER_RULE = 'must be a peer: kind "pods", "namespace", "cidr", "clusterDns" or "anywhere"';
const peer = v.variant(
  "kind",
  [
    v.strictObject({ kind: v.literal("pods"), pods: podSet }),
    v.strictObject({ kind: v.literal("namespace"), namespace: dnsLabel }),
    v.strictObject({ kind: v.literal("cidr"), cidr }),
    v.strictObject({ kind: v.literal("clusterDns") }),
    v.strictObject({ kind: v.literal("anywhere") }),
  ],
  PEER_RULE,
);

const port = section({
  protocol: doc(oneOf(["TCP", "UDP"] as const), "Transport protocol."),
  port: doc(integer({ min: 1, max: 65535 }), "Port number on the pods of the rule's destination."),
});

const connection = section({
  peers: doc(
    v.pipe(
      list(peer),
      v.check((ps) => ps.length <= 1 || !ps.some((p) => p.kind === "anywhere"), "must list the anywhere peer alone (it already admits every peer)"),
    ),
    "Who (ingress) or what (egress); none admits nothing, and the connection is left out.",
  ),
  ports: doc(list(port, { min: 1, what: "port" }), "Ports of the connection; at least one (a rule without ports opens them all)."),
});

const podConnections = refined(
  section({
    name: doc(dnsLabel, "Name of the NetworkPolicy, unique in its namespace."),
    pods: doc(podSet, "The pods the policy selects."),
    allowFrom: doc(v.optional(list(connection)), "Ingress: who may reach the pods; everything else stays denied."),
    allowTo: doc(v.optional(list(connection)), "Egress: what the pods may reach; declaring it denies every other destination."),
  }),
  (c, ctx) => {
    if (c.allowFrom === undefined && c.allowTo === undefined) ctx.addIssue({ path: [], message: "must declare allowFrom or allowTo" });
  },
);

const SG_PEER_RULE = "must be { cidr } or { securityGroup }";
const sgRule = refined(
  section({
    name: doc(dnsLabel, "Resource name suffix of the rule."),
    direction: doc(oneOf(["ingress", "egress"] as const), "Which way the rule admits traffic."),
    securityGroup: doc(str(), "Symbolic group the rule belongs to."),
    fromPort: doc(integer({ min: 1, max: 65535 }), "First TCP port."),
    toPort: doc(integer({ min: 1, max: 65535 }), "Last TCP port."),
    peer: doc(v.union([v.strictObject({ cidr }), v.strictObject({ securityGroup: str() })], SG_PEER_RULE), "The other side: a CIDR or a symbolic group."),
    description: doc(str(), "What the rule is for (the AWS rule's description)."),
  }),
  (r, ctx) => {
    if (r.fromPort > r.toPort) ctx.addIssue({ path: ["toPort"], message: `must be >= fromPort (${r.fromPort})` });
  },
);

const sgNeed = section({
  ref: doc(str(), "How rules refer to the group."),
  name: doc(dnsLabel, "Resource name suffix of the group."),
  description: doc(str(), "The group's description."),
});

const networkNeeds = section({
  component: doc(dnsLabel, "The declaring component."),
  connections: doc(v.optional(list(podConnections)), "Its pods' NetworkPolicies, one per entry."),
  securityGroups: doc(v.optional(list(sgNeed)), "Security groups it needs created (in the cluster's VPC)."),
  securityGroupRules: doc(v.optional(list(sgRule)), "Security-group rules it needs between symbolic groups."),
});

/** The Firewall's settings. */
export const firewallSettings = section({
  namespace: doc(
    dnsLabel,
    "The namespace the firewall guards first (the serving namespace): it is closed by default-deny ingress even when no " +
      "declared pods run there, and its policies' resource names carry no namespace.",
  ),
  dns: doc(
    v.optional(
      section({
        namespace: doc(dnsLabel, "Namespace of the cluster DNS pods."),
        podLabels: doc(selectorLabels, "Labels of the cluster DNS pods."),
      }),
      // CoreDNS on EKS keeps kube-dns' labels and namespace.
      { namespace: "kube-system", podLabels: { "k8s-app": "kube-dns" } },
    ),
    "The cluster DNS pods, the clusterDns peer of the declarations (CoreDNS on EKS: kube-system, k8s-app=kube-dns).",
  ),
  needs: doc(list(networkNeeds), "The network needs of each component, in the order their policies and rules are created."),
});

/** Resource name suffix of a NetworkPolicy: its name, after its namespace unless that is the home namespace. */
export function policyResourceSuffix(home: string, namespace: string, name: string): string {
  return namespace === home ? name : `${namespace}-${name}`;
}

/** Namespaces the firewall closes: its home namespace, then each namespace of a declared pod set. */
export function guardedNamespaces(s: { namespace: string; needs: readonly { connections?: readonly { pods: { namespace: string } }[] }[] }): string[] {
  return [...new Set([s.namespace, ...s.needs.flatMap((n) => (n.connections ?? []).map((c) => c.pods.namespace))])];
}

/** The name of every namespace's default-deny policy. */
export const DEFAULT_DENY = "default-deny-ingress";
/** The home (serving) namespace's default-deny of egress: its pods reach only what their needs declare (policy firewall-default-deny). */
export const DEFAULT_DENY_EGRESS = "default-deny-egress";

type Settings = v.InferOutput<typeof firewallSettings>;

/** Names that would collide, and groups that do not exist: each reported at the declaration. */
function namesAndGroups(existing: readonly SgRef[]) {
  return (s: Settings, ctx: CheckContext): void => {
    const suffixes = new Map<string, string>();
    for (const ns of guardedNamespaces(s)) suffixes.set(policyResourceSuffix(s.namespace, ns, DEFAULT_DENY), `the default-deny of ${ns}`);
    suffixes.set(DEFAULT_DENY_EGRESS, `the default-deny egress of ${s.namespace}`);
    const groups = new Set<SgRef>(existing);
    const ruleNames = new Set<string>();
    s.needs.forEach((n, i) => {
      (n.connections ?? []).forEach((c, j) => {
        const suffix = policyResourceSuffix(s.namespace, c.pods.namespace, c.name);
        const taken = suffixes.get(suffix);
        if (taken) ctx.addIssue({ path: ["needs", i, "connections", j, "name"], message: `must not repeat a NetworkPolicy name (taken by ${taken})` });
        else suffixes.set(suffix, `${n.component}'s ${c.name}`);
      });
      (n.securityGroups ?? []).forEach((g, j) => {
        if (groups.has(g.ref)) ctx.addIssue({ path: ["needs", i, "securityGroups", j, "ref"], message: "must name a group that does not exist yet" });
        groups.add(g.ref);
      });
    });
    const known = () => [...groups].join(", ");
    s.needs.forEach((n, i) => {
      (n.securityGroupRules ?? []).forEach((r, j) => {
        const at = ["needs", i, "securityGroupRules", j];
        if (ruleNames.has(r.name)) ctx.addIssue({ path: [...at, "name"], message: "must not repeat a security-group rule name" });
        ruleNames.add(r.name);
        if (!groups.has(r.securityGroup)) ctx.addIssue({ path: [...at, "securityGroup"], message: `must name a known security group (${known()})` });
        if ("securityGroup" in r.peer && !groups.has(r.peer.securityGroup)) {
          ctx.addIssue({ path: [...at, "peer", "securityGroup"], message: `must name a known security group (${known()})` });
        }
      });
    });
  };
}

/** Plain settings as a caller may pass them: nothing is mutated, so readonly arrays are welcome. */

/** Arguments of the Firewall: its settings (see the schema for defaults) plus runtime references. */
export type FirewallArgs = DeepReadonly<Omit<v.InferInput<typeof firewallSettings>, "needs">> & {
  /** Every component's network needs (components/<c>/network.ts), in creation order. */
  readonly needs: readonly NetworkNeeds[];
  /** Standard labels of the stack. */
  readonly labels: Readonly<Record<string, string>>;
  /** VPC of the cluster: the security groups the needs declare are created in it. */
  readonly vpcId: pulumi.Input<string>;
  /** The existing security groups the needs' rules may name: gpuNodes (GPU nodes), cluster (EKS cluster group), … */
  readonly securityGroupIds: Readonly<Record<SgRef, pulumi.Input<string>>>;
};

export type ResolvedFirewallArgs = Omit<Settings, "needs"> & {
  readonly needs: readonly NetworkNeeds[];
  readonly labels: Readonly<Record<string, string>>;
  readonly vpcId: pulumi.Input<string>;
  readonly securityGroupIds: Readonly<Record<SgRef, pulumi.Input<string>>>;
};

/** Apply the defaults once and check every declaration, all problems reported together (SettingsError). */
export function resolveFirewallArgs(args: FirewallArgs, name = "firewall"): ResolvedFirewallArgs {
  const { labels, vpcId, securityGroupIds, ...settings } = args;
  const schema = refined(firewallSettings, namesAndGroups(Object.keys(securityGroupIds)));
  // Links are written out first (both sides of each), so the rules below check what is created.
  const s = parseSettings(schema, { ...settings, needs: withLinks(settings.needs) }, `invalid arguments of Firewall "${name}"`);
  // Assigning the schema's output to NetworkNeeds[] is what keeps the schema and the declaration types in step (tsc).
  const needs: readonly NetworkNeeds[] = s.needs;
  return { ...s, needs, labels, vpcId, securityGroupIds };
}
