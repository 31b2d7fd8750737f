// The monitoring stack proven with the real Prometheus tool: the scrape configuration passes
// `promtool check config`, every rule group passes `promtool check rules`, `promtool test rules`
// shows each alert firing on a synthetic failure and silent on a healthy series, and every
// dashboard/adapter expression parses and names only metrics Triton and DCGM really export.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { parser } from "@prometheus-io/lezer-promql";
import { plan, one, ofType, ROOT } from "./helpers";
import { requirePromtool, writeFiles, promtool, promtoolSupportsKubernetesSd } from "./promtool";
import {
  alertRuleFile,
  dashboards,
  dashboardExpressions,
  queueMetricsQuery,
  pendingMetricsQuery,
  tritonRelabelConfigs,
  targetDownFor,
  DEFAULT_THRESHOLDS,
  TRITON_JOB,
  type AlertInputs,
} from "../components/monitoring";
import { TRITON_COUNTERS, TRITON_GAUGES, TRITON_METRIC_NAMES, TRITON_SUMMARIES } from "../components/upstream/triton-metrics";
import { DCGM_METRICS, DCGM_METRIC_NAMES, dcgmLabels } from "../components/upstream/dcgm";
import { KSM_METRICS, KSM_METRIC_NAMES } from "../components/upstream/kube-state-metrics";
import { GPU_TAINT } from "../components/contracts";
import { alertGroup } from "./support/monitoring";
import type { AlertingRule, RuleFile, ScrapeConfig } from "../components/upstream/prometheus";
import type { TemplateVariable } from "../components/upstream/grafana";

const STACKS = ["dev", "staging", "prod"];
/** Series Prometheus itself produces for every target; not an exporter metric. */
const PROMETHEUS_SYNTHETIC = new Set(["up"]);

// ---- promtool unit-test data --------------------------------------------------------
interface SeriesSpec {
  series: string;
  values: string;
}
interface AlertCase {
  name: string;
  alert: string;
  eval: string;
  /** Sample spacing of the series. @default "1m" */
  interval?: string;
  series: SeriesSpec[];
  /** Expected alerts' labels (alertname added by promtool); [] = must stay silent. */
  expect: Record<string, string>[];
}

const selector = (metric: string, labels: Record<string, string>) =>
  `${metric}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(",")}}`;
const TRITON_TARGET = { job: TRITON_JOB, namespace: "triton", serving_group: "vision", pod: "vision-0", instance: "10.0.0.1:8002" };
const tri = (metric: string, labels: Record<string, string> = {}) =>
  selector(metric, { ...TRITON_TARGET, track: "primary", model: "resnet", version: "1", ...labels });
const MODEL = { namespace: "triton", serving_group: "vision", track: "primary", model: "resnet", version: "1" };
const GPU_LABELS = { job: "dcgm-exporter", gpu: "0", UUID: "GPU-0000", Hostname: "node-a", modelName: "NVIDIA L4", namespace: "triton", pod: "vision-0" };
const gpu = (metric: string) => selector(metric, GPU_LABELS);
const t = DEFAULT_THRESHOLDS;
const DCGM_LABELS = dcgmLabels("v25.10.1")!;
/**
 * What the rules under test are built from: group vision (900 s start-up budget; primary lists
 * resnet and bert, the canary resnet) and group text (120 s).
 */
const ALERT_INPUTS: AlertInputs = {
  thresholds: t,
  servingNamespace: "triton",
  servingGroups: [
    {
      ...alertGroup("vision", true, { modelLoadBudgetSeconds: 900 }),
      tracks: [
        { track: "primary", models: ["resnet", "bert"] },
        { track: "canary", models: ["resnet"] },
      ],
    },
    alertGroup("text", false, { modelLoadBudgetSeconds: 120, models: ["gpt"] }),
  ],
  dcgmLabels: DCGM_LABELS,
};
const TEXT_TARGET = { ...TRITON_TARGET, serving_group: "text", pod: "text-0", instance: "10.0.0.2:8002" };
const upOf = (target: Record<string, string>, track = "primary") => selector("up", { ...target, track });
const CANARY_TARGET = { ...TRITON_TARGET, pod: "vision-canary-0", instance: "10.0.0.3:8002" };
const taint = (node: string) =>
  selector(KSM_METRICS.nodeSpecTaint, { job: "kube-state-metrics", node, key: GPU_TAINT.key, value: GPU_TAINT.value, effect: GPU_TAINT.effect });
