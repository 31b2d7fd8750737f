// A canary's rollout gates as PromQL, written once: the PrometheusRule records and alerts on
// them (rules.ts) and `npm run gate` (tools/gate.ts) evaluates the same expressions through the
// Prometheus HTTP API at a given time. Every expression is per serving group and aggregates
// to one sample without labels, so a missing series reads as 0 where that is the truth (no
// failure counted) and as no value where nothing can be judged (no request: "insufficient").
// Metric names come from components/upstream/{triton-metrics,envoy-stats}.ts; the labels are
// the ones the scrape configs give (scrape.ts: job, serving_group, track; Envoy's cluster tag).
import type { CanaryStageRef, ServingGroupAlertRef } from "../contracts";
import { TRITON_COUNTERS, TRITON_SUMMARIES, TRITON_SUMMARY_QUANTILES } from "../upstream/triton-metrics";
import { ENVOY_CLUSTER_COUNTERS, ENVOY_STAT_LABELS } from "../upstream/envoy-stats";
import { regexLiteral } from "../upstream/prometheus";
import { upstreamClusterName } from "../gateway/envoy-config";
import type { AlertThresholds } from "./schema";
import { GATEWAY_JOB, TRITON_JOB, TRITON_TARGET_LABELS } from "./scrape";

/** How a gate compares its value with its threshold. */
export type GateCompare = "<=" | ">=";

export interface Gate {
  /** Stable name: the `gate` label of its recording rule and alert. */
  readonly name: string;
  /** What it checks, in a reviewer's words. */
  readonly what: string;
  /** PromQL: one sample without labels, or none when there is nothing to judge. */
  readonly expr: string;
  readonly compare: GateCompare;
  readonly threshold: number;
  readonly unit: string;
}

export interface CanaryGates {
  readonly group: string;
  readonly namespace: string;
  readonly stage: CanaryStageRef;
  /** The stage's minimum duration as a PromQL range: every gate reads this window. */
  readonly window: string;
  /** The canary's requests (Triton successes + failures) in the window: below minRequests every verdict is "insufficient". */
  readonly requests: Gate;
  /** The gates proper, each judged only when `requests` passes. */
  readonly gates: readonly Gate[];
}

export type Verdict = "pass" | "fail" | "insufficient";

const num = (n: number) => String(Number(n.toPrecision(12)));

