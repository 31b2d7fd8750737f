// The prometheus-adapter rules behind the HPAs' per-pod custom metrics (contracts: HPA_QUEUE_METRIC,
// HPA_PENDING_METRIC).
import { HPA_PENDING_METRIC, HPA_QUEUE_METRIC } from "../contracts";
import { ADAPTER_TEMPLATE, type AdapterRule } from "../upstream/prometheus-adapter";
import { TRITON_COUNTERS, TRITON_GAUGES } from "../upstream/triton-metrics";
import { TRITON_JOB } from "./scrape";

/** The adapter's markers, or concrete values when a test renders the query. */
export interface AdapterTemplateValues {
  readonly labelMatchers: string;
  readonly groupBy: string;
}

/** rate() window: four scrape intervals, at least 1m, so every pod has two samples in it. */
export function adapterRateWindow(scrapeInterval: string): string {
  const m = /^(\d+)(s|m)$/.exec(scrapeInterval);
  if (!m) throw new Error(`scrapeInterval ${JSON.stringify(scrapeInterval)} must be in s or m`);
  const seconds = Number(m[1]) * (m[2] === "m" ? 60 : 1) * 4;
  return `${Math.max(60, seconds)}s`;
}

/**
 * Average queue time per request of a pod, µs: rate(queue µs) ÷ rate(successes). clamp_min
 * keeps an idle pod at 0 instead of NaN (0/0), so the HPA can scale an idle group down; a pod
 * that queues without completing anything reports a large value and scales the group up.
 */
export function queueMetricsQuery(window: string, t: AdapterTemplateValues = ADAPTER_TEMPLATE): string {
  const m = `{job="${TRITON_JOB}",${t.labelMatchers}}`;
  return (
    `sum by (${t.groupBy}) (rate(${TRITON_COUNTERS.queueDurationUs}${m}[${window}])) / ` +
    `clamp_min(sum by (${t.groupBy}) (rate(${TRITON_COUNTERS.requestSuccess}${m}[${window}])), 0.001)`
  );
}

/** rules.custom[] entry publishing HPA_QUEUE_METRIC per pod (and namespace). */
export function queueAdapterRule(scrapeInterval: string): AdapterRule {
  return {
    seriesQuery: `${TRITON_COUNTERS.queueDurationUs}{job="${TRITON_JOB}",namespace!="",pod!=""}`,
    resources: { overrides: { namespace: { resource: "namespace" }, pod: { resource: "pod" } } },
    name: { matches: `^${TRITON_COUNTERS.queueDurationUs}$`, as: HPA_QUEUE_METRIC },
    metricsQuery: queueMetricsQuery(adapterRateWindow(scrapeInterval)),
  };
}

/**
 * Requests a pod holds that have not completed, summed over its models: a gauge, read as is.
 * Unlike the queue time (which grows only when a request succeeds), it rises on a wedged pod.
 */
export function pendingMetricsQuery(t: AdapterTemplateValues = ADAPTER_TEMPLATE): string {
  return `sum by (${t.groupBy}) (${TRITON_GAUGES.pendingRequestCount}{job="${TRITON_JOB}",${t.labelMatchers}})`;
}

/** rules.custom[] entry publishing HPA_PENDING_METRIC per pod (and namespace). */
export function pendingAdapterRule(): AdapterRule {
  return {
    seriesQuery: `${TRITON_GAUGES.pendingRequestCount}{job="${TRITON_JOB}",namespace!="",pod!=""}`,
    resources: { overrides: { namespace: { resource: "namespace" }, pod: { resource: "pod" } } },
    name: { matches: `^${TRITON_GAUGES.pendingRequestCount}$`, as: HPA_PENDING_METRIC },
    metricsQuery: pendingMetricsQuery(),
  };
}