const exporterUp = (node: string) => selector("up", { job: "dcgm-exporter", node, instance: `${node}:9400` });

/** Each alert fires on a synthetic failure and stays silent on a healthy series (thresholds = DEFAULT_THRESHOLDS). */
const CASES: AlertCase[] = [
  // queue budget 50 ms: 10 req/s at 100 ms queue each vs 10 ms.
  {
    name: "queue time 2x budget",
    alert: "TritonQueueTimeAboveBudget",
    eval: "30m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+600x60" },
      { series: tri(TRITON_COUNTERS.queueDurationUs), values: `0+${600 * t.queueTimeBudgetMs * 2 * 1000}x60` },
    ],
    expect: [{ severity: "warning", ...MODEL }],
  },
  {
    name: "queue time within budget",
    alert: "TritonQueueTimeAboveBudget",
    eval: "30m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+600x60" },
      { series: tri(TRITON_COUNTERS.queueDurationUs), values: `0+${600 * (t.queueTimeBudgetMs / 5) * 1000}x60` },
    ],
    expect: [],
  },
  // failure ratio 5 %: BACKEND 60 of 630 (9.5 %), REJECTED none → only BACKEND alerts.
  {
    name: "backend failures above ratio",
    alert: "TritonInferenceFailureRatioHigh",
    eval: "20m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+570x40" },
      { series: tri(TRITON_COUNTERS.requestFailure, { reason: "BACKEND" }), values: "0+60x40" },
      { series: tri(TRITON_COUNTERS.requestFailure, { reason: "REJECTED" }), values: "0x40" },
    ],
    expect: [{ severity: "critical", ...MODEL, reason: "BACKEND" }],
  },
  {
    name: "failures below ratio",
    alert: "TritonInferenceFailureRatioHigh",
    eval: "20m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+570x40" },
      { series: tri(TRITON_COUNTERS.requestFailure, { reason: "BACKEND" }), values: "0+3x40" },
    ],
    expect: [],
  },
  // p99 SLO 500 ms (µs in the summary); the p50 quantile above the SLO must not count.
  {
    name: "p99 above SLO",
    alert: "TritonP99LatencyAboveSLO",
    eval: "20m",
    series: [{ series: tri(TRITON_SUMMARIES.requestUs, { quantile: "0.99" }), values: `${t.p99SloMs * 1000 * 1.6}x30` }],
    expect: [{ severity: "warning", ...MODEL }],
  },
  {
    name: "p99 within SLO, p50 series ignored",
    alert: "TritonP99LatencyAboveSLO",
    eval: "20m",
    series: [
      { series: tri(TRITON_SUMMARIES.requestUs, { quantile: "0.99" }), values: `${t.p99SloMs * 1000 * 0.2}x30` },
      { series: tri(TRITON_SUMMARIES.requestUs, { quantile: "0.5" }), values: `${t.p99SloMs * 1000 * 2}x30` },
    ],
    expect: [],
  },
  // vision's budget is 900 s (for 20m), text's 120 s (for 7m).
  {
    name: "target down for longer than its group's model-load budget",
    alert: "TritonTargetDown",
    eval: "25m",
    series: [{ series: upOf(TRITON_TARGET), values: "0x40" }],
    expect: [{ severity: "critical", ...TRITON_TARGET, track: "primary" }],
  },
  {
    name: "down while loading within the budget: only the group with the shorter budget alerts",
    alert: "TritonTargetDown",
    eval: "19m",
    series: [
      { series: upOf(TRITON_TARGET), values: "0x40" },
      { series: upOf(TEXT_TARGET), values: "0x40" },
    ],
    expect: [{ severity: "critical", ...TEXT_TARGET, track: "primary" }],
  },
  {
    name: "a start whose load ends within the budget stays silent",
    alert: "TritonTargetDown",
    eval: "30m",
    series: [{ series: upOf(TRITON_TARGET), values: "0x15 1x30" }],
    expect: [],
  },
  { name: "target up", alert: "TritonTargetDown", eval: "10m", series: [{ series: upOf(TRITON_TARGET), values: "1x20" }], expect: [] },
  // Per-model series exist only for loaded models: bert's are missing on the primary pod.
  {
    name: "a listed model has no series on a pod that is up",
    alert: "TritonModelNotLoaded",
    eval: "10m",
    series: [
      { series: upOf(TRITON_TARGET), values: "1x20" },
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+10x20" },
      { series: upOf(CANARY_TARGET, "canary"), values: "1x20" },
      { series: tri(TRITON_COUNTERS.requestSuccess, { pod: "vision-canary-0", instance: CANARY_TARGET.instance, track: "canary" }), values: "0x20" },
    ],
    expect: [{ severity: "critical", ...TRITON_TARGET, track: "primary", model: "bert" }],
  },
  {
    name: "every listed model loaded (idle ones too), or the pod down (TritonTargetDown's case)",
    alert: "TritonModelNotLoaded",
    eval: "10m",
    series: [
      { series: upOf(TRITON_TARGET), values: "1x20" },
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+10x20" },
      { series: tri(TRITON_COUNTERS.requestSuccess, { model: "bert" }), values: "0x20" },
      { series: upOf(TEXT_TARGET), values: "0x20" },
    ],
    expect: [],
  },
  // GPU nodes carry the GPU taint (kube-state-metrics); node-b's exporter is down, node-c has none.
  {
    name: "GPU nodes without a healthy dcgm-exporter",
    alert: "DcgmExporterMissing",
    eval: "20m",
    series: [
      { series: taint("node-a"), values: "1x30" },
      { series: taint("node-b"), values: "1x30" },
      { series: taint("node-c"), values: "1x30" },
      { series: exporterUp("node-a"), values: "1x30" },
      { series: exporterUp("node-b"), values: "0x30" },
    ],
    expect: ["node-b", "node-c"].map((node) => ({
      severity: "warning",
      job: "kube-state-metrics",
      node,
      key: GPU_TAINT.key,
      value: GPU_TAINT.value,
      effect: GPU_TAINT.effect,
    })),
  },
  {
    name: "every GPU node has its exporter; a node without the GPU taint needs none",
    alert: "DcgmExporterMissing",
    eval: "20m",
    series: [
      { series: taint("node-a"), values: "1x30" },
      { series: exporterUp("node-a"), values: "1x30" },
      {
        series: selector(KSM_METRICS.nodeSpecTaint, { job: "kube-state-metrics", node: "cpu-1", key: "dedicated", value: "infra", effect: "NoSchedule" }),
        values: "1x30",
      },
    ],
    expect: [],
  },
  {
    name: "no Triton target at all",
    alert: "TritonMetricsAbsent",
    eval: "20m",
    series: [{ series: selector("up", { job: "node-exporter", instance: "n:9100" }), values: "1x30" }],
    expect: [{ severity: "warning", job: TRITON_JOB }],
  },
  {
    name: "Triton targets present",
    alert: "TritonMetricsAbsent",
    eval: "20m",
    series: [{ series: selector("up", TRITON_TARGET), values: "1x30" }],
    expect: [],
  },
  // No success while failures (resnet) or pending requests (bert) arrive.
  {
    name: "requests arrive, none succeed",
    alert: "TritonModelNotServing",
    eval: "20m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "5x30" },
      { series: tri(TRITON_COUNTERS.requestFailure, { reason: "BACKEND" }), values: "0+10x30" },
      { series: tri(TRITON_COUNTERS.requestSuccess, { model: "bert" }), values: "0x30" },
      { series: tri(TRITON_COUNTERS.requestFailure, { model: "bert", reason: "BACKEND" }), values: "0x30" },
      { series: tri(TRITON_GAUGES.pendingRequestCount, { model: "bert" }), values: "3x30" },
    ],
    expect: [
      { severity: "critical", ...MODEL },
      { severity: "critical", ...MODEL, model: "bert" },
    ],
  },
  {
    name: "some requests succeed, idle model silent",
    alert: "TritonModelNotServing",
    eval: "20m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+100x30" },
      { series: tri(TRITON_COUNTERS.requestFailure, { reason: "BACKEND" }), values: "0+10x30" },
      { series: tri(TRITON_COUNTERS.requestSuccess, { model: "bert" }), values: "0x30" },
      { series: tri(TRITON_GAUGES.pendingRequestCount, { model: "bert" }), values: "0x30" },
    ],
    expect: [],
  },
  // Canary 10 % failures vs primary 1 %, margin 2 points.
  {
    name: "canary fails more than primary",
    alert: "TritonCanaryFailureRatioWorse",
    eval: "30m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+594x40" },
      { series: tri(TRITON_COUNTERS.requestFailure, { reason: "BACKEND" }), values: "0+6x40" },
      { series: tri(TRITON_COUNTERS.requestSuccess, { track: "canary", pod: "vision-canary-0" }), values: "0+540x40" },
      { series: tri(TRITON_COUNTERS.requestFailure, { track: "canary", pod: "vision-canary-0", reason: "BACKEND" }), values: "0+60x40" },
    ],
    expect: [{ severity: "warning", namespace: "triton", serving_group: "vision", model: "resnet" }],
  },
  {
    name: "canary as good as primary",
    alert: "TritonCanaryFailureRatioWorse",
    eval: "30m",
    series: [
      { series: tri(TRITON_COUNTERS.requestSuccess), values: "0+594x40" },
      { series: tri(TRITON_COUNTERS.requestFailure, { reason: "BACKEND" }), values: "0+6x40" },
      { series: tri(TRITON_COUNTERS.requestSuccess, { track: "canary", pod: "vision-canary-0" }), values: "0+593x40" },
      { series: tri(TRITON_COUNTERS.requestFailure, { track: "canary", pod: "vision-canary-0", reason: "BACKEND" }), values: "0+7x40" },
    ],
    expect: [],
  },
  // Leak: +50 MiB per 5 min = 600 MiB/h at flat 50 % utilisation (5-minute samples keep the 4h run short).
  {
    name: "framebuffer grows under flat load",
    alert: "GpuMemoryLeak",
    eval: "4h",
    interval: "5m",
    series: [
      { series: gpu(DCGM_METRICS.fbUsedMiB), values: "1000+50x60" },
      { series: gpu(DCGM_METRICS.gpuUtil), values: "50x60" },
    ],
    expect: [{ severity: "warning", ...GPU_LABELS }],
  },
  {
    name: "framebuffer flat",
    alert: "GpuMemoryLeak",
    eval: "4h",
    interval: "5m",
    series: [
      { series: gpu(DCGM_METRICS.fbUsedMiB), values: "1000x60" },
      { series: gpu(DCGM_METRICS.gpuUtil), values: "50x60" },
    ],
    expect: [],
  },
  {
    name: "framebuffer grows with rising load (not a leak)",
    alert: "GpuMemoryLeak",
    eval: "4h",
    interval: "5m",
    series: [
      { series: gpu(DCGM_METRICS.fbUsedMiB), values: "1000+50x60" },
      { series: gpu(DCGM_METRICS.gpuUtil), values: "10+1x60" },
    ],
    expect: [],
  },
  {
    name: "GPU saturated",
    alert: "GpuUtilisationSaturated",
    eval: "40m",
    series: [{ series: gpu(DCGM_METRICS.gpuUtil), values: `${t.gpuUtilPercent + 4}x60` }],
    expect: [{ severity: "warning", ...GPU_LABELS }],
  },
  {
    name: "GPU busy, not saturated",
    alert: "GpuUtilisationSaturated",
    eval: "40m",
    series: [{ series: gpu(DCGM_METRICS.gpuUtil), values: "60x60" }],
    expect: [],
  },
  // The gauge keeps the last XID: a new one (a change to non-zero) fires, and resolves a window later.
  {
    name: "XID 79 reported",
    alert: "GpuXidError",
    eval: "15m",
    series: [{ series: gpu(DCGM_METRICS.xidErrors), values: "0x10 79x30" }],
    expect: [{ severity: "critical", ...GPU_LABELS }],
  },
  {
    name: "XID 79 latched by the gauge, no new XID in the window: resolved",
    alert: "GpuXidError",
    eval: "25m",
    series: [{ series: gpu(DCGM_METRICS.xidErrors), values: "0x10 79x30" }],
    expect: [],
  },
  { name: "no XID", alert: "GpuXidError", eval: "15m", series: [{ series: gpu(DCGM_METRICS.xidErrors), values: "0x30" }], expect: [] },
  {
    name: "GPU hot",
    alert: "GpuTemperatureHigh",
    eval: "20m",
    series: [{ series: gpu(DCGM_METRICS.gpuTempC), values: `${t.gpuTempCelsius + 5}x30` }],
    expect: [{ severity: "warning", ...GPU_LABELS }],
  },
  { name: "GPU cool", alert: "GpuTemperatureHigh", eval: "20m", series: [{ series: gpu(DCGM_METRICS.gpuTempC), values: "70x30" }], expect: [] },
];

