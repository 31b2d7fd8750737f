import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import * as yaml from "js-yaml";
import { plan, planFixture, fixtureStack, fixtureYaml, one, ofType, tempProject, runTool, spawnTool, validateManifest, ROOT, SHAPES } from "./helpers";
import { maskSecrets } from "../tools/planner/record";
import { readStackFile, listStacks } from "../tools/planner/stackfile";
import { planStack } from "../tools/planner";
import { MASK, SECRET_PLACEHOLDER } from "../tools/planner/fakes";
import { specialSigKey, specialSecretSig } from "@pulumi/pulumi/runtime/rpc";

describe("offline planner", () => {
  it("finds every Pulumi.<stack>.yaml (or .yml) of a project, sorted, and nothing else", () => {
    const dir = tempProject({ zeta: fixtureYaml("dev"), alpha: fixtureYaml("dev") });
    fs.writeFileSync(path.join(dir, "Pulumi.beta.yml"), fixtureYaml("dev"));
    fs.writeFileSync(path.join(dir, "Pulumi.gamma.yaml.bak"), fixtureYaml("dev"));
    assert.deepEqual(listStacks(dir), ["alpha", "beta", "zeta"]);
  });

  describe("in-memory stacks", function () {
    this.timeout(60_000);
    it("plans a config given in memory as it plans the same config read from a stack file", async () => {
      const fixture = fixtureStack("dev", {}, "mem");
      const inMemory = await planFixture(fixture);
      assert.ok(!fs.existsSync(path.join(__dirname, "..", "Pulumi.mem.yaml")), "no stack file named mem");
      const dir = tempProject({ mem: fixtureYaml("dev") });
      const fromFile = await planStack("mem", { root: dir, levels: fixture.levels });
      assert.deepEqual(inMemory.resources, fromFile.resources);
      assert.deepEqual(inMemory.outputs, fromFile.outputs);
      assert.deepEqual(inMemory.manifests, fromFile.manifests);
      assert.ok(
        inMemory.manifests.some((m) => m.kind === "StatefulSet"),
        "manifests returned",
      );
      assert.ok(
        inMemory.resources.every((r) => r.urn.startsWith("urn:pulumi:mem::triton-platform::")),
        "URNs carry the stack's name",
      );
    });
  });

  for (const stack of SHAPES) {
    describe(`stack ${stack}`, () => {
      it("writes resources.json with urn, type, name, custom, parent and props for every registration", async () => {
        const p = await plan(stack);
        const written = JSON.parse(fs.readFileSync(path.join(p.outRoot, stack, "resources.json"), "utf8"));
        assert.equal(written.length, p.resources.length);
        assert.ok(written.length > 3);
        for (const r of written) {
          for (const k of ["urn", "type", "name"]) assert.equal(typeof r[k], "string", `${k} of ${r.urn}`);
          assert.equal(typeof r.custom, "boolean");
          assert.equal(typeof r.props, "object");
          assert.ok(r.parent === null || written.some((x: { urn: string }) => x.urn === r.parent), `parent of ${r.urn} is recorded`);
        }
        const root = written.filter((r: { parent: string | null; type: string }) => r.parent === null && r.type !== "pulumi:providers:aws");
        assert.deepEqual(
          root.map((r: { type: string }) => r.type),
          ["pulumi:pulumi:Stack"],
        );
      });

      it("writes one schema-valid manifest per Kubernetes object", async () => {
        const p = await plan(stack);
        const dir = path.join(p.outRoot, stack, "manifests");
        const files = fs.readdirSync(dir);
        const k8sObjects = p.resources.filter((r) => r.custom && typeof r.props.kind === "string" && r.type.startsWith("kubernetes:"));
        assert.equal(files.length, k8sObjects.length);
        for (const f of files) {
          const m = yaml.load(fs.readFileSync(path.join(dir, f), "utf8")) as { apiVersion: string; kind: string; metadata: { name: string } };
          assert.ok(m.apiVersion && m.kind && m.metadata?.name, `${f} has apiVersion, kind, metadata.name`);
          await validateManifest(m);
        }
      });

      it("masks secrets: the kubeconfig reaches the provider only as a mask", async () => {
        const p = await plan(stack);
        const provider = one(p.resources, "pulumi:providers:kubernetes");
        assert.equal(provider.props.kubeconfig, MASK);
        const text = fs.readFileSync(path.join(p.outRoot, stack, "resources.json"), "utf8");
        assert.ok(!text.includes("get-token"), "no kubeconfig text in resources.json");
      });

      it("creates Kubernetes objects only through the cluster's provider", async () => {
        const p = await plan(stack);
        const provider = one(p.resources, "pulumi:providers:kubernetes");
        for (const r of ofType(p.resources, "kubernetes:core/v1:Namespace")) {
          assert.ok(r.provider?.startsWith(provider.urn + "::"), `${r.name} uses ${r.provider}`);
        }
      });

      it("passes its policies", async () => {
        const p = await plan(stack);
        assert.deepEqual(
          p.report.violations.filter((v) => v.level === "mandatory"),
          [],
        );
      });
    });
  }

  describe("secrets", () => {
    it("replaces secure: values by a placeholder and marks the key secret", () => {
      const dir = tempProject({
        s: "config:\n  aws:region: us-east-1\n  triton-platform:tags:\n    owner:\n      secure: v1:AAAABBBB\n  triton-platform:environment: dev\n",
      });
      const sf = readStackFile(dir, "s");
      assert.deepEqual(JSON.parse(sf.config["triton-platform:tags"]), { owner: SECRET_PLACEHOLDER });
      assert.deepEqual(sf.secretKeys, ["triton-platform:tags"]);
      assert.equal(sf.config["triton-platform:environment"], "dev");
    });

    it("masks values wrapped in Pulumi's secret signature, however deep", () => {
      const secret = { [specialSigKey]: specialSecretSig, value: "hunter2" };
      assert.deepEqual(maskSecrets({ a: [1, { b: secret }], c: "plain" }), { a: [1, { b: MASK }], c: "plain" });
    });
  });

  describe("command line", function () {
    this.timeout(60_000);
    it("exits 2 naming the key when a stack's value is invalid, and creates nothing", async () => {
      const bad = fixtureYaml("dev", (s) => (s.cluster.name = "ml dev!"));
      const dir = tempProject({ dev: bad });
      const r = await runTool(dir, "plan", ["--stack", "dev"]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /triton-platform:cluster\.name must be an EKS cluster name.*got "ml dev!"/);
      assert.ok(!fs.existsSync(path.join(dir, "out", "dev", "resources.json")), "no plan written");
    });

    it("exits 2 for an unknown stack or option", async () => {
      const dir = tempProject({ dev: fixtureYaml("dev") });
      assert.equal((await runTool(dir, "plan", ["--stack", "nope"])).status, 2);
      // End to end: the exit status and stderr of a real process.
      const r = spawnTool(dir, "plan", ["--colour"]);
      assert.equal(r.status, 2);
      assert.match(r.stderr, /unknown option --colour/);
    });

    it("prints its usage with --help (exit 2)", async () => {
      const r = await runTool(ROOT, "plan", ["--help"]);
      assert.equal(r.status, 2);
      assert.match(r.stdout, /^usage: npm run plan -- \[--stack NAME\] .*--verbose\]/);
      assert.equal(r.stderr, "");
    });

    // --stack, --out and --json end to end: the closed-pipe run of test/plan-machine-output.test.ts.
    it("plans one stack with --stack and --out, and prints JSON with --json", async () => {
      const dir = tempProject({ dev: fixtureYaml("dev"), prod: fixtureYaml("prod") });
      const out = path.join(dir, "elsewhere");
      const r = await runTool(dir, "plan", ["--stack", "prod", "--out", out, "--json"]);
      assert.equal(r.status, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assert.deepEqual(
        report.stacks.map((s: { stack: string }) => s.stack),
        ["prod"],
      );
      assert.ok(report.stacks[0].countsByType["kubernetes:core/v1:Namespace"] >= 1);
      assert.ok(fs.existsSync(path.join(out, "prod", "resources.json")));
      assert.ok(!fs.existsSync(path.join(out, "dev")));
    });
  });
});
