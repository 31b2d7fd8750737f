// Observability for the platform: kube-prometheus-stack (Prometheus, Alertmanager, Grafana),
// the Triton and DCGM scrape, alert rules, dashboards, and prometheus-adapter for the HPAs.
// Pure builders return plain data; the class below only creates resources from it.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as random from "@pulumi/random";
import { MONITORING_NAMESPACE } from "../contracts";
import {
  GRAFANA_ADMIN_SECRET_KEYS,
  GRAFANA_DASHBOARD_LABEL,
  KPS_PROMETHEUS_SERVICE,
  KUBE_PROMETHEUS_STACK_CHART,
  kubePrometheusStackValues,
} from "../upstream/kube-prometheus-stack";
import { PROMETHEUS_ADAPTER_CHART, prometheusAdapterValues } from "../upstream/prometheus-adapter";
import { MONITORING_API_VERSION } from "../upstream/prometheus";
import type { Dashboard } from "../upstream/grafana";
import { resolveMonitoringArgs, type MonitoringArgs, type ResolvedMonitoring } from "./schema";
import { additionalScrapeConfigs, tritonServiceMonitor } from "./scrape";
import { alertRuleFile } from "./rules";
import { queueAdapterRule } from "./adapter";
import { dashboards } from "./dashboards";

export * from "./schema";
export { tritonServiceMonitor, tritonRelabelConfigs, dcgmScrapeConfig, additionalScrapeConfigs, TRITON_JOB } from "./scrape";
export { alertRuleFile } from "./rules";
export { queueMetricsQuery, adapterRateWindow } from "./adapter";
export { dashboards, dashboardExpressions } from "./dashboards";

export const GRAFANA_ADMIN_SECRET_NAME = "grafana-admin";

/** The chart's Prometheus Service, in-cluster (the adapter's URL; with its port, the stack output). */
const PROMETHEUS_SERVICE_URL = `http://${KPS_PROMETHEUS_SERVICE.name}.${MONITORING_NAMESPACE}.svc`;
export const GRAFANA_ADMIN_USER = "admin";
export const KPS_RELEASE_NAME = "kube-prometheus-stack";
export const ADAPTER_RELEASE_NAME = "prometheus-adapter";

/** The monitoring Namespace. */
export function monitoringNamespace(r: ResolvedMonitoring) {
  return {
    metadata: {
      name: MONITORING_NAMESPACE,
      labels: {
        ...r.labels,
        // node-exporter (part of the chart) needs hostNetwork/hostPID/hostPath, which only the
        // "privileged" level admits; "restricted" would silently leave nodes unmonitored.
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "baseline",
      },
    },
  };
}

/** The kube-prometheus-stack Helm release arguments (values included). */
export function kubePrometheusStackRelease(r: ResolvedMonitoring) {
  return {
    name: KPS_RELEASE_NAME,
    chart: KUBE_PROMETHEUS_STACK_CHART.chart,
    version: r.kubePrometheusStackVersion,
    repositoryOpts: { repo: KUBE_PROMETHEUS_STACK_CHART.repo },
    namespace: MONITORING_NAMESPACE,
    values: kubePrometheusStackValues({
      commonLabels: r.labels,
      scrapeInterval: r.scrapeInterval,
      evaluationInterval: r.scrapeInterval,
      retention: r.retention,
      retentionSize: r.retentionSize,
      storageSize: r.storageSize,
      storageClass: r.storageClass,
      prometheusReplicas: r.prometheusReplicas,
      // Memory limit = request: an over-committed node OOM-kills Prometheus mid-compaction otherwise.
      prometheusResources: { requests: { ...r.prometheusResources }, limits: { memory: r.prometheusResources.memory } },
      additionalScrapeConfigs: additionalScrapeConfigs(r),
      alertmanager: { enabled: r.alerting.enabled, replicas: r.alerting.replicas, storageSize: "2Gi" },
      grafanaAdminSecretName: GRAFANA_ADMIN_SECRET_NAME,
    }),
  };
}

/** The prometheus-adapter Helm release arguments. */
export function prometheusAdapterRelease(r: ResolvedMonitoring) {
  return {
    name: ADAPTER_RELEASE_NAME,
    chart: PROMETHEUS_ADAPTER_CHART.chart,
    version: r.prometheusAdapterVersion,
    repositoryOpts: { repo: PROMETHEUS_ADAPTER_CHART.repo },
    namespace: MONITORING_NAMESPACE,
    values: prometheusAdapterValues({
      prometheusUrl: PROMETHEUS_SERVICE_URL,
      prometheusPort: KPS_PROMETHEUS_SERVICE.port,
      replicas: r.adapterReplicas,
      rules: [queueAdapterRule(r.scrapeInterval)],
      customLabels: r.labels,
    }),
  };
}

