// The pull-request workflows, checked without GitHub: each file against SchemaStore's
// github-workflow schema (pinned copy in test/schemas/), then the properties the review flow
// rests on. What only a real run shows (the runner images, the actions' behaviour, the
// comment API) is not checked here.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import Ajv from "ajv";
import * as yaml from "js-yaml";
import { ROOT } from "./helpers";

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
});