/** The gates of a group's current stage, or undefined for a group without a canary. */
export function canaryGates(namespace: string, g: Pick<ServingGroupAlertRef, "name" | "canary" | "canaryStage">, t: AlertThresholds): CanaryGates | undefined {
  const stage = g.canaryStage;
  if (!g.canary || !stage) return undefined;
  const w = `${stage.windowMinutes}m`;
  const triton = (metric: string, track: "primary" | "canary", extra = "") =>
    `${metric}{job="${TRITON_JOB}", namespace="${namespace}", ${TRITON_TARGET_LABELS.servingGroup}="${g.name}", ${TRITON_TARGET_LABELS.track}="${track}"${extra}}`;
  // The __name__ matcher inside the braces: every request a track answered, success or failure.
  const all = (track: "primary" | "canary") =>
    `sum(increase({__name__=~"${TRITON_COUNTERS.requestSuccess}|${TRITON_COUNTERS.requestFailure}", job="${TRITON_JOB}", namespace="${namespace}", ` +
    `${TRITON_TARGET_LABELS.servingGroup}="${g.name}", ${TRITON_TARGET_LABELS.track}="${track}"}[${w}]))`;
  // No failure series at all means no failure: 0, not "unknown".
  const failures = (track: "primary" | "canary") => `(sum(increase(${triton(TRITON_COUNTERS.requestFailure, track)}[${w}])) or vector(0))`;
  const failureRatio = (track: "primary" | "canary") => `(${failures(track)} / ${all(track)})`;
  // Triton's summary quantiles are per pod: the worst pod's average over the window, in ms.
  const p99 = (track: "primary" | "canary") =>
    `(max(avg_over_time(${triton(TRITON_SUMMARIES.requestUs, track, `, quantile="${TRITON_SUMMARY_QUANTILES.p99}"`)}[${w}])) / 1000)`;
  const clusters = ["http", "grpc"].map((p) => regexLiteral(upstreamClusterName(g.name, "canary", p as "http" | "grpc"))).join("|");
  const envoy = (metric: string, extra = "") =>
    `${metric}{job="${GATEWAY_JOB}", namespace="${namespace}", ${ENVOY_STAT_LABELS.clusterName}=~"${clusters}"${extra}}`;
  const gatewayTotal = `sum(increase(${envoy(ENVOY_CLUSTER_COUNTERS.rqTotal)}[${w}]))`;
  const gs = stage.gates;
  return {
    group: g.name,
    namespace,
    stage,
    window: w,
    requests: {
      name: "requests",
      what: "canary requests in the window (Triton successes + failures)",
      expr: all("canary"),
      compare: ">=",
      threshold: gs.minRequests,
      unit: "requests",
    },
    gates: [
      {
        name: "failure_ratio",
        what: "canary failure ratio minus the primary's",
        expr: `${failureRatio("canary")} - ${failureRatio("primary")}`,
        compare: "<=",
        threshold: gs.failureRatioMargin ?? t.canaryFailureRatioMargin,
        unit: "ratio",
      },
      {
        name: "p99_slo",
        what: "canary p99 latency (worst pod, window average)",
        expr: p99("canary"),
        compare: "<=",
        threshold: gs.p99SloMs ?? t.p99SloMs,
        unit: "ms",
      },
      {
        name: "p99_vs_primary",
        what: "canary p99 ÷ primary p99",
        expr: `${p99("canary")} / ${p99("primary")}`,
        compare: "<=",
        threshold: gs.p99VsPrimary,
        unit: "×",
      },
      {
        name: "queue_time",
        what: "canary average queue time per request",
        expr: `sum(increase(${triton(TRITON_COUNTERS.queueDurationUs, "canary")}[${w}])) / sum(increase(${triton(TRITON_COUNTERS.requestSuccess, "canary")}[${w}])) / 1000`,
        compare: "<=",
        threshold: gs.queueTimeMs ?? t.queueTimeBudgetMs,
        unit: "ms",
      },
      {
        name: "gateway_5xx",
        what: "gateway requests to the canary answered 5xx (upstream resets and timeouts before a response included)",
        expr: `(sum(increase(${envoy(ENVOY_CLUSTER_COUNTERS.rqXx, `, ${ENVOY_STAT_LABELS.responseCodeClass}="5"`)}[${w}])) or vector(0)) / ${gatewayTotal}`,
        compare: "<=",
        threshold: gs.gatewayErrorRatio,
        unit: "ratio",
      },
      {
        name: "gateway_resets",
        what: "gateway requests to the canary reset by it (also after the response started)",
        expr: `(sum(increase(${envoy(ENVOY_CLUSTER_COUNTERS.rqRxReset)}[${w}])) or vector(0)) / ${gatewayTotal}`,
        compare: "<=",
        threshold: gs.gatewayErrorRatio,
        unit: "ratio",
      },
    ],
  };
}

/** Whether a value passes a gate; undefined (no sample) or NaN: nothing to judge. */
export function gateVerdict(gate: Pick<Gate, "compare" | "threshold">, value: number | undefined): Verdict {
  if (value === undefined || Number.isNaN(value)) return "insufficient";
  return (gate.compare === "<=" ? value <= gate.threshold : value >= gate.threshold) ? "pass" : "fail";
}

/** The stage's verdict: too few requests is "insufficient" whatever the gates read; else any failing gate fails it. */
export function stageVerdict(requests: Verdict, gates: readonly Verdict[]): Verdict {
  if (requests !== "pass") return "insufficient";
  if (gates.includes("fail")) return "fail";
  return gates.includes("insufficient") ? "insufficient" : "pass";
}

/** The PromQL comparison that is true when a gate fails (for the alerts). */
export function failing(gate: Gate): string {
  return `(${gate.expr}) ${gate.compare === "<=" ? ">" : "<"} ${num(gate.threshold)}`;
}
