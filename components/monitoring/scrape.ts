// What Prometheus scrapes, and why it is split in two:
// - Triton: a ServiceMonitor. The stack owns the metrics Services and their label contract
//   (components/contracts.ts), the operator reloads Prometheus when serving groups change
//   without a chart upgrade, and the object sits next to the rules that read its series.
// - DCGM exporter: a raw additionalScrapeConfigs job. The exporter's Service belongs to the
//   GPU Operator chart (whose own ServiceMonitor default differs by chart version, so the
//   GPU component leaves it off: DCGM_SCRAPED_BY_MONITORING), and its series carry the
//   namespace/pod of the pod *using* the GPU. A ServiceMonitor always adds the exporter pod's
//   own namespace/pod as target labels; here they go to exporter_* labels instead, so the
//   exporter's namespace/pod reach Prometheus unchanged (no target label collides with them)
//   and GPU series join Triton's by pod. Only the GPU Operator's namespace is discovered and
//   honor_labels stays off: a Service of that name elsewhere, or an exporter writing job or
//   instance, cannot feed series into the alerts.
import {
  GATEWAY_METRICS,
  GATEWAY_POD_LABELS,
  TRITON_METRICS_PORT_NAME,
  TRITON_METRICS_SERVICE_LABEL,
  tritonMetricsServiceName,
  TRITON_ALL_PODS,
  SERVING_GROUP_LABEL,
  type Track,
} from "../contracts";
import { ADMIN_PATHS } from "../upstream/envoy";
import { ENVOY_CLUSTER_COUNTERS } from "../upstream/envoy-stats";
import { DCGM_EXPORTER } from "../upstream/dcgm";
import { K8S_SD, MONITORING_API_VERSION, regexLiteral, toOperatorRelabel, type RelabelConfig, type ScrapeConfig } from "../upstream/prometheus";
import type { ResolvedMonitoring } from "./schema";

/** job label of Triton targets (the alerts and the adapter select on it). */
export const TRITON_JOB = "triton";
/** job label of DCGM exporter targets. */
export const DCGM_JOB = "dcgm-exporter";
/** Labels the Triton scrape adds to every series (from the pod labels of tritonSelector). */
export const TRITON_TARGET_LABELS = { servingGroup: SERVING_GROUP_LABEL, track: "track" } as const;

/** The metrics Service names of every declared group and track. */
export function tritonMetricsServiceNames(groups: ResolvedMonitoring["servingGroups"]): string[] {
  return groups.flatMap((g) => (["primary", ...(g.canary ? ["canary"] : [])] as Track[]).map((t) => tritonMetricsServiceName(g.name, t)));
}

/**
 * Relabelling for Triton targets, as Prometheus relabel_configs (the ServiceMonitor uses the
 * same list in the operator's spelling; the tests run it through promtool).
 */
export function tritonRelabelConfigs(groups: ResolvedMonitoring["servingGroups"]): RelabelConfig[] {
  return [
    // Only the metrics Services of declared groups: a stray Service with the same label
    // must not feed the HPAs' custom metric.
    { source_labels: [K8S_SD.serviceName], regex: tritonMetricsServiceNames(groups).map(regexLiteral).join("|"), action: "keep" },
    // track (primary|canary) and the group from the pod labels: the canary alert and the
    // canary-vs-primary dashboard compare the two tracks of one group.
    { source_labels: [K8S_SD.podLabel("track")], target_label: TRITON_TARGET_LABELS.track, action: "replace" },
    { source_labels: [K8S_SD.podLabel("app.kubernetes.io/instance")], target_label: TRITON_TARGET_LABELS.servingGroup, action: "replace" },
    // A stable job name whatever the Service is called.
    { target_label: "job", replacement: TRITON_JOB, action: "replace" },
  ];
}

