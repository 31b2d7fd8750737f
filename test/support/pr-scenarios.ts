// Pull requests a reviewer meets, built on the fixture stacks (never the example stack files):
// a realistic config change across the three stacks and bad ones, each as the base's and the
// head's stack values. `scenarioPlans` plans both sides in-process, as `npm run plan -- --base`
// does (tools/planner/compare.ts), so the comment tests and tools/render-comment.ts see the
// comment a pull request would get.
import { isSettingsError } from "../../lib/errors";
import { planConfig, readProjectName, ROOT, stackConfigOf, type PlanResult } from "../../tools/planner";
import { compareStack } from "../../tools/planner/compare";
import type { StackDiff } from "../../tools/planner/diff";
import { errorReport, type StackReport } from "../../tools/planner/report";
import { withStackFilePositions } from "../../tools/planner/sarif";
import { fixtureLevels, fixtureValues, fixtureYaml, SHAPES, type Overrides, type StackValues } from "./stacks";

export interface Scenario {
  name: string;
  /** What the pull request does, in a reviewer's words. */
  title: string;
  /** Per stack (a shape), the head's overrides of the fixture; the base is the fixture itself. */
  head: Partial<Record<(typeof SHAPES)[number], Overrides>>;
  /** Per stack, the base's overrides of the fixture (applied under the head's too), when the base is not the fixture itself. */
  base?: Partial<Record<(typeof SHAPES)[number], Overrides>>;
}

/** Prod's vision canary as a three-stage rollout at its first stage (the fixture's gateway mirrors 5 %). */
export const PROD_ROLLOUT = {
  stage: "mirror-5",
  stages: [
    { name: "mirror-5", mirrorPercent: 5 },
    { name: "split-5", mirrorPercent: 5, trafficPercent: 5, minDurationMinutes: 120, gates: { minRequests: 500, p99SloMs: 250 } },
    { name: "split-20", mirrorPercent: 5, trafficPercent: 20, minDurationMinutes: 240 },
  ],
};

/** A second serving group for staging: object detection on its own L4 pods. */
export const DETECT_GROUP = {
  name: "detect",
  models: ["yolov8"],
  image: { tag: "25.01-py3" },
  replicas: 2,
  gpu: { type: "nvidia-l4", count: 1 },
  cpu: "3",
  memory: "12Gi",
  shmSize: "2Gi",
  modelLoadBudgetSeconds: 600,
  hpa: { min: 2, max: 2, targetQueueUs: 10000 },
};

export const SCENARIOS: Scenario[] = [
  {
    name: "realistic",
    title: "prod: vision canary takes 5 % and mirror 10 %; staging: new serving group detect, GPU nodes raised; dev: larger instance",
    head: {
      prod: (s) => {
        s.triton.groups[0].canary.trafficPercent = 5;
        s.gateway.mirrorPercent = 10;
      },
      staging: (s) => {
        s.triton.groups.push(structuredClone(DETECT_GROUP));
        s.gpu.scaling.max += 2;
      },
      dev: (s) => {
        s.gpu.instanceTypes = ["g4dn.2xlarge"];
      },
    },
  },
  {
    name: "stage",
    title: "prod: vision canary moves one rollout stage, mirror-5 → split-5",
    base: { prod: (s) => void (s.triton.groups[0].canary.rollout = structuredClone(PROD_ROLLOUT)) },
    head: {
      prod: (s) => {
        s.triton.groups[0].canary.rollout = { ...structuredClone(PROD_ROLLOUT), stage: "split-5" };
        s.triton.groups[0].canary.trafficPercent = 5;
      },
    },
  },
  {
    name: "shortfall",
    title: "staging: new serving group detect, GPU nodes not raised",
    head: { staging: (s) => void s.triton.groups.push(structuredClone(DETECT_GROUP)) },
  },
  {
    name: "typo",
    title: "prod: mirror share set under a misspelt key",
    head: {
      prod: (s) => {
        s.gateway.mirrorPercnt = 10;
      },
    },
  },
  {
    name: "policy",
    title: "prod: mirror share above prod's maximum",
    head: { prod: (s) => void (s.gateway.mirrorPercent = 30) },
  },
];

export interface ScenarioPlan {
  reports: StackReport[];
  diffs: Map<string, StackDiff>;
  heads: Map<string, PlanResult>;
  /** Per stack, the head's stack values (what a Pulumi.<stack>.yaml would hold). */
  values: Map<string, StackValues>;
  /** Per stack, the head's Pulumi.<stack>.yaml (uri and text, as the SARIF locates keys in it). */
  stackFiles: Map<string, { uri: string; text: string }>;
}

const isConfigError = (e: unknown): e is Error => isSettingsError(e) || (e instanceof Error && e.name === "UsageError");

/** The base's overrides, then the head's (each as a function editing the sections in place). */
function both(base: Overrides | undefined, head: Overrides | undefined): Overrides {
  const apply = (o: Overrides | undefined, sections: Record<string, any>) => {
    if (typeof o === "function") o(sections);
    else for (const [k, v] of Object.entries(o ?? {})) sections[k.replace(/^triton-platform:/, "")] = structuredClone(v); // as fixtureValues keys them
  };
  return base === undefined ? (head ?? {}) : (sections) => (apply(base, sections), apply(head, sections));
}

/** Plan a scenario's base and head for every shape, in-process, and compare them as `--base` does. */
export async function scenarioPlans(
  s: Scenario,
  base = "main",
  basePlan: (shape: string) => Promise<PlanResult> = (shape) =>
    planConfig(stackConfigOf(readProjectName(ROOT), shape, fixtureValues(shape)), { levels: fixtureLevels(shape) }),
): Promise<ScenarioPlan> {
  const project = readProjectName(ROOT);
  const out: ScenarioPlan = { reports: [], diffs: new Map(), heads: new Map(), values: new Map(), stackFiles: new Map() };
  for (const shape of SHAPES) {
    const baseEdit = s.base?.[shape];
    const headEdit = both(baseEdit, s.head[shape]);
    const baseValues = fixtureValues(shape, baseEdit ?? {});
    const headValues = fixtureValues(shape, headEdit);
    out.values.set(shape, headValues);
    const stackFile = { uri: `Pulumi.${shape}.yaml`, text: fixtureYaml(shape, headEdit) };
    out.stackFiles.set(shape, stackFile);
    const levels = fixtureLevels(shape);
    const old = baseEdit ? await planConfig(stackConfigOf(project, shape, baseValues), { levels }) : await basePlan(shape);
    let head: PlanResult;
    try {
      head = await planConfig(stackConfigOf(project, shape, headValues), { levels });
    } catch (e) {
      if (!isConfigError(e)) throw e;
      // As `npm run plan` reports it: each problem with its place in the stack file.
      out.reports.push(errorReport(shape, withStackFilePositions(e.message, stackFile, project)));
      continue;
    }
    out.heads.set(shape, head);
    out.reports.push(head.report);
    out.diffs.set(shape, await compareStack(shape, base, { ...old, values: baseValues }, { ...head, values: headValues }, project));
  }
  return out;
}
