// A missing policy levels file is an error in `plan` and `policy` (exit 2, naming the file and
// the one to copy), never "everything advisory". That every repository stack has its file is
// an invariant of test/stack-files.test.ts.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readPolicyConfig } from "../tools/planner/policy";
import { runTool, tempProject } from "./helpers";
import { fixtureYaml } from "./support/stacks";

describe("policy levels files (policies/config/<stack>.json)", function () {
  this.timeout(120_000);
  // A copy with the fixture stacks and their levels: the repository's own stack and levels
  // files are users' to rename, add or remove.
  let dir: string;
  let POLICIES: string;
  before(() => {
    dir = tempProject({ dev: fixtureYaml("dev"), staging: fixtureYaml("staging"), prod: fixtureYaml("prod") });
    POLICIES = path.join(dir, "policies");
  });

  it("a missing file is a usage error naming the file and the closest one to copy", () => {
    assert.throws(
      () => readPolicyConfig(POLICIES, "prdo"),
      (e: Error) => {
        assert.equal(e.name, "UsageError");
        assert.match(e.message, /no policy levels file .*policies\/config\/prdo\.json for stack prdo/);
        assert.match(e.message, /cp policies\/config\/prod\.json policies\/config\/prdo\.json/);
        assert.match(e.message, /did you mean --stack prod\?/);
        return true;
      },
    );
    // With the stack file's environment known, the environment's reference levels are the ones to copy.
    assert.throws(() => readPolicyConfig(POLICIES, "perf", "prod"), /cp policies\/config\/prod\.json policies\/config\/perf\.json/);
  });

  it("npm run policy exits 2 for a stack without a levels file (a typo'd --stack), evaluating nothing", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "policy-")), "resources.json");
    fs.writeFileSync(file, "[]");
    const r = await runTool(dir, "policy", ["--resources", file, "--stack", "prdo"]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^error: no policy levels file .*policies\/config\/prdo\.json/);
    assert.match(r.stderr, /did you mean --stack prod\?/);
    assert.equal(r.stdout, "");
  });

  it("npm run plan exits 2 for a new stack copied from prod without its levels file, and plans it once the file is copied", async () => {
    // A prod-shaped stack with its levels file beside a copy of it without one.
    const copy = tempProject({ prod: fixtureYaml("prod"), perf: fixtureYaml("prod") });
    const missing = await runTool(copy, "plan", ["--stack", "perf"]);
    assert.equal(missing.status, 2, missing.stderr);
    assert.match(missing.stderr, /^error: stack perf: no policy levels file .*policies\/config\/perf\.json/);
    assert.match(missing.stderr, /cp policies\/config\/prod\.json policies\/config\/perf\.json/);
    fs.copyFileSync(path.join(copy, "policies", "config", "prod.json"), path.join(copy, "policies", "config", "perf.json"));
    const planned = await runTool(copy, "plan", ["--stack", "perf"]);
    assert.equal(planned.status, 0, planned.stderr);
    assert.match(planned.stdout, /policies: (no violations|0 mandatory)/);
  });
});
