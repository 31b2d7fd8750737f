// Pure builders of the Monitoring component: resolved args → the plain data of its Namespace,
// Grafana admin Secret, Helm releases, PrometheusRule and dashboard ConfigMaps. The scrape
// (scrape.ts), the alert rules (rules.ts), the adapter rule (adapter.ts) and the dashboards
// (dashboards.ts) are built in their own modules; index.ts only creates resources from these.
import type * as pulumi from "@pulumi/pulumi";
import { MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE } from "../contracts";
import { helmRelease } from "../helm";
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
import type { ResolvedMonitoring } from "./schema";
import { additionalScrapeConfigs } from "./scrape";
import { alertRuleFile } from "./rules";
import { pendingAdapterRule, queueAdapterRule } from "./adapter";
import { dashboards } from "./dashboards";
import { withAlertmanagerRouting } from "./alertmanager";

export const GRAFANA_ADMIN_SECRET_NAME = "grafana-admin";
export const GRAFANA_ADMIN_USER = "admin";
export const KPS_RELEASE_NAME = "kube-prometheus-stack";
export const ADAPTER_RELEASE_NAME = "prometheus-adapter";
/** Alertmanager's volume: it keeps only silences and the notification log. */
const ALERTMANAGER_STORAGE_SIZE = "2Gi";

/** The chart's Prometheus Service, in-cluster (the adapter's URL; with its port, the stack output). */
export const PROMETHEUS_SERVICE_URL = `http://${KPS_PROMETHEUS_SERVICE.name}.${MONITORING_NAMESPACE}.svc`;

/** The monitoring Namespace. */
export function monitoringNamespace(r: ResolvedMonitoring) {
  return {
    metadata: {
      name: MONITORING_NAMESPACE,
      labels: {
        ...r.labels,
        // node-exporter, the one pod that needs host access, runs in its own namespace: no pod
        // here may run privileged or on the host's network, PID space or paths.
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": "latest",
        // restricted is the aim: what would fail it is reported, not refused.
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/audit": "restricted",
      },
    },
  };
}

/** node-exporter's own Namespace (the chart's prometheus-node-exporter.namespaceOverride). */
export function nodeExporterNamespace(r: ResolvedMonitoring) {
  return {
    metadata: {
      name: NODE_EXPORTER_NAMESPACE,
      labels: {
        ...r.labels,
        // node-exporter needs hostNetwork/hostPID/hostPath, which only the "privileged" level
        // admits; "baseline" would silently leave nodes unmonitored. Nothing else runs here.
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "baseline",
      },
    },
  };
}

/** The Secret grafana.admin.existingSecret names; the password is generated (never a literal in code or stack files). */
export function grafanaAdminSecret(r: ResolvedMonitoring, password: pulumi.Input<string>) {
  return {
    metadata: { name: GRAFANA_ADMIN_SECRET_NAME, namespace: MONITORING_NAMESPACE, labels: { ...r.labels } },
    type: "Opaque",
    stringData: { [GRAFANA_ADMIN_SECRET_KEYS.user]: GRAFANA_ADMIN_USER, [GRAFANA_ADMIN_SECRET_KEYS.password]: password },
  };
}

/** The kube-prometheus-stack Helm release arguments (values included). */
export function kubePrometheusStackRelease(r: ResolvedMonitoring) {
  const release = helmRelease({
    chart: KUBE_PROMETHEUS_STACK_CHART,
    name: KPS_RELEASE_NAME,
    version: r.kubePrometheusStackVersion,
    namespace: MONITORING_NAMESPACE,
    values: kubePrometheusStackValues({
      commonLabels: r.labels,
      scrapeInterval: r.scrapeInterval,
      evaluationInterval: r.scrapeInterval,
      retention: r.retention,
      retentionSize: r.retentionSize,
      storageSize: r.storageSize,
      storageClass: r.storageClassName,
      prometheusReplicas: r.prometheusReplicas,
      // Memory limit = request: an over-committed node OOM-kills Prometheus mid-compaction otherwise.
      prometheusResources: { requests: { ...r.prometheusResources }, limits: { memory: r.prometheusResources.memory } },
      additionalScrapeConfigs: additionalScrapeConfigs(r),
      alertmanager: { enabled: r.alerting.enabled, replicas: r.alerting.replicas, storageSize: ALERTMANAGER_STORAGE_SIZE },
      grafanaAdminSecretName: GRAFANA_ADMIN_SECRET_NAME,
      namespace: MONITORING_NAMESPACE,
      nodeExporterNamespace: NODE_EXPORTER_NAMESPACE,
    }),
  });
  // Alertmanager routing and receivers (alertmanager.ts): merged into the values' alertmanager section.
  return withAlertmanagerRouting(release, r.alerting);
}

/** The prometheus-adapter Helm release arguments. */
export function prometheusAdapterRelease(r: ResolvedMonitoring) {
  return helmRelease({
    chart: PROMETHEUS_ADAPTER_CHART,
    name: ADAPTER_RELEASE_NAME,
    version: r.prometheusAdapterVersion,
    namespace: MONITORING_NAMESPACE,
    values: prometheusAdapterValues({
      prometheusUrl: PROMETHEUS_SERVICE_URL,
      prometheusPort: KPS_PROMETHEUS_SERVICE.port,
      replicas: r.adapterReplicas,
      rules: [queueAdapterRule(r.scrapeInterval), pendingAdapterRule()],
      customLabels: r.labels,
    }),
  });
}

/** The PrometheusRule carrying the Triton and GPU alert groups. */
export function alertsPrometheusRule(r: ResolvedMonitoring) {
  return {
    apiVersion: MONITORING_API_VERSION,
    kind: "PrometheusRule",
    metadata: { name: "triton-platform-alerts", namespace: MONITORING_NAMESPACE, labels: { ...r.labels } },
    spec: alertRuleFile({ thresholds: r.thresholds, servingNamespace: r.servingNamespace, servingGroups: r.servingGroups, dcgmLabels: r.dcgmLabels }),
  };
}

/** One ConfigMap per dashboard, labelled for the Grafana sidecar. */
export function dashboardConfigMaps(r: ResolvedMonitoring, all: Record<string, Dashboard> = dashboards(r.dcgmLabels)) {
  return Object.entries(all).map(([file, d]) => ({
    metadata: {
      name: `dashboard-${d.uid}`,
      namespace: MONITORING_NAMESPACE,
      labels: { ...r.labels, [GRAFANA_DASHBOARD_LABEL.key]: GRAFANA_DASHBOARD_LABEL.value },
    },
    data: { [file]: JSON.stringify(d, null, 2) },
  }));
}
