// The SARIF that GitHub code scanning gets from a pull request's plan (tools/planner/sarif.ts),
// for the pull requests of test/support/pr-scenarios.ts: valid against the OASIS SARIF 2.1.0
// schema (pinned copy, test/schemas/) and the subset GitHub documents (test/support/github-sarif.ts),
// results for config errors and capacity shortfalls at the stack-file line of the key to fix,
// the line hash code scanning matches alerts by (as github/codeql-action computes it), and rule
// metadata code scanning shows.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import Ajv4 from "ajv-draft-04";
import { plan, ROOT } from "./helpers";
import { githubSarifProblems } from "./support/github-sarif";
import { SCENARIOS, scenarioPlans, type ScenarioPlan } from "./support/pr-scenarios";
import { lineHashes, sarifLog, STACK_CONFIG_RULE } from "../tools/planner/sarif";
import { rules } from "../policies/rules";

const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "test", "schemas", "sarif-schema-2.1.0.json"), "utf8")) as object;
const validate = new Ajv4({ allErrors: true, strict: false, logger: false }).compile(schema);
const cache = new Map<string, Promise<ScenarioPlan>>();
const planned = (name: string) => {
  if (!cache.has(name))
    cache.set(
      name,
      scenarioPlans(
        SCENARIOS.find((s) => s.name === name)!,
        "main",
        plan,
      ),
    );
  return cache.get(name)!;
};
const sarifOf = async (name: string) => {
  const p = await planned(name);
  const log = sarifLog(
    p.reports.map((report) => ({ report, resources: p.heads.get(report.stack)?.resources ?? [], stackFile: p.stackFiles.get(report.stack) })),
    rules,
    { projectName: "triton-platform", version: "0.1.0", informationUri: "https://github.com/example/triton-platform#readme" },
  );
  return { p, log: JSON.parse(JSON.stringify(log)) };
};
/** The 1-based line of the first line matching `re` at or after line `from`. */
const lineOf = (text: string, re: RegExp, from = 1) => text.split("\n").findIndex((l, i) => i + 1 >= from && re.test(l)) + 1;

