// What tools read from a plan: the JSON report (--output FILE, versioned, with the levels file
// and every rule's effective level), SARIF 2.1.0 for GitHub code scanning (validated against
// the OASIS schema, located at the stack-file key), a closed pipe that ends quietly, and the
// per-stack artifacts (envoy.json, Helm values, tritonserver command lines, the Mermaid graph).
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as yaml from "js-yaml";
import Ajv4 from "ajv-draft-04";
import { fixtureLevels, fixtureStack, fixtureYaml, plan, planFixture, spawnTool, tempProject, ROOT, type ToolRun } from "./helpers";
import { formatText, REPORT_SCHEMA_VERSION, REPORT_SECTIONS, type SectionBuilder, type StackReport } from "../tools/planner/report";
import { planMarkdown } from "../tools/planner/markdown";
import { locateConfigKey } from "../tools/planner/sarif";
import { rules } from "../policies/rules";

const sarifSchema = JSON.parse(fs.readFileSync(path.join(ROOT, "test", "schemas", "sarif-schema-2.1.0.json"), "utf8")) as object;

describe("plan machine output: --output JSON and --sarif", function () {
  this.timeout(120_000);
  let dir: string;
  let run: ToolRun;
  let report: any;
  let sarif: any;
  const prodText = fixtureYaml("prod", (s) => {
    s.gateway.mirrorPercent = 30; // over prod's maximum of 25: a mandatory violation at a config key
  });

  before(() => {
    dir = tempProject({ prod: prodText, dev: fixtureYaml("dev") });
    // End to end: a real process (its exit status, the git checkout SARIF paths are relative to), with --verbose.
    run = spawnTool(dir, "plan", [
      "--out",
      path.join(dir, "out"),
      "--output",
      path.join(dir, "r", "plan.json"),
      "--sarif",
      path.join(dir, "r", "plan.sarif"),
      "--verbose",
    ]);
    report = JSON.parse(fs.readFileSync(path.join(dir, "r", "plan.json"), "utf8"));
    sarif = JSON.parse(fs.readFileSync(path.join(dir, "r", "plan.sarif"), "utf8"));
  });

  it("keeps the terminal output human while the JSON goes to the file", () => {
    assert.equal(run.status, 1, run.stderr); // the mandatory violation
    assert.match(run.stdout, /^stack dev: \d+ resources/);
    assert.ok(!run.stdout.trimStart().startsWith("{"));
    // --verbose: each stack's counts by type.
    assert.equal(run.stdout.match(/^ +\d+ {2}kubernetes:core\/v1:Namespace$/gm)?.length, 2, run.stdout);
  });

  it("versions the JSON and names the levels file and every rule's effective level", () => {
    assert.equal(report.schemaVersion, REPORT_SCHEMA_VERSION);
    const prod = report.stacks.find((s: any) => s.stack === "prod");
    const dev = report.stacks.find((s: any) => s.stack === "dev");
    assert.equal(prod.levelsFile, path.join("policies", "config", "prod.json"));
    assert.deepEqual(prod.rules.map((r: any) => r.name).sort(), rules.map((r) => r.name).sort());
    // Each rule at the level the fixture's levels file gives it ("all", unless the rule is named).
    for (const [stack, levels] of [
      [prod, fixtureLevels("prod")],
      [dev, fixtureLevels("dev")],
    ] as const) {
      for (const r of stack.rules) {
        const own = (levels as Record<string, unknown>)[r.name];
        const want = typeof own === "string" ? own : levels.all;
        assert.equal(r.level, want, `${stack.stack} ${r.name}`);
      }
    }
    assert.ok(prod.rules.some((r: any) => r.level === "mandatory"));
    assert.ok(prod.violations.some((v: any) => v.policy === "gateway-mirror-percent-within-max"));
    assert.ok(prod.countsByType["kubernetes:apps/v1:StatefulSet"] >= 1, "counts by type stay in the JSON");
  });

  it("writes SARIF 2.1.0 that the OASIS schema accepts", () => {
    const ajv = new Ajv4({ allErrors: true, strict: false });
    const validate = ajv.compile(sarifSchema);
    const log = sarif as Record<string, any>;
    assert.ok(validate(structuredClone(log)), JSON.stringify(validate.errors, null, 1));
    // and the schema is strict enough to refuse a broken log
    assert.ok(!validate({ ...log, version: "2.0.0" }));
    assert.ok(!validate({ ...log, runs: [{ ...log.runs[0], results: [{ message: {} }] }] }));
  });

  it("locates a violation that maps to a stack setting at that key in Pulumi.<stack>.yaml", () => {
    const results = sarif.runs[0].results.filter((r: any) => r.ruleId === "gateway-mirror-percent-within-max");
    assert.ok(results.length > 0);
    const line = prodText.split("\n").findIndex((l) => /^\s+mirrorPercent: 30$/.test(l)) + 1;
    assert.ok(line > 0);
    for (const r of results) {
      const loc = r.locations[0].physicalLocation;
      assert.equal(loc.artifactLocation.uri, "Pulumi.prod.yaml");
      assert.equal(loc.region.startLine, line);
      assert.equal(r.level, "error");
      assert.equal(r.properties.configKey, "gateway.mirrorPercent");
      assert.equal(sarif.runs[0].tool.driver.rules[r.ruleIndex].id, r.ruleId);
    }
    assert.equal(sarif.runs[0].tool.driver.rules.length, rules.length + 1, "the pack's rules and the planner's stack-configuration rule");
  });

  it("finds keys by path, list items by identity, and the nearest existing key when one is unset", () => {
    const text = [
      "config:",
      "  aws:region: us-east-1",
      "  triton-platform:triton:",
      "    groups:",
      "      - name: vision",
      "        image:",
      "          tag: 25.01-py3",
      "      - name: text",
      "        replicas: 2",
      "",
    ].join("\n");
    assert.deepEqual(locateConfigKey(text, "triton.groups[name=vision].image.tag", "triton-platform"), {
      position: { line: 7, column: 11 },
      end: { line: 7, column: 14 },
      found: "triton.groups[name=vision].image.tag",
      exact: true,
    });
    assert.deepEqual(locateConfigKey(text, "triton.groups[name=text].replicas", "triton-platform")?.position, { line: 9, column: 9 });
    const unset = locateConfigKey(text, "triton.groups[name=text].image.tag", "triton-platform");
    assert.deepEqual([unset?.position.line, unset?.exact], [8, false]);
    assert.deepEqual(locateConfigKey(text, "gateway.mirrorPercent", "triton-platform")?.position, { line: 1, column: 1 });
    assert.deepEqual(locateConfigKey(text, "aws:region", "triton-platform")?.position, { line: 2, column: 3 });
  });
});

