// The firewall: NetworkPolicies select the right pods with the right ports and peers, the
// security-group rules admit Triton ports only from security groups, and no valid client
// configuration ever opens a Triton port to the world.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ofType, plan } from "./helpers";
import { GATEWAY_POD_LABELS, MONITORING_NAMESPACE, PROMETHEUS_POD_LABELS, PROMETHEUS_PODS, TRITON_ALL_PODS } from "../components/contracts";
import { networkPolicies, resolveFirewallArgs, securityGroupRuleArgs, securityGroupRules, type FirewallArgs } from "../components/firewall";
import { gatewayNetworkNeeds, gatewayPods } from "../components/gateway/network";
import { tritonNetworkNeeds, tritonPods } from "../components/triton/network";
import type { NetworkNeeds } from "../components/network";
import { NFS_PORT } from "../components/upstream/aws-efs-csi";
import { isWorldOpen } from "../lib/cidr";
import { loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";
import { securityGroupIngressOf } from "../policies/rules/props";

/** The stack's settings that shape the firewall: now inputs of the components' network needs. */
interface Stack {
  modelRepositoryEgressPort: number;
  clientCidrs: readonly string[];
  clientNamespaces: readonly string[];
  /** The model repository on EFS: NFS from the GPU nodes to its mount targets' group. */
  efs?: boolean;
}
const stack: Stack = { modelRepositoryEgressPort: 443, clientCidrs: ["10.10.0.0/16", "fd00::/48"], clientNamespaces: ["ml-apps"] };
const PROMETHEUS_PEER = {
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": MONITORING_NAMESPACE } },
  podSelector: { matchLabels: { ...PROMETHEUS_POD_LABELS } },
};

/** An EFS model repository's need, as its component would declare it (the stack's own rule is the model repository's). */
const efsNeeds: NetworkNeeds = {
  component: "model-repository",
  securityGroupRules: [
    {
      name: "efs-nfs-from-gpu-nodes",
      direction: "ingress",
      securityGroup: "efs",
      fromPort: NFS_PORT,
      toPort: NFS_PORT,
      peer: { securityGroup: "gpuNodes" },
      description: "NFS from the GPU nodes only (model repository on EFS)",
    },
  ],
};

/** The firewall's arguments as index.ts builds them: every component's declared needs. */
function firewallArgs(over: Partial<Stack> = {}): FirewallArgs {
  const s = { ...stack, ...over };
  const triton = tritonPods("triton");
  const gateway = gatewayPods("triton");
  return {
    namespace: "triton",
    labels: { "app.kubernetes.io/part-of": "triton-platform" },
    needs: [
      tritonNetworkNeeds({ pods: triton, servedBy: gateway, scrapedBy: PROMETHEUS_PODS, modelRepositoryEgressPort: s.modelRepositoryEgressPort }),
      gatewayNetworkNeeds({ pods: gateway, clientCidrs: s.clientCidrs, clientNamespaces: s.clientNamespaces, scrapedBy: PROMETHEUS_PODS }),
      ...(s.efs ? [efsNeeds] : []),
    ],
    vpcId: "vpc-1",
    securityGroupIds: { gpuNodes: "sg-gpu", cluster: "sg-cluster", ...(s.efs ? { efs: "sg-efs" } : {}) },
  };
}
const resolved = (over: Partial<Stack> = {}) => resolveFirewallArgs(firewallArgs(over));
const policies = (over: Partial<Stack> = {}) => networkPolicies(resolved(over)) as any[];
const byName = (ps: any[], name: string) => ps.find((p) => p.metadata.name === name);
const ports = (rule: any) => rule.ports.map((p: any) => `${p.protocol}/${p.port}`);

describe("firewall", () => {
  describe("NetworkPolicies", () => {
    it("deny all ingress in the namespace by default", () => {
      const p = byName(policies(), "default-deny-ingress");
      assert.deepEqual(p.spec, { podSelector: {}, policyTypes: ["Ingress"] });
      assert.equal(p.metadata.namespace, "triton");
    });

    it("admit Triton 8000/8001 only from gateway pods", () => {
      const p = byName(policies(), "triton-serving-from-gateway");
      assert.deepEqual(p.spec.podSelector, { matchLabels: { ...TRITON_ALL_PODS } });
      assert.equal(p.spec.ingress.length, 1);
      assert.deepEqual(p.spec.ingress[0].from, [{ podSelector: { matchLabels: { ...GATEWAY_POD_LABELS } } }]);
      assert.deepEqual(ports(p.spec.ingress[0]), ["TCP/8000", "TCP/8001"]);
    });

    it("admit Triton 8002 only from Prometheus pods in the monitoring namespace", () => {
      const p = byName(policies(), "triton-metrics-from-prometheus");
      assert.deepEqual(p.spec.ingress, [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": MONITORING_NAMESPACE } },
              podSelector: { matchLabels: { ...PROMETHEUS_POD_LABELS } },
            },
          ],
          ports: [{ protocol: "TCP", port: 8002 }],
        },
      ]);
    });

    it("limit Triton egress to DNS and the model repository's port (443 S3, 2049 EFS)", () => {
      for (const port of [443, 2049] as const) {
        const p = byName(policies({ modelRepositoryEgressPort: port }), "triton-egress");
        assert.deepEqual(p.spec.policyTypes, ["Egress"]);
        assert.deepEqual(p.spec.egress.map(ports), [["UDP/53", "TCP/53"], [`TCP/${port}`]]);
        assert.deepEqual(p.spec.egress[0].to[0].podSelector, { matchLabels: { "k8s-app": "kube-dns" } });
      }
    });

    it("admit the gateway's serving ports only from client CIDRs and namespaces", () => {
      const p = byName(policies(), "gateway-ingress");
      assert.deepEqual(p.spec.podSelector, { matchLabels: { ...GATEWAY_POD_LABELS } });
      const serving = p.spec.ingress.find((r: any) => ports(r).includes("TCP/8000"));
      assert.deepEqual(serving.from, [
        { ipBlock: { cidr: "10.10.0.0/16" } },
        { ipBlock: { cidr: "fd00::/48" } },
        { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ml-apps" } } },
      ]);
      assert.deepEqual(p.spec.ingress.find((r: any) => ports(r).includes("TCP/9902")).from, [PROMETHEUS_PEER]);
      // The only rule without peers is the /ready listener.
      assert.deepEqual(p.spec.ingress.filter((r: any) => !r.from).map(ports), [["TCP/9903"]]);
    });

    it("without clients, nothing may reach the gateway's serving ports", () => {
      const p = byName(policies({ clientCidrs: [], clientNamespaces: [] }), "gateway-ingress");
      assert.ok(!p.spec.ingress.some((r: any) => ports(r).includes("TCP/8000")));
    });
  });

  describe("security-group rules", () => {
    it("admit Triton ports on the GPU nodes only from the cluster security group", () => {
      const gpu = securityGroupRules(resolved()).filter((r) => r.securityGroup === "gpuNodes");
      assert.deepEqual(
        gpu.map((r) => [r.direction, r.fromPort, r.toPort, r.peer]),
        [
          ["ingress", 8000, 8001, { securityGroup: "cluster" }],
          ["ingress", 8002, 8002, { securityGroup: "cluster" }],
        ],
      );
    });

    it("admit each client CIDR to the gateway load balancer, IPv4 and IPv6", () => {
      const specs = securityGroupRules(resolved());
      const ids = { gpuNodes: "sg-gpu", cluster: "sg-cluster", gatewayLb: "sg-lb", efs: undefined };
      const lb = specs.filter((r) => r.securityGroup === "gatewayLb" && r.direction === "ingress").map((s) => securityGroupRuleArgs(s, ids));
      assert.deepEqual(
        lb.map((a) => [a.securityGroupId, a.fromPort, a.toPort, (a as any).cidrIpv4 ?? (a as any).cidrIpv6]),
        [
          ["sg-lb", 8000, 8001, "10.10.0.0/16"],
          ["sg-lb", 8000, 8001, "fd00::/48"],
        ],
      );
    });

    it("open EFS 2049 only from the GPU nodes, and only when the EFS backend declares it", () => {
      assert.ok(!securityGroupRules(resolved()).some((r) => r.fromPort === 2049));
      const efs = securityGroupRules(resolved({ efs: true })).filter((r) => r.fromPort === 2049);
      assert.deepEqual(
        efs.map((r) => [r.securityGroup, r.peer]),
        [["efs", { securityGroup: "gpuNodes" }]],
      );
      const ids = { gpuNodes: "sg-gpu", cluster: "sg-cluster", gatewayLb: "sg-lb", efs: "sg-efs" };
      assert.deepEqual(
        efs.map((r) => securityGroupRuleArgs(r, ids)),
        [
          {
            securityGroupId: "sg-efs",
            ipProtocol: "tcp",
            fromPort: 2049,
            toPort: 2049,
            description: efsNeeds.securityGroupRules![0].description,
            referencedSecurityGroupId: "sg-gpu",
          },
        ],
      );
    });

    it("give each client CIDR its own rule even when two CIDRs spell alike (0.0.0.0/1 and 0:0:0:0::/1)", () => {
      // Found by the property below: both slugs read 0-0-0-0-1, and two resources with one name fail the deployment.
      const names = (cidrs: string[]) =>
        securityGroupRules(resolved({ clientCidrs: cidrs }))
          .filter((r) => r.name.startsWith("gateway-lb-from-"))
          .map((r) => r.name);
      const alike = names(["0.0.0.0/1", "0:0:0:0::/1", "10.10.0.0/16"]);
      assert.equal(new Set(alike).size, 3, alike.join(", "));
      assert.ok(
        alike.every((n, i) => i === 2 || /^gateway-lb-from-0-0-0-0-1-[0-9a-f]{8}$/.test(n)),
        alike.join(", "),
      );
      // Distinct CIDRs keep their plain names (no rename, so no replacement, of existing rules).
      assert.deepEqual(names(["10.10.0.0/16", "2001:db8::/32"]), ["gateway-lb-from-10-10-0-0-16", "gateway-lb-from-2001-db8-32"]);
    });

    it("refuse a world-open client CIDR even when called without the config schema", () => {
      const rule = "must not be a world-open range (/0): declare the networks, or the anywhere peer";
      for (const open of ["0.0.0.0/0", "::/0", "10.0.0.0/0"]) {
        assert.throws(
          () => resolved({ clientCidrs: ["10.10.0.0/16", open] }),
          (e: any) =>
            e.name === "SettingsError" &&
            // Both places the gateway declares it: its pods' NetworkPolicy and its load balancer's security group.
            e.problems.includes(`needs[1].connections[0].allowFrom[0].peers[1].cidr ${rule}, got "${open}"`) &&
            e.problems.includes(`needs[1].securityGroupRules[1].peer.cidr ${rule}, got "${open}"`),
        );
      }
    });
  });

  it("property: any valid client configuration never opens a Triton port to the world", () => {
    const v4 = fc.tuple(fc.integer({ min: 1, max: 32 }), fc.nat(0xffffffff)).map(([prefix, n]) => {
      const net = prefix === 32 ? n : (n >>> (32 - prefix)) << (32 - prefix);
      const ip = [24, 16, 8, 0].map((s) => (net >>> s) & 255).join(".");
      return `${ip}/${prefix}`;
    });
    const v6 = fc.tuple(fc.integer({ min: 1, max: 64 }), fc.array(fc.nat(0xffff), { minLength: 4, maxLength: 4 })).map(([prefix, hextets]) => {
      const bits = (hextets.reduce((acc, h) => (acc << 16n) + BigInt(h), 0n) >> BigInt(64 - prefix)) << BigInt(64 - prefix);
      const hs = [48n, 32n, 16n, 0n].map((s) => ((bits >> s) & 0xffffn).toString(16));
      return `${hs.join(":")}::/${prefix}`;
    });
    // Also offer /0 spellings: the config must refuse them, so they never reach the builders.
    const anyCidr = fc.oneof(v4, v6, fc.constantFrom("0.0.0.0/0", "::/0", "10.0.0.0/0"));
    fc.assert(
      fc.property(fc.uniqueArray(anyCidr, { maxLength: 5 }), fc.boolean(), fc.constantFrom(443, 2049), (cidrs, efs, port) => {
        const raw = fixtureConfig("prod", { gateway: { clientCidrs: cidrs } });
        let cfg;
        try {
          cfg = loadConfig(raw, "prod");
        } catch (e) {
          // Refused: only for a /0 or an empty list in prod; then nothing is created.
          return cidrs.length === 0 || cidrs.some(isWorldOpen);
        }
        if (cidrs.some(isWorldOpen)) return false;
        const r = resolved({ clientCidrs: cfg.gateway.clientCidrs, modelRepositoryEgressPort: port, efs });
        const ids = { gpuNodes: "sg-gpu", cluster: "sg-cluster", gatewayLb: "sg-lb", efs: efs ? "sg-efs" : undefined };
        // AWS: no ingress rule with a /0 source touches 8000-8002.
        for (const spec of securityGroupRules(r)) {
          if (spec.direction !== "ingress") continue;
          const a = securityGroupRuleArgs(spec, ids) as Record<string, any>;
          const opening = securityGroupIngressOf({ type: "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", props: a })[0];
          if (opening.cidrs.some((c) => isWorldOpen(c.cidr))) return false;
        }
        // Kubernetes: Triton pods admit only the gateway and Prometheus; no ipBlock, no peerless rule.
        for (const np of networkPolicies(r) as any[]) {
          if (np.spec.podSelector?.matchLabels?.["app.kubernetes.io/name"] !== TRITON_ALL_PODS["app.kubernetes.io/name"]) continue;
          for (const rule of np.spec.ingress ?? []) {
            if (!rule.from?.length || rule.from.some((p: any) => p.ipBlock)) return false;
          }
        }
        return true;
      }),
      { numRuns: 200 },
    );
  });

  describe("planned stacks", () => {
    for (const stack of ["dev", "staging", "prod"]) {
      it(`${stack}: seven NetworkPolicies in the Triton namespace and no world-open security-group ingress`, async () => {
        const p = await plan(stack);
        const nps = ofType(p.resources, "kubernetes:networking.k8s.io/v1:NetworkPolicy");
        assert.equal(nps.length, 7);
        for (const np of nps) assert.equal(np.props.metadata.namespace, "triton");
        for (const r of p.resources.filter((x) => x.custom)) {
          for (const o of securityGroupIngressOf(r)) assert.ok(!o.cidrs.some((c) => isWorldOpen(c.cidr)), `${r.name}: ${JSON.stringify(o.cidrs)}`);
        }
      });
    }

    it("Triton egress follows the model repository backend: 2049 for EFS (staging), 443 for S3 (prod)", async () => {
      for (const [stack, port] of [
        ["staging", 2049],
        ["prod", 443],
      ] as const) {
        const np = ofType((await plan(stack)).resources, "kubernetes:networking.k8s.io/v1:NetworkPolicy").find(
          (r) => r.props.metadata.name === "triton-egress",
        )!;
        assert.deepEqual(np.props.spec.egress[1].ports, [{ protocol: "TCP", port }], stack);
      }
    });

    it("prod: the load balancer's security group admits exactly the configured client CIDRs", async () => {
      const p = await plan("prod");
      const lbRules = ofType(p.resources, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").filter((r) =>
        r.name.startsWith("firewall-gateway-lb-from-"),
      );
      assert.deepEqual(lbRules.map((r) => r.props.cidrIpv4 ?? r.props.cidrIpv6).sort(), ["10.10.0.0/16", "10.11.0.0/16", "fd12:3456:789a::/48"]);
      for (const r of lbRules) assert.deepEqual([r.props.fromPort, r.props.toPort, r.props.ipProtocol], [8000, 8001, "tcp"]);
    });
  });
});
