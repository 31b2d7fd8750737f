import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { renderReadme, rulesTable } from "../tools/policy-docs";
import { rules } from "../policies/rules";
import { ROOT } from "./helpers";

describe("README policy table", () => {
  it("matches the rules (regenerate with npm run docs:policies)", () => {
    const text = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    assert.equal(renderReadme(text), text);
  });

  it("lists every rule once, with what it prevents and a level per stack", () => {
    const table = rulesTable();
    for (const r of rules) {
      const row = table.split("\n").find((l) => l.startsWith(`| \`${r.name}\` |`));
      assert.ok(row, `row for ${r.name}`);
      assert.match(row, /\| (advisory|mandatory|disabled|remediate) \| (advisory|mandatory|disabled|remediate) \| (advisory|mandatory|disabled|remediate) \|$/);
      assert.ok(r.prevents.length > 20 && r.description.length > 20 && (r.remediationSteps ?? "").length > 10, `${r.name} documents itself`);
    }
    assert.equal(new Set(rules.map((r) => r.name)).size, rules.length, "rule names are unique");
  });
});
