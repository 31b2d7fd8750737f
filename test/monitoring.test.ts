// What the Monitoring component records for each stack: the releases' values, the Grafana
// admin Secret, the ServiceMonitor and PrometheusRule (after the release that installs their
// CRDs), the dashboard ConfigMaps and the adapter rule; and how bad config is named.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { plan, one, ofType } from "./helpers";
import { fixtureConfig } from "./support/stacks";
import { MASK } from "../tools/planner/fakes";
import { loadConfig, ConfigError } from "../config";
import { SettingsError } from "../lib/errors";
import { resolveMonitoringArgs, adapterRateWindow, tritonRelabelConfigs, dcgmScrapeConfig, GRAFANA_ADMIN_SECRET_NAME } from "../components/monitoring";
import {
  HPA_QUEUE_METRIC,
  MONITORING_NAMESPACE,
  TRITON_METRICS_PORT_NAME,
  TRITON_METRICS_SERVICE_LABEL,
  TRITON_PORTS,
  tritonMetricsServiceName,
} from "../components/contracts";
import { DCGM_EXPORTER } from "../components/upstream/dcgm";
import type { RecordedResource } from "../tools/planner";
import { HELM_RELEASE as RELEASE } from "../policies/rules/types";

const release = (rs: RecordedResource[], chart: string) => {
  const found = ofType(rs, RELEASE).filter((r) => r.props.chart === chart);
  assert.equal(found.length, 1, `one ${chart} release`);
  return found[0];
};

