// The rules that join resources of different components (stack validation policies, each in
// the file of the domain it protects) on the planned stacks: each stays silent on the
// compliant plan and fires when the link between two components is broken, naming the
// resource, the property path and the value.
import { strict as assert } from "node:assert";
import { checkAtLevels, plan, ruleViolations } from "./helpers";
import { rules } from "../policies/rules";
import { gatewayCanaryMirrored, gatewayClustersDefined } from "../policies/rules/gateway";
import { gpuNodesSpanZones } from "../policies/rules/gpu-nodes";
import { crdObjectsDependOnRelease, tritonMetricsScraped } from "../policies/rules/monitoring";
import { hpaTargetExists } from "../policies/rules/triton";
import type { RecordedResource } from "../tools/planner";
import {
  SERVICE_MONITOR as SM,
  PROMETHEUS_RULE as PROM_RULE,
  HELM_RELEASE as RELEASE,
  SERVICE,
  HORIZONTAL_POD_AUTOSCALER as HPA,
  NODE_GROUP,
  CONFIG_MAP,
} from "../policies/rules/types";
import { declareMutations, first, walk } from "./support/mutations";

const ZONES_TAG = "triton-platform:zones";

async function planned(stack = "prod"): Promise<RecordedResource[]> {
  return structuredClone((await plan(stack)).resources);
}

const violations = ruleViolations;

function find(rs: RecordedResource[], type: string, where: (r: RecordedResource) => boolean = () => true): RecordedResource {
  const r = rs.find((x) => x.type === type && where(x));
  assert.ok(r, `plan has a ${type}`);
  return r;
}
const kps = (rs: RecordedResource[]) => find(rs, RELEASE, (r) => r.props.chart === "kube-prometheus-stack");
const gatewayConfig = (rs: RecordedResource[]) => find(rs, CONFIG_MAP, (r) => typeof r.props.data?.["envoy.json"] === "string");
function editEnvoy(rs: RecordedResource[], edit: (c: Record<string, any>) => void): void {
  const cm = gatewayConfig(rs);
  const c = JSON.parse(cm.props.data["envoy.json"]) as Record<string, any>;
  edit(c);
  cm.props.data["envoy.json"] = JSON.stringify(c, null, 2);
}
const firstRoute = (c: Record<string, any>) => c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0];
function dropMirrors(v: unknown): void {
  if (Array.isArray(v)) v.forEach(dropMirrors);
  else if (v && typeof v === "object") {
    delete (v as Record<string, unknown>).request_mirror_policies;
    Object.values(v).forEach(dropMirrors);
  }
}

/** The cross-component rules this file proves, by the domain file that holds each. */
const stackRules = [tritonMetricsScraped, gatewayCanaryMirrored, gatewayClustersDefined, hpaTargetExists, crdObjectsDependOnRelease, gpuNodesSpanZones];

