// Alert rules, built as data from the metric-name modules: every name comes from
// components/upstream/{triton-metrics,dcgm}.ts, every unit conversion is written here once
// (config thresholds are ms/%, Triton durations are µs, DCGM framebuffer is MiB).
import { TRITON_COUNTERS, TRITON_GAUGES, TRITON_SUMMARIES, TRITON_SUMMARY_QUANTILES } from "../upstream/triton-metrics";
import { DCGM_METRICS, type DcgmLabelNames } from "../upstream/dcgm";
import { KSM_METRICS } from "../upstream/kube-state-metrics";
import type { AlertingRule, RecordingRule, RuleFile } from "../upstream/prometheus";
import { CANARY_GATE_FAILED_ALERT } from "../contracts";
import { canaryGates, failing, type CanaryGates } from "./gates";
import { GPU_TAINT, type ServingGroupAlertRef } from "../contracts";
import type { AlertThresholds } from "./schema";
import { DCGM_JOB, TRITON_JOB, TRITON_TARGET_LABELS } from "./scrape";

/** What the alert rules are built from: the thresholds, and the facts of the stack they watch. */
export interface AlertInputs {
  readonly thresholds: AlertThresholds;
  /** Namespace of the serving groups. */
  readonly servingNamespace: string;
  /** Each group's start-up budget and the models its tracks list. */
  readonly servingGroups: readonly ServingGroupAlertRef[];
  /** dcgm-exporter's label names at the pinned GPU Operator version. */
  readonly dcgmLabels: DcgmLabelNames;
}

/** rate() window of the alerts: at least four samples at the slowest allowed scrape interval (60s). */
export const ALERT_RATE_WINDOW = "5m";
/** Window over which the GPU memory-leak alert fits its slope. */
export const LEAK_WINDOW = "3h";
/** Utilisation may move this many points (0–100 %) and still count as flat load. */
export const FLAT_LOAD_BAND_PERCENT = 10;
/**
 * TritonTargetDown waits the group's model-load budget plus this margin: Triton opens its
 * metrics port only after the start-up models are loaded, so every start, scale-up and rollout
 * is a down target for up to the budget (after which the startupProbe restarts the container).
 */
export const TARGET_DOWN_MARGIN_MINUTES = 5;
/** A new XID (a change of the sticky gauge) keeps GpuXidError firing this long, then it resolves. */
export const XID_WINDOW = "10m";
/** A GPU node may run without a healthy dcgm-exporter this long (a new node installs the operands first). */
export const DCGM_MISSING_FOR = "15m";

const MODEL_KEYS = ["namespace", TRITON_TARGET_LABELS.servingGroup, TRITON_TARGET_LABELS.track, "model", "version"];
/** Per model of a serving group, across its tracks (the canary is compared with the primary). */
const GROUP_MODEL_KEYS = ["namespace", TRITON_TARGET_LABELS.servingGroup, "model"];
const by = (keys: string[]) => `by (${keys.join(", ")})`;
const sel = (metric: string, matchers: Record<string, string> = {}) => {
  const m = { job: TRITON_JOB, ...matchers };
  return `${metric}{${Object.entries(m)
    .map(([k, v]) => `${k}="${v}"`)
    .join(", ")}}`;
};
const rate = (metric: string, window = ALERT_RATE_WINDOW, matchers: Record<string, string> = {}) => `rate(${sel(metric, matchers)}[${window}])`;
const sumRate = (keys: string[], metric: string, window = ALERT_RATE_WINDOW, matchers: Record<string, string> = {}) =>
  `sum ${by(keys)} (${rate(metric, window, matchers)})`;
const num = (n: number) => String(Number(n.toPrecision(12)));

/** Failed requests ÷ all requests (success + failure), per `keys`. */
function failureRatio(keys: string[], failureKeys: string[], matchers: Record<string, string> = {}): string {
  const failures = sumRate(failureKeys, TRITON_COUNTERS.requestFailure, ALERT_RATE_WINDOW, matchers);
  const allFailures = sumRate(keys, TRITON_COUNTERS.requestFailure, ALERT_RATE_WINDOW, matchers);
  const successes = sumRate(keys, TRITON_COUNTERS.requestSuccess, ALERT_RATE_WINDOW, matchers);
  // `or` keeps the denominator when a model has failures but no success series at all.
  const total = `((${successes} + ${allFailures}) or ${allFailures})`;
  const extra = failureKeys.filter((k) => !keys.includes(k));
  return extra.length ? `${failures} / ignoring (${extra.join(", ")}) group_left () ${total}` : `${failures} / ${total}`;
}

