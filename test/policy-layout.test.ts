// A rule is found in one guess: it is a named export of policies/rules/<its domain>.ts, and
// no other rule file exports it. Its check returns its findings (no module state between the
// pack and the planner), which the engine adapter and the planner both use.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { rules, type Rule } from "../policies/rules";
import { ROOT } from "./helpers";

const RULES_DIR = path.join(ROOT, "policies", "rules");
const NOT_RULE_FILES = ["index.ts", "rule.ts", "props.ts", "types.ts", "util.ts"];

describe("policy pack layout", () => {
  const ruleFiles = fs.readdirSync(RULES_DIR).filter((f) => f.endsWith(".ts") && !NOT_RULE_FILES.includes(f));

  it("every rule is a named export of the file of its domain, and of no other file", () => {
    const exportsOf = new Map<string, Rule[]>(
      ruleFiles.map((f) => [
        f.replace(/\.ts$/, ""),
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- every rule file by path: the test must see each file's own exports
        Object.values(require(path.join(RULES_DIR, f)) as Record<string, unknown>).filter((v): v is Rule => rules.includes(v as Rule)),
      ]),
    );
    for (const r of rules) {
      const named = exportsOf.get(r.domain);
      assert.ok(named?.includes(r), `${r.name} is exported by policies/rules/${r.domain}.ts`);
      for (const [file, found] of exportsOf) if (file !== r.domain) assert.ok(!found.includes(r), `${r.name} is also exported by ${file}.ts`);
    }
    assert.deepEqual([...exportsOf.keys()].sort(), [...new Set(rules.map((r) => r.domain))].sort(), "one file per domain, no catch-all file");
  });

  it("the helper modules hold no rule", () => {
    for (const f of NOT_RULE_FILES.filter((x) => x !== "index.ts")) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- each helper module by path, as above
      const found = Object.values(require(path.join(RULES_DIR, f)) as Record<string, unknown>).filter((v) => rules.includes(v as Rule));
      assert.deepEqual(found, [], f);
    }
  });

  it("the engine adapter reports exactly the findings check returns", async () => {
    const r = rules.find((x) => x.name === "k8s-explicit-provider")!;
    assert.equal(r.kind, "resource");
    if (r.kind !== "resource") return;
    const resource = {
      type: "kubernetes:core/v1:Namespace",
      name: "triton",
      urn: "urn:x",
      props: { apiVersion: "v1", kind: "Namespace" },
      provider: undefined,
    };
    const findings = r.check(resource, {});
    assert.equal(findings.length, 1);
    const reported: string[] = [];
    const validate = r.validateResource as import("@pulumi/policy").ResourceValidation;
    await validate(
      {
        ...resource,
        opts: {} as never,
        stackTags: new Map(),
        getConfig: () => ({}) as never,
        notApplicable: () => undefined as never,
        isType: () => false,
        asType: () => undefined,
      } as never,
      (message: string) => reported.push(message),
    );
    assert.deepEqual(
      reported,
      findings.map((f) => f.message),
    );
  });
});
