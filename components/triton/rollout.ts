// A canary's rollout as declared stages: each stage's exposure (mirror x %, split y %), its
// minimum duration (the window its gates are read over) and its gates. The current stage is a
// key (`canary.rollout.stage`); a pull request moves it one step. The numbers Envoy runs with
// stay where they were (gateway.mirrorPercent, canary.trafficPercent) and must equal the
// current stage's, so a stage change and the exposure it brings show together in the plan.
// Without `rollout` a canary is a one-stage rollout at today's two keys (oneStageRollout).
import * as v from "valibot";
import { doc, dnsLabel, integer, list, number, refined, section } from "../../lib/schema";
import type { CanaryStageRef } from "../contracts";
import { ENVOY_PERCENT_RULE, isEnvoyPercent } from "../upstream/envoy";

const percent = v.pipe(number({ min: 0, max: 100 }), v.check(isEnvoyPercent, ENVOY_PERCENT_RULE));

/**
 * A stage's gates. The thresholds that have a fleet-wide counterpart in monitoring.thresholds
 * default to it there (components/monitoring/gates.ts resolves them), so each default is
 * written once.
 */
export const gateSettings = section({
  minRequests: doc(
    v.optional(integer({ min: 1 }), 200),
    'Canary requests (Triton successes + failures) the window must hold; below it every gate reads "insufficient data", never "pass".',
  ),
  failureRatioMargin: doc(
    v.optional(number({ min: 0, max: 1 })),
    "How much higher (absolute, 0–1) the canary's failure ratio over the window may be than the primary's.",
    { default: "monitoring.thresholds.canaryFailureRatioMargin" },
  ),
  p99SloMs: doc(v.optional(number({ min: 0.001 })), "Highest canary p99 request latency (worst pod, window average), ms.", {
    default: "monitoring.thresholds.p99SloMs",
  }),
  p99VsPrimary: doc(v.optional(number({ min: 1 }), 1.25), "Highest canary p99 as a multiple of the primary's (>= 1; 1.25: at most 25 % slower)."),
  queueTimeMs: doc(v.optional(number({ min: 0.001 })), "Highest average queue time per canary request over the window, ms.", {
    default: "monitoring.thresholds.queueTimeBudgetMs",
  }),
  gatewayErrorRatio: doc(
    v.optional(number({ min: 0, max: 1 }), 0.01),
    "Highest share (0–1) of the gateway's requests to the canary's clusters answered 5xx or reset by the upstream (Envoy's own counters: " +
      "they see resets and overflows Triton never counts).",
  ),
});

/** One stage of a rollout. */
export const stageSettings = section({
  name: doc(dnsLabel, "The stage's name (a DNS label); `canary.rollout.stage` names the current one."),
  mirrorPercent: doc(v.optional(percent, 0), "Share of requests shadowed to the canary in this stage (gateway.mirrorPercent must equal it while current)."),
  trafficPercent: doc(v.optional(percent, 0), "Share of real requests the canary serves in this stage (canary.trafficPercent must equal it while current)."),
  minDurationMinutes: doc(
    v.optional(integer({ min: 1, max: 10080 }), 60),
    "Least time the stage runs before the next may start, minutes (1–10080); also the window its gates are read over.",
  ),
  gates: doc(v.optional(gateSettings, {}), "The gates that decide whether the canary may take the next stage."),
});

/** `canary.rollout`: the stages in order and the current one. */
export const rolloutSettings = refined(
  section({
    stage: doc(dnsLabel, "The current stage (one of stages[].name); a pull request moves it one step."),
    stages: doc(list(stageSettings, { min: 1, what: "stage" }), "The stages in order: mirror shares, then split shares, the last the promotion."),
  }),
  (r, ctx) => {
    const seen = new Set<string>();
    r.stages.forEach((s, i) => {
      if (seen.has(s.name)) ctx.addIssue({ path: ["stages", i, "name"], message: `must be unique: stage ${s.name} is declared twice` });
      seen.add(s.name);
    });
    if (!seen.has(r.stage)) ctx.addIssue({ path: ["stage"], message: `must name one of stages[].name (${[...seen].join(", ")})` });
  },
);

export type GateSettings = v.InferOutput<typeof gateSettings>;
export type StageSettings = v.InferOutput<typeof stageSettings>;
export type RolloutSettings = v.InferOutput<typeof rolloutSettings>;

/** The name of the single stage a canary without `rollout` runs at. */
export const ONE_STAGE = "current";

/** Today's keys as a one-stage rollout: the exposure they set, the schema's default duration and gates. */
export function oneStageRollout(mirrorPercent: number, trafficPercent: number): RolloutSettings {
  return { stage: ONE_STAGE, stages: [v.parse(stageSettings, { name: ONE_STAGE, mirrorPercent, trafficPercent })] };
}

/** The rollout a canary runs: its declared one, else today's keys as one stage. */
export function effectiveRollout(rollout: RolloutSettings | undefined, mirrorPercent: number, trafficPercent: number): RolloutSettings {
  return rollout ?? oneStageRollout(mirrorPercent, trafficPercent);
}

/** The current stage and its index. */
export function currentStage(r: RolloutSettings): { index: number; stage: StageSettings } {
  const index = Math.max(
    0,
    r.stages.findIndex((s) => s.name === r.stage),
  );
  return { index, stage: r.stages[index] };
}

/** The current stage as the gates need it (contracts' CanaryStageRef). */
export function canaryStageRef(r: RolloutSettings): CanaryStageRef {
  const { index, stage } = currentStage(r);
  return { stage: stage.name, index, count: r.stages.length, windowMinutes: stage.minDurationMinutes, gates: stage.gates };
}