describe("monitoring component", () => {
  describe("prod", () => {
    it("installs kube-prometheus-stack pinned, with per-stack retention, storage, interval and Alertmanager on", async () => {
      const p = await plan("prod");
      const kps = release(p.resources, "kube-prometheus-stack");
      assert.equal(kps.props.version, "88.1.5");
      assert.equal(kps.props.repositoryOpts.repo, "https://prometheus-community.github.io/helm-charts");
      assert.equal(kps.props.namespace, MONITORING_NAMESPACE);
      const spec = kps.props.values.prometheus.prometheusSpec;
      assert.equal(spec.retention, "30d");
      assert.equal(spec.retentionSize, "170GB", "85 % of the 200Gi volume");
      assert.equal(spec.scrapeInterval, "15s");
      assert.equal(spec.replicas, 2);
      assert.deepEqual(spec.storageSpec.volumeClaimTemplate.spec.resources.requests, { storage: "200Gi" });
      for (const k of ["serviceMonitorSelectorNilUsesHelmValues", "ruleSelectorNilUsesHelmValues", "podMonitorSelectorNilUsesHelmValues"])
        assert.equal(spec[k], false, k);
      assert.equal(kps.props.values.alertmanager.enabled, true);
      assert.equal(kps.props.values.alertmanager.alertmanagerSpec.replicas, 3);
    });

    it("gives Grafana a generated admin password through a Secret, never a literal, with the dashboard sidecar on", async () => {
      const p = await plan("prod");
      const grafana = release(p.resources, "kube-prometheus-stack").props.values.grafana;
      assert.equal(grafana.adminPassword, undefined);
      const secret = one(p.resources, "kubernetes:core/v1:Secret", "monitoring-grafana-admin");
      assert.equal(secret.props.metadata.name, GRAFANA_ADMIN_SECRET_NAME);
      assert.equal(secret.props.metadata.namespace, MONITORING_NAMESPACE);
      assert.deepEqual(grafana.admin, { existingSecret: secret.props.metadata.name, userKey: "admin-user", passwordKey: "admin-password" });
      // The whole stringData is a secret output (it holds the RandomPassword's result): only masks are recorded.
      assert.equal(secret.props.stringData["admin-password"], MASK);
      const pw = one(p.resources, "random:index/randomPassword:RandomPassword", "monitoring-grafana-admin");
      assert.ok(pw.props.length >= 32);
      assert.ok(secret.dependencies.length > 0);
      assert.deepEqual(grafana.sidecar.dashboards, { enabled: true, label: "grafana_dashboard", labelValue: "1", searchNamespace: "ALL" });
      const kps = release(p.resources, "kube-prometheus-stack");
      assert.ok(kps.dependencies.includes(secret.urn), "the release waits for the Secret it references");
    });

    it("creates the ServiceMonitor and PrometheusRule only after the release that installs their CRDs", async () => {
      const p = await plan("prod");
      const kps = release(p.resources, "kube-prometheus-stack");
      for (const type of ["kubernetes:monitoring.coreos.com/v1:ServiceMonitor", "kubernetes:monitoring.coreos.com/v1:PrometheusRule"]) {
        const r = one(p.resources, type);
        assert.ok(r.dependencies.includes(kps.urn), `${type} depends on ${kps.urn}`);
        assert.equal(r.props.metadata.namespace, MONITORING_NAMESPACE);
      }
    });

    it("scrapes the primary and canary metrics Services of each group on the metrics port, keeping track", async () => {
      const p = await plan("prod");
      const sm = one(p.resources, "kubernetes:monitoring.coreos.com/v1:ServiceMonitor").props.spec;
      assert.deepEqual(sm.namespaceSelector.matchNames, ["triton"]);
      assert.deepEqual(sm.selector.matchLabels, TRITON_METRICS_SERVICE_LABEL);
      const ep = sm.endpoints[0];
      assert.equal(ep.port, TRITON_METRICS_PORT_NAME);
      assert.equal(ep.interval, "15s");
      const keep = ep.relabelings.find((r: any) => r.action === "keep");
      const re = new RegExp(`^(?:${keep.regex})$`);
      assert.ok(re.test(tritonMetricsServiceName("vision", "primary")));
      assert.ok(re.test(tritonMetricsServiceName("vision", "canary")));
      assert.ok(!re.test("vision-metrics-old") && !re.test("other-metrics"));
      assert.ok(ep.relabelings.some((r: any) => r.sourceLabels?.[0] === "__meta_kubernetes_pod_label_track" && r.targetLabel === "track"));
    });

    it("scrapes DCGM on its Service/port and keeps the exporter's namespace/pod labels", async () => {
      const p = await plan("prod");
      const [dcgm] = release(p.resources, "kube-prometheus-stack").props.values.prometheus.prometheusSpec.additionalScrapeConfigs;
      assert.equal(dcgm.honor_labels, true);
      const keep = dcgm.relabel_configs.find((r: any) => r.action === "keep");
      assert.ok(new RegExp(`^(?:${keep.regex})$`).test(`${DCGM_EXPORTER.serviceName};${DCGM_EXPORTER.portName}`));
      assert.ok(!new RegExp(`^(?:${keep.regex})$`).test(`${DCGM_EXPORTER.serviceName};metrics`));
      const targets = dcgm.relabel_configs.map((r: any) => r.target_label);
      assert.ok(!targets.includes("namespace") && !targets.includes("pod"), "the GPU-using pod's namespace/pod are not overwritten");
    });

    it("carries every alert with severity, summary and a runbook description, at prod thresholds", async () => {
      const p = await plan("prod");
      const groups = one(p.resources, "kubernetes:monitoring.coreos.com/v1:PrometheusRule").props.spec.groups;
      const alerts = groups.flatMap((g: any) => g.rules);
      assert.deepEqual(alerts.map((a: any) => a.alert).sort(), [
        "GpuMemoryLeak",
        "GpuTemperatureHigh",
        "GpuUtilisationSaturated",
        "GpuXidError",
        "TritonCanaryFailureRatioWorse",
        "TritonInferenceFailureRatioHigh",
        "TritonMetricsAbsent",
        "TritonModelNotServing",
        "TritonP99LatencyAboveSLO",
        "TritonQueueTimeAboveBudget",
        "TritonTargetDown",
      ]);
      for (const a of alerts) {
        assert.match(a.labels.severity, /^(critical|warning)$/, a.alert);
        assert.ok(a.annotations.summary && a.annotations.description.includes("Runbook"), a.alert);
      }
      const byName = (n: string) => alerts.find((a: any) => a.alert === n).expr as string;
      assert.match(byName("TritonQueueTimeAboveBudget"), / > 50000$/, "50 ms budget in µs");
      assert.match(byName("TritonInferenceFailureRatioHigh"), / > 0\.01$/);
      assert.match(byName("TritonP99LatencyAboveSLO"), /quantile="0\.99".* > 500000$/);
      assert.match(byName("GpuTemperatureHigh"), /DCGM_FI_DEV_GPU_TEMP > 85$/);
    });

    it("publishes the HPA metric through prometheus-adapter (pinned) from Prometheus' Service", async () => {
      const p = await plan("prod");
      const adapter = release(p.resources, "prometheus-adapter");
      assert.equal(adapter.props.version, "5.2.0");
      assert.ok(adapter.dependencies.includes(release(p.resources, "kube-prometheus-stack").urn));
      const v = adapter.props.values;
      assert.equal(v.prometheus.url, "http://kube-prometheus-stack-prometheus.monitoring.svc");
      assert.equal(v.prometheus.port, 9090);
      assert.equal(v.replicas, 2);
      assert.equal(v.rules.default, false);
      const [rule] = v.rules.custom;
      assert.equal(rule.name.as, HPA_QUEUE_METRIC);
      assert.deepEqual(rule.resources.overrides.pod, { resource: "pod" });
      assert.match(
        rule.metricsQuery,
        /rate\(nv_inference_queue_duration_us\{.*<<\.LabelMatchers>>\}\[60s\]\)\) \/ clamp_min\(sum by \(<<\.GroupBy>>\) \(rate\(nv_inference_request_success/,
      );
    });

    it("ships three dashboards as ConfigMaps labelled for the Grafana sidecar", async () => {
      const p = await plan("prod");
      // The monitoring namespace's ConfigMaps (the gateway has its own in the Triton namespace).
      const cms = ofType(p.resources, "kubernetes:core/v1:ConfigMap").filter((r) => r.props.metadata.namespace === MONITORING_NAMESPACE);
      assert.equal(cms.length, 3);
      const titles: string[] = [];
      for (const cm of cms) {
        assert.equal(cm.props.metadata.labels.grafana_dashboard, "1");
        assert.equal(cm.props.metadata.namespace, MONITORING_NAMESPACE);
        const [file, json] = Object.entries(cm.props.data as Record<string, string>)[0];
        const d = JSON.parse(json);
        assert.match(file, /\.json$/);
        assert.ok(d.uid && d.panels.length >= 4, file);
        titles.push(d.title);
      }
      assert.deepEqual(titles.sort(), ["Triton / Canary vs primary", "Triton / GPU (DCGM)", "Triton / Overview"]);
      const canary = JSON.parse(Object.values(cms.find((c) => c.props.metadata.name === "dashboard-triton-canary")!.props.data as Record<string, string>)[0]);
      // Side by side: every primary panel has a canary twin at the same height, to its right.
      for (const pp of canary.panels.filter((x: any) => x.title.endsWith(": primary"))) {
        const twin = canary.panels.find((x: any) => x.title === pp.title.replace(/primary$/, "canary"));
        assert.equal(twin.gridPos.y, pp.gridPos.y);
        assert.ok(twin.gridPos.x > pp.gridPos.x);
        assert.match(twin.targets[0].expr, /track="canary"/);
      }
    });
  });

  describe("dev", () => {
    it("runs without Alertmanager, scrapes every 60s and only the primary Service of a group without canary", async () => {
      const p = await plan("dev");
      const kps = release(p.resources, "kube-prometheus-stack");
      assert.equal(kps.props.values.alertmanager.enabled, false);
      assert.equal(kps.props.values.prometheus.prometheusSpec.scrapeInterval, "60s");
      const sm = one(p.resources, "kubernetes:monitoring.coreos.com/v1:ServiceMonitor").props.spec;
      assert.equal(sm.endpoints[0].relabelings[0].regex, "vision-metrics");
      assert.match(release(p.resources, "prometheus-adapter").props.values.rules.custom[0].metricsQuery, /\[240s\]/);
    });
  });

  describe("builders", () => {
    const base = {
      labels: {},
      servingNamespace: "triton",
      servingGroups: [{ name: "a", canary: true }],
      storageClassName: "ebs-gp3-encrypted",
      kubePrometheusStackVersion: "1.2.3",
      prometheusAdapterVersion: "4.5.6",
    };

    it("rejects unpinned chart versions and bad sizes, naming each argument", () => {
      assert.throws(
        () =>
          resolveMonitoringArgs(
            { ...base, kubePrometheusStackVersion: "latest", prometheusAdapterVersion: "^4", storageSize: "1Ti", servingGroups: [], storageClassName: "" },
            "mon",
          ),
        (e: unknown) => {
          assert.ok(e instanceof SettingsError, String(e));
          assert.equal(e.subject, 'invalid arguments of Monitoring "mon"');
          assert.equal(e.problems.length, 5, e.message);
          const line = (re: RegExp) =>
            assert.ok(
              e.problems.some((p) => re.test(p)),
              `${re} in\n${e.message}`,
            );
          line(/^kubePrometheusStackVersion must be an exact version .*, got "latest"$/);
          line(/^prometheusAdapterVersion must be an exact version .*, got "\^4"$/);
          line(/^storageSize must be a size in Gi .*, got "1Ti"$/);
          line(/^servingGroups must be a list of at least 1 serving group\(s\), got \[\]$/);
          line(/^storageClassName must be a non-empty string, got ""$/);
          return true;
        },
      );
    });

    it("keeps only declared metrics Services, escaping names for the regex", () => {
      const [keep] = tritonRelabelConfigs([
        { name: "a", canary: true },
        { name: "b", canary: false },
      ]);
      assert.equal(keep.regex, "a-metrics|a-canary-metrics|b-metrics");
    });

    it("scrapes DCGM at the stack's interval", () => {
      assert.equal(dcgmScrapeConfig({ scrapeInterval: "15s" }).scrape_interval, "15s");
      assert.equal(TRITON_PORTS.metrics, 8002);
    });

    it("sizes the adapter's rate window to at least four scrapes and one minute (property)", () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 120 }), (s) => {
          const w = Number(adapterRateWindow(`${s}s`).replace(/s$/, ""));
          return w >= 4 * s && w >= 60;
        }),
      );
    });
  });

  describe("stack config", () => {
    // The dev stack's configuration (every other section valid) with the monitoring section replaced.
    const raw = (monitoring: unknown): Record<string, string> => ({
      ...fixtureConfig("dev"),
      "triton-platform:monitoring": JSON.stringify(monitoring),
    });
    const ok = { kubePrometheusStackVersion: "88.1.5", prometheusAdapterVersion: "5.2.0" };

    it("applies the documented defaults", () => {
      const cfg = loadConfig(raw(ok), "s");
      assert.equal(cfg.monitoring.scrapeInterval, "30s");
      assert.equal(cfg.monitoring.alerting.enabled, true);
      assert.equal(cfg.monitoring.thresholds.queueTimeBudgetMs, 50);
      assert.equal(cfg.monitoring.storageSize, "50Gi");
    });

    it("applies the schema's defaults to a direct caller as to a stack file, and derives retentionSize", () => {
      const r = resolveMonitoringArgs({ labels: {}, servingNamespace: "triton", servingGroups: [{ name: "a", canary: false }], storageClassName: "c" });
      const cfg = loadConfig(raw({}), "s").monitoring;
      const { labels, servingNamespace, servingGroups, storageClassName: _class, retentionSize, ...settings } = r;
      assert.deepEqual(settings, cfg);
      assert.deepEqual({ labels, servingNamespace, servingGroups }, { labels: {}, servingNamespace: "triton", servingGroups: [{ name: "a", canary: false }] });
      assert.equal(retentionSize, "42GB", "85 % of the default 50Gi");
    });

    it("names every bad monitoring key, its rule and its value", () => {
      const bad = {
        ...ok,
        kubePrometheusStackVersion: "latest",
        scrapeInterval: "5m",
        retension: "3d",
        thresholds: { failureRatio: 2 },
        alerting: { enabled: "yes" },
      };
      assert.throws(
        () => loadConfig(raw(bad), "s"),
        (e: unknown) => {
          const m = (e as ConfigError).message;
          return (
            e instanceof ConfigError &&
            /triton-platform:monitoring\.kubePrometheusStackVersion must be an exact version.*got "latest"/.test(m) &&
            /triton-platform:monitoring\.scrapeInterval must be a duration from 10s to 60s.*got "5m"/.test(m) &&
            /triton-platform:monitoring\.retension is not a known key/.test(m) &&
            /triton-platform:monitoring\.thresholds\.failureRatio must be a number from 0 to 1, got 2/.test(m) &&
            /triton-platform:monitoring\.alerting\.enabled must be true or false, got "yes"/.test(m)
          );
        },
      );
    });

    it("refuses a second DCGM scrape through the GPU Operator's ServiceMonitor, naming the key", () => {
      const gpu = JSON.parse(raw(ok)["triton-platform:gpu"]);
      const withMonitor = (on: boolean) => ({
        ...raw(ok),
        "triton-platform:gpu": JSON.stringify({ ...gpu, operator: { ...gpu.operator, serviceMonitor: on } }),
      });
      assert.throws(
        () => loadConfig(withMonitor(true), "s"),
        /triton-platform:gpu\.operator\.serviceMonitor must be false: the monitoring component already scrapes dcgm-exporter/,
      );
      assert.equal(loadConfig(withMonitor(false), "s").gpu.operator.serviceMonitor, false);
    });

    it("defaults to the pinned chart versions the value keys were checked against when the section is absent", () => {
      const r = raw(ok);
      delete r["triton-platform:monitoring"];
      const cfg = loadConfig(r, "s");
      assert.equal(cfg.monitoring.kubePrometheusStackVersion, "88.1.5");
      assert.equal(cfg.monitoring.prometheusAdapterVersion, "5.2.0");
      assert.equal(cfg.monitoring.retention, "15d");
    });
  });
});
