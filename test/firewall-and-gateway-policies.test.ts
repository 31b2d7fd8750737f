// Each firewall and gateway policy fires on a broken resource (message names the resource,
// the property and the value) and stays silent on the compliant planned prod stack.
import { strict as assert } from "node:assert";
import { plan, recorded, ruleViolations } from "./helpers";
import type { RecordedResource } from "../tools/planner";
import { TRITON_ALL_PODS } from "../components/contracts";
import { ENVOY_CONFIG_FILE, gatewayConfigMap, resolveEnvoyGatewayArgs } from "../components/gateway";
import { SECURITY_GROUP_INGRESS_RULE as SG_RULE, NETWORK_POLICY as NP } from "../policies/rules/types";
import { declareMutations, first, editEnvoy, walk } from "./support/mutations";

const res = (type: string, name: string, props: Record<string, any>): RecordedResource => recorded(type, name, props);

async function violations(policy: string, resources: RecordedResource[], settings: Record<string, unknown> = {}): Promise<string[]> {
  return (await ruleViolations(policy, resources, settings)).map((v) => v.message);
}

async function prod(): Promise<RecordedResource[]> {
  return (await plan("prod")).resources;
}

const tritonStatefulSet = (namespace: string) =>
  res("kubernetes:apps/v1:StatefulSet", "vision", {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "vision", namespace },
    spec: { template: { metadata: { labels: { ...TRITON_ALL_PODS, "app.kubernetes.io/instance": "vision", track: "primary" } } } },
  });
const networkPolicy = (name: string, namespace: string, spec: Record<string, any>) =>
  res(NP, name, { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name, namespace }, spec });

function envoyConfigMap(mirrorPercent: number, mutate?: (c: Record<string, any>) => void, canaryTrafficPercent = 0) {
  const cm = gatewayConfigMap(
    resolveEnvoyGatewayArgs({
      namespace: "triton",
      labels: {},
      servingGroups: [{ name: "vision", canary: true, models: ["resnet50"], canaryModels: ["resnet50"], canaryTrafficPercent }],
      mirrorPercent,
    }),
  ) as any;
  if (mutate) {
    const c = JSON.parse(cm.data[ENVOY_CONFIG_FILE]) as Record<string, any>;
    mutate(c);
    cm.data[ENVOY_CONFIG_FILE] = JSON.stringify(c, null, 2);
  }
  return res("kubernetes:core/v1:ConfigMap", "gateway-config", cm);
}

