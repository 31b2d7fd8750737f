// Grafana dashboards as data: Triton overview, GPU (DCGM), and canary vs primary side by
// side. Expressions use only names from components/upstream/{triton-metrics,dcgm}.ts; the
// tests parse every one with promtool and check its metric names.
import { TRITON_COUNTERS, TRITON_GAUGES, TRITON_SUMMARIES, TRITON_SUMMARY_QUANTILES } from "../upstream/triton-metrics";
import { DCGM_METRICS, type DcgmLabelNames } from "../upstream/dcgm";
import {
  DATASOURCE_VARIABLE,
  GRAFANA_DASHBOARD_SCHEMA_VERSION,
  PANEL_DATASOURCE,
  RATE_INTERVAL,
  type Dashboard,
  type GrafanaUnit,
  type Panel,
  type TemplateVariable,
} from "../upstream/grafana";
import type { Track } from "../contracts";
import { TRITON_JOB, TRITON_TARGET_LABELS } from "./scrape";

interface PanelSpec {
  title: string;
  unit: GrafanaUnit;
  targets: { expr: string; legend: string }[];
  description?: string;
  /** Width in grid units (24 = full row). @default 12 */
  w?: number;
}

/** Lay panels out left to right, 8 high, wrapping at 24 columns. */
function layout(specs: PanelSpec[]): Panel[] {
  let x = 0;
  let y = 0;
  return specs.map((s, i) => {
    const w = s.w ?? 12;
    if (x + w > 24) {
      x = 0;
      y += 8;
    }
    const panel: Panel = {
      id: i + 1,
      type: "timeseries",
      title: s.title,
      ...(s.description ? { description: s.description } : {}),
      gridPos: { x, y, w, h: 8 },
      datasource: { ...PANEL_DATASOURCE },
      fieldConfig: { defaults: { unit: s.unit }, overrides: [] },
      targets: s.targets.map((t, j) => ({ refId: String.fromCharCode(65 + j), expr: t.expr, legendFormat: t.legend })),
    };
    x += w;
    return panel;
  });
}

function datasourceVariable(): TemplateVariable {
  return { name: DATASOURCE_VARIABLE, label: "Data source", type: "datasource", query: "prometheus" };
}

function labelVariable(name: string, label: string, metric: string, labelName: string, filter = ""): TemplateVariable {
  return {
    name,
    label,
    type: "query",
    datasource: { ...PANEL_DATASOURCE },
    query: { query: `label_values(${metric}${filter}, ${labelName})`, refId: `${name}-values` },
    includeAll: true,
    multi: true,
    allValue: ".*",
    refresh: 2,
  };
}

function dashboard(uid: string, title: string, variables: TemplateVariable[], panels: PanelSpec[]): Dashboard {
  return {
    uid,
    title,
    tags: ["triton-platform"],
    timezone: "utc",
    editable: false,
    schemaVersion: GRAFANA_DASHBOARD_SCHEMA_VERSION,
    refresh: "30s",
    time: { from: "now-6h", to: "now" },
    templating: { list: [datasourceVariable(), ...variables] },
    panels: layout(panels),
  };
}

const G = TRITON_TARGET_LABELS.servingGroup;
/** Label matchers of the Triton dashboards' variables. */
function tritonMatchers(extra: Record<string, string> = {}): string {
  const m: string[] = [`job="${TRITON_JOB}"`, `namespace=~"$namespace"`, `${G}=~"$group"`, `model=~"$model"`];
  for (const [k, v] of Object.entries(extra)) m.push(`${k}="${v}"`);
  return `{${m.join(", ")}}`;
}
const r = (metric: string, extra: Record<string, string> = {}) => `rate(${metric}${tritonMatchers(extra)}[${RATE_INTERVAL}])`;
const sr = (keys: string, metric: string, extra: Record<string, string> = {}) => `sum by (${keys}) (${r(metric, extra)})`;
/** Average µs per successful request of a cumulative duration counter. */
const perRequest = (keys: string, metric: string, extra: Record<string, string> = {}) =>
  `${sr(keys, metric, extra)} / ${sr(keys, TRITON_COUNTERS.requestSuccess, extra)}`;