/** The PrometheusRule carrying the Triton and GPU alert groups. */
export function alertsPrometheusRule(r: ResolvedMonitoring) {
  return {
    apiVersion: MONITORING_API_VERSION,
    kind: "PrometheusRule",
    metadata: { name: "triton-platform-alerts", namespace: MONITORING_NAMESPACE, labels: { ...r.labels } },
    spec: alertRuleFile(r.thresholds),
  };
}

/** One ConfigMap per dashboard, labelled for the Grafana sidecar. */
export function dashboardConfigMaps(r: ResolvedMonitoring, all: Record<string, Dashboard> = dashboards()) {
  return Object.entries(all).map(([file, d]) => ({
    metadata: {
      name: `dashboard-${d.uid}`,
      namespace: MONITORING_NAMESPACE,
      labels: { ...r.labels, [GRAFANA_DASHBOARD_LABEL.key]: GRAFANA_DASHBOARD_LABEL.value },
    },
    data: { [file]: JSON.stringify(d, null, 2) },
  }));
}

export class Monitoring extends pulumi.ComponentResource {
  readonly namespace: pulumi.Output<string>;
  readonly grafanaAdminSecretName: pulumi.Output<string>;
  readonly prometheusUrl: string;
  readonly kubePrometheusStack: k8s.helm.v3.Release;
  readonly prometheusAdapter: k8s.helm.v3.Release;

  constructor(name: string, args: MonitoringArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:monitoring:Monitoring", name, {}, opts);
    const r = resolveMonitoringArgs(args, name);

    const ns = new k8s.core.v1.Namespace(`${name}-ns`, monitoringNamespace(r), { parent: this });

    // Generated, stored only as a secret in state: no literal password in code or stack files.
    const password = new random.RandomPassword(`${name}-grafana-admin`, { length: 32, special: false }, { parent: this });
    const adminSecret = new k8s.core.v1.Secret(
      `${name}-grafana-admin`,
      {
        metadata: { name: GRAFANA_ADMIN_SECRET_NAME, namespace: MONITORING_NAMESPACE, labels: { ...r.labels } },
        type: "Opaque",
        stringData: { [GRAFANA_ADMIN_SECRET_KEYS.user]: GRAFANA_ADMIN_USER, [GRAFANA_ADMIN_SECRET_KEYS.password]: password.result },
      },
      { parent: this, dependsOn: [ns] },
    );

    this.kubePrometheusStack = new k8s.helm.v3.Release(`${name}-kube-prometheus-stack`, kubePrometheusStackRelease(r), {
      parent: this,
      dependsOn: [ns, adminSecret],
    });

    // ServiceMonitor and PrometheusRule are CRDs the release installs: without dependsOn the
    // first `pulumi up` fails with "no matches for kind".
    const crdOpts = { parent: this, dependsOn: [this.kubePrometheusStack] };
    new k8s.apiextensions.CustomResource(`${name}-triton-servicemonitor`, tritonServiceMonitor(r, MONITORING_NAMESPACE), crdOpts);
    new k8s.apiextensions.CustomResource(`${name}-alerts`, alertsPrometheusRule(r), crdOpts);

    for (const cm of dashboardConfigMaps(r)) {
      new k8s.core.v1.ConfigMap(`${name}-${cm.metadata.name}`, cm, { parent: this, dependsOn: [ns] });
    }

    this.prometheusAdapter = new k8s.helm.v3.Release(`${name}-prometheus-adapter`, prometheusAdapterRelease(r), {
      parent: this,
      dependsOn: [this.kubePrometheusStack],
    });

    this.namespace = ns.metadata.name;
    this.grafanaAdminSecretName = adminSecret.metadata.name;
    this.prometheusUrl = `${PROMETHEUS_SERVICE_URL}:${KPS_PROMETHEUS_SERVICE.port}`;
    this.registerOutputs({ namespace: this.namespace, grafanaAdminSecretName: this.grafanaAdminSecretName, prometheusUrl: this.prometheusUrl });
  }
}
