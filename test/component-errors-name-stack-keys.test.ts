// Every error a component raises while the stack is built names the stack-file key the person
// must change (`triton-platform:modelRepository.kmsKeyArn`), not the component's argument
// (`kmsKeyArn`): buildStack re-keys them in one place (components/component.ts), from each
// descriptor's sections and argumentKeys and the finer places a build names (ctx.at).
// Each component is broken once, through a fixture config: the values the stack file can reach
// are planned as a stack file; the others (a component's rule the stack schema also states) are
// broken in the resolved settings, after loadConfig, as a rule only the component states would be.
import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { REGISTRY } from "../components/registry";
import { buildStack, stackKeyOf, type StackSettings } from "../components/component";
import { loadConfig, PROJECT } from "../config";
import { INVOKES } from "../tools/planner/fakes";
import { isSettingsError, type SettingsError } from "../lib/errors";
import { fixtureStack, fixtureYaml, planFixture, runTool, tempProject } from "./helpers";

const ROOT = PROJECT + ":";
const OTHER_REGION_KEY = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";

/** Two serving groups, the second with a canary: an error of the second must name its index. */
const twoGroups = (s: Record<string, any>) => {
  const first = s.triton.groups[0];
  s.triton.groups.push({ ...structuredClone(first), name: "nlp" });
};

/** A fixture's resolved settings (what loadConfig hands index.ts), to break after validation. */
function resolved(shape: string, overrides: Parameters<typeof fixtureStack>[1] = {}): { settings: StackSettings; region: string; stack: string } {
  const f = fixtureStack(shape, overrides);
  const { stack, region, ...settings } = loadConfig(f.config, f.stack, f.secretKeys);
  return { settings: structuredClone<StackSettings>(settings), region, stack };
}

/** buildStack of the whole registry under mocks; the SettingsError it throws (synchronously, before anything is created). */
function buildError(settings: StackSettings, region: string, stack: string, what = "the build"): SettingsError {
  try {
    buildStack(REGISTRY, settings, stack, region, ROOT);
  } catch (e) {
    assert.ok(isSettingsError(e), String(e));
    return e;
  }
  assert.fail(`expected a SettingsError from ${what}`);
}

interface Break {
  /** The stack-file key the error must name (after triton-platform:). */
  key: string;
  /** Its rule, as the error words it. */
  rule: RegExp;
  /** The value shown. */
  shown: string;
  /** Breaks the resolved settings of the prod fixture (with two serving groups). */
  apply(s: Record<string, any>): void;
}

/**
 * One break per component the registry builds, at a key only its own resolver reads at that
 * point. A component added to the registry without an entry here fails the walk below.
 */
const BREAKS: Record<string, Break | { none: string }> = {
  cluster: { key: "cluster.name", rule: /must be an EKS cluster name/, shown: '"-ml"', apply: (s) => (s.cluster.name = "-ml") },
  namespace: { none: "ServingNamespace takes triton.namespace as checked by the stack schema and states no rule of its own" },
  gpu: { key: "gpu.rootVolumeGiB", rule: /must be an integer/, shown: "0", apply: (s) => (s.gpu.rootVolumeGiB = 0) },
  autoscaler: { key: "autoscaler.replicas", rule: /must be an integer/, shown: "0", apply: (s) => (s.autoscaler.replicas = 0) },
  "model-repository": {
    key: "modelRepository.modelPrefix",
    rule: /must be a relative path/,
    shown: '"/models"',
    apply: (s) => (s.modelRepository.modelPrefix = "/models"),
  },
  triton: {
    key: "triton.groups[1].canary.image.tag",
    rule: /must/,
    shown: '"not a tag!"',
    apply: (s) => (s.triton.groups[1].canary.image.tag = "not a tag!"),
  },
  storage: { key: "storage.kmsKeyId", rule: /must be/, shown: '"alias/ebs"', apply: (s) => (s.storage.kmsKeyId = "alias/ebs") },
  monitoring: { key: "monitoring.retention", rule: /must/, shown: '"forever"', apply: (s) => (s.monitoring.retention = "forever") },
  firewall: { none: "the Firewall takes the network needs the program composes and triton.namespace, which the namespace component builds first" },
  gateway: { key: "gateway.replicas", rule: /must be an integer/, shown: "0", apply: (s) => (s.gateway.replicas = 0) },
};

