// The pull-request comment a reviewer approves in a minute: an overview first (one row per
// changed stack, prod first, unchanged stacks one line), what restarts and what goes down, the
// change in plain words, a capacity shortfall red with its key and numbers, Markdown GitHub
// cannot misread (placeholders escaped, cuts only between sections, the footer kept and naming
// the commit planned). The pull requests are test/support/pr-scenarios.ts on fixture stacks,
// planned in-process (the bases are the cached fixture plans).
import { strict as assert } from "node:assert";
import { plan, recorded } from "./helpers";
import { DETECT_GROUP, SCENARIOS, scenarioPlans, type ScenarioPlan } from "./support/pr-scenarios";
import { CUT, fitComment, planMarkdown, text } from "../tools/planner/markdown";
import { countChanges, diffResources, type StackDiff } from "../tools/planner/diff";
import { stackImpact } from "../tools/planner/impact";
import { stageChanges } from "../config/rollout-change";
import { fixtureStack } from "./support/stacks";
import { PROD_ROLLOUT } from "./support/pr-scenarios";

const scenario = (name: string) => SCENARIOS.find((s) => s.name === name)!;
const cache = new Map<string, Promise<ScenarioPlan>>();
const planned = (name: string) => {
  if (!cache.has(name)) cache.set(name, scenarioPlans(scenario(name), "main", plan));
  return cache.get(name)!;
};
const body = async (name: string, opts: { limit?: number } = {}) => {
  const p = await planned(name);
  return planMarkdown(p.reports, p.diffs, "main", {
    resources: new Map([...p.heads].map(([k, h]) => [k, h.resources])),
    commit: "c0ffee".repeat(6) + "ab",
    ...opts,
  });
};
/** The overview table's rows (stack name → cells). */
const rows = (md: string) =>
  new Map(
    md
      .split("\n")
      .filter((l) => /^\| \[\*\*/.test(l))
      .map((l) => {
        const cells = l.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, ""));
        return [/\*\*([^*]+)\*\*/.exec(cells[0])![1], cells] as const;
      }),
  );

