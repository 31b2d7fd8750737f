// A rule is found in one guess: it is a named export of policies/rules/<its domain>.ts, and
// no other rule file exports it. Its check returns its findings (no module state between the
// pack and the planner), which the engine adapter and the planner both use.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { rules, type Rule } from "../policies/rules";
import { STATEFUL_SET, TRITON_SERVER } from "../policies/rules/types";
import { sections } from "../config/schema";
import { documentKeys } from "../lib/schema-doc";
import { ROOT } from "./helpers";

const RULES_DIR = path.join(ROOT, "policies", "rules");
const NOT_RULE_FILES = ["index.ts", "rule.ts", "props.ts", "types.ts", "util.ts"];

describe("policy pack layout", () => {
  const ruleFiles = fs.readdirSync(RULES_DIR).filter((f) => f.endsWith(".ts") && !NOT_RULE_FILES.includes(f));

  /** Every value a file exports that is a rule (built by resourceRule or stackRule), whether the pack serves it or not. */
  const isRule = (v: unknown): v is Rule =>
    typeof v === "object" && v !== null && ((v as Rule).kind === "resource" || (v as Rule).kind === "stack") && typeof (v as Rule).name === "string";
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- every rule file by path: the test must see each file's own exports
  const exportsOfFile = (f: string) => Object.values(require(path.join(RULES_DIR, f)) as Record<string, unknown>).filter(isRule);

  it("every rule file is served: listed once in policies/rules/index.ts, each rule it exports in its `rules` list", () => {
    const served = new Set(rules.map((r) => r.domain));
    for (const f of ruleFiles) {
      const domain = f.replace(/\.ts$/, "");
      assert.ok(served.has(domain), `policies/rules/${f} is not served: add its line to policies/rules/index.ts`);
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the file's own list, by path
      const own = (require(path.join(RULES_DIR, f)) as { rules?: readonly Rule[] }).rules;
      assert.ok(Array.isArray(own), `policies/rules/${f} exports its rules as \`rules\``);
      for (const r of exportsOfFile(f))
        assert.ok(own.includes(r) && rules.includes(r), `${r.name} (policies/rules/${f}) is missing from the file's \`rules\` list`);
    }
    assert.equal(new Set(rules).size, rules.length, "no domain is listed twice in policies/rules/index.ts");
    assert.equal(new Set(rules.map((r) => r.name)).size, rules.length, "rule names are unique");
  });

  it("every rule is a named export of the file of its domain, and of no other file", () => {
    const exportsOf = new Map<string, Rule[]>(ruleFiles.map((f) => [f.replace(/\.ts$/, ""), exportsOfFile(f)]));
    for (const r of rules) {
      const named = exportsOf.get(r.domain);
      assert.ok(named?.includes(r), `${r.name} is exported by policies/rules/${r.domain}.ts`);
      for (const [file, found] of exportsOf) if (file !== r.domain) assert.ok(!found.includes(r), `${r.name} is also exported by ${file}.ts`);
    }
    assert.deepEqual([...exportsOf.keys()].sort(), [...new Set(rules.map((r) => r.domain))].sort(), "one file per domain, no catch-all file");
  });

  it("a rule's configKey names a setting the stack config has (config/schema.ts), in the primary's and the canary's form", () => {
    const problems: string[] = [];
    for (const r of rules.filter((x) => x.configKey !== undefined)) {
      const template = r.configKey!.replace(/\[name=\{group\}\]/g, "[]");
      for (const key of template.includes("{canary}") ? [template.replace("{canary}", ""), template.replace("{canary}", ".canary")] : [template]) {
        const section = key.split(/[.[]/)[0];
        const below = key.slice(section.length).replace(/^\./, "");
        const schema = (sections as Record<string, Parameters<typeof documentKeys>[0]>)[section];
        if (!schema || (below !== "" && !documentKeys(schema).some((k) => k.key === below)))
          problems.push(`${r.name}: configKey ${r.configKey} (${key}) is not a stack setting`);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(rules.filter((x) => x.configKey).length >= 10, "rules say where they are fixed");
  });

  it("configKeyFor fills in the serving group and the canary track from the offending resource's ancestors", () => {
    const r = rules.find((x) => x.name === "triton-min-replicas")!;
    const group = { type: TRITON_SERVER, name: "vision", props: {} };
    const sts = (name: string) => ({ type: STATEFUL_SET, name, props: { metadata: { name } } });
    assert.equal(r.configKeyFor([sts("vision"), group]), "triton.groups[name=vision].replicas");
    assert.equal(r.configKeyFor([sts("vision-canary"), group]), "triton.groups[name=vision].canary.replicas");
    assert.equal(r.configKeyFor([sts("stray")]), "triton.groups", "outside a serving group: the list itself");
    assert.equal(rules.find((x) => x.name === "gateway-mirror-percent-within-max")!.configKeyFor([]), "gateway.mirrorPercent");
    assert.equal(rules.find((x) => x.name === "triton-pdb-exists")!.configKeyFor([sts("vision"), group]), undefined);
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
