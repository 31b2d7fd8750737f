// `pulumi preview` and `pulumi up` start the program through @pulumi/pulumi/cmd/run, not
// through the planner: this runs every stack found through that entry point, spawned as the
// Go language host spawns it (Pulumi.yaml's runtime options, argv, cwd, env; see
// test/support/fake-engine.ts), against a fake engine speaking Pulumi's gRPC protocol, in
// preview and update modes, and checks that it registers exactly what the planner records
// for the same stack: URN, type, name, parent, provider, dependencies, inputs (secrets
// masked) and options. Stacks are checked by this invariant only; no value of theirs is asserted.
import { strict as assert } from "node:assert";
import { listStacks, readProjectName, readStackFile, REPOSITORY } from "../tools/planner";
import { recordStack, type RecordedResource, type StackRun } from "../tools/planner/record";
import { compareRegistrations, hostCommand, runThroughEntryPoint, runtimeOptions, shlexSplit, type RunResult } from "./support/fake-engine";

const root = REPOSITORY.root;
const project = readProjectName(root);
const stacks = listStacks(root);

describe("pulumi up's entry point (cmd/run against a fake engine) registers what the planner records", function () {
  this.timeout(120_000);
  const runs = new Map<string, Promise<RunResult>>();
  const plans = new Map<string, Promise<StackRun>>();

  before(() => {
    // Every spawn first (they run in parallel, in their own processes), then the plans in this one.
    for (const stack of stacks)
      for (const dryRun of [true, false])
        runs.set(`${stack}/${dryRun}`, runThroughEntryPoint({ root, project, stack: readStackFile(root, stack), fakes: REPOSITORY.fakes, dryRun }));
    for (const stack of stacks) plans.set(stack, recordStack(REPOSITORY, project, readStackFile(root, stack)));
  });

  it("finds at least one Pulumi.<stack>.yaml", () => assert.ok(stacks.length > 0));

  it("loads the program through the project's esbuild loader, not ts-node (Pulumi.yaml runtime options)", () => {
    const opts = runtimeOptions(root);
    assert.equal(
      opts.typescript,
      false,
      "runtime.options.typescript must be false: true makes cmd/run register the vendored ts-node (type checks every file on every run)",
    );
    const { argv, env } = hostCommand(
      { root, project, stack: { stack: "x", config: {}, secretKeys: [] }, fakes: REPOSITORY.fakes, dryRun: true },
      "m",
      "e",
      "s",
    );
    assert.equal(env.PULUMI_NODEJS_TYPESCRIPT, undefined);
    assert.deepEqual(argv.slice(0, 2), shlexSplit(String(opts.nodeargs)));
    assert.deepEqual(shlexSplit(String(opts.nodeargs)), ["--require", "./tools/register.cjs"]);
  });

  for (const stack of stacks) {
    for (const dryRun of [true, false]) {
      it(`${stack}, ${dryRun ? "preview (--dry-run)" : "update"}: same registrations, no error, no call the engine would refuse`, async () => {
        const run = await runs.get(`${stack}/${dryRun}`)!;
        const context = `\n${run.argv.join(" ")}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-4000)}\nlogs: ${run.logs.join("\n")}`;
        assert.equal(run.code, 0, `cmd/run exited ${run.code}${context}`);
        assert.deepEqual(
          run.logs.filter((l) => l.startsWith("ERROR")),
          [],
          `errors logged${context}`,
        );
        assert.deepEqual(run.unexpected, [], `calls the fake engine does not serve${context}`);
        const planned = await plans.get(stack)!;
        const problems = compareRegistrations(planned.resources, run.resources);
        if (problems.length)
          assert.fail(
            `${stack}: cmd/run and the planner differ in ${problems.length} way(s):\n${problems.slice(0, 20).join("\n")}${problems.length > 20 ? "\n…" : ""}`,
          );
        // As the engine receives them: an undefined output is not sent.
        assert.deepEqual(run.outputs, JSON.parse(JSON.stringify(planned.outputs)), `${stack}: stack outputs differ`);
        assert.ok(run.rootResource?.endsWith(`::pulumi:pulumi:Stack::${project}-${stack}`), `root resource ${run.rootResource}`);
      });
    }
  }
});

describe("compareRegistrations (the check above) names each difference", () => {
  const r = (name: string, props: Record<string, any> = {}): RecordedResource => ({
    urn: `urn:pulumi:s::p::t:m:T::${name}`,
    type: "t:m:T",
    name,
    custom: true,
    parent: null,
    provider: null,
    dependencies: [],
    props,
  });

  it("is empty for the same registrations in another order and key order", () => {
    assert.deepEqual(compareRegistrations([r("a", { x: 1, y: 2 }), r("b")], [r("b"), r("a", { y: 2, x: 1 })]), []);
  });

  it("names a missing, an extra and a changed resource", () => {
    const problems = compareRegistrations([r("a", { x: 1 }), r("b")], [r("a", { x: 2 }), r("c")]);
    assert.deepEqual(problems, [
      "missing through cmd/run: urn:pulumi:s::p::t:m:T::b",
      "not in the plan: urn:pulumi:s::p::t:m:T::c",
      'urn:pulumi:s::p::t:m:T::a props: planner {"x":1} ≠ cmd/run {"x":2}',
    ]);
  });
});
