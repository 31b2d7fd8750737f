// A canary's rollout as declared stages: the schema's rules (each error names the key, the rule
// and the value), today's keys as a one-stage rollout, and the prod policy on the order of the
// stages and on the gateway's shares against the current stage.
import { strict as assert } from "node:assert";
import { ConfigError, loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";
import { evaluatePolicies } from "../tools/planner/policy";
import { rules } from "../policies/rules";
import { ROLLOUT_ANNOTATION } from "../components/contracts";
import { canaryStageRef, currentStage, effectiveRollout, ONE_STAGE } from "../components/triton/rollout";
import { recorded } from "./helpers";
import { STATEFUL_SET } from "../policies/rules/types";

const STAGES = [
  { name: "mirror-5", mirrorPercent: 5, minDurationMinutes: 60 },
  { name: "split-5", mirrorPercent: 5, trafficPercent: 5, minDurationMinutes: 120, gates: { minRequests: 1000 } },
];

/** The prod fixture with the vision group's canary and the gateway section edited. */
function prodWith(edit: (canary: any, gateway: any) => void): Record<string, string> {
  const raw = { ...fixtureConfig("prod") };
  const triton = JSON.parse(raw["triton-platform:triton"]);
  const gateway = JSON.parse(raw["triton-platform:gateway"]);
  edit(triton.groups[0].canary, gateway);
  raw["triton-platform:triton"] = JSON.stringify(triton);
  raw["triton-platform:gateway"] = JSON.stringify(gateway);
  return raw;
}

function problems(raw: Record<string, string>): string[] {
  try {
    loadConfig(raw, "prod");
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.problems;
  }
  return [];
}

describe("canary rollout stages in the stack file", () => {
  it("loads declared stages and resolves the current stage's gates (defaults from the schema)", () => {
    const cfg = loadConfig(
      prodWith((c, g) => {
        c.rollout = { stage: "split-5", stages: STAGES };
        c.trafficPercent = 5;
        g.mirrorPercent = 5;
      }),
      "prod",
    );
    const r = cfg.triton.groups[0].canary!.rollout!;
    const ref = canaryStageRef(r);
    assert.deepEqual(
      { stage: ref.stage, index: ref.index, count: ref.count, window: ref.windowMinutes },
      { stage: "split-5", index: 1, count: 2, window: 120 },
    );
    assert.equal(ref.gates.minRequests, 1000);
    assert.equal(ref.gates.gatewayErrorRatio, 0.01, "schema default");
    assert.equal(ref.gates.p99SloMs, undefined, "left to monitoring.thresholds.p99SloMs");
    assert.equal(cfg.triton.groups[0].canary!.rollout!.stages[0].trafficPercent, 0, "a stage's split defaults to 0");
  });

  it("reads today's keys as a one-stage rollout when rollout is left out", () => {
    const r = effectiveRollout(undefined, 7.5, 2);
    assert.equal(r.stage, ONE_STAGE);
    assert.equal(r.stages.length, 1);
    assert.deepEqual([currentStage(r).stage.mirrorPercent, currentStage(r).stage.trafficPercent], [7.5, 2]);
    const cfg = loadConfig(
      prodWith((c) => delete c.rollout),
      "prod",
    );
    assert.equal(cfg.triton.groups[0].canary!.rollout, undefined);
  });

  it("names the key, the rule and the value: unknown current stage, repeated stage, share out of range", () => {
    const ps = problems(
      prodWith((c) => {
        c.rollout = { stage: "split-50", stages: [STAGES[0], { ...STAGES[0] }, { name: "x", mirrorPercent: 101 }] };
      }),
    );
    assert.ok(
      ps.some((p) => /triton\.groups\[0\]\.canary\.rollout\.stage must name one of stages\[\]\.name \(mirror-5, x\), got "split-50"/.test(p)),
      ps.join("\n"),
    );
    assert.ok(
      ps.some((p) => /canary\.rollout\.stages\[1\]\.name must be unique: stage mirror-5 is declared twice, got "mirror-5"/.test(p)),
      ps.join("\n"),
    );
    assert.ok(
      ps.some((p) => /canary\.rollout\.stages\[2\]\.mirrorPercent must be a number from 0 to 100, got 101/.test(p)),
      ps.join("\n"),
    );
  });

  it("requires canary.trafficPercent and gateway.mirrorPercent to equal the current stage's shares", () => {
    const ps = problems(
      prodWith((c, g) => {
        c.rollout = { stage: "split-5", stages: STAGES };
        c.trafficPercent = 2;
        g.mirrorPercent = 10;
      }),
    );
    assert.ok(
      ps.some((p) =>
        /triton\.groups\[0\]\.canary\.trafficPercent must equal the current stage's trafficPercent \(canary\.rollout\.stage split-5: 5\).*, got 2/.test(p),
      ),
      ps.join("\n"),
    );
    assert.ok(
      ps.some((p) =>
        /triton\.groups\[0\]\.canary\.rollout\.stage must name a stage whose mirrorPercent \(split-5: 5\) equals gateway\.mirrorPercent \(10\).*, got "split-5"/.test(
          p,
        ),
      ),
      ps.join("\n"),
    );
  });
});

describe("policy triton-canary-rollout-in-order", () => {
  const rule = rules.find((r) => r.name === "triton-canary-rollout-in-order")!;
  const canary = (environment: string, rollout: unknown, kind = "StatefulSet") =>
    recorded(STATEFUL_SET, "vision-canary", {
      apiVersion: "apps/v1",
      kind,
      metadata: {
        name: "vision-canary",
        namespace: "triton",
        labels: { "triton-platform/environment": environment, "app.kubernetes.io/instance": "vision", track: "canary" },
        annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify(rollout) },
      },
      spec: {},
    });
  const run = async (...rs: ReturnType<typeof recorded>[]) => (await evaluatePolicies([rule], rs, { all: "mandatory" })).map((v) => v.message);

  it("stays silent on stages in order, and outside prod", async () => {
    assert.deepEqual(await run(canary("prod", { stage: "split-5", stages: STAGES })), []);
    assert.deepEqual(await run(canary("dev", { stage: "x", stages: [{ name: "x", trafficPercent: 50, minDurationMinutes: 1 }] })), []);
  });

  it("fires on a stage that lowers a share, one too short to judge, and an unknown current stage", async () => {
    const ms = await run(
      canary("prod", {
        stage: "gone",
        stages: [STAGES[0], { ...STAGES[1], mirrorPercent: 1 }, { name: "quick", mirrorPercent: 5, trafficPercent: 10, minDurationMinutes: 5 }],
      }),
    );
    assert.ok(
      ms.some((m) => /stages\[1\]\.mirrorPercent: stage split-5 lowers mirrorPercent to 1 from mirror-5's 5/.test(m)),
      ms.join("\n"),
    );
    assert.ok(
      ms.some((m) => /stages\[2\]\.minDurationMinutes: stage quick runs 5 min, less than 30 min/.test(m)),
      ms.join("\n"),
    );
    assert.ok(
      ms.some((m) => /\.stage: the current stage gone is not one of the declared stages/.test(m)),
      ms.join("\n"),
    );
  });

  it("fires on a gateway split above the current stage's share (a later stage without moving the key)", async () => {
    const envoy = {
      static_resources: {
        listeners: [
          {
            filter_chains: [
              {
                filters: [
                  {
                    typed_config: {
                      route_config: {
                        virtual_hosts: [
                          {
                            routes: [
                              {
                                match: { prefix: "/", runtime_fraction: { default_value: { numerator: 5, denominator: "HUNDRED" } } },
                                route: { cluster: "vision-canary-http" },
                              },
                            ],
                          },
                        ],
                      },
                    },
                  },
                ],
              },
            ],
          },
        ],
      },
    };
    const cm = recorded("kubernetes:core/v1:ConfigMap", "gateway-config", {
      metadata: { name: "gateway-config", labels: { "app.kubernetes.io/name": "triton-gateway" } },
      data: { "envoy.json": JSON.stringify(envoy) },
    });
    assert.deepEqual(await run(canary("prod", { stage: "split-5", stages: STAGES }), cm), [], "5 % at stage split-5");
    const ms = await run(canary("prod", { stage: "mirror-5", stages: STAGES }), cm);
    assert.equal(ms.length, 1, ms.join("\n"));
    assert.match(
      ms[0],
      /ConfigMap gateway-config: .*routes\[0\]\.match\.runtime_fraction\.default_value splits 5 % to vision's canary, above its current stage mirror-5 \(0 %\)/,
    );
  });
});