/**
 * The rule file as promtool's unit tests need it: promtool compares rendered annotations too,
 * so they are dropped here (check rules validates their templates on the full file). expr,
 * for and labels — what decides firing — are unchanged.
 */
function withoutAnnotations(f: RuleFile): RuleFile {
  return {
    groups: f.groups.map((g) => ({ ...g, rules: g.rules.map((r) => ("alert" in r ? ({ ...r, annotations: undefined } as unknown as AlertingRule) : r)) })),
  };
}

function unitTests(cases: AlertCase[]) {
  return {
    rule_files: ["alerts.yml"],
    evaluation_interval: "1m",
    tests: cases.map((c) => ({
      name: c.name,
      interval: c.interval ?? "1m",
      input_series: c.series,
      alert_rule_test: [{ eval_time: c.eval, alertname: c.alert, exp_alerts: c.expect.map((l) => ({ exp_labels: l })) }],
    })),
  };
}

// ---- expressions ------------------------------------------------------------------
/** Dashboard variables replaced by sample values so the query is plain PromQL. */
function substituteGrafanaVariables(expr: string): string {
  return expr.replace(/\$__rate_interval/g, "5m").replace(/\$\{?[a-zA-Z_]+\}?/g, ".*");
}

/** label_values(<selector>, <label>) → <selector>: the PromQL part of a variable query. */
function variableSelector(v: TemplateVariable): string | undefined {
  const q = typeof v.query === "string" ? v.query : v.query.query;
  const m = /^label_values\((.*),\s*[a-zA-Z_]+\)$/.exec(q);
  return m ? m[1] : undefined;
}