describe("a component's errors name their stack-file key", function () {
  this.timeout(120_000);
  before(async () => {
    await pulumi.runtime.setMocks(
      {
        newResource: (a) => ({ id: `${a.name}-id`, state: a.inputs }),
        call: (a) => INVOKES[a.token]?.(a.inputs, "us-east-1") ?? {},
      },
      "triton-platform",
      "prod",
      false,
    );
  });

  it("every component the registry builds has a break below, and each names its full key path, the rule and the value", () => {
    const missing = REGISTRY.filter((d) => d.build && !(d.name in BREAKS)).map((d) => d.name);
    assert.deepEqual(missing, [], `components without a break in BREAKS: ${missing.join(", ")}`);
    for (const d of REGISTRY) {
      const b = BREAKS[d.name];
      if (!b || "none" in b) continue;
      const { settings, region, stack } = resolved("prod", twoGroups);
      b.apply(settings);
      const e = buildError(settings, region, stack, `${d.name}'s break of ${b.key}`);
      const at = e.details.find((p) => p.key === ROOT + b.key);
      assert.ok(at, `${d.name}: no problem at ${ROOT + b.key}: ${e.message}`);
      assert.match(at.rule, b.rule, d.name);
      assert.equal(at.value?.shown, b.shown, d.name);
      assert.match(e.subject, /^invalid stack configuration \(arguments of \w+ "[^"]+"\)$/, `${d.name}: the subject names the component`);
      // No problem is left at a bare argument key.
      for (const p of e.details) assert.ok(p.key.startsWith(ROOT) || p.key.startsWith("aws:"), `${d.name}: ${p.key} is no stack-file key`);
    }
  });

  it("an argument taken from another section is named at that section (gpu.zones comes from cluster.zones)", () => {
    const { settings, region, stack } = resolved("prod");
    (settings as any).cluster.zones = [];
    const e = buildError(settings, region, stack);
    assert.deepEqual(
      e.details.map((p) => p.key),
      [ROOT + "cluster.zones"],
    );
  });

  it("a reference the program passes keeps its argument name (it is no stack key, and a program error)", () => {
    const placeOf = (key: string, scope: Parameters<typeof stackKeyOf>[2]) => stackKeyOf(REGISTRY, key, scope, ROOT);
    assert.equal(placeOf("vpcId", { sections: ["modelRepository"] }), undefined);
    assert.equal(placeOf("kmsKeyArn", { sections: ["modelRepository"] }), ROOT + "modelRepository.kmsKeyArn");
    assert.equal(placeOf("tags.team", { sections: ["environment", "cluster", "tags"] }), ROOT + "tags.team");
    assert.equal(placeOf("canary.image.tag", { at: ["triton", "groups", 3] }), ROOT + "triton.groups[3].canary.image.tag");
    assert.equal(placeOf("region", { sections: ["storage"], from: { region: "aws:region" } }), "aws:region");
    assert.equal(placeOf("noSuchKey", { sections: ["gateway"] }), undefined);
  });

  describe("through the planner, as a stack file reaches them", () => {
    it("the bucket's key outside the cluster's region: modelRepository.kmsKeyArn, the rule and the value", async () => {
      const f = fixtureStack("dev", { modelRepository: { backend: "s3", kmsKeyArn: OTHER_REGION_KEY } });
      await assert.rejects(planFixture(f, { shared: false }), (e: unknown) => {
        assert.ok(isSettingsError(e), String(e));
        assert.deepEqual(e.problems, [
          `${ROOT}modelRepository.kmsKeyArn must be a key in the bucket's region us-west-2 (SSE-KMS keys are regional), got ${JSON.stringify(OTHER_REGION_KEY)}`,
        ]);
        return true;
      });
    });

    it("the storage class's key outside the cluster's region: storage.kmsKeyId", async () => {
      const f = fixtureStack("dev", { storage: { kmsKeyId: OTHER_REGION_KEY } });
      await assert.rejects(planFixture(f, { shared: false }), (e: unknown) => {
        assert.ok(isSettingsError(e), String(e));
        assert.equal(e.details[0]?.key, ROOT + "storage.kmsKeyId");
        assert.match(e.problems[0], /must be a key in the cluster's region us-west-2/);
        return true;
      });
    });

    it("npm run plan exits 2 and shows the stack-file key path", async () => {
      const dir = tempProject({ dev: fixtureYaml("dev", { modelRepository: { backend: "s3", kmsKeyArn: OTHER_REGION_KEY } }) });
      const r = await runTool(dir, "plan", ["--stack", "dev"]);
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stdout + r.stderr, /triton-platform:modelRepository\.kmsKeyArn must be a key in the bucket's region us-west-2/);
      assert.doesNotMatch(r.stdout + r.stderr, /- kmsKeyArn /);
    });
  });
});