describe("SARIF for code scanning", function () {
  this.timeout(300_000);

  it("hashes lines as github/codeql-action's upload-sarif does (its own test vectors, src/fingerprints.test.ts at v4.36.2)", () => {
    assert.deepEqual(lineHashes(""), ["c129715d7a2bc9a3:1"]);
    assert.deepEqual(lineHashes(" a\nb\n  \t\tc\n d"), ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]);
    const crlf = [
      "e9496ae3ebfced30:1",
      "fb7c023a8b9ccb3f:1",
      "ce8ba1a563dcdaca:1",
      "e20e36e16fcb0cc8:1",
      "b3edc88f2938467e:1",
      "c8e28b0b4002a3a0:1",
      "c129715d7a2bc9a3:1",
    ];
    assert.deepEqual(lineHashes(" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n"), crlf);
    assert.deepEqual(lineHashes(" hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n"), crlf);
    assert.deepEqual(lineHashes(" hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r"), crlf);
    assert.deepEqual(lineHashes("Lorem ipsum dolor sit amet.\n".repeat(10)), [
      ...[1, 2, 3, 4, 5, 6].map((n) => `a7f2ff13bc495cf2:${n}`),
      "a7f2ff1481e87703:1",
      "a9cf91f7bbf1862b:1",
      "55ec222b86bcae53:1",
      "cc97dc7b1d7d8f7b:1",
      "c129715d7a2bc9a3:1",
    ]);
    assert.deepEqual(lineHashes("x = 2\nx = 1\nprint(x)\nx = 3\nprint(x)\nx = 4\nprint(x)\n"), [
      "e54938cc54b302f1:1",
      "bb609acbe9138d60:1",
      "1131fd5871777f34:1",
      "5c482a0f8b35ea28:1",
      "54517377da7028d2:1",
      "2c644846cb18d53e:1",
      "f1b89f20de0d133:1",
      "c129715d7a2bc9a3:1",
    ]);
  });

  for (const name of ["realistic", "shortfall", "typo", "policy"]) {
    it(`${name}: the OASIS schema and GitHub's documented subset accept the log (and refuse a broken one)`, async () => {
      const { log } = await sarifOf(name);
      assert.ok(validate(structuredClone(log)), JSON.stringify(validate.errors, null, 1));
      assert.deepEqual(githubSarifProblems(log), []);
      const broken = structuredClone(log);
      broken.runs[0].tool.driver.rules[0].shortDescription.text = "x".repeat(1025);
      delete broken.runs[0].tool.driver.rules[0].help;
      assert.equal(githubSarifProblems(broken).length, 2, githubSarifProblems(broken).join("\n"));
    });
  }

  it("a typo'd key (exit 2) is a result at that key's line and column, naming the key it meant", async () => {
    const { p, log } = await sarifOf("typo");
    const text = p.stackFiles.get("prod")!.text;
    const results = log.runs[0].results.filter((r: any) => r.ruleId === STACK_CONFIG_RULE);
    assert.equal(results.length, 1, JSON.stringify(results));
    const [r] = results;
    const line = lineOf(text, /^\s+mirrorPercnt: /);
    assert.ok(line > 0);
    const region = r.locations[0].physicalLocation.region;
    assert.deepEqual(region, {
      startLine: line,
      startColumn: text.split("\n")[line - 1].indexOf("m") + 1,
      endLine: line,
      endColumn: text.split("\n")[line - 1].indexOf(":") + 1,
    });
    assert.equal(r.locations[0].physicalLocation.artifactLocation.uri, "Pulumi.prod.yaml");
    assert.equal(r.level, "error");
    assert.match(r.message.text, /gateway\.mirrorPercnt is not a known key.*did you mean triton-platform:gateway\.mirrorPercent\?/);
    assert.equal(r.partialFingerprints.primaryLocationLineHash, lineHashes(text)[line - 1]);
    // ...and the plan's own error says where, as the SARIF does.
    assert.match(p.reports.find((x) => x.stack === "prod")!.error!, new RegExp(`\\(Pulumi\\.prod\\.yaml:${line}:${region.startColumn}\\)`));
  });

  it("a capacity shortfall is a result at the node group's maximum in the stack file", async () => {
    const { p, log } = await sarifOf("shortfall");
    const text = p.stackFiles.get("staging")!.text;
    const results = log.runs[0].results.filter((r: any) => r.ruleId === "gpu-capacity-holds-serving-pods" && r.properties.stack === "staging");
    assert.ok(results.length >= 1);
    const gpu = lineOf(text, /^ {2}triton-platform:gpu:$/);
    const line = lineOf(text, /^ {6}max: \d+$/, lineOf(text, /^ {4}scaling:$/, gpu));
    assert.ok(gpu > 0 && line > gpu, text);
    for (const r of results) {
      assert.equal(r.level, "error");
      assert.equal(r.locations[0].physicalLocation.region.startLine, line);
      assert.equal(r.properties.configKey, "gpu.scaling.max");
      assert.equal(r.partialFingerprints.primaryLocationLineHash, lineHashes(text)[line - 1]);
    }
  });

  it("describes the tool and every rule as code scanning shows them", async () => {
    const { log } = await sarifOf("policy");
    const driver = log.runs[0].tool.driver;
    assert.equal(driver.name, "triton-platform-plan");
    assert.equal(driver.version, "0.1.0");
    assert.match(driver.informationUri, /^https:\/\//);
    assert.deepEqual(
      driver.rules.map((r: any) => r.id),
      [...rules.map((r) => r.name), STACK_CONFIG_RULE],
    );
    for (const r of driver.rules) {
      assert.match(r.name, /^[A-Z][A-Za-z0-9]+$/, r.id);
      assert.ok(r.help.markdown.includes("**Fix:**"), r.id);
      assert.ok(["error", "warning"].includes(r.defaultConfiguration.level), r.id);
      assert.equal(r.properties.precision, "very-high");
      assert.ok(r.properties.tags.includes(r.properties.domain), r.id);
    }
    const secret = driver.rules.find((r: any) => rules.find((x) => x.name === r.id)?.domain === "secrets");
    assert.ok(secret?.properties.tags.includes("security") && Number(secret.properties["security-severity"]) > 0, JSON.stringify(secret));
    // A rule prod enforces as mandatory is an error by default.
    const mirror = driver.rules.find((r: any) => r.id === "gateway-mirror-percent-within-max");
    assert.equal(mirror.defaultConfiguration.level, "error");
  });
});