/** Every PromQL expression of dashboards and the adapter, named for messages. */
function allDashboardAndAdapterExpressions(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const [file, d] of Object.entries(dashboards(DCGM_LABELS))) {
    dashboardExpressions(d).forEach((e, i) => out.push({ where: `${file} panel expression ${i + 1}`, expr: substituteGrafanaVariables(e) }));
    for (const v of d.templating.list) {
      const s = variableSelector(v);
      if (s) out.push({ where: `${file} variable ${v.name}`, expr: substituteGrafanaVariables(s) });
    }
  }
  // The adapter substitutes its markers; render them as it would for two pods of a group.
  out.push({
    where: "prometheus-adapter rule",
    expr: queueMetricsQuery("2m", { labelMatchers: 'namespace="triton",pod=~"vision-0|vision-1"', groupBy: "pod" }),
  });
  out.push({
    where: "prometheus-adapter pending-requests rule",
    expr: pendingMetricsQuery({ labelMatchers: 'namespace="triton",pod=~"vision-0|vision-1"', groupBy: "pod" }),
  });
  return out;
}

/** Metric names a PromQL expression selects (parsed with Prometheus' own lezer grammar). */
function metricNames(expr: string): { names: string[]; errorAt?: number } {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let errorAt: number | undefined;
  tree.iterate({
    enter: (n) => {
      if (n.type.isError && errorAt === undefined) errorAt = n.from;
      if (n.name === "Identifier" && n.node.parent?.name === "VectorSelector") names.push(expr.slice(n.from, n.to));
    },
  });
  return { names, errorAt };
}