/** `for` of a group's TritonTargetDown: its model-load budget, rounded up to minutes, plus the margin. */
export function targetDownFor(modelLoadBudgetSeconds: number): string {
  return `${Math.ceil(modelLoadBudgetSeconds / 60) + TARGET_DOWN_MARGIN_MINUTES}m`;
}

/** A group's metrics target down for longer than its start-up may take. */
function targetDown(namespace: string, g: ServingGroupAlertRef): AlertingRule {
  return {
    alert: "TritonTargetDown",
    expr: `${sel("up", { namespace, [TRITON_TARGET_LABELS.servingGroup]: g.name })} == 0`,
    for: targetDownFor(g.modelLoadBudgetSeconds),
    labels: { severity: "critical" },
    annotations: {
      summary: "Triton metrics endpoint {{ $labels.namespace }}/{{ $labels.pod }} is down for longer than the group's model-load budget",
      description:
        `Prometheus has not scraped the pod's metrics port 8002 for longer than modelLoadBudgetSeconds (${g.modelLoadBudgetSeconds}s) + ${TARGET_DOWN_MARGIN_MINUTES}m. ` +
        "Triton opens the port only once its start-up models are loaded, so a shorter outage is a normal start; this one is a crash loop, a load that never finishes, or a NetworkPolicy blocking the monitoring namespace. " +
        "Runbook: kubectl describe pod; kubectl logs --previous; check the model repository and that the firewall allows 8002 from monitoring.",
    },
  };
}

/** A listed model's per-model series missing on a pod whose metrics are up: the model is not loaded there. */
function modelNotLoaded(namespace: string, g: ServingGroupAlertRef): AlertingRule[] {
  const parts = g.tracks.flatMap((t) =>
    // "*" (load everything) names no model to look for.
    t.models
      .filter((m) => m !== "*")
      .map(
        (m) =>
          `(label_replace(${sel("up", { namespace, [TRITON_TARGET_LABELS.servingGroup]: g.name, [TRITON_TARGET_LABELS.track]: t.track })} == 1, "model", "${m}", "", "") ` +
          `unless on (namespace, pod) ${sel(TRITON_COUNTERS.requestSuccess, { model: m })})`,
      ),
  );
  if (parts.length === 0) return [];
  return [
    {
      alert: "TritonModelNotLoaded",
      expr: parts.join(" or "),
      for: "5m",
      labels: { severity: "critical" },
      annotations: {
        summary: "Triton {{ $labels.serving_group }}/{{ $labels.track }} pod {{ $labels.pod }} does not serve listed model {{ $labels.model }}",
        description:
          "The pod's metrics are up but carry no series of this model: Triton exports per-model series only for loaded model versions, so the model was unloaded " +
          "(the repository API of explicit model control) or failed to load. Requests for it fail with 'unknown model'. " +
          "Runbook: curl /v2/repository/index on the pod; check the server log for the unload or load error; restart the pod to load its listed models again.",
      },
    },
  ];
}

