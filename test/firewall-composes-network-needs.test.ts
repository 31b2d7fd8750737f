// The firewall composes what components declare and knows none of them: a component added
// later (a cache) gets exactly the policy and rules it declares, without a firewall edit; a
// pod nobody declares stays closed by default-deny; a declaration that would open too much
// (a /0, no ports, an empty selector, an empty peer list) is refused or admits nothing.
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { recorded, ROOT, ruleViolations } from "./helpers";
import type { RecordedResource } from "../tools/planner";
import { PROMETHEUS_PODS } from "../components/contracts";
import {
  networkPolicies,
  networkPolicyResourceName,
  resolveFirewallArgs,
  securityGroupRuleArgs,
  securityGroupRules,
  securityGroupsToCreate,
  type FirewallArgs,
  type NetworkPolicy,
} from "../components/firewall";
import { gatewayNetworkNeeds, gatewayPods } from "../components/gateway/network";
import { tritonNetworkNeeds, tritonPods } from "../components/triton/network";
import { allowTo, ANYWHERE, cidrPeer, dnsEgress, namespacePeer, podsPeer, tcp, withLinks, type NetworkNeeds, type PodSet } from "../components/network";
import { NETWORK_POLICY as NP, SECURITY_GROUP_INGRESS_RULE as SG_RULE } from "../policies/rules/types";

const triton = tritonPods("triton");
const gateway = gatewayPods("triton");
const stackNeeds: NetworkNeeds[] = [
  tritonNetworkNeeds({ pods: triton, servedBy: gateway, scrapedBy: PROMETHEUS_PODS, modelRepositoryEgressPort: 443 }),
  gatewayNetworkNeeds({ pods: gateway, clientCidrs: ["10.10.0.0/16"], clientNamespaces: ["ml-apps"], scrapedBy: PROMETHEUS_PODS }),
];

/** A component the firewall has never heard of: a response cache the gateway calls. */
function cacheNeeds(cache: PodSet): NetworkNeeds {
  return {
    component: "cache",
    connections: [
      {
        name: "cache-from-gateway",
        pods: cache,
        allowFrom: [
          { peers: [podsPeer(gateway)], ports: [tcp(6379)] },
          { peers: [podsPeer(PROMETHEUS_PODS)], ports: [tcp(9121)] },
        ],
      },
      { name: "cache-egress", pods: cache, allowTo: [dnsEgress()] },
    ],
    securityGroupRules: [
      {
        name: "cluster-cache-from-cluster",
        direction: "ingress",
        securityGroup: "cluster",
        fromPort: 6379,
        toPort: 6379,
        peer: { securityGroup: "cluster" },
        description: "Cache from the gateway pods",
      },
    ],
  };
}
const cacheInServingNs: PodSet = { name: "cache", namespace: "triton", labels: { "app.kubernetes.io/name": "cache" } };
const cacheInOwnNs: PodSet = { name: "cache", namespace: "cache", labels: { "app.kubernetes.io/name": "cache" } };

function args(needs: readonly NetworkNeeds[]): FirewallArgs {
  return { namespace: "triton", labels: {}, needs, vpcId: "vpc-1", securityGroupIds: { gpuNodes: "sg-gpu", cluster: "sg-cluster" } };
}
const compose = (needs: readonly NetworkNeeds[]) => networkPolicies(resolveFirewallArgs(args(needs))) as (NetworkPolicy & { spec: any })[];
const names = (ps: NetworkPolicy[]) => ps.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
function problems(needs: readonly NetworkNeeds[]): string[] {
  try {
    resolveFirewallArgs(args(needs));
    return [];
  } catch (e: any) {
    if (e.name === "SettingsError") return e.problems;
    throw e;
  }
}