function allowedMetric(name: string): boolean {
  return TRITON_METRIC_NAMES.has(name) || DCGM_METRIC_NAMES.has(name) || KSM_METRIC_NAMES.has(name) || PROMETHEUS_SYNTHETIC.has(name);
}

const SD_ROLES = ["endpoints", "endpointslice", "service", "pod", "node", "ingress"];

/**
 * The scrape job as this promtool can check it. With an upstream promtool: unchanged. With
 * Debian's (no Kubernetes SD compiled in): kubernetes_sd_configs is checked here against the
 * configuration reference (role, namespaces.names) and swapped for a static target, so
 * promtool still checks the job name, intervals, honor_labels and every relabel rule.
 */
function forThisPromtool(job: ScrapeConfig): Record<string, unknown> {
  if (promtoolSupportsKubernetesSd()) return job as unknown as Record<string, unknown>;
  for (const sd of job.kubernetes_sd_configs) {
    assert.deepEqual(
      Object.keys(sd).filter((k) => k !== "role" && k !== "namespaces"),
      [],
      `${job.job_name}: only role/namespaces are set`,
    );
    assert.ok(SD_ROLES.includes(sd.role), `${job.job_name}: kubernetes_sd_configs role ${sd.role}`);
    if (sd.namespaces)
      assert.ok(sd.namespaces.names.length > 0 && sd.namespaces.names.every((n) => /^[a-z0-9-]+$/.test(n)), `${job.job_name}: namespaces.names`);
  }
  const { kubernetes_sd_configs: _sd, ...rest } = job;
  return { ...rest, static_configs: [{ targets: ["kubernetes-sd-checked-separately:9400"] }] };
}

