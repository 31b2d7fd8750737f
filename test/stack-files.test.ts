// The repository's own stack files (Pulumi.<stack>.yaml) and levels files
// (policies/config/<stack>.json) are examples that users edit: no test asserts their values
// (tests plan fixtures, test/support/stacks.ts). They are checked here by invariants only,
// over every stack found, never a list written down: each plans (what `npm run plan` exits
// 0 for) and passes its own levels, and each has its levels file.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { listStacks, planStack, REPOSITORY } from "../tools/planner";
import { checkPolicyConfig, readPolicyConfig } from "../tools/planner/policy";
import { formatText } from "../tools/planner/report";
import { ENVIRONMENTS } from "../components/cluster/schema";

const stacks = listStacks(REPOSITORY.root);
const levelsFile = (stack: string) => path.join(REPOSITORY.policiesDir, "config", `${stack}.json`);

describe("the repository's stack files", function () {
  this.timeout(60_000);

  it("exist: at least one Pulumi.<stack>.yaml", () => {
    assert.ok(stacks.length > 0, `no Pulumi.<stack>.yaml in ${REPOSITORY.root}`);
  });

  it("each have their levels file policies/config/<stack>.json, with the pack's policy names and levels", () => {
    for (const stack of stacks) {
      assert.ok(fs.existsSync(levelsFile(stack)), `stack ${stack} has no ${path.relative(REPOSITORY.root, levelsFile(stack))}`);
      checkPolicyConfig(REPOSITORY.rules(), readPolicyConfig(REPOSITORY.policiesDir, stack), `policies/config/${stack}.json`);
    }
  });

  it("have no levels file without a stack (a typo'd name would leave its stack without levels)", () => {
    // Except the environments' reference levels (what a new stack copies; the README table shows them).
    const orphans = fs
      .readdirSync(path.join(REPOSITORY.policiesDir, "config"))
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -".json".length))
      .filter((s) => !stacks.includes(s) && !(ENVIRONMENTS as readonly string[]).includes(s));
    assert.deepEqual(orphans, [], "levels files whose Pulumi.<stack>.yaml does not exist");
  });

  for (const stack of stacks) {
    it(`${stack}: plans, and passes its own policy levels (no mandatory violation)`, async () => {
      const p = await planStack(stack);
      assert.ok(p.resources.length > 0, "something is planned");
      assert.equal(p.report.mandatory, 0, formatText(p.report));
    });
  }
});