describe("plan machine output: a closed pipe", function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = tempProject({ dev: fixtureYaml("dev") });
  });

  for (const tool of ["plan", "policy"] as const) {
    it(`npm run ${tool} exits quietly when its reader has gone (EPIPE)`, async () => {
      // policy reads a plan's resources.json: the in-process dev plan's (cached), not another CLI run.
      const args =
        tool === "plan"
          ? ["--stack", "dev", "--out", path.join(dir, "out"), "--json"]
          : ["--resources", path.join((await plan("dev")).outRoot, "dev", "resources.json"), "--stack", "dev", "--json"];
      const cmd = [process.execPath, "--require", path.join(dir, "tools", "register.cjs"), path.join(dir, "tools", `${tool}.ts`), ...args]
        .map((a) => `'${a}'`)
        .join(" ");
      // `true` exits at once: every write of the tool meets a closed pipe.
      const r = spawnSync("bash", ["-c", `${cmd} | true; echo "status=\${PIPESTATUS[0]}" >&2`], { cwd: dir, encoding: "utf8", timeout: 60_000 });
      assert.doesNotMatch(r.stderr, /EPIPE|Error|at /, r.stderr);
      assert.match(r.stderr, /status=0\n?$/);
      // The end-to-end run of --stack and --out (and --json): that one stack was planned, where --out says.
      if (tool === "plan") assert.ok(fs.existsSync(path.join(dir, "out", "dev", "resources.json")), "the plan was written to --out");
    });
  }
});