describe("monitoring proven with promtool", function () {
  this.timeout(60_000);
  let version = "";
  before(() => {
    version = requirePromtool();
  });

  it("finds promtool", () => {
    assert.match(version, /promtool/);
  });

  it("passes `promtool check config` with the generated scrape jobs and rules in a minimal prometheus.yml", async () => {
    const files: Record<string, unknown> = {};
    const configs: string[] = [];
    for (const stack of STACKS) {
      const p = await plan(stack);
      const kps = ofType(p.resources, "kubernetes:helm.sh/v3:Release").find((r) => r.props.chart === "kube-prometheus-stack")!;
      const spec = kps.props.values.prometheus.prometheusSpec;
      const rule = one(p.resources, "kubernetes:monitoring.coreos.com/v1:PrometheusRule");
      const sm = one(p.resources, "kubernetes:monitoring.coreos.com/v1:ServiceMonitor");
      const scrape: ScrapeConfig[] = spec.additionalScrapeConfigs;
      assert.ok(scrape.length >= 1);
      // The ServiceMonitor's relabelings, as the Prometheus job the operator generates from it
      // would carry them (same list, snake_case), so promtool checks their regexes and actions.
      const groups = sm.props.spec.endpoints[0].relabelings[0].regex
        .split("|")
        .map((s: string) => ({ name: s.replace(/(-canary)?-metrics$/, ""), canary: /-canary-metrics$/.test(s) }));
      const tritonJob: ScrapeConfig = {
        job_name: "triton-servicemonitor-relabelings",
        scrape_interval: sm.props.spec.endpoints[0].interval,
        kubernetes_sd_configs: [{ role: "endpoints", namespaces: { names: sm.props.spec.namespaceSelector.matchNames } }],
        relabel_configs: tritonRelabelConfigs(groups),
      };
      files[`rules-${stack}.yml`] = rule.props.spec;
      files[`prometheus-${stack}.yml`] = {
        global: { scrape_interval: spec.scrapeInterval, evaluation_interval: spec.evaluationInterval },
        rule_files: [`rules-${stack}.yml`],
        scrape_configs: [...scrape, tritonJob].map(forThisPromtool),
      };
      configs.push(`prometheus-${stack}.yml`);
    }
    const dir = writeFiles(files);
    if (!promtoolSupportsKubernetesSd()) {
      console.log(
        "      note: this promtool (Debian build) has no Kubernetes service discovery; the kubernetes_sd_configs blocks were checked structurally and replaced by a static target, everything else by promtool",
      );
    }
    const r = promtool(dir, ["check", "config", ...configs]);
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /SUCCESS/);
  });

  it("passes `promtool check rules` for every stack's PrometheusRule and for every dashboard/adapter expression", async () => {
    const files: Record<string, unknown> = {};
    for (const stack of STACKS) {
      const p = await plan(stack);
      files[`rules-${stack}.yml`] = one(p.resources, "kubernetes:monitoring.coreos.com/v1:PrometheusRule").props.spec;
    }
    const exprs = allDashboardAndAdapterExpressions();
    // Each expression as a recording rule: check rules parses every one of them in one call.
    files["expressions.yml"] = { groups: [{ name: "dashboard-and-adapter", rules: exprs.map((e, i) => ({ record: `check:expression_${i}`, expr: e.expr })) }] };
    const dir = writeFiles(files);
    const r = promtool(dir, ["check", "rules", ...Object.keys(files)]);
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, new RegExp(`SUCCESS: ${exprs.length} rules found`));
  });

  it("rejects a broken expression (the check can fail)", () => {
    const dir = writeFiles({
      "bad.yml": { groups: [{ name: "g", rules: [{ record: "x", expr: `sum by (model) (rate(${TRITON_COUNTERS.requestSuccess}[5m])` }] }] },
    });
    const r = promtool(dir, ["check", "rules", "bad.yml"]);
    assert.notEqual(r.status, 0);
  });

  it("`promtool test rules`: every alert fires on a synthetic failure and stays silent on a healthy series", () => {
    const file = alertRuleFile(ALERT_INPUTS);
    const alerts = file.groups.flatMap((g) => g.rules.filter((r): r is AlertingRule => "alert" in r).map((r) => r.alert));
    for (const a of alerts) {
      assert.ok(
        CASES.some((c) => c.alert === a && c.expect.length > 0),
        `${a} has a firing case`,
      );
      assert.ok(
        CASES.some((c) => c.alert === a && c.expect.length === 0),
        `${a} has a silent case`,
      );
    }
    const dir = writeFiles({ "alerts.yml": withoutAnnotations(file), "tests.yml": unitTests(CASES) });
    const r = promtool(dir, ["test", "rules", "tests.yml"]);
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /SUCCESS/);
  });

  it("`promtool test rules` fails when an expectation is wrong (the harness can fail)", () => {
    const wrong = CASES.filter((c) => c.alert === "GpuTemperatureHigh").map((c) => ({
      ...c,
      expect: c.expect.length ? [] : [{ severity: "warning", ...GPU_LABELS }],
    }));
    const dir = writeFiles({ "alerts.yml": withoutAnnotations(alertRuleFile(ALERT_INPUTS)), "tests.yml": unitTests(wrong) });
    const r = promtool(dir, ["test", "rules", "tests.yml"]);
    assert.notEqual(r.status, 0, r.output);
  });
});