describe("the pull-request comment", function () {
  this.timeout(180_000);

  describe("overview first", () => {
    it("one row per changed stack before any stack's section, prod first, then staging, dev", async () => {
      const md = await body("realistic");
      const table = md.indexOf("| Stack | Changes | GPU cost | Policies | Capacity | Restarts | Downtime |");
      assert.ok(table > 0 && table < md.indexOf("### "), "the overview comes before the first stack");
      assert.deepEqual([...rows(md).keys()], ["prod", "staging", "dev"]);
      assert.ok(md.indexOf("### `prod`") < md.indexOf("### `staging`") && md.indexOf("### `staging`") < md.indexOf("### `dev`"));
    });

    it("an unchanged stack is one line, not a section", async () => {
      const md = await body("policy"); // only prod changes
      assert.deepEqual([...rows(md).keys()], ["prod"]);
      assert.match(md, /Unchanged: `staging` \([^)]*\), `dev` \([^)]*\)\./);
      assert.doesNotMatch(md, /### `dev`/);
    });

    it("says the price source and what the cost leaves out once, and the cost delta per row", async () => {
      const md = await body("realistic");
      assert.equal(md.match(/leaves out EBS volumes/g)?.length, 1);
      assert.match(rows(md).get("dev")![2], /^\+\$\d[\d,]*\/mo$/, "dev's larger instance costs more");
      assert.match(rows(md).get("prod")![2], /^±\$0$/);
    });
  });

  describe("impact and rollout", () => {
    it("a content-hashed ConfigMap is routine: prod counts no replacement, its gateway rolls", async () => {
      const md = await body("realistic");
      assert.doesNotMatch(rows(md).get("prod")![1], /replace/);
      assert.match(rows(md).get("prod")![5], /Deployment triton-gateway \(rolling\)/);
      assert.match(md, /🔁 routine: ConfigMap triton-gateway-config-\w+ replaces triton-gateway-config-\w+/);
    });

    it("dev replacing its only node with its only replica says the service goes down", async () => {
      const md = await body("realistic");
      assert.match(rows(md).get("dev")![6], /⛔ StatefulSet vision/);
      assert.match(md, /⛔ \*\*downtime\*\* — StatefulSet vision: its only replica on the only node of NodeGroup gpu stops when the old node drains/);
      assert.match(rows(md).get("staging")![6], /^none$/);
    });

    it("a new serving group starts, with its tritonserver command line, models and resources", async () => {
      const md = await body("realistic");
      assert.match(rows(md).get("staging")![5], /StatefulSet detect \(starts\)/);
      assert.match(md, /New serving StatefulSet <code>detect<\/code><\/b>: per pod 1 GPU, 3 CPU, 12Gi · 2\.\.2 pods \(HPA\) · ≈ \$[\d,]+\.\.\$[\d,]+\/month/);
      assert.match(md, /- models yolov8/);
      assert.match(md, /```sh\ntritonserver \\\n {2}--model-repository=/);
    });

    it("a rolling restart of a workload with one replica is downtime; of three is not (crafted)", () => {
      const sts = (replicas: number, image: string) =>
        recorded("kubernetes:apps/v1:StatefulSet", "one", {
          kind: "StatefulSet",
          metadata: { name: "one" },
          spec: { replicas, template: { spec: { containers: [{ name: "triton", image }] } } },
        });
      for (const [n, down] of [
        [1, true],
        [3, false],
      ] as const) {
        const resources = diffResources([sts(n, "a")], [sts(n, "b")]);
        const d: StackDiff = { stack: "x", base: "main", counts: countChanges(resources), resources, config: [] };
        const i = stackImpact(d, [sts(n, "b")]);
        assert.equal(i.restarts[0]?.how, "rolling");
        assert.equal(i.downtime.length > 0, down, JSON.stringify(i));
      }
    });
  });

  describe("plain words", () => {
    it("the gateway change reads as its meaning, the raw JSON folded", async () => {
      const md = await body("realistic");
      assert.match(
        md,
        /- vision canary traffic 0 → 5 % on \d+ routes; mirror 5 → 10 % \(`triton\.groups\[name=vision\]\.canary\.trafficPercent`, `gateway\.mirrorPercent`\)/,
      );
      const prod = md.slice(md.indexOf("### `prod`"), md.indexOf("### `staging`"));
      const raw = prod.indexOf("```json");
      assert.ok(raw < 0 || prod.lastIndexOf("<details>", raw) > prod.lastIndexOf("</details>", raw), "raw JSON only inside a closed <details>");
      assert.doesNotMatch(prod, /<details open><summary>\d+ resource change/);
    });
  });

  describe("a pull request moving a canary's rollout stage", () => {
    const STAGE_LINE =
      "- vision canary: stage mirror-5 → split-5 (2 of 3): mirror 5 % → 5 %, split 0 % → 5 %; " +
      "gates over 120 min: failures ≤ primary + 1 %, p99 ≤ 250 ms and ≤ 1.25 × primary, queue ≤ 50 ms, " +
      "gateway 5xx and resets ≤ 1 %, at least 500 requests (`triton.groups[name=vision].canary.rollout.stage`)";

    it("shows the stage change, its exposure and the new stage's gates with their resolved numbers, in prod's section", async () => {
      const md = await body("stage");
      const prod = md.slice(md.indexOf("### `prod`"));
      const what = prod.indexOf("**What changes**");
      assert.ok(what > 0, "prod has a What changes block");
      // split-5's own window, minRequests and p99; the failure margin and the queue time from the
      // fixture's monitoring.thresholds (0.01, 50 ms); p99VsPrimary and the gateway ratio from the schema.
      assert.ok(prod.slice(what).split("\n").includes(STAGE_LINE), prod.slice(what, what + 1200));
    });

    it("shows no stage block when the stage does not move (a canary's traffic raised without a rollout)", async () => {
      assert.doesNotMatch(await body("realistic"), /canary: stage /);
    });

    it("reads the numbers from the resolved settings: a threshold edited in monitoring, a stage's gates edited, an unchanged stage", () => {
      const withRollout = (stage: string, edit: (s: Record<string, any>) => void = () => {}) =>
        fixtureStack("prod", (s) => {
          s.triton.groups[0].canary.rollout = { ...structuredClone(PROD_ROLLOUT), stage };
          if (stage !== "mirror-5") s.triton.groups[0].canary.trafficPercent = 5;
          edit(s);
        });
      const base = withRollout("mirror-5");
      const moved = stageChanges(
        base,
        withRollout("split-5", (s) => void (s.monitoring.thresholds.queueTimeBudgetMs = 80)),
      );
      assert.equal(moved.length, 1);
      assert.match(moved[0].text, /queue ≤ 80 ms/);
      // Same stage, its gates edited: not a stage move.
      assert.deepEqual(
        stageChanges(
          base,
          withRollout("mirror-5", (s) => void (s.triton.groups[0].canary.rollout.stages[0].gates = { minRequests: 9 })),
        ),
        [],
      );
      // A new stack: no base to move from.
      assert.deepEqual(stageChanges(undefined, withRollout("split-5")), []);
    });
  });

  describe("every change once, by identity", () => {
    it("the gateway's meaning counts each route once (a route and its canary twin are one)", async () => {
      const p = await planned("realistic");
      const cm = p.heads.get("prod")!.resources.find((r) => r.type === "kubernetes:core/v1:ConfigMap" && typeof r.props.data?.["envoy.json"] === "string")!;
      const routes: string[] = [];
      JSON.stringify(JSON.parse(cm.props.data["envoy.json"]), (k, v) => (k === "name" && typeof v === "string" && /-canary$/.test(v) && routes.push(v), v));
      const canaryRoutes = new Set(routes).size;
      assert.ok(canaryRoutes > 1);
      assert.match(await body("realistic"), new RegExp(`- vision canary traffic 0 → 5 % on ${canaryRoutes} routes; mirror 5 → 10 %`));
    });

    it("repeated identical changes read once, with their count; added routes once, one JSON block for them", async () => {
      const md = await body("realistic");
      const prod = md.slice(md.indexOf("### `prod`"), md.indexOf("### `staging`"));
      assert.equal(prod.match(/`5` → `10`/g)?.length, 1, prod);
      assert.match(prod, /numerator`: `5` → `10` on 6 routes \(/);
      assert.match(prod, /routes\[name=\*\]`: added: 6 routes \(/);
      assert.equal(prod.match(/```json/g)?.length, 1, "one JSON block stands for the six added canary routes");
    });

    it("a new group's HPA and PDB rows say what they are", async () => {
      const md = await body("realistic");
      const staging = md.slice(md.indexOf("### `staging`"), md.indexOf("### `dev`"));
      const row = (kind: string) => staging.split("\n").find((l) => l.startsWith("| 🟢 create | `detect`") && l.includes(kind)) ?? "";
      assert.match(
        row("HorizontalPodAutoscaler"),
        new RegExp(`scales StatefulSet detect ${DETECT_GROUP.hpa.min}\\.\\.${DETECT_GROUP.hpa.max} replicas on \\w+`),
      );
      assert.match(row("PodDisruptionBudget"), /at (most \d+ unavailable|least \d+ available) of the pods with [^|]*detect/);
      assert.match(row("kubernetes:apps/v1:StatefulSet"), /container triton: nvcr\.io\/nvidia\/tritonserver:25\.01-py3 \([^)]*GPU 1/);
    });
  });

  describe("red when it would not work", () => {
    it("a staging shortfall is a mandatory violation, in the row and at the top of its section with gpu.scaling.max and the numbers", async () => {
      const p = await planned("shortfall");
      const staging = p.reports.find((r) => r.stack === "staging")!;
      assert.ok(staging.mandatory >= 1);
      const md = await body("shortfall");
      assert.match(rows(md).get("staging")![3], /^❌ 1 mandatory \(1 new\)$/);
      assert.match(rows(md).get("staging")![4], /^❌ short: 7 of 5 GPUs at max$/);
      assert.match(
        md,
        /> ❌ \*\*Capacity shortfall \(mandatory\)\*\* at `gpu\.scaling\.max`: NodeGroup gpu: scalingConfig\.maxSize 5 × 1 GPU .* need 7 at their maximum/,
      );
    });

    it("a config error is its own row and section: the key, the key it meant, its line and column", async () => {
      const md = await body("typo");
      assert.match(rows(md).get("prod")![3], /config error/);
      // The key, the rule, the key it meant and where it is in the stack file.
      assert.match(
        md,
        /^- `triton-platform:gateway\.mirrorPercnt` is not a known key \(.*\); did you mean triton-platform:gateway\.mirrorPercent\? \(Pulumi\.prod\.yaml:\d+:5\)$/m,
      );
    });
  });

  describe("Markdown GitHub cannot misread", () => {
    it("escapes angle brackets outside code, keeps them inside", () => {
      assert.equal(text("set `<environment>` or <environment> & go"), "set `<environment>` or &lt;environment&gt; &amp; go");
    });

    it("cuts only between sections, keeps the footer, and names what was left out", async () => {
      const full = await body("realistic");
      const md = await body("realistic", { limit: 20_000 });
      assert.ok(md.length <= 20_000, `${md.length}`);
      assert.ok(full.length > 20_000);
      const kept = md.slice(0, md.indexOf("> ✂️"));
      assert.equal((kept.match(/^```/gm)?.length ?? 0) % 2, 0, "no open fence");
      assert.equal(kept.match(/<details/g)?.length ?? 0, kept.match(/<\/details>/g)?.length ?? 0, "no open <details>");
      assert.match(md, /✂️ Cut at GitHub's comment limit: `\w+`/);
      assert.match(md, /Planned commit `c0ffeec0ffee` \(the pull request merged into `main`/);
      assert.equal(fitComment("h", ["a", "b"], "f", 1000), `h\n\n${CUT}\na\n\n${CUT}\nb\n\nf\n`);
    });
  });
});