describe("firewall and gateway policies", () => {
  describe("firewall-no-world-ingress-on-triton-ports", () => {
    const P = "firewall-no-world-ingress-on-triton-ports";
    it("is silent on the planned prod stack", async () => {
      assert.deepEqual(await violations(P, await prod()), []);
    });
    it("is silent on 0.0.0.0/0 to another port and on a private CIDR to 8000", async () => {
      const ok = [
        res(SG_RULE, "https", { securityGroupId: "sg-1", ipProtocol: "tcp", fromPort: 443, toPort: 443, cidrIpv4: "0.0.0.0/0" }),
        res(SG_RULE, "private", { securityGroupId: "sg-1", ipProtocol: "tcp", fromPort: 8000, toPort: 8002, cidrIpv4: "10.0.0.0/8" }),
      ];
      assert.deepEqual(await violations(P, ok), []);
    });
    it("fires on 0.0.0.0/0 to 8001", async () => {
      const [m] = await violations(P, [
        res(SG_RULE, "open", { securityGroupId: "sg-1", ipProtocol: "tcp", fromPort: 8001, toPort: 8001, cidrIpv4: "0.0.0.0/0" }),
      ]);
      assert.match(
        m,
        /SecurityGroupIngressRule open: cidrIpv4 is "0\.0\.0\.0\/0"; with the other ingress of security group sg-1 on port 8001 .* the sources cover the internet, on Triton port range 8000-8002/,
      );
    });
    it("fires on ::/0 with all protocols", async () => {
      assert.equal((await violations(P, [res(SG_RULE, "v6", { securityGroupId: "sg-1", ipProtocol: "-1", cidrIpv6: "::/0" })])).length, 1);
    });
    it("fires on an inline security-group ingress and on a legacy SecurityGroupRule", async () => {
      const vs = await violations(P, [
        res("aws:ec2/securityGroup:SecurityGroup", "inline", { ingress: [{ protocol: "tcp", fromPort: 0, toPort: 65535, cidrBlocks: ["0.0.0.0/0"] }] }),
        res("aws:ec2/securityGroupRule:SecurityGroupRule", "legacy", {
          type: "ingress",
          protocol: "tcp",
          fromPort: 8002,
          toPort: 8002,
          cidrBlocks: [],
          ipv6CidrBlocks: ["::/0"],
        }),
      ]);
      assert.equal(vs.length, 2);
      assert.match(vs.join("\n"), /SecurityGroup inline: ingress\[0\]\.cidrBlocks\[0\] is "0\.0\.0\.0\/0"/);
    });
  });

  describe("firewall-default-deny", () => {
    const P = "firewall-default-deny";
    const denyAll = (ns: string, types: string[]) => networkPolicy(`deny-${types.join("-")}`, ns, { podSelector: {}, policyTypes: types });
    it("is silent on the planned stack, and on one policy denying both directions", async () => {
      assert.deepEqual(await violations(P, await prod()), []);
      assert.deepEqual(await violations(P, [tritonStatefulSet("serving"), denyAll("serving", ["Ingress", "Egress"])]), []);
    });
    it("fires for a Triton StatefulSet in a namespace without policies (both directions), and without egress deny", async () => {
      assert.equal((await violations(P, [tritonStatefulSet("serving")])).length, 2);
      const vs = await violations(P, [tritonStatefulSet("serving"), denyAll("serving", ["Ingress"])]);
      assert.deepEqual(vs.length, 1);
      assert.match(vs[0], /StatefulSet serving\/vision: metadata\.namespace "serving" has no default-deny Egress NetworkPolicy/);
    });
    it("does not count a policy with a selector or with rules as default-deny", async () => {
      const vs = await violations(P, [
        tritonStatefulSet("serving"),
        networkPolicy("narrow", "serving", { podSelector: { matchLabels: { a: "b" } }, policyTypes: ["Ingress", "Egress"] }),
        networkPolicy("open", "serving", { podSelector: {}, policyTypes: ["Ingress", "Egress"], ingress: [{}], egress: [{}] }),
      ]);
      assert.equal(vs.length, 2);
    });
  });

  describe("firewall-triton-metrics-only-from-monitoring", () => {
    const P = "firewall-triton-metrics-only-from-monitoring";
    it("is silent on the planned prod stack", async () => {
      assert.deepEqual(await violations(P, await prod()), []);
    });
    it("is silent on an allow-all policy in a namespace without Triton", async () => {
      assert.deepEqual(await violations(P, [...(await prod()), networkPolicy("allow-all", "ml-apps", { podSelector: {}, ingress: [{}] })]), []);
    });
    it("fires on a Triton-namespace policy admitting any source on all ports", async () => {
      const vs = await violations(P, [...(await prod()), networkPolicy("allow-all", "triton", { podSelector: {}, policyTypes: ["Ingress"], ingress: [{}] })]);
      assert.deepEqual(vs, ["NetworkPolicy triton/allow-all: spec.ingress[0].from admits (any source) to Triton's metrics port 8002"]);
    });
    it("fires on an ipBlock or a whole namespace admitted to 8002", async () => {
      const vs = await violations(P, [
        ...(await prod()),
        networkPolicy("scrape", "triton", {
          podSelector: { matchLabels: { ...TRITON_ALL_PODS } },
          ingress: [
            {
              from: [{ ipBlock: { cidr: "10.0.0.0/8" } }, { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }],
              ports: [{ port: "metrics" }],
            },
          ],
        }),
      ]);
      assert.equal(vs.length, 1);
      assert.match(vs[0], /NetworkPolicy triton\/scrape: spec\.ingress\[0\]\.from admits .*ipBlock.*10\.0\.0\.0\/8.*monitoring/);
    });
  });

  describe("gateway-mirror-percent-within-max", () => {
    const P = "gateway-mirror-percent-within-max";
    it("is silent on the planned prod stack (5 % under prod's 25 % cap)", async () => {
      assert.deepEqual(await violations(P, await prod(), { maxPercent: 25 }), []);
    });
    it("is silent at exactly the maximum", async () => {
      assert.deepEqual(await violations(P, [envoyConfigMap(25)], { maxPercent: 25 }), []);
    });
    it("fires above the stack's maximum, naming the path and both values", async () => {
      const vs = await violations(P, [envoyConfigMap(30)], { maxPercent: 25 });
      // One report per mirror target (HTTP and gRPC canary clusters), not one per route.
      assert.equal(vs.length, 2);
      assert.match(
        vs[0],
        /ConfigMap triton-gateway-config-[0-9a-f]{10}: data\["envoy\.json"\]\.static_resources\.listeners\[0\].*request_mirror_policies\[0\] \(and \d+ more route\(s\)\) mirrors 30 % to vision-canary-http \(maximum for this stack: 25 %\)/,
      );
    });
    it("fires on a mirror policy without runtime_fraction (mirrors everything)", async () => {
      const cm = envoyConfigMap(1, (c) => {
        const routes: Record<string, any>[] = c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes;
        delete routes.find((r) => r.route?.request_mirror_policies)!.route.request_mirror_policies[0].runtime_fraction;
      });
      assert.match((await violations(P, [cm], { maxPercent: 25 })).join("\n"), /mirrors 100 %/);
    });
    it("fires on a bootstrap Envoy could not parse (Envoy reads envoy.json as JSON: YAML text is refused)", async () => {
      const cm = envoyConfigMap(5);
      cm.props.data[ENVOY_CONFIG_FILE] = "admin:\n  address: {}\n";
      const vs = await violations(P, [cm], { maxPercent: 25 });
      assert.equal(vs.length, 1);
      assert.match(vs[0], /^ConfigMap triton-gateway-config-[0-9a-f]{10}: data\["envoy\.json"\] is not valid JSON \(/);
    });
  });

  describe("gateway-canary-traffic-within-max", () => {
    const P = "gateway-canary-traffic-within-max";
    it("is silent on the planned prod stack (no canary share) and at exactly the maximum", async () => {
      assert.deepEqual(await violations(P, await prod(), { maxPercent: 10 }), []);
      assert.deepEqual(await violations(P, [envoyConfigMap(5, undefined, 10)], { maxPercent: 10 }), []);
      assert.deepEqual(await violations(P, [envoyConfigMap(5, undefined, 0.5)], { maxPercent: 1 }), []);
    });
    it("fires above the stack's maximum, once per canary cluster, naming the path and the share", async () => {
      const vs = await violations(P, [envoyConfigMap(5, undefined, 30)], { maxPercent: 10 });
      assert.equal(vs.length, 2, vs.join("\n"));
      assert.match(
        vs[0],
        /match\.runtime_fraction\.default_value \(and \d+ more route\(s\)\) sends 30 % to vision-canary-http of real traffic \(maximum for this stack: 10 %\)/,
      );
      assert.match(vs[1], /sends 30 % to vision-canary-grpc/);
    });
    it("fires on a share written in another denominator, and ignores fractions to a primary", async () => {
      const cm = envoyConfigMap(
        5,
        (c) => {
          for (const l of c.static_resources.listeners)
            for (const r of l.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes) {
              if (r.match.runtime_fraction && r.route.cluster.endsWith("-canary-http"))
                r.match.runtime_fraction.default_value = { numerator: 2000, denominator: "TEN_THOUSAND" };
              if (r.match.runtime_fraction && r.route.cluster.endsWith("-canary-grpc")) r.route.cluster = "vision-primary-grpc";
            }
        },
        5,
      );
      const vs = await violations(P, [cm], { maxPercent: 10 });
      assert.equal(vs.length, 1, vs.join("\n"));
      assert.match(vs[0], /sends 20 % to vision-canary-http/);
    });
  });

  describe("gateway-envoy-admin-not-exposed", () => {
    const P = "gateway-envoy-admin-not-exposed";
    it("is silent on the planned prod stack", async () => {
      assert.deepEqual(await violations(P, await prod()), []);
    });
    it("fires when the admin interface listens on all addresses", async () => {
      const cm = envoyConfigMap(5, (c) => {
        c.admin.address.socket_address.address = "0.0.0.0";
      });
      const vs = await violations(P, [cm]);
      assert.equal(vs.length, 1);
      assert.match(
        vs[0],
        /^ConfigMap triton-gateway-config-[0-9a-f]{10}: data\["envoy\.json"\]\.admin\.address\.socket_address\.address is "0\.0\.0\.0", not a loopback address$/,
      );
    });
    it("fires when a listener forwards more than the allowed paths to the admin cluster", async () => {
      const cm = envoyConfigMap(5, (c) => {
        const metrics = c.static_resources.listeners.find((l: { name: string }) => l.name === "metrics");
        metrics.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].match = { prefix: "/" };
      });
      const vs = await violations(P, [cm]);
      assert.equal(vs.length, 1);
      assert.match(vs[0], /static_resources\.listeners\[2\]\..*routes\[0\]\.match is \{"prefix":"\/"\}: forwards to the admin cluster envoy-admin/);
    });
    it("leaves Services to gateway-envoy-admin-no-service, which resolves their target through the selected pods", async () => {
      const svc = res("kubernetes:core/v1:Service", "gw-admin", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "gw-admin", namespace: "triton" },
        spec: { selector: { "app.kubernetes.io/name": "triton-gateway" }, ports: [{ port: 80, targetPort: "admin" }] },
      });
      const gateway = res("kubernetes:apps/v1:Deployment", "gw", {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "gw", namespace: "triton" },
        spec: {
          template: {
            metadata: { labels: { "app.kubernetes.io/name": "triton-gateway" } },
            spec: { containers: [{ name: "envoy", image: "envoyproxy/envoy:v1.37.1", ports: [{ name: "admin", containerPort: 9901 }] }] },
          },
        },
      });
      assert.deepEqual(await violations(P, [svc, gateway]), []);
      assert.deepEqual(await violations("gateway-envoy-admin-no-service", [svc, gateway]), [
        'Service triton/gw-admin: spec.ports[0].targetPort "admin" (container port 9901 of Deployment gw) reaches Envoy\'s admin port 9901',
      ]);
    });
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "firewall-no-world-ingress-on-triton-ports",
    breaks: "opens the gateway load balancer's 8000-8001 to 0.0.0.0/1 + 128.0.0.0/1 (the internet without a /0)",
    mutate: (rs) => {
      const r = first(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (x) => x.props.cidrIpv4 !== undefined);
      r.props.cidrIpv4 = "0.0.0.0/1";
      rs.push({ ...structuredClone(r), urn: `${r.urn}-upper`, name: `${r.name}-upper`, props: { ...structuredClone(r.props), cidrIpv4: "128.0.0.0/1" } });
    },
  },
  {
    rule: "firewall-triton-metrics-only-from-monitoring",
    breaks: "admits any source to Triton's metrics port",
    mutate: (rs) =>
      delete first(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", (r) => r.props.metadata.name === "triton-metrics-from-prometheus").props.spec.ingress[0]
        .from,
  },
  {
    rule: "gateway-mirror-percent-within-max",
    breaks: "mirrors half of production traffic to the canary (prod cap 25 %)",
    mutate: (rs) =>
      editEnvoy(rs, (c) =>
        walk(c, (o) => {
          if (o.request_mirror_policies)
            for (const m of o.request_mirror_policies) m.runtime_fraction.default_value = { numerator: 50, denominator: "HUNDRED" };
        }),
      ),
  },
  {
    rule: "gateway-canary-traffic-within-max",
    breaks: "sends 30 % of a model's real traffic to the canary (prod cap 10 %)",
    mutate: (rs) =>
      editEnvoy(rs, (c) =>
        walk(c, (o) => {
          if (!Array.isArray(o.routes)) return;
          const r = o.routes.find((x: Record<string, any>) => x.route?.request_mirror_policies);
          if (r)
            o.routes.unshift({
              ...r,
              name: `${r.name}-canary`,
              match: { ...r.match, runtime_fraction: { default_value: { numerator: 30, denominator: "HUNDRED" } } },
              route: { ...r.route, cluster: r.route.request_mirror_policies[0].cluster, request_mirror_policies: undefined },
            });
        }),
      ),
  },
  {
    rule: "gateway-envoy-admin-not-exposed",
    breaks: "binds Envoy's admin interface to 0.0.0.0",
    mutate: (rs) => editEnvoy(rs, (c) => (c.admin.address.socket_address.address = "0.0.0.0")),
  },
  {
    rule: "firewall-default-deny",
    breaks: "drops the serving namespace's default-deny egress",
    mutate: (rs) => rs.splice(rs.indexOf(first(rs, NP, (r) => r.props.metadata.name === "default-deny-egress")), 1),
  },
]);
