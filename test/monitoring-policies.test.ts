// Each monitoring policy fires on a release broken in one property and stays silent on the
// compliant release the component builds.
import { strict as assert } from "node:assert";
import { rules as monitoringRules } from "../policies/rules/monitoring";
import { rules as allRules } from "../policies/rules";
import { evaluatePolicies } from "../tools/planner/policy";
import type { RecordedResource } from "../tools/planner";
import { kubePrometheusStackRelease, prometheusAdapterRelease, resolveMonitoringArgs } from "../components/monitoring";
import { standardLabels } from "../components/naming";
import { HELM_RELEASE as RELEASE } from "../policies/rules/types";
import { MONITORING_REFS } from "./support/monitoring";
import { declareMutations, first } from "./support/mutations";

const PROVIDER = "urn:pulumi:prod::triton-platform::pulumi:providers:kubernetes::cluster-k8s";

function resolved(environment: "dev" | "prod", alerting = true) {
  return resolveMonitoringArgs({
    ...MONITORING_REFS,
    labels: standardLabels({ environment }),
    kubePrometheusStackVersion: "88.1.5",
    prometheusAdapterVersion: "5.2.0",
    alerting: { enabled: alerting },
  });
}

function asResource(name: string, props: Record<string, any>): RecordedResource {
  return {
    urn: `urn:pulumi:prod::triton-platform::triton-platform:monitoring:Monitoring$${RELEASE}::${name}`,
    type: RELEASE,
    name,
    custom: true,
    parent: null,
    provider: `${PROVIDER}::id`,
    dependencies: [],
    props: JSON.parse(JSON.stringify(props)),
  };
}

const kps = (environment: "dev" | "prod" = "prod", alerting = true) =>
  asResource("monitoring-kube-prometheus-stack", kubePrometheusStackRelease(resolved(environment, alerting)));
const adapter = () => asResource("monitoring-prometheus-adapter", prometheusAdapterRelease(resolved("prod")));

async function violations(policy: string, resources: RecordedResource[], settings: Record<string, unknown> = {}) {
  const v = await evaluatePolicies(
    allRules.filter((r) => r.name === policy),
    resources,
    { all: "mandatory", [policy]: { enforcementLevel: "mandatory", ...settings } },
  );
  return v.filter((x) => x.policy === policy);
}

describe("monitoring policies", () => {
  it("every rule has a domain, what it prevents and remediation", () => {
    for (const r of monitoringRules) {
      assert.equal(r.domain, "monitoring");
      assert.ok(r.prevents && r.remediationSteps && r.description, r.name);
      assert.equal(r.enforcementLevel, "advisory");
    }
  });

  describe("helm-values-no-credentials (Grafana)", () => {
    it("is silent on the component's release (existingSecret, no adminPassword)", async () => {
      assert.deepEqual(await violations("helm-values-no-credentials", [kps()]), []);
    });
    it("fires on a literal adminPassword without echoing it", async () => {
      const r = kps();
      r.props.values.grafana.adminPassword = "prom-operator";
      const v = await violations("helm-values-no-credentials", [r]);
      assert.equal(v.length, 1);
      assert.match(v[0].message, /monitoring-kube-prometheus-stack \(chart kube-prometheus-stack\): values\.grafana\.adminPassword is a literal/);
      assert.ok(!v[0].message.includes("prom-operator"), "the password is not in the message");
    });
    it("fires when existingSecret is missing (the chart's default password would apply)", async () => {
      const r = kps();
      delete r.props.values.grafana.admin;
      const v = await violations("helm-values-no-credentials", [r]);
      assert.equal(v.length, 1);
      assert.match(v[0].message, /values\.grafana\.admin\.existingSecret is null/);
    });
  });

  describe("monitoring-alerting-in-prod", () => {
    it("is silent in prod with Alertmanager on, and in dev with it off", async () => {
      assert.deepEqual(await violations("monitoring-alerting-in-prod", [kps("prod", true), kps("dev", false)]), []);
    });
    it("fires in prod with Alertmanager off, naming the environment and the value", async () => {
      const v = await violations("monitoring-alerting-in-prod", [kps("prod", false)]);
      assert.equal(v.length, 1);
      assert.match(v[0].message, /\(environment prod\): values\.alertmanager\.enabled is false, must be true/);
    });
    it("covers the environments configured for the policy", async () => {
      const v = await violations("monitoring-alerting-in-prod", [kps("dev", false)], { environments: ["dev", "prod"] });
      assert.equal(v.length, 1);
    });
    it("fires when the release does not say its environment", async () => {
      const r = kps();
      delete r.props.values.commonLabels;
      const v = await violations("monitoring-alerting-in-prod", [r]);
      assert.match(v[0].message, /commonLabels\["triton-platform\/environment"\] is missing/);
    });
  });

  describe("helm-release-pinned (monitoring charts)", () => {
    it("is silent on pinned releases", async () => {
      assert.deepEqual(await violations("helm-release-pinned", [kps(), adapter()]), []);
    });
    it("fires on a version range and on a missing version", async () => {
      const a = kps();
      a.props.version = "^88.0.0";
      const b = adapter();
      delete b.props.version;
      const v = await violations("helm-release-pinned", [a, b]);
      assert.equal(v.length, 2);
      assert.match(v[0].message, /monitoring-kube-prometheus-stack \(chart kube-prometheus-stack\): version is "\^88\.0\.0"/);
      assert.match(v[1].message, /monitoring-prometheus-adapter \(chart prometheus-adapter\): version is nothing/);
    });
    it("fires when the repository is not named", async () => {
      const a = adapter();
      delete a.props.repositoryOpts;
      const v = await violations("helm-release-pinned", [a]);
      assert.match(v[0].message, /repositoryOpts\.repo is nothing, must be the chart's https:\/\/ or oci:\/\/ repository/);
    });
    it("covers every chart, not a list: an unpinned release of any chart fires", async () => {
      const other = asResource("x", {
        chart: "aws-efs-csi-driver",
        version: "latest",
        repositoryOpts: { repo: "https://kubernetes-sigs.github.io/aws-efs-csi-driver/" },
      });
      assert.equal((await violations("helm-release-pinned", [other])).length, 1);
    });
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "helm-values-no-credentials",
    breaks: "gives Grafana the chart's literal admin password",
    mutate: (rs) =>
      (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.grafana.adminPassword = "prom-operator"),
  },
  {
    rule: "monitoring-alerting-in-prod",
    breaks: "turns Alertmanager off in prod",
    mutate: (rs) => (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.alertmanager.enabled = false),
  },
  {
    rule: "monitoring-critical-alerts-notify",
    breaks: "drops every notifier of the critical receiver, so critical alerts reach nobody",
    mutate: (rs) => {
      const config = first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.alertmanager.config;
      config.receivers = config.receivers.map((r: { name: string }) => (r.name === "critical" ? { name: "critical" } : r));
    },
  },
]);