/** ServiceMonitor for the Triton metrics Services (port "metrics", 8002) of every group. */
export function tritonServiceMonitor(r: ResolvedMonitoring, namespace: string) {
  return {
    apiVersion: MONITORING_API_VERSION,
    kind: "ServiceMonitor",
    metadata: { name: "triton", namespace, labels: { ...r.labels, ...TRITON_ALL_PODS } },
    spec: {
      namespaceSelector: { matchNames: [r.servingNamespace] },
      selector: { matchLabels: { ...TRITON_METRICS_SERVICE_LABEL } },
      endpoints: [
        {
          port: TRITON_METRICS_PORT_NAME,
          path: "/metrics",
          interval: r.scrapeInterval,
          relabelings: tritonRelabelConfigs(r.servingGroups).map(toOperatorRelabel),
        },
      ],
    },
  };
}

/** The DCGM exporter job (prometheusSpec.additionalScrapeConfigs). */
export function dcgmScrapeConfig(r: Pick<ResolvedMonitoring, "scrapeInterval" | "gpuOperatorNamespace">): ScrapeConfig {
  return {
    job_name: DCGM_JOB,
    scrape_interval: r.scrapeInterval,
    metrics_path: "/metrics",
    scheme: "http",
    // The GPU Operator's namespace only (the GPU component owns it): endpoints elsewhere are never targets.
    kubernetes_sd_configs: [{ role: "endpoints", namespaces: { names: [r.gpuOperatorNamespace] } }],
    relabel_configs: [
      {
        source_labels: [K8S_SD.serviceName, K8S_SD.endpointPortName],
        regex: `${regexLiteral(DCGM_EXPORTER.serviceName)};${regexLiteral(DCGM_EXPORTER.portName)}`,
        action: "keep",
      },
      { source_labels: [K8S_SD.podNodeName], target_label: "node", action: "replace" },
      { source_labels: [K8S_SD.namespace], target_label: "exporter_namespace", action: "replace" },
      { source_labels: [K8S_SD.podName], target_label: "exporter_pod", action: "replace" },
    ],
  };
}

/** Every raw scrape job the stack adds to Prometheus. */
export function additionalScrapeConfigs(r: Pick<ResolvedMonitoring, "scrapeInterval" | "gpuOperatorNamespace">): ScrapeConfig[] {
  return [dcgmScrapeConfig(r)];
}

/** job label of the gateway's Envoy targets (the canary gates select on it). */
export const GATEWAY_JOB = "envoy-gateway";

/**
 * Envoy series the gateway scrape keeps: the cluster counters the gates and a person debugging
 * a canary read. Envoy exports every stat of every cluster (and histograms per cluster); at
 * 100 groups that is tens of thousands of series per pod, so everything else is dropped.
 */
export const GATEWAY_KEPT_METRICS = [...Object.values(ENVOY_CLUSTER_COUNTERS), "envoy_server_live", "envoy_server_uptime"];

/** Relabelling of gateway targets: a stable job name (the operator's default is <namespace>/<PodMonitor name>). */
export function gatewayRelabelConfigs(): RelabelConfig[] {
  return [{ target_label: "job", replacement: GATEWAY_JOB, action: "replace" }];
}

/**
 * PodMonitor for the gateway pods: Envoy's Prometheus stats through the gateway's metrics
 * listener (GATEWAY_METRICS, the only path it routes to the loopback admin), never the admin
 * port. The gateway's NetworkPolicy admits that port from the Prometheus pods only.
 */
export function gatewayPodMonitor(r: Pick<ResolvedMonitoring, "labels" | "servingNamespace" | "scrapeInterval">, namespace: string) {
  return {
    apiVersion: MONITORING_API_VERSION,
    kind: "PodMonitor",
    metadata: { name: "triton-gateway", namespace, labels: { ...r.labels } },
    spec: {
      namespaceSelector: { matchNames: [r.servingNamespace] },
      selector: { matchLabels: { ...GATEWAY_POD_LABELS } },
      podMetricsEndpoints: [
        {
          port: GATEWAY_METRICS.portName,
          path: ADMIN_PATHS.prometheusStats,
          interval: r.scrapeInterval,
          relabelings: gatewayRelabelConfigs().map(toOperatorRelabel),
          metricRelabelings: [toOperatorRelabel({ source_labels: ["__name__"], regex: GATEWAY_KEPT_METRICS.map(regexLiteral).join("|"), action: "keep" })],
        },
      ],
    },
  };
}