describe("alerts that know the stack", () => {
  it("waits each group's model-load budget, rounded up to minutes, plus the margin before TritonTargetDown", () => {
    assert.equal(targetDownFor(900), "20m");
    assert.equal(targetDownFor(601), "16m");
    assert.equal(targetDownFor(1), "6m");
    const rules = alertRuleFile(ALERT_INPUTS).groups.flatMap((g) => g.rules.filter((r): r is AlertingRule => "alert" in r && r.alert === "TritonTargetDown"));
    assert.deepEqual(
      rules.map((r) => [r.expr, r.for]),
      [
        ['up{job="triton", namespace="triton", serving_group="vision"} == 0', "20m"],
        ['up{job="triton", namespace="triton", serving_group="text"} == 0', "7m"],
      ],
    );
  });

  it("draws and alerts on GPUs from DCGM series only (Triton's nv_gpu_* are off: --allow-gpu-metrics=false)", async () => {
    const tritonGpu: string[] = Object.entries(TRITON_GAUGES)
      .filter(([k]) => k.startsWith("gpu"))
      .map(([, n]) => n);
    assert.ok(tritonGpu.length >= 4);
    const file = alertRuleFile(ALERT_INPUTS);
    const exprs = [...file.groups.flatMap((g) => g.rules.map((r) => r.expr)), ...allDashboardAndAdapterExpressions().map((e) => e.expr)];
    for (const e of exprs) for (const n of metricNames(e).names) assert.ok(!tritonGpu.includes(n), `${n} in ${e}`);
    for (const stack of STACKS) {
      const p = await plan(stack);
      for (const sts of ofType(p.resources, "kubernetes:apps/v1:StatefulSet")) {
        const args: string[] = sts.props.spec.template.spec.containers[0].args;
        assert.ok(args.includes("--allow-gpu-metrics=false"), `${stack} ${sts.name}: ${args.join(" ")}`);
      }
    }
  });

  it("totals the framebuffer as used + free + reserved, and labels GPUs with the pinned operator's node label", () => {
    const v26 = dcgmLabels("v26.7.0")!;
    const fb = dashboards(v26)["triton-gpu.json"].panels.find((p) => p.title === "Framebuffer used")!;
    const total = fb.targets.find((x) => x.legendFormat.endsWith("total"))!;
    assert.deepEqual(metricNames(substituteGrafanaVariables(total.expr)).names, [DCGM_METRICS.fbUsedMiB, DCGM_METRICS.fbFreeMiB, DCGM_METRICS.fbReservedMiB]);
    assert.match(total.expr, /hostname=~"\$node"/);
    assert.doesNotMatch(JSON.stringify(dashboards(v26)), /Hostname/);
    assert.match(JSON.stringify(dashboards(DCGM_LABELS)["triton-gpu.json"]), /Hostname=~/);
    const summaries = alertRuleFile({ ...ALERT_INPUTS, dcgmLabels: v26 }).groups.flatMap((g) =>
      g.rules.map((r) => ("alert" in r ? (r.annotations?.summary ?? "") : "")),
    );
    assert.ok(summaries.some((x) => x.includes("$labels.hostname")));
    assert.ok(summaries.every((x) => !x.includes("$labels.Hostname")));
  });
});