function tritonVariables(): TemplateVariable[] {
  const s = TRITON_COUNTERS.requestSuccess;
  return [
    labelVariable("namespace", "Namespace", s, "namespace", `{job="${TRITON_JOB}"}`),
    labelVariable("group", "Serving group", s, G, `{job="${TRITON_JOB}", namespace=~"$namespace"}`),
    labelVariable("model", "Model", s, "model", `{job="${TRITON_JOB}", namespace=~"$namespace", ${G}=~"$group"}`),
  ];
}

/** Triton overview: throughput, success/failure by reason, queue vs compute, p50/p99, pending. */
export function tritonOverviewDashboard(): Dashboard {
  const mv = "model, version";
  return dashboard("triton-overview", "Triton / Overview", tritonVariables(), [
    {
      title: "Throughput (successful requests/s)",
      unit: "reqps",
      targets: [{ expr: sr(mv, TRITON_COUNTERS.requestSuccess), legend: "{{model}} v{{version}}" }],
    },
    {
      title: "Failures by reason (requests/s)",
      unit: "reqps",
      targets: [{ expr: sr("model, version, reason", TRITON_COUNTERS.requestFailure), legend: "{{model}} v{{version}} {{reason}}" }],
    },
    {
      title: "Inferences/s and average batch size",
      unit: "short",
      targets: [
        { expr: sr(mv, TRITON_COUNTERS.inferenceCount), legend: "{{model}} v{{version}} inferences/s" },
        { expr: `${sr(mv, TRITON_COUNTERS.inferenceCount)} / ${sr(mv, TRITON_COUNTERS.execCount)}`, legend: "{{model}} v{{version}} batch size" },
      ],
    },
    {
      title: "Queue vs compute time per request",
      unit: "µs",
      description: "Average µs per successful request: rate(cumulative duration) / rate(successes).",
      targets: [
        { expr: perRequest(mv, TRITON_COUNTERS.queueDurationUs), legend: "{{model}} v{{version}} queue" },
        { expr: perRequest(mv, TRITON_COUNTERS.computeInputDurationUs), legend: "{{model}} v{{version}} compute input" },
        { expr: perRequest(mv, TRITON_COUNTERS.computeInferDurationUs), legend: "{{model}} v{{version}} compute infer" },
        { expr: perRequest(mv, TRITON_COUNTERS.computeOutputDurationUs), legend: "{{model}} v{{version}} compute output" },
      ],
    },
    {
      title: "Request latency p50 / p99 (worst pod)",
      unit: "µs",
      description: "From nv_inference_request_summary_us (needs --metrics-config summary_latencies=true).",
      targets: [
        {
          expr: `max by (${mv}) (${TRITON_SUMMARIES.requestUs}${tritonMatchers({ quantile: TRITON_SUMMARY_QUANTILES.p50 })})`,
          legend: "{{model}} v{{version}} p50",
        },
        {
          expr: `max by (${mv}) (${TRITON_SUMMARIES.requestUs}${tritonMatchers({ quantile: TRITON_SUMMARY_QUANTILES.p99 })})`,
          legend: "{{model}} v{{version}} p99",
        },
      ],
    },
    {
      title: "Pending requests",
      unit: "short",
      targets: [{ expr: `sum by (${mv}) (${TRITON_GAUGES.pendingRequestCount}${tritonMatchers()})`, legend: "{{model}} v{{version}}" }],
    },
  ]);
}

