// A pull request that moves a canary's rollout stage, in plain words for its plan comment: the
// stage change with its place in the rollout, the exposure it brings (mirror and split, old →
// new) and the gates of the new stage with their numbers. The numbers are the resolved ones, by
// the resolution the gate rules and `npm run gate` use (canaryGates: a stage's own value, else
// monitoring.thresholds), so the comment shows what will judge the stage, not the defaults'
// names. The planner reaches this module through Project.changes (tools/planner/project.ts).
import { canaryGates, type Gate } from "../components/monitoring/gates";
import { canaryStageRef, currentStage, effectiveRollout, ONE_STAGE, type RolloutSettings } from "../components/triton/rollout";
import { loadConfig, PROJECT, type StackConfig } from "./index";

/** One line of the comment's "What changes", with the stack-file keys it comes from. */
export interface StageChange {
  text: string;
  keys: string[];
}

/** A stack's config as the planner hands it: raw `namespace:key` strings and the secret keys. */
export interface RawStack {
  stack: string;
  config: Record<string, string>;
  secretKeys: readonly string[];
}

const num = (n: number) => String(Number(n.toPrecision(12)));
const pct = (ratio: number) => `${num(ratio * 100)} %`;

/** Each canary's rollout, by group name: its declared stages, else today's keys as one stage. */
function rollouts(cfg: StackConfig): Map<string, RolloutSettings> {
  const out = new Map<string, RolloutSettings>();
  for (const g of cfg.triton.groups) if (g.canary) out.set(g.name, effectiveRollout(g.canary.rollout, cfg.gateway.mirrorPercent, g.canary.trafficPercent));
  return out;
}

const load = (s: RawStack) => loadConfig(s.config, s.stack, [...s.secretKeys]);

/** The gates of a group's current stage in words: "failures ≤ primary + 1 %, p99 ≤ 500 ms and ≤ 1.25 × primary, …". */
export function gatesInWords(cfg: StackConfig, group: string, rollout: RolloutSettings): string {
  const c = canaryGates(cfg.triton.namespace, { name: group, canary: true, canaryStage: canaryStageRef(rollout) }, cfg.monitoring.thresholds)!;
  const by = (name: string): Gate => {
    const g = c.gates.find((x) => x.name === name);
    if (!g) throw new Error(`gatesInWords: no gate named ${name} (gates: ${c.gates.map((x) => x.name).join(", ")})`);
    return g;
  };
  const gw5xx = by("gateway_5xx").threshold;
  const gwResets = by("gateway_resets").threshold;
  const gateway = gw5xx === gwResets ? `gateway 5xx and resets ≤ ${pct(gw5xx)}` : `gateway 5xx ≤ ${pct(gw5xx)}, resets ≤ ${pct(gwResets)}`;
  return (
    `gates over ${c.stage.windowMinutes} min: failures ≤ primary + ${pct(by("failure_ratio").threshold)}, ` +
    `p99 ≤ ${num(by("p99_slo").threshold)} ms and ≤ ${num(by("p99_vs_primary").threshold)} × primary, ` +
    `queue ≤ ${num(by("queue_time").threshold)} ms, ${gateway}, at least ${c.requests.threshold} requests`
  );
}

/**
 * The canaries whose current stage the change moves, one line each. A base that no longer
 * loads under the current schema is read for its stage name only (its exposure then from the
 * head's declaration of that stage); a group new in the head, or without a canary on either
 * side, is left to the planner's own lines (a new serving group).
 */
export function stageChanges(base: RawStack | undefined, head: RawStack): StageChange[] {
  const headCfg = load(head);
  let baseRollouts: Map<string, RolloutSettings> | undefined;
  try {
    baseRollouts = base && rollouts(load(base));
  } catch {
    baseRollouts = base && rawStages(base);
  }
  if (!baseRollouts) return [];
  const out: StageChange[] = [];
  for (const [group, now] of rollouts(headCfg)) {
    const was = baseRollouts.get(group);
    if (!was || was.stage === now.stage) continue;
    const to = currentStage(now);
    const from = was.stages.find((s) => s.name === was.stage) ?? now.stages.find((s) => s.name === was.stage);
    const exposure = from
      ? `mirror ${from.mirrorPercent} % → ${to.stage.mirrorPercent} %, split ${from.trafficPercent} % → ${to.stage.trafficPercent} %`
      : `mirror ${to.stage.mirrorPercent} %, split ${to.stage.trafficPercent} %`;
    out.push({
      text: `${group} canary: stage ${was.stage} → ${now.stage} (${to.index + 1} of ${now.stages.length}): ${exposure}; ${gatesInWords(headCfg, group, now)}`,
      keys: [`triton.groups[name=${group}].canary.rollout.stage`],
    });
  }
  return out;
}

/** A base's current stage names straight from its raw triton section (no exposure known). */
function rawStages(base: RawStack): Map<string, RolloutSettings> {
  const out = new Map<string, RolloutSettings>();
  try {
    const triton = JSON.parse(base.config[`${PROJECT}:triton`] ?? "{}") as { groups?: { name?: string; canary?: { rollout?: { stage?: string } } }[] };
    for (const g of triton.groups ?? [])
      if (typeof g.name === "string" && g.canary) out.set(g.name, { stage: g.canary.rollout?.stage ?? ONE_STAGE, stages: [] });
  } catch {
    // an unreadable base section: no stage to compare with
  }
  return out;
}
