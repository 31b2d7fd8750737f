// prometheus-adapter (prometheus-community/helm-charts): chart coordinates, value keys and
// the adapter's rule format (rules.custom[]: seriesQuery, resources, name, metricsQuery),
// spelled once. Template placeholders are the adapter's Go-template markers.
import { labelsChartDoesNotOwn } from "../../lib/labels";

export const PROMETHEUS_ADAPTER_CHART = {
  chart: "prometheus-adapter",
  repo: "https://prometheus-community.github.io/helm-charts",
  /** The version these value keys were checked against (stack files may pin another). */
  version: "5.2.0",
} as const;

/** Placeholders the adapter substitutes in metricsQuery. */
export const ADAPTER_TEMPLATE = {
  series: "<<.Series>>",
  labelMatchers: "<<.LabelMatchers>>",
  groupBy: "<<.GroupBy>>",
} as const;

/** One custom-metrics rule (rules.custom[] of the chart). */
export interface AdapterRule {
  readonly seriesQuery: string;
  readonly resources: { overrides: Record<string, { resource: string }> };
  readonly name: { matches: string; as: string };
  readonly metricsQuery: string;
}

/**
 * Labels the chart sets on its objects itself, so customLabels must not repeat them: the
 * `k8s-prometheus-adapter.labels` and `.selectorLabels` helpers (templates/_helpers.tpl at
 * prometheus-adapter-5.2.0).
 */
export const ADAPTER_CHART_LABELS = [
  "helm.sh/chart",
  "app.kubernetes.io/managed-by",
  "app.kubernetes.io/component",
  "app.kubernetes.io/part-of",
  "app.kubernetes.io/name",
  "app.kubernetes.io/instance",
  "app.kubernetes.io/version",
] as const;

export interface PrometheusAdapterInputs {
  readonly prometheusUrl: string;
  readonly prometheusPort: number;
  readonly replicas: number;
  readonly rules: AdapterRule[];
  /** The stack's labels; those the chart owns (ADAPTER_CHART_LABELS) are left to the chart. */
  readonly customLabels: Readonly<Record<string, string>>;
}

export function prometheusAdapterValues(i: PrometheusAdapterInputs): Record<string, unknown> {
  return {
    prometheus: { url: i.prometheusUrl, port: i.prometheusPort },
    replicas: i.replicas,
    customLabels: labelsChartDoesNotOwn(i.customLabels, ADAPTER_CHART_LABELS),
    // Only the rules the HPAs use: the default rule set publishes every series as a custom
    // metric and makes discovery slow on a large Prometheus.
    rules: { default: false, custom: i.rules },
  };
}