/** GPU dashboard from DCGM only (Triton runs with --allow-gpu-metrics=false): utilisation, framebuffer, power, temperature, XID. */
export function gpuDashboard(labels: DcgmLabelNames): Dashboard {
  const { hostname, gpu } = labels;
  const m = `{${hostname}=~"$node"}`;
  const legend = `{{${hostname}}} GPU {{${gpu}}}`;
  return dashboard(
    "triton-gpu",
    "Triton / GPU (DCGM)",
    [labelVariable("node", "Node", DCGM_METRICS.gpuUtil, hostname)],
    [
      { title: "GPU utilisation", unit: "percent", targets: [{ expr: `${DCGM_METRICS.gpuUtil}${m}`, legend }] },
      {
        title: "Framebuffer used",
        unit: "mbytes",
        description: "DCGM_FI_DEV_FB_USED, FB_FREE and FB_RESERVED are MiB; the total is all three (the driver reserves part of the framebuffer).",
        targets: [
          { expr: `${DCGM_METRICS.fbUsedMiB}${m}`, legend: `${legend} used` },
          {
            expr: `${DCGM_METRICS.fbUsedMiB}${m} + ${DCGM_METRICS.fbFreeMiB}${m} + ${DCGM_METRICS.fbReservedMiB}${m}`,
            legend: `${legend} total`,
          },
        ],
      },
      { title: "Power draw", unit: "watt", targets: [{ expr: `${DCGM_METRICS.powerUsageW}${m}`, legend }] },
      { title: "Temperature", unit: "celsius", targets: [{ expr: `${DCGM_METRICS.gpuTempC}${m}`, legend }] },
      {
        title: "Last XID error (0 = none)",
        unit: "none",
        description: "DCGM_FI_DEV_XID_ERRORS is a gauge holding the last XID code, not a count.",
        targets: [{ expr: `max_over_time(${DCGM_METRICS.xidErrors}${m}[${RATE_INTERVAL}])`, legend }],
      },
      { title: "Memory copy utilisation", unit: "percent", targets: [{ expr: `${DCGM_METRICS.memCopyUtil}${m}`, legend }] },
    ],
  );
}

/** Canary vs primary: the same panels for each track, side by side (primary left, canary right). */
export function canaryDashboard(): Dashboard {
  const k = `${G}, model`;
  const panels: PanelSpec[] = [];
  const rows: { title: string; unit: GrafanaUnit; expr: (t: Track) => string }[] = [
    { title: "Throughput (successful requests/s)", unit: "reqps", expr: (t) => sr(k, TRITON_COUNTERS.requestSuccess, { track: t }) },
    {
      title: "Failure ratio",
      unit: "percentunit",
      expr: (t) =>
        `${sr(k, TRITON_COUNTERS.requestFailure, { track: t })} / (${sr(k, TRITON_COUNTERS.requestSuccess, { track: t })} + ${sr(k, TRITON_COUNTERS.requestFailure, { track: t })})`,
    },
    { title: "Average request time", unit: "µs", expr: (t) => perRequest(k, TRITON_COUNTERS.requestDurationUs, { track: t }) },
    {
      title: "p99 request latency (worst pod)",
      unit: "µs",
      expr: (t) => `max by (${k}) (${TRITON_SUMMARIES.requestUs}${tritonMatchers({ track: t, quantile: TRITON_SUMMARY_QUANTILES.p99 })})`,
    },
  ];
  for (const row of rows) {
    for (const t of ["primary", "canary"] as Track[]) {
      panels.push({ title: `${row.title}: ${t}`, unit: row.unit, w: 12, targets: [{ expr: row.expr(t), legend: "{{serving_group}} {{model}}" }] });
    }
  }
  return dashboard("triton-canary", "Triton / Canary vs primary", tritonVariables(), panels);
}

/** Every dashboard, keyed by the ConfigMap file name. */
export function dashboards(dcgmLabels: DcgmLabelNames): Record<string, Dashboard> {
  return {
    "triton-overview.json": tritonOverviewDashboard(),
    "triton-gpu.json": gpuDashboard(dcgmLabels),
    "triton-canary.json": canaryDashboard(),
  };
}

/** Every PromQL expression of a dashboard's panels. */
export function dashboardExpressions(d: Dashboard): string[] {
  return d.panels.flatMap((p) => p.targets.map((t) => t.expr));
}