describe("monitoring expressions use only real metric names", () => {
  it("every alert, dashboard and adapter expression parses and selects only Triton, DCGM or `up` series", () => {
    const file = alertRuleFile(ALERT_INPUTS);
    const exprs = [
      ...file.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${"alert" in r ? r.alert : r.record}`, expr: r.expr }))),
      ...allDashboardAndAdapterExpressions(),
    ];
    assert.ok(exprs.length > 30, `found ${exprs.length} expressions`);
    const used = new Set<string>();
    for (const e of exprs) {
      const { names, errorAt } = metricNames(e.expr);
      assert.equal(errorAt, undefined, `${e.where} does not parse at ${errorAt}: ${e.expr}`);
      assert.ok(names.length > 0, `${e.where} selects no metric: ${e.expr}`);
      for (const n of names) {
        assert.ok(allowedMetric(n), `${e.where} uses ${n}, which neither Triton nor DCGM exports`);
        used.add(n);
      }
    }
    // The dashboards cover what the issue asks for.
    for (const n of [
      TRITON_COUNTERS.requestSuccess,
      TRITON_COUNTERS.requestFailure,
      TRITON_COUNTERS.queueDurationUs,
      TRITON_COUNTERS.computeInferDurationUs,
      TRITON_SUMMARIES.requestUs,
      TRITON_GAUGES.pendingRequestCount,
      DCGM_METRICS.gpuUtil,
      DCGM_METRICS.fbUsedMiB,
      DCGM_METRICS.powerUsageW,
      DCGM_METRICS.gpuTempC,
      DCGM_METRICS.xidErrors,
      DCGM_METRICS.fbReservedMiB,
      KSM_METRICS.nodeSpecTaint,
    ]) {
      assert.ok(used.has(n), `${n} is drawn or alerted on`);
    }
  });

  it("flags a made-up metric name (the check can fail)", () => {
    const { names } = metricNames(`rate(triton_server_requests_total{model="m"}[5m]) / on() nv_inference_count`);
    assert.deepEqual(names, ["triton_server_requests_total", "nv_inference_count"]);
    assert.equal(allowedMetric(names[0]), false);
  });

  it("the metric-name modules agree with the shared upstream facts file", function () {
    const facts = path.resolve(ROOT, "..", "shared", "reference", "upstream-facts.md");
    if (!fs.existsSync(facts)) this.skip(); // shared/ sits beside the clone in CI; reported as pending elsewhere
    const text = fs.readFileSync(facts, "utf8");
    // Names the facts file does not list, each checked in the upstream source it names instead.
    const sourcedElsewhere: Record<string, string> = {
      [DCGM_METRICS.fbReservedMiB]: "dcgm-exporter etc/dcp-metrics-included.csv at 4.4.2-4.7.0 and later (the collectors file the GPU Operator mounts)",
    };
    for (const n of [...Object.values(TRITON_COUNTERS), ...Object.values(TRITON_GAUGES), ...Object.values(DCGM_METRICS)]) {
      if (n in sourcedElsewhere) {
        assert.ok(!text.includes(n), `${n} is in the facts file now: drop it from sourcedElsewhere`);
        continue;
      }
      assert.ok(text.includes(n) || text.includes(n.replace(/^DCGM_FI_DEV_/, "")), `${n} is in the facts file`);
    }
    assert.match(text, /nv_inference_\*_summary_us/);
    for (const s of Object.values(TRITON_SUMMARIES)) assert.match(s, /^nv_inference_[a-z_]+_summary_us$/);
  });
});