/** Does a policy select a pod with these labels in this namespace? */
const selects = (p: NetworkPolicy & { spec: any }, ns: string, labels: Record<string, string>) =>
  p.metadata.namespace === ns && Object.entries(p.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

function asResources(needs: readonly NetworkNeeds[]): RecordedResource[] {
  const r = resolveFirewallArgs(args(needs));
  const res = (type: string, name: string, props: Record<string, any>): RecordedResource => recorded(type, name, props);

  const ids = { gpuNodes: "sg-gpu", cluster: "sg-cluster", gatewayLb: "sg-lb" };
  return [
    ...networkPolicies(r).map((np) => res(NP, networkPolicyResourceName("firewall", r, np), np)),
    ...securityGroupRules(r)
      .filter((s) => s.direction === "ingress")
      .map((s) => res(SG_RULE, `firewall-${s.name}`, securityGroupRuleArgs(s, ids))),
  ];
}

describe("the firewall composes declared network needs", () => {
  it("the stack's needs compose into its seven policies, default-deny ingress first, default-deny egress last", () => {
    assert.deepEqual(names(compose(stackNeeds)), [
      "triton/default-deny-ingress",
      "triton/triton-serving-from-gateway",
      "triton/triton-metrics-from-prometheus",
      "triton/triton-egress",
      "triton/gateway-ingress",
      "triton/gateway-egress",
      "triton/default-deny-egress",
    ]);
  });

  it("a component added later gets the policy it declares, the others unchanged, without a firewall edit", () => {
    const before = compose(stackNeeds);
    const after = compose([...stackNeeds, cacheNeeds(cacheInServingNs)]);
    assert.deepEqual(after.slice(0, before.length - 1), before.slice(0, -1));
    assert.deepEqual(after.slice(-1), before.slice(-1), "default-deny egress stays last");
    const added = after.slice(before.length - 1, -1);
    assert.deepEqual(names(added), ["triton/cache-from-gateway", "triton/cache-egress"]);
    assert.deepEqual(added[0].spec, {
      podSelector: { matchLabels: { "app.kubernetes.io/name": "cache" } },
      policyTypes: ["Ingress"],
      ingress: [
        { from: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "triton-gateway" } } }], ports: [{ protocol: "TCP", port: 6379 }] },
        {
          from: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
              podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
            },
          ],
          ports: [{ protocol: "TCP", port: 9121 }],
        },
      ],
    });
    assert.deepEqual(added[1].spec.policyTypes, ["Egress"]);
    const r = resolveFirewallArgs(args([...stackNeeds, cacheNeeds(cacheInServingNs)]));
    assert.deepEqual(
      securityGroupRules(r)
        .map((s) => s.name)
        .slice(-1),
      ["cluster-cache-from-cluster"],
    );
  });

  it("a pod nobody declares is selected by default-deny only: nothing may reach it", () => {
    const undeclared = { "app.kubernetes.io/name": "cache" };
    const selecting = compose(stackNeeds).filter((p) => selects(p, "triton", undeclared));
    assert.deepEqual(names(selecting), ["triton/default-deny-ingress", "triton/default-deny-egress"]);
    assert.equal(selecting[0].spec.ingress, undefined, "default-deny has no ingress rule");
    assert.equal(selecting[1].spec.egress, undefined, "default-deny egress has no egress rule");
    // Once declared, a policy selects it.
    assert.ok(compose([...stackNeeds, cacheNeeds(cacheInServingNs)]).some((p) => p.metadata.name === "cache-from-gateway" && selects(p, "triton", undeclared)));
  });

  it("a component in another namespace closes that namespace too; the serving namespace's resource names are unchanged", () => {
    const r = resolveFirewallArgs(args([...stackNeeds, cacheNeeds(cacheInOwnNs)]));
    const ps = networkPolicies(r);
    assert.deepEqual(names(ps).slice(0, 2), ["triton/default-deny-ingress", "cache/default-deny-ingress"]);
    const resourceNames = ps.map((np) => networkPolicyResourceName("firewall", r, np));
    assert.deepEqual(resourceNames, [
      "firewall-default-deny-ingress",
      "firewall-cache-default-deny-ingress",
      "firewall-triton-serving-from-gateway",
      "firewall-triton-metrics-from-prometheus",
      "firewall-triton-egress",
      "firewall-gateway-ingress",
      "firewall-gateway-egress",
      "firewall-cache-cache-from-gateway",
      "firewall-cache-cache-egress",
      "firewall-default-deny-egress",
    ]);
    assert.equal(new Set(resourceNames).size, resourceNames.length);
    // The gateway in "triton" is named by both selectors from "cache" (AND, not either).
    const from = (ps.find((p) => p.metadata.name === "cache-from-gateway")!.spec as any).ingress as any[];
    assert.deepEqual(from[0].from, [
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "triton" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "triton-gateway" } },
      },
    ]);
  });

  it("the home namespace is closed even when nothing is declared", () => {
    assert.deepEqual(
      compose([]).map((p) => [p.metadata.namespace, p.metadata.name, p.spec]),
      [
        ["triton", "default-deny-ingress", { podSelector: {}, policyTypes: ["Ingress"] }],
        ["triton", "default-deny-egress", { podSelector: {}, policyTypes: ["Egress"] }],
      ],
    );
  });

  it("a connection without peers admits nothing: no rule at all, never an empty `from`", () => {
    const ps = compose([{ component: "c", connections: [{ name: "c-in", pods: cacheInServingNs, allowFrom: [{ peers: [], ports: [tcp(1)] }] }] }]);
    assert.deepEqual(ps[1].spec.ingress, []);
    assert.deepEqual(ps[1].spec.policyTypes, ["Ingress"]);
  });

  it("peers render as Kubernetes reads them: namespace, CIDR, cluster DNS (the firewall's setting), anywhere", () => {
    const ps = compose([
      {
        component: "c",
        connections: [
          {
            name: "c-in",
            pods: cacheInServingNs,
            allowFrom: [
              { peers: [namespacePeer("ml-apps"), cidrPeer("fd00::/48")], ports: [tcp(1)] },
              { peers: [ANYWHERE], ports: [tcp(2)] },
            ],
          },
          { name: "c-out", pods: cacheInServingNs, allowTo: [dnsEgress(), { peers: [ANYWHERE], ports: [tcp(443)] }] },
        ],
      },
    ]);
    assert.deepEqual(ps[1].spec.ingress, [
      {
        from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ml-apps" } } }, { ipBlock: { cidr: "fd00::/48" } }],
        ports: [{ protocol: "TCP", port: 1 }],
      },
      { ports: [{ protocol: "TCP", port: 2 }] },
    ]);
    assert.deepEqual(ps[2].spec.egress, [
      {
        to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
        ports: [
          { protocol: "UDP", port: 53 },
          { protocol: "TCP", port: 53 },
        ],
      },
      { ports: [{ protocol: "TCP", port: 443 }] },
    ]);
    const elsewhere = networkPolicies(resolveFirewallArgs({ ...args(stackNeeds), dns: { namespace: "dns", podLabels: { app: "coredns" } } }));
    assert.deepEqual((elsewhere.find((p) => p.metadata.name === "triton-egress")!.spec as any).egress[0].to, [
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "dns" } }, podSelector: { matchLabels: { app: "coredns" } } },
    ]);
  });

  it("security groups a component declares are created for it and its rules may name them", () => {
    const r = resolveFirewallArgs(args(stackNeeds));
    assert.deepEqual(securityGroupsToCreate(r), [{ ref: "gatewayLb", name: "gateway-lb", description: "Triton gateway NLB: client CIDRs to 8000/8001 only" }]);
    // Without client CIDRs the gateway declares no load balancer, hence no group and no rule naming it.
    const noClients = resolveFirewallArgs(
      args([stackNeeds[0], gatewayNetworkNeeds({ pods: gateway, clientCidrs: [], clientNamespaces: [], scrapedBy: PROMETHEUS_PODS })]),
    );
    assert.deepEqual(securityGroupsToCreate(noClients), []);
    assert.ok(
      !securityGroupRules(noClients).some((s) => s.securityGroup === "gatewayLb" || ("securityGroup" in s.peer && s.peer.securityGroup === "gatewayLb")),
    );
  });

  it("refuses declarations that would open too much or collide, every problem at once", () => {
    const bad: NetworkNeeds = {
      component: "cache",
      connections: [
        { name: "triton-egress", pods: cacheInServingNs, allowTo: [{ peers: [ANYWHERE, cidrPeer("10.0.0.0/8")], ports: [tcp(1)] }] },
        { name: "cache-open", pods: { ...cacheInServingNs, labels: {} }, allowFrom: [{ peers: [cidrPeer("0.0.0.0/0")], ports: [] }] },
        { name: "cache-nothing", pods: cacheInServingNs },
      ],
      securityGroupRules: [
        {
          name: "gpu-triton-serving-from-cluster",
          direction: "ingress",
          securityGroup: "redis",
          fromPort: 7000,
          toPort: 6379,
          peer: { securityGroup: "nowhere" },
          description: "x",
        },
      ],
    };
    const ps = problems([...stackNeeds, bad]);
    const at = "needs[2]";
    for (const expected of [
      `${at}.connections[0].name must not repeat a NetworkPolicy name (taken by triton's triton-egress), got "triton-egress"`,
      `${at}.connections[0].allowTo[0].peers must list the anywhere peer alone (it already admits every peer)`,
      `${at}.connections[1].pods.labels must select by at least one label (an empty selector selects every pod of the namespace), got {}`,
      `${at}.connections[1].allowFrom[0].peers[0].cidr must not be a world-open range (/0): declare the networks, or the anywhere peer, got "0.0.0.0/0"`,
      `${at}.connections[1].allowFrom[0].ports must be a list of at least 1 port(s), got []`,
      `${at}.connections[2] must declare allowFrom or allowTo`,
      `${at}.securityGroupRules[0].toPort must be >= fromPort (7000), got 6379`,
    ]) {
      assert.ok(
        ps.some((p) => p.startsWith(expected)),
        `missing: ${expected}\n${ps.join("\n")}`,
      );
    }
    // Name and group checks need well-formed declarations: shown on a declaration that has no other fault.
    const refs = problems([
      ...stackNeeds,
      {
        component: "cache",
        securityGroupRules: [
          { ...cacheNeeds(cacheInServingNs).securityGroupRules![0], name: "gateway-lb-to-pods", securityGroup: "redis", peer: { securityGroup: "nowhere" } },
        ],
      },
    ]);
    assert.deepEqual(refs, [
      'needs[2].securityGroupRules[0].name must not repeat a security-group rule name, got "gateway-lb-to-pods"',
      'needs[2].securityGroupRules[0].securityGroup must name a known security group (gpuNodes, cluster, gatewayLb), got "redis"',
      'needs[2].securityGroupRules[0].peer.securityGroup must name a known security group (gpuNodes, cluster, gatewayLb), got "nowhere"',
    ]);
  });

  it("a connection declared once writes both sides: the callee's ingress and the caller's egress", () => {
    // The cache declares that the gateway calls it; the gateway's declaration is not edited.
    const cache: NetworkNeeds = { component: "cache", links: [allowTo("serving", gateway, cacheInServingNs, [tcp(6379)])] };
    const ps = compose([...stackNeeds, cache]);
    const ingress = ps.find((p) => p.metadata.name === "cache-serving-from-gateway")!;
    assert.deepEqual(ingress.spec.podSelector, { matchLabels: cacheInServingNs.labels });
    assert.deepEqual(ingress.spec.ingress, [{ from: [{ podSelector: { matchLabels: gateway.labels } }], ports: [{ protocol: "TCP", port: 6379 }] }]);
    const egress = ps.find((p) => p.metadata.name === "gateway-egress")!;
    // DNS as the gateway declared it, then Triton (Triton's link), then the cache (the cache's link).
    assert.deepEqual(
      egress.spec.egress.slice(1).map((r: any) => [r.to[0].podSelector.matchLabels, r.ports.map((x: any) => x.port)]),
      [
        [triton.labels, [8000, 8001]],
        [cacheInServingNs.labels, [6379]],
      ],
    );
    // Without the link, the gateway reaches neither: the default-deny egress of the namespace holds.
    const without = compose([{ ...stackNeeds[0], links: [] }, stackNeeds[1]]);
    assert.deepEqual(without.find((p) => p.metadata.name === "gateway-egress")!.spec.egress.length, 1);
    assert.ok(!without.some((p) => p.metadata.name === "triton-serving-from-gateway"));
  });

  it("a caller that declares no egress policy gets one holding only the link; a pod set in another namespace keeps its own", () => {
    const worker: PodSet = { name: "worker", namespace: "batch", labels: { app: "worker" } };
    const ps = compose([...stackNeeds, { component: "cache", links: [allowTo("serving", worker, cacheInOwnNs, [tcp(6379)])] }]);
    const egress = ps.find((p) => p.metadata.namespace === "batch" && p.metadata.name === "worker-egress")!;
    assert.deepEqual(egress.spec.policyTypes, ["Egress"]);
    assert.deepEqual(egress.spec.egress, [
      {
        to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "cache" } }, podSelector: { matchLabels: cacheInOwnNs.labels } }],
        ports: [{ protocol: "TCP", port: 6379 }],
      },
    ]);
    const ingress = ps.find((p) => p.metadata.namespace === "cache" && p.metadata.name === "cache-serving-from-worker")!;
    assert.deepEqual(ingress.spec.ingress[0].from, [
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "batch" } }, podSelector: { matchLabels: worker.labels } },
    ]);
  });

  it("a security-group link writes the egress on one group and the ingress on the other", () => {
    const [n] = withLinks([
      {
        component: "cache",
        securityGroupLinks: [
          {
            from: "cluster",
            to: "gpuNodes",
            fromPort: 6379,
            toPort: 6379,
            egress: { name: "a", description: "out" },
            ingress: { name: "b", description: "in" },
          },
        ],
      },
    ]);
    assert.deepEqual(n.securityGroupRules, [
      { name: "a", description: "out", direction: "egress", securityGroup: "cluster", fromPort: 6379, toPort: 6379, peer: { securityGroup: "gpuNodes" } },
      { name: "b", description: "in", direction: "ingress", securityGroup: "gpuNodes", fromPort: 6379, toPort: 6379, peer: { securityGroup: "cluster" } },
    ]);
    // The gateway's NLB: its group's egress to the pods and the pods' ingress from it come from one declaration each.
    const lb = securityGroupRules(resolveFirewallArgs(args(stackNeeds)));
    for (const [out, into] of [
      ["gateway-lb-to-pods", "cluster-gateway-from-lb"],
      ["gateway-lb-health-to-pods", "cluster-gateway-health-from-lb"],
    ]) {
      const e = lb.find((r) => r.name === out)!;
      const i = lb.find((r) => r.name === into)!;
      assert.deepEqual([e.direction, e.securityGroup, e.peer], ["egress", "gatewayLb", { securityGroup: "cluster" }]);
      assert.deepEqual(
        [i.direction, i.securityGroup, i.peer, i.fromPort, i.toPort],
        ["ingress", "cluster", { securityGroup: "gatewayLb" }, e.fromPort, e.toPort],
      );
    }
  });

  it("the firewall policies hold over the composed output, with a component added", async () => {
    const resources = asResources([...stackNeeds, cacheNeeds(cacheInServingNs), cacheNeeds(cacheInOwnNs)].map((n, i) => (i === 3 ? renamed(n) : n)));
    for (const rule of ["firewall-no-world-ingress-on-triton-ports", "firewall-triton-metrics-only-from-monitoring"]) {
      assert.deepEqual(
        (await ruleViolations(rule, resources)).map((v) => v.message),
        [],
        rule,
      );
    }
  });

  it("the firewall's sources import no component: what it opens comes only from declarations", () => {
    const dir = join(ROOT, "components/firewall");
    for (const f of readdirSync(dir)) {
      const text = readFileSync(join(dir, f), "utf8");
      const imports = [...text.matchAll(/from "([^"]+)"/g)].map((m) => m[1]).filter((m) => m.startsWith("."));
      assert.deepEqual(
        // ../component: the descriptor's types (it names no component either).
        imports.filter((m) => !["./builders", "./schema", "../network", "../component", "../../lib/cidr", "../../lib/schema"].includes(m)),
        [],
        `${f} imports a component`,
      );
    }
  });
});

/** The same component a second time, in its own namespace (its rule names made unique). */
function renamed(n: NetworkNeeds): NetworkNeeds {
  return { ...n, securityGroupRules: n.securityGroupRules?.map((r) => ({ ...r, name: `${r.name}-2` })) };
}