/** Triton alerts. */
export function tritonAlerts(inputs: Omit<AlertInputs, "dcgmLabels">): AlertingRule[] {
  const { thresholds: t, servingNamespace, servingGroups: groups } = inputs;
  const queueBudgetUs = t.queueTimeBudgetMs * 1000;
  const p99SloUs = t.p99SloMs * 1000;
  const loc = "{{ $labels.serving_group }}/{{ $labels.track }} model {{ $labels.model }}";
  return [
    {
      alert: "TritonQueueTimeAboveBudget",
      // nv_inference_queue_duration_us is cumulative µs: rate ÷ rate(success) = average µs per request.
      expr: `${sumRate(MODEL_KEYS, TRITON_COUNTERS.queueDurationUs)} / ${sumRate(MODEL_KEYS, TRITON_COUNTERS.requestSuccess)} > ${num(queueBudgetUs)}`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary: `Triton ${loc}: average queue time {{ $value | humanize }}µs per request exceeds the ${num(queueBudgetUs)}µs budget`,
        description:
          "Requests wait in the scheduler queue longer than the budget: the group is under-provisioned or a model's instance_group/dynamic_batching is too small. " +
          "Runbook: 1) check the HPA (kubectl get hpa -n <ns>) and whether it is at maxReplicas; 2) check GPU utilisation on the GPU dashboard; " +
          "3) raise replicas or the model's instance count; 4) if load is a spike, confirm the queue drains.",
      },
    },
    {
      alert: "TritonInferenceFailureRatioHigh",
      expr: `${failureRatio(MODEL_KEYS, [...MODEL_KEYS, "reason"])} > ${num(t.failureRatio)}`,
      for: "5m",
      labels: { severity: "critical" },
      annotations: {
        summary: `Triton ${loc}: {{ $value | humanizePercentage }} of requests fail with reason {{ $labels.reason }}`,
        description:
          "The share of failed inference requests for one reason is above the threshold. REJECTED: queue full or timeout (capacity); CANCELED: clients gave up; " +
          "BACKEND: the model raised an error (bad input or a broken model version); OTHER: see server logs. " +
          "Runbook: kubectl logs -n <ns> <pod> for the model; if a new version rolled out, roll back; if REJECTED, treat as capacity.",
      },
    },
    {
      alert: "TritonP99LatencyAboveSLO",
      // Summary quantiles need --metrics-config summary_latencies=true; max over pods is the worst pod.
      expr: `max ${by(MODEL_KEYS)} (${sel(TRITON_SUMMARIES.requestUs, { quantile: TRITON_SUMMARY_QUANTILES.p99 })}) > ${num(p99SloUs)}`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary: `Triton ${loc}: p99 request latency {{ $value | humanize }}µs exceeds the ${num(p99SloUs)}µs SLO`,
        description:
          "The 99th percentile of end-to-end request time (nv_inference_request_summary_us, µs) is above the SLO. " +
          "Runbook: compare queue vs compute time on the Triton dashboard; queue-bound means scale out, compute-bound means a slower model version or a saturated GPU.",
      },
    },
    ...groups.map((g) => targetDown(servingNamespace, g)),
    {
      alert: "TritonMetricsAbsent",
      expr: `absent(up{job="${TRITON_JOB}"})`,
      for: "15m",
      labels: { severity: "warning" },
      annotations: {
        summary: "No Triton scrape target exists",
        description:
          "The ServiceMonitor selects no Triton metrics Service, so every other Triton alert is blind. " +
          "Runbook: kubectl get svc -n <ns> -l app.kubernetes.io/component=metrics; check the Service names match <group>[-canary]-metrics.",
      },
    },
    {
      alert: "TritonModelNotServing",
      expr:
        `${sumRate(MODEL_KEYS, TRITON_COUNTERS.requestSuccess, "10m")} == 0 and on (${MODEL_KEYS.join(", ")}) ` +
        `(${sumRate(MODEL_KEYS, TRITON_COUNTERS.requestFailure, "10m")} > 0 or sum ${by(MODEL_KEYS)} (${sel(TRITON_GAUGES.pendingRequestCount)}) > 0)`,
      for: "5m",
      labels: { severity: "critical" },
      annotations: {
        summary: `Triton ${loc}: requests arrive but none succeed`,
        description:
          "A model receives requests (failures or pending requests) without a single success for 10 minutes: it is not ready, failed to load, or every request errors. " +
          "Runbook: curl /v2/models/<model>/ready on the pod; check the load error in the logs; check the model repository.",
      },
    },
    ...groups.flatMap((g) => modelNotLoaded(servingNamespace, g)),
    {
      alert: "TritonCanaryFailureRatioWorse",
      expr:
        `${failureRatio(GROUP_MODEL_KEYS, GROUP_MODEL_KEYS, { track: "canary" })} ` +
        `> ${failureRatio(GROUP_MODEL_KEYS, GROUP_MODEL_KEYS, { track: "primary" })} + ${num(t.canaryFailureRatioMargin)}`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary:
          "Triton canary of {{ $labels.serving_group }} model {{ $labels.model }} fails {{ $value | humanizePercentage }} of requests, worse than primary",
        description:
          `The canary's failure ratio exceeds the primary's by more than ${num(t.canaryFailureRatioMargin)} on the same (mirrored) traffic. ` +
          "Runbook: stop promoting the canary; compare failure reasons side by side on the canary dashboard; roll the canary back.",
      },
    },
  ];
}

