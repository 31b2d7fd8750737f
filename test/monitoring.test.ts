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
import { alertGroup, MONITORING_REFS } from "./support/monitoring";

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
      // The sidecar reads this namespace only, through a Role (no cluster-wide read of Secrets).
      assert.deepEqual(grafana.sidecar.dashboards, { enabled: true, label: "grafana_dashboard", labelValue: "1", searchNamespace: MONITORING_NAMESPACE });
      assert.deepEqual(grafana.rbac, { namespaced: true });
      assert.equal(grafana.sidecar.datasources, undefined, "the datasources sidecar keeps the chart's own namespace");
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

    it("scrapes DCGM on its Service/port in the GPU Operator's namespace only, without honor_labels, keeping the exporter's namespace/pod labels", async () => {
      const p = await plan("prod");
      const [dcgm] = release(p.resources, "kube-prometheus-stack").props.values.prometheus.prometheusSpec.additionalScrapeConfigs;
      assert.equal(dcgm.honor_labels, undefined, "a scraped series cannot overwrite job or instance");
      const operatorNs = release(p.resources, "gpu-operator").props.namespace;
      assert.deepEqual(dcgm.kubernetes_sd_configs, [{ role: "endpoints", namespaces: { names: [operatorNs] } }]);
      const keep = dcgm.relabel_configs.find((r: any) => r.action === "keep");
      assert.ok(new RegExp(`^(?:${keep.regex})$`).test(`${DCGM_EXPORTER.serviceName};${DCGM_EXPORTER.portName}`));
      assert.ok(!new RegExp(`^(?:${keep.regex})$`).test(`${DCGM_EXPORTER.serviceName};metrics`));
      const targets = dcgm.relabel_configs.map((r: any) => r.target_label);
      assert.ok(!targets.includes("namespace") && !targets.includes("pod"), "the GPU-using pod's namespace/pod are not overwritten");
    });

    it("carries every alert with severity, summary and a runbook description, at prod thresholds", async () => {
      const p = await plan("prod");
      const groups = one(p.resources, "kubernetes:monitoring.coreos.com/v1:PrometheusRule").props.spec.groups;
      const alerts = groups.flatMap((g: any) => g.rules).filter((r: any) => "alert" in r);
      assert.deepEqual(alerts.map((a: any) => a.alert).sort(), [
        // The canary's current stage (one stage at today's shares): one per gate, and its thin-traffic alert.
        ...Array(6).fill("CanaryGateFailed"),
        "CanaryGateInsufficientData",
        "DcgmExporterMissing",
        "GpuMemoryLeak",
        "GpuTemperatureHigh",
        "GpuUtilisationSaturated",
        "GpuXidError",
        "TritonCanaryFailureRatioWorse",
        "TritonInferenceFailureRatioHigh",
        "TritonMetricsAbsent",
        "TritonModelNotLoaded",
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

  describe("kube-prometheus-stack on EKS", () => {
    it("disables the control-plane components EKS does not expose (their Down alerts would fire forever)", async () => {
      for (const stack of ["dev", "prod"]) {
        const v = release((await plan(stack)).resources, "kube-prometheus-stack").props.values;
        for (const c of ["kubeScheduler", "kubeControllerManager", "kubeEtcd", "kubeProxy"]) assert.deepEqual(v[c], { enabled: false }, `${stack} ${c}`);
        assert.equal(v.kubelet, undefined, "the kubelet stays scraped");
      }
    });

    it("spreads HA Prometheus and Alertmanager one per zone (required) with a PDB; a single replica gets neither", async () => {
      const prod = release((await plan("prod")).resources, "kube-prometheus-stack").props.values;
      const zone = "topology.kubernetes.io/zone";
      assert.deepEqual([prod.prometheus.prometheusSpec.podAntiAffinity, prod.prometheus.prometheusSpec.podAntiAffinityTopologyKey], ["hard", zone]);
      assert.deepEqual([prod.alertmanager.alertmanagerSpec.podAntiAffinity, prod.alertmanager.alertmanagerSpec.podAntiAffinityTopologyKey], ["hard", zone]);
      // prod: 2 Prometheus, 3 Alertmanagers: all but one stay up through a drain.
      assert.deepEqual(prod.prometheus.podDisruptionBudget, { enabled: true, minAvailable: 1, unhealthyPodEvictionPolicy: "AlwaysAllow" });
      assert.deepEqual(prod.alertmanager.podDisruptionBudget, { enabled: true, minAvailable: 2, unhealthyPodEvictionPolicy: "AlwaysAllow" });
      const dev = release((await plan("dev")).resources, "kube-prometheus-stack").props.values;
      assert.equal(dev.prometheus.prometheusSpec.podAntiAffinity, "soft");
      assert.deepEqual(dev.prometheus.podDisruptionBudget, { enabled: false }, "minAvailable 1 of 1 would block every drain");
    });

    it("refuses more HA replicas than zones (hard anti-affinity could never schedule them), naming the key", () => {
      assert.throws(
        () => resolveMonitoringArgs({ ...MONITORING_REFS, zoneCount: 2, prometheusReplicas: 3, alerting: { replicas: 3 } }),
        (e: unknown) =>
          e instanceof SettingsError &&
          e.problems.some((p) => /^prometheusReplicas must be at most the number of zones \(2\)/.test(p)) &&
          e.problems.some((p) => /^alerting\.replicas must be at most the number of zones \(2\)/.test(p)),
      );
      // One replica fits any cluster; as many replicas as zones fit.
      resolveMonitoringArgs({ ...MONITORING_REFS, zoneCount: 1, prometheusReplicas: 1, alerting: { replicas: 1 } });
      resolveMonitoringArgs({ ...MONITORING_REFS, zoneCount: 3, prometheusReplicas: 3, alerting: { replicas: 3 } });
      resolveMonitoringArgs({ ...MONITORING_REFS, zoneCount: 1, alerting: { enabled: false, replicas: 3 } });
    });

    it("runs node-exporter in its own privileged namespace, so monitoring enforces baseline", async () => {
      const p = await plan("prod");
      const ns = (name: string) => ofType(p.resources, "kubernetes:core/v1:Namespace").find((r) => r.props.metadata.name === name)!;
      const kps = release(p.resources, "kube-prometheus-stack");
      const override = kps.props.values["prometheus-node-exporter"].namespaceOverride;
      assert.notEqual(override, MONITORING_NAMESPACE);
      assert.equal(ns(override).props.metadata.labels["pod-security.kubernetes.io/enforce"], "privileged");
      assert.ok(kps.dependencies.includes(ns(override).urn), "the release waits for node-exporter's namespace");
      const levels = ["privileged", "baseline", "restricted"];
      const enforced = ns(MONITORING_NAMESPACE).props.metadata.labels["pod-security.kubernetes.io/enforce"];
      assert.ok(levels.indexOf(enforced) >= 1, `monitoring enforces ${enforced}`);
    });

    it("refuses a GPU Operator version whose dcgm-exporter labels the table does not know, naming the argument", () => {
      assert.throws(
        () => resolveMonitoringArgs({ ...MONITORING_REFS, gpuOperatorVersion: "v99.1.0" }),
        (e: unknown) =>
          e instanceof SettingsError && e.problems.some((p) => /^gpuOperatorVersion must be one of "v25\.10\.1", "v26\.7\.0", got "v99\.1\.0"$/.test(p)),
      );
      assert.equal(resolveMonitoringArgs({ ...MONITORING_REFS, gpuOperatorVersion: "v26.7.0" }).dcgmLabels.hostname, "hostname");
      assert.equal(resolveMonitoringArgs(MONITORING_REFS).dcgmLabels.hostname, "Hostname");
    });
  });

  describe("builders", () => {
    const base = {
      ...MONITORING_REFS,
      servingGroups: [alertGroup("a", true)],
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
      const [keep] = tritonRelabelConfigs([alertGroup("a", true), alertGroup("b", false)]);
      assert.equal(keep.regex, "a-metrics|a-canary-metrics|b-metrics");
    });

    it("scrapes DCGM at the stack's interval", () => {
      assert.equal(dcgmScrapeConfig({ scrapeInterval: "15s", gpuOperatorNamespace: "gpu-operator" }).scrape_interval, "15s");
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
      const refs = { ...MONITORING_REFS, servingGroups: [alertGroup("a", false)], storageClassName: "c" };
      const r = resolveMonitoringArgs(refs);
      const cfg = loadConfig(raw({}), "s").monitoring;
      const {
        labels,
        servingNamespace,
        servingGroups,
        storageClassName: _class,
        gpuOperatorVersion: _version,
        gpuOperatorNamespace: _namespace,
        zoneCount: _zones,
        dcgmLabels: _labels,
        retentionSize,
        ...settings
      } = r;
      assert.deepEqual(settings, cfg);
      assert.deepEqual({ labels, servingNamespace, servingGroups }, { labels: {}, servingNamespace: "triton", servingGroups: refs.servingGroups });
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

    it("refuses a GPU Operator version without a dcgm-exporter label row, naming gpu.operator.version", () => {
      const gpu = JSON.parse(raw(ok)["triton-platform:gpu"]);
      const withVersion = (version: string) => ({ ...raw(ok), "triton-platform:gpu": JSON.stringify({ ...gpu, operator: { ...gpu.operator, version } }) });
      assert.throws(
        () => loadConfig(withVersion("v99.1.0"), "s"),
        /triton-platform:gpu\.operator\.version must be one of v25\.10\.1, v26\.7\.0 .*, got "v99\.1\.0"/,
      );
      for (const v of ["v25.10.1", "v26.7.0"]) assert.equal(loadConfig(withVersion(v), "s").gpu.operator.version, v);
    });

    it("refuses more HA Prometheus or Alertmanager replicas than cluster zones, naming each key", () => {
      // The dev fixture has one zone.
      const cfg = (m: unknown) => loadConfig(raw({ ...ok, ...(m as object) }), "s");
      assert.throws(
        () => cfg({ prometheusReplicas: 2, alerting: { replicas: 3 } }),
        (e: unknown) =>
          e instanceof ConfigError &&
          /triton-platform:monitoring\.prometheusReplicas must be at most the number of cluster\.zones \(1\)/.test(e.message) &&
          /triton-platform:monitoring\.alerting\.replicas must be at most the number of cluster\.zones \(1\)/.test(e.message),
      );
      assert.equal(cfg({ prometheusReplicas: 1, alerting: { enabled: false, replicas: 3 } }).monitoring.prometheusReplicas, 1);
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