describe("stack-wide policies", () => {
  it("are registered, stack validation policies, each documented", () => {
    for (const r of stackRules) {
      assert.ok(rules.includes(r), r.name);
      assert.ok("validateStack" in r && r.kind === "stack", `${r.name} sees the whole stack`);
      assert.ok(r.description && r.prevents && r.remediationSteps, r.name);
    }
    assert.deepEqual(
      stackRules.map((r) => r.name),
      [
        "triton-metrics-scraped",
        "gateway-canary-mirrored",
        "gateway-clusters-defined",
        "hpa-target-exists",
        "crd-objects-depend-on-release",
        "gpu-nodes-span-zones",
      ],
    );
  });

  for (const stack of ["dev", "staging", "prod"]) {
    it(`are silent on the planned ${stack} stack`, async () => {
      const rs = await planned(stack);
      for (const r of stackRules) assert.deepEqual(await violations(r.name, rs), [], `${r.name} on ${stack}`);
    });
  }

  describe("triton-metrics-scraped", () => {
    const P = "triton-metrics-scraped";
    it("fires when the ServiceMonitor's keep regex leaves out the primary's metrics Service", async () => {
      const rs = await planned();
      find(rs, SM).props.spec.endpoints[0].relabelings[0].regex = "vision-canary-metrics";
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(vs[0].name, "vision-metrics");
      assert.equal(vs[0].path, "metadata.labels");
      assert.match(vs[0].message, /^Service triton\/vision-metrics \(metrics of StatefulSet vision\): metadata\.labels .* are scraped by no ServiceMonitor/);
    });
    it("fires when the ServiceMonitor looks in another namespace, or selects other labels", async () => {
      let rs = await planned();
      find(rs, SM).props.spec.namespaceSelector = { matchNames: ["serving"] };
      assert.equal((await violations(P, rs)).length, 2, "primary and canary");
      rs = await planned();
      find(rs, SM).props.spec.selector = { matchLabels: { "app.kubernetes.io/component": "server" } };
      assert.equal((await violations(P, rs)).length, 2);
    });
    it("fires when Prometheus does not select the ServiceMonitor (chart default: release label only)", async () => {
      const rs = await planned();
      kps(rs).props.values.prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues = true;
      assert.equal((await violations(P, rs)).length, 2);
      find(rs, SM).props.metadata.labels.release = kps(rs).props.name ?? kps(rs).name;
      assert.deepEqual(await violations(P, rs), []);
    });
    it("fires on the StatefulSet when no metrics Service selects its pods", async () => {
      const rs = (await planned()).filter((r) => !(r.type === SERVICE && r.name === "vision-metrics"));
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(vs[0].type, "kubernetes:apps/v1:StatefulSet");
      assert.equal(vs[0].path, "spec.template.metadata.labels");
      assert.match(vs[0].message, /StatefulSet triton\/vision: no Service in namespace triton selects its pods .* on the metrics port 8002/);
    });
    it("stays silent when an additionalScrapeConfigs job scrapes the Services instead of a ServiceMonitor", async () => {
      const rs = (await planned()).filter((r) => r.type !== SM);
      assert.equal((await violations(P, rs)).length, 2);
      kps(rs).props.values.prometheus.prometheusSpec.additionalScrapeConfigs.push({
        job_name: "triton",
        kubernetes_sd_configs: [{ role: "endpoints", namespaces: { names: ["triton"] } }],
        relabel_configs: [
          {
            action: "keep",
            source_labels: ["__meta_kubernetes_service_label_app_kubernetes_io_component", "__meta_kubernetes_endpoint_port_name"],
            regex: "metrics;metrics",
          },
        ],
      });
      assert.deepEqual(await violations(P, rs), []);
    });
    it("counts a static target naming the Service's DNS name and port", async () => {
      const rs = (await planned()).filter((r) => r.type !== SM);
      kps(rs).props.values.prometheus.prometheusSpec.additionalScrapeConfigs.push({
        job_name: "triton-static",
        static_configs: [{ targets: ["vision-metrics.triton.svc:8002", "vision-canary-metrics.triton.svc.cluster.local:8002"] }],
      });
      assert.deepEqual(await violations(P, rs), []);
    });
  });

  describe("gateway-canary-mirrored", () => {
    const P = "gateway-canary-mirrored";
    it("fires when no route mirrors to the canary, naming the gateway ConfigMap and its mirror targets", async () => {
      const rs = await planned();
      editEnvoy(rs, dropMirrors);
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(vs[0].type, CONFIG_MAP);
      assert.equal(vs[0].path, 'data["envoy.json"]..request_mirror_policies[*].cluster');
      assert.deepEqual(vs[0].value, []);
      assert.match(
        vs[0].message,
        /none mirrors \(above 0 %\) to a cluster reaching canary StatefulSet triton\/vision-canary through its Services \["vision-canary-metrics","vision-canary-headless","vision-canary"\]/,
      );
    });
    it("fires when the mirror fraction is zero", async () => {
      const rs = await planned();
      editEnvoy(rs, (c) => {
        const zero = (v: unknown): void => {
          if (Array.isArray(v)) v.forEach(zero);
          else if (v && typeof v === "object") {
            for (const m of (v as any).request_mirror_policies ?? []) m.runtime_fraction.default_value.numerator = 0;
            Object.values(v).forEach(zero);
          }
        };
        zero(c);
      });
      assert.equal((await violations(P, rs)).length, 1);
    });
    it("fires when the mirror cluster reaches the primary instead of the canary", async () => {
      const rs = await planned();
      editEnvoy(rs, (c) => {
        for (const cl of c.static_resources.clusters) {
          const sa = cl.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
          sa.address = sa.address.replace("vision-canary-headless", "vision-headless");
        }
      });
      assert.equal((await violations(P, rs)).length, 1);
    });
    it("fires on the canary StatefulSet when the stack has no gateway", async () => {
      const rs = (await planned()).filter((r) => !(r.type === CONFIG_MAP && typeof r.props.data?.["envoy.json"] === "string"));
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(vs[0].name, "vision-canary");
      assert.match(vs[0].message, /is a canary but the stack has no Envoy gateway/);
    });
  });

  describe("gateway-clusters-defined", () => {
    const P = "gateway-clusters-defined";
    it("fires on a mirror to an undefined cluster, naming the full path and the value", async () => {
      const rs = await planned();
      // The first route that mirrors (only inference routes do).
      let index = -1;
      editEnvoy(rs, (c) => {
        const routes: Record<string, any>[] = c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes;
        index = routes.findIndex((r) => r.route?.request_mirror_policies);
        routes[index].route.request_mirror_policies[0].cluster = "vision-canary-htp";
      });
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(
        vs[0].path,
        `data["envoy.json"].static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[${index}].route.request_mirror_policies[0].cluster`,
      );
      assert.equal(vs[0].value, "vision-canary-htp");
      assert.match(vs[0].message, /is "vision-canary-htp", which static_resources\.clusters does not define/);
    });
    it("fires on a route to an undefined cluster and on a weighted cluster", async () => {
      const rs = await planned();
      editEnvoy(rs, (c) => {
        firstRoute(c).route.cluster = "vision-primary-htp";
        const second = c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[1];
        delete second.route.cluster;
        second.route.weighted_clusters = {
          clusters: [
            { name: "vision-primary-http", weight: 90 },
            { name: "nowhere", weight: 10 },
          ],
        };
      });
      const vs = await violations(P, rs);
      assert.deepEqual(
        vs.map((v) => v.value),
        ["vision-primary-htp", "nowhere"],
      );
    });
  });

  describe("hpa-target-exists", () => {
    const P = "hpa-target-exists";
    it("fires when the autoscaler names a StatefulSet that does not exist", async () => {
      const rs = await planned();
      find(rs, HPA).props.spec.scaleTargetRef.name = "vison";
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(vs[0].path, "spec.scaleTargetRef");
      assert.deepEqual(vs[0].value, { apiVersion: "apps/v1", kind: "StatefulSet", name: "vison" });
      assert.match(vs[0].message, /^HorizontalPodAutoscaler triton\/vision: spec\.scaleTargetRef .* names no StatefulSet vison in namespace triton$/);
    });
    it("fires on the wrong kind and on another namespace", async () => {
      let rs = await planned();
      find(rs, HPA).props.spec.scaleTargetRef.kind = "Deployment";
      assert.equal((await violations(P, rs)).length, 1);
      rs = await planned();
      find(rs, HPA).props.metadata.namespace = "default";
      assert.equal((await violations(P, rs)).length, 1);
    });
  });

  describe("crd-objects-depend-on-release", () => {
    const P = "crd-objects-depend-on-release";
    it("fires when a PrometheusRule does not depend on kube-prometheus-stack", async () => {
      const rs = await planned();
      find(rs, PROM_RULE).dependencies = [];
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(vs[0].type, PROM_RULE);
      assert.equal(vs[0].path, "dependencies");
      assert.deepEqual(vs[0].value, []);
      assert.match(
        vs[0].message,
        /PrometheusRule triton-platform-alerts: dependencies \[\] include no release of chart kube-prometheus-stack \(monitoring-kube-prometheus-stack\)/,
      );
    });
    it("accepts a dependency through another resource (the engine orders transitively)", async () => {
      const rs = await planned();
      const adapter = find(rs, RELEASE, (r) => r.props.chart === "prometheus-adapter");
      assert.ok(adapter.dependencies.includes(kps(rs).urn));
      find(rs, SM).dependencies = [adapter.urn];
      assert.deepEqual(await violations(P, rs), []);
    });
    it("does not accept a dependency of the parent component (children do not inherit dependsOn)", async () => {
      const rs = await planned();
      const sm = find(rs, SM);
      const parent = rs.find((r) => r.urn === sm.parent)!;
      parent.dependencies = [kps(rs).urn];
      sm.dependencies = [];
      assert.equal((await violations(P, rs)).length, 1);
    });
    it("fires when no release installs the CRDs, and follows crdCharts for other groups", async () => {
      const rs = (await planned()).filter((r) => r.props.chart !== "kube-prometheus-stack");
      assert.equal((await violations(P, rs)).length, 3, "ServiceMonitor, PodMonitor and PrometheusRule");
      const withGpu = await planned();
      withGpu.push({
        ...find(withGpu, SM),
        urn: "urn:pulumi:prod::triton-platform::kubernetes:nvidia.com/v1:ClusterPolicy::cp",
        type: "kubernetes:nvidia.com/v1:ClusterPolicy",
        name: "cp",
        dependencies: [],
      });
      assert.deepEqual(await violations(P, withGpu), []);
      const vs = await violations(P, withGpu, { crdCharts: { "monitoring.coreos.com": "kube-prometheus-stack", "nvidia.com": "gpu-operator" } });
      assert.deepEqual(
        vs.map((v) => v.name),
        ["cp"],
      );
    });
  });

  describe("gpu-nodes-span-zones", () => {
    const P = "gpu-nodes-span-zones";
    it("fires in prod when the GPU node group's subnets are in two zones", async () => {
      const rs = await planned();
      const ng = find(rs, NODE_GROUP);
      ng.props.subnetIds = ng.props.subnetIds.slice(0, 2);
      ng.props.tags[ZONES_TAG] = "us-east-1a us-east-1b";
      const vs = await violations(P, rs);
      assert.equal(vs.length, 1);
      assert.equal(vs[0].path, `tags["${ZONES_TAG}"]`);
      assert.equal(vs[0].value, "us-east-1a us-east-1b");
      assert.match(
        vs[0].message,
        /^NodeGroup gpu \(nvidia-l4, prod\): tags\["triton-platform:zones"\] is "us-east-1a us-east-1b" .* span 2 zone\(s\), need >= 3$/,
      );
    });
    it("fires when the zones are not recorded, and when fewer nodes than zones may run", async () => {
      let rs = await planned();
      delete find(rs, NODE_GROUP).props.tags;
      assert.match((await violations(P, rs))[0].message, /is nothing .* span 0 zone\(s\)/);
      rs = await planned();
      find(rs, NODE_GROUP).props.scalingConfig.minSize = 2;
      const vs = await violations(P, rs);
      assert.deepEqual([vs[0].path, vs[0].value], ["scalingConfig.minSize", 2]);
    });
    it("counts the zones of all node groups of one GPU type together", async () => {
      const rs = await planned();
      const ng = find(rs, NODE_GROUP);
      ng.props.tags[ZONES_TAG] = "us-east-1a us-east-1b";
      rs.push({ ...structuredClone(ng), urn: `${ng.urn}-c`, name: "gpu-c", props: { ...structuredClone(ng.props), tags: { [ZONES_TAG]: "us-east-1c" } } });
      assert.deepEqual(await violations(P, rs), []);
    });
    it("applies to the environments and minimum zones each stack's policy config names", async () => {
      const staging = await planned("staging");
      assert.deepEqual(await violations(P, staging), [], "default: prod only");
      assert.deepEqual(await violations(P, staging, { environments: ["staging"], minZones: 2 }), []);
      assert.equal((await violations(P, staging, { environments: ["staging"], minZones: 3 })).length, 2, "zones and minSize");
    });
  });

  describe("per-stack enforcement (each shape's fixture levels, as in policies/config/<stack>.json)", () => {
    it("staging enforces its own thresholds: two zones and two replicas, mandatory", async () => {
      const rs = await planned("staging");
      find(rs, NODE_GROUP).props.tags[ZONES_TAG] = "us-east-1a";
      find(rs, "kubernetes:apps/v1:StatefulSet", (r) => r.name === "vision").props.spec.replicas = 1;
      const vs = await checkAtLevels(rs, "staging");
      // In the pack's rule order (rules of a domain stay together in the domain's file).
      assert.deepEqual(
        vs.map((v) => [v.policy, v.level, v.path]),
        [
          ["gpu-nodes-span-zones", "mandatory", `tags["${ZONES_TAG}"]`],
          ["triton-min-replicas", "mandatory", "spec.replicas"],
        ],
      );
    });
    it("staging reports a canary without mirrored traffic as advisory, prod as mandatory", async () => {
      for (const [stack, level] of [
        ["staging", "advisory"],
        ["prod", "mandatory"],
      ]) {
        const rs = await planned(stack);
        const before = new Set((await checkAtLevels(rs, stack)).map((v) => v.policy)); // the plan's own advisories (s3-access-logging)
        editEnvoy(rs, dropMirrors);
        assert.deepEqual(
          (await checkAtLevels(rs, stack)).filter((v) => !before.has(v.policy)).map((v) => [v.policy, v.level]),
          [["gateway-canary-mirrored", level]],
          stack,
        );
      }
    });
    it("dev only advises: the same break fires at advisory level, which never fails a dev plan", async () => {
      const rs = await planned("dev");
      const before = new Set((await checkAtLevels(rs, "dev")).map((v) => v.policy)); // the plan's own advisories (s3-access-logging)
      find(rs, HPA).props.spec.scaleTargetRef.name = "vison";
      const vs = (await checkAtLevels(rs, "dev")).filter((v) => !before.has(v.policy));
      assert.deepEqual(
        vs.map((v) => [v.policy, v.level]),
        [["hpa-target-exists", "advisory"]],
      );
    });
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "triton-metrics-scraped",
    breaks: "narrows the Triton ServiceMonitor's keep regex to the canary, so the primary's metrics Service is never scraped",
    mutate: (rs) => (first(rs, "kubernetes:monitoring.coreos.com/v1:ServiceMonitor").props.spec.endpoints[0].relabelings[0].regex = "vision-canary-metrics"),
  },
  {
    rule: "gateway-canary-mirrored",
    breaks: "removes every mirror policy from the gateway, so the canary gets no traffic",
    mutate: (rs) => editEnvoy(rs, (c) => walk(c, (o) => delete o.request_mirror_policies)),
  },
  {
    rule: "gateway-clusters-defined",
    breaks: "misspells the mirror cluster of one route",
    mutate: (rs) =>
      editEnvoy(
        rs,
        (c) =>
          (c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes.find(
            (r: Record<string, any>) => r.route?.request_mirror_policies,
          ).route.request_mirror_policies[0].cluster = "vision-canary-htp"),
      ),
  },
  {
    rule: "crd-objects-depend-on-release",
    breaks: "drops the PrometheusRule's dependency on kube-prometheus-stack",
    mutate: (rs) => (first(rs, "kubernetes:monitoring.coreos.com/v1:PrometheusRule").dependencies = []),
  },
  {
    rule: "gpu-nodes-span-zones",
    breaks: "puts the GPU node group in two zones' subnets",
    mutate: (rs) => {
      const ng = first(rs, "aws:eks/nodeGroup:NodeGroup");
      ng.props.subnetIds = ng.props.subnetIds.slice(0, 2);
      ng.props.tags["triton-platform:zones"] = "us-east-1a us-east-1b";
    },
  },
]);