/** GPU alerts, from the DCGM exporter. */
export function gpuAlerts(t: AlertThresholds, labels: DcgmLabelNames): AlertingRule[] {
  const gpu = `{{ $labels.${labels.hostname} }} GPU {{ $labels.${labels.gpu} }}`;
  const xid = DCGM_METRICS.xidErrors;
  return [
    {
      alert: "GpuMemoryLeak",
      // FB_USED is MiB: deriv is MiB/s, ×3600 MiB/h. Load counts as flat when the 30-minute
      // average utilisation moved less than the band since the start of the window.
      expr:
        `deriv(${DCGM_METRICS.fbUsedMiB}[${LEAK_WINDOW}]) * 3600 > ${num(t.gpuMemoryGrowthMiBPerHour)} and ` +
        `abs(avg_over_time(${DCGM_METRICS.gpuUtil}[30m]) - avg_over_time(${DCGM_METRICS.gpuUtil}[30m] offset ${LEAK_WINDOW})) < ${FLAT_LOAD_BAND_PERCENT}`,
      for: "30m",
      labels: { severity: "warning" },
      annotations: {
        summary: `${gpu}: framebuffer grows {{ $value | humanize }} MiB/h while load is flat`,
        description:
          "Used GPU memory (DCGM_FI_DEV_FB_USED, MiB) has risen steadily for hours while utilisation stayed flat: a model or backend leaks device memory and will hit OOM. " +
          "Runbook: find the pod via the namespace/pod labels; check which model versions were loaded/unloaded; restart the pod in a quiet window; report the backend.",
      },
    },
    {
      alert: "GpuUtilisationSaturated",
      expr: `avg_over_time(${DCGM_METRICS.gpuUtil}[15m]) > ${num(t.gpuUtilPercent)}`,
      for: "15m",
      labels: { severity: "warning" },
      annotations: {
        summary: `${gpu}: utilisation {{ $value | humanize }}% for 15 minutes`,
        description:
          "The GPU is saturated (DCGM_FI_DEV_GPU_UTIL, 0–100 %): queue time will grow. Runbook: check the HPA and node group headroom; add GPU nodes or replicas.",
      },
    },
    {
      alert: "GpuXidError",
      // DCGM_FI_DEV_XID_ERRORS is a gauge holding the last XID until the exporter restarts: "non-zero"
      // would fire forever after one XID. A change of value to a non-zero code is a new XID; the alert
      // resolves XID_WINDOW later. (The same code twice in a row is not a change and is not seen.)
      expr: `${xid} > 0 and changes(${xid}[${XID_WINDOW}]) > 0`,
      labels: { severity: "critical" },
      annotations: {
        summary: `${gpu}: XID error {{ $value }}`,
        description:
          `The driver reported a new XID error in the last ${XID_WINDOW} (value = the XID code). 48/63/64/74/79 mean ECC, NVLink or fallen-off-the-bus faults that need the node drained. ` +
          "Runbook: look the code up in NVIDIA's XID catalogue; kubectl cordon and drain the node; let the node group replace it. The alert resolves by itself; the node may still need replacing.",
      },
    },
    {
      alert: "GpuTemperatureHigh",
      expr: `${DCGM_METRICS.gpuTempC} > ${num(t.gpuTempCelsius)}`,
      for: "10m",
      labels: { severity: "warning" },
      annotations: {
        summary: `${gpu}: temperature {{ $value }}°C`,
        description:
          "DCGM_FI_DEV_GPU_TEMP (°C) is above the threshold: the GPU will throttle clocks and latency rises. Runbook: check the instance's health in EC2; move load away; replace the node if it persists.",
      },
    },
  ];
}

/** dcgm-exporter missing on a GPU node (every GPU alert of that node would be silent). */
export function dcgmExporterAlerts(): AlertingRule[] {
  return [
    {
      alert: "DcgmExporterMissing",
      // Every node with the GPU taint (kube-state-metrics) without a healthy exporter target on it.
      expr: `${KSM_METRICS.nodeSpecTaint}{key="${GPU_TAINT.key}", effect="${GPU_TAINT.effect}"} ` + `unless on (node) (up{job="${DCGM_JOB}"} == 1)`,
      for: DCGM_MISSING_FOR,
      labels: { severity: "warning" },
      annotations: {
        summary: "GPU node {{ $labels.node }} has no healthy dcgm-exporter: its GPU alerts are blind",
        description:
          `No dcgm-exporter target on this GPU node has been up for ${DCGM_MISSING_FOR}: GpuXidError, GpuTemperatureHigh and the GPU dashboard see nothing of it. ` +
          "Runbook: kubectl -n <gpu-operator namespace> get pods -o wide | grep dcgm-exporter; check the operator's ClusterPolicy status and the exporter's logs.",
      },
    },
  ];
}