describe("plan artifacts per stack", function () {
  this.timeout(60_000);

  it("writes the Envoy bootstrap pretty-printed, as the gateway's ConfigMap holds it", async () => {
    const p = await plan("prod");
    const text = fs.readFileSync(path.join(p.outRoot, "prod", "envoy.json"), "utf8");
    const cm = p.resources.find((r) => r.type === "kubernetes:core/v1:ConfigMap" && typeof r.props.data?.["envoy.json"] === "string")!;
    assert.deepEqual(JSON.parse(text), JSON.parse(cm.props.data["envoy.json"]));
    assert.ok(text.split("\n").length > 50, "pretty-printed");
  });

  it("writes each Helm release's values", async () => {
    const p = await plan("prod");
    const releases = p.resources.filter((r) => r.type.startsWith("kubernetes:helm.sh/") && r.custom);
    assert.ok(releases.length >= 2);
    for (const r of releases) {
      const file = path.join(p.outRoot, "prod", "helm", `${r.props.name}.values.yaml`);
      assert.deepEqual(yaml.load(fs.readFileSync(file, "utf8")), r.props.values, file);
    }
    assert.equal(fs.readdirSync(path.join(p.outRoot, "prod", "helm")).length, releases.length);
  });

  it("writes the tritonserver command line of each group and its canary", async () => {
    const p = await plan("prod");
    const dir = path.join(p.outRoot, "prod", "triton");
    assert.deepEqual(fs.readdirSync(dir).sort(), ["vision-canary.args.txt", "vision.args.txt"]);
    const sts = p.resources.find((r) => r.type === "kubernetes:apps/v1:StatefulSet" && r.name === "vision")!;
    const c = sts.props.spec.template.spec.containers.find((x: any) => x.command?.[0] === "tritonserver");
    const words = fs
      .readFileSync(path.join(dir, "vision.args.txt"), "utf8")
      .trim()
      .split(/ \\\n {2}/)
      // Words the shell would expand ($(VAR), which the kubelet expands instead) are single-quoted.
      .map((w) => (/^'.*'$/s.test(w) ? w.slice(1, -1).replace(/'"'"'/g, "'") : w));
    // ...so a shell does not expand the admin key reference when someone pastes the line.
    assert.match(fs.readFileSync(path.join(dir, "vision.args.txt"), "utf8"), /'--http-restricted-api=[^']*\$\(TRITON_PLATFORM_ADMIN_KEY\)'/);
    assert.deepEqual(words, [...c.command, ...c.args]);
  });

  it("writes the dependency graph as Mermaid: every resource a node, every dependency an edge", async () => {
    const p = await plan("dev");
    const md = fs.readFileSync(path.join(p.outRoot, "dev", "graph.md"), "utf8");
    const body = /```mermaid\n([\s\S]*?)```/.exec(md)?.[1] ?? "";
    assert.match(body, /^flowchart LR\n/);
    const nodes = [...body.matchAll(/^\s*(?:subgraph )?(r\d+)\["/gm)].map((m) => m[1]);
    assert.equal(nodes.length, p.resources.length - 1, "every resource but the root stack");
    const edges = [...body.matchAll(/^\s*r\d+ --> r\d+$/gm)].length;
    const root = p.resources.find((r) => r.type === "pulumi:pulumi:Stack")!.urn;
    assert.equal(
      edges,
      p.resources.reduce((n, r) => n + r.dependencies.filter((d) => d !== root).length, 0),
    );
    assert.equal((body.match(/\bsubgraph\b/g) ?? []).length, (body.match(/^\s*end$/gm) ?? []).length);
  });
});

describe("plan report: sections first, counts by type behind --verbose", function () {
  this.timeout(60_000);

  it("prints a registered section before the policies, in text, Markdown and JSON", async () => {
    const seen: string[] = [];
    const builder: SectionBuilder = (input) => {
      seen.push(input.stack);
      const groups = input.resources.filter((r) => r.type === "triton-platform:triton:TritonServer").map((r) => r.name);
      return { id: "summary", title: "summary", text: [`serving groups: ${groups.join(", ")}`], data: { groups } };
    };
    REPORT_SECTIONS.push(builder);
    let report: StackReport;
    try {
      report = (await planFixture(fixtureStack("dev"), { shared: false })).report; // its own plan: the section is registered for it only
    } finally {
      REPORT_SECTIONS.splice(REPORT_SECTIONS.indexOf(builder), 1);
    }
    assert.deepEqual(seen, ["dev"]);
    // The planner's REPORT_SECTIONS first, then the project's own (this repository's summary, tools/planner/summary.ts).
    assert.deepEqual(report.sections?.[0], { id: "summary", title: "summary", text: ["serving groups: vision"], data: { groups: ["vision"] } });
    assert.equal(report.sections?.length, 2);
    const text = formatText(report);
    assert.ok(text.indexOf("serving groups: vision") < text.indexOf("policies:"), text);
    assert.doesNotMatch(text, /kubernetes:apps\/v1:StatefulSet/, "no counts by type without --verbose");
    assert.match(formatText(report, { verbose: true }), /\s+1 {2}kubernetes:apps\/v1:StatefulSet/);
    const md = planMarkdown([report]);
    assert.match(md, /### `dev`: \d+ resources; [^\n]+\n\n\*\*summary\*\*\n\n- serving groups: vision/);
    assert.doesNotMatch(md, /resources by type/);
    assert.match(planMarkdown([report], undefined, undefined, { verbose: true }), /resources by type/);
  });
});