/** Recorded value of each gate of a canary's current stage (labels: namespace, serving_group, stage, gate). */
export const CANARY_GATE_RECORD = "triton_platform:canary_gate:value";
/** A gate of the current stage fails on enough traffic: the canary must not take the next stage (and is a stop candidate). */
export { CANARY_GATE_FAILED_ALERT };
/** The current stage's window holds fewer canary requests than its gates need: no verdict is possible. */
export const CANARY_GATE_INSUFFICIENT_ALERT = "CanaryGateInsufficientData";

/** Recording rules and alerts of one canary's current stage. */
export function canaryGateRules(c: CanaryGates): { records: RecordingRule[]; alerts: AlertingRule[] } {
  const labels = { namespace: c.namespace, [TRITON_TARGET_LABELS.servingGroup]: c.group, stage: c.stage.stage };
  const enough = `(${c.requests.expr}) >= ${num(c.requests.threshold)}`;
  return {
    records: [c.requests, ...c.gates].map((g) => ({ record: CANARY_GATE_RECORD, expr: g.expr, labels: { ...labels, gate: g.name } })),
    alerts: [
      ...c.gates.map((g): AlertingRule => ({
        alert: CANARY_GATE_FAILED_ALERT,
        // Judged only on enough traffic: a thin window is "insufficient", never a failure (nor a pass).
        expr: `${failing(g)} and ${enough}`,
        for: "5m",
        labels: { severity: "critical", ...labels, gate: g.name },
        annotations: {
          summary: `Canary of ${c.group} fails gate ${g.name} of stage ${c.stage.stage}: {{ $value }} ${g.unit} (limit ${g.compare} ${num(g.threshold)})`,
          description:
            `Over the stage's ${c.window} window, ${g.what} is beyond its limit on at least ${num(c.requests.threshold)} canary requests. ` +
            "The canary must not take the next stage. Runbook: npm run gate -- --stack <stack> --prometheus <url> for every gate's numbers; " +
            "compare the tracks on the canary dashboard; set the canary's shares to 0 (gateway.mirrorPercent, canary.trafficPercent) or roll its image back.",
        },
      })),
      {
        alert: CANARY_GATE_INSUFFICIENT_ALERT,
        expr: `(${c.requests.expr} or vector(0)) < ${num(c.requests.threshold)}`,
        // A whole window without enough traffic: the stage can never be judged as it is.
        for: c.window,
        labels: { severity: "warning", ...labels, gate: c.requests.name },
        annotations: {
          summary: `Canary of ${c.group}, stage ${c.stage.stage}: {{ $value }} requests in ${c.window}, fewer than the ${num(c.requests.threshold)} its gates need`,
          description:
            "No gate of the stage can be judged: the canary receives too little traffic (a 0 % mirror and split, canary pods not ready, a model the canary does not load). " +
            "Runbook: check the stage's shares and the canary's readiness; lower gates.minRequests only if the stage is meant to run on that little traffic.",
        },
      },
    ],
  };
}

/** The rule file (all groups) that the PrometheusRule carries and promtool checks. */
export function alertRuleFile(inputs: AlertInputs): RuleFile {
  return {
    groups: [
      { name: "triton", rules: tritonAlerts(inputs) },
      { name: "gpu", rules: [...gpuAlerts(inputs.thresholds, inputs.dcgmLabels), ...dcgmExporterAlerts()] },
      ...canaryGateGroups(inputs),
    ],
  };
}

/** One rule group per canary (its records, then its alerts), none without canaries. */
function canaryGateGroups(inputs: AlertInputs): RuleFile["groups"] {
  return inputs.servingGroups.flatMap((g) => {
    const c = canaryGates(inputs.servingNamespace, g, inputs.thresholds);
    if (!c) return [];
    const { records, alerts } = canaryGateRules(c);
    return [{ name: `canary-gates-${g.name}`, rules: [...records, ...alerts] }];
  });
}
