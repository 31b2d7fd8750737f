// The model rules of the pack (policies/rules/models.ts) over the config objects the stack writes:
// prod keeps at least two versions served, and a GPU model warms up. Each fires on several breaks,
// in the shapes a config can take (no version policy, latest 1, specific with one version; GPU by
// KIND_GPU, by KIND_AUTO in a GPU pod, by no instance group), and is silent on reasonable variants
// (all versions, a CPU model, another environment, a model nobody loads).
import { strict as assert } from "node:assert";
import { rules } from "../policies/rules";
import { evaluatePolicies } from "../tools/planner/policy";
import type { RecordedResource } from "../tools/planner";
import { fixtureStack, planFixture } from "./helpers";
import { declareMutations, first } from "./support/mutations";

const OBJECT = "aws:s3/bucketObjectv2:BucketObjectv2";
const GOOD = [
  'name: "resnet50"',
  'backend: "onnxruntime"',
  "version_policy { latest { num_versions: 2 } }",
  "max_batch_size: 8",
  "instance_group [ { kind: KIND_GPU count: 1 } ]",
  'model_warmup [ { name: "z" batch_size: 1 inputs { key: "in" value { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } } ]',
].join("\n");

/** A config object of the stack (as the model repository records it), beside the plan's bucket. */
function configObject(rs: RecordedResource[], model: string, content: string): RecordedResource {
  const bucket = first(rs, "aws:s3/bucket:Bucket");
  return {
    ...bucket,
    urn: bucket.urn.replace(/aws:s3\/bucket:Bucket::.*$/, `${OBJECT}::model-repository-config-${model}`),
    type: OBJECT,
    name: `model-repository-config-${model}`,
    dependencies: [],
    props: { bucket: "b", key: `models/${model}/config.pbtxt`, content, serverSideEncryption: "aws:kms" },
  };
}

const withConfig =
  (content: string, model = "resnet50") =>
  (rs: RecordedResource[]) =>
    void rs.push(configObject(rs, model, content));
const edit = (from: RegExp, to: string) => GOOD.replace(from, to);

let prod: RecordedResource[];
let dev: RecordedResource[];
before(async function () {
  this.timeout(120_000);
  [prod, dev] = await Promise.all([planFixture(fixtureStack("prod")).then((p) => p.resources), planFixture(fixtureStack("dev")).then((p) => p.resources)]);
});

async function fired(policy: string, base: RecordedResource[], mutate: (rs: RecordedResource[]) => void): Promise<string[]> {
  const rs: RecordedResource[] = structuredClone(base);
  mutate(rs);
  const found = await evaluatePolicies(rules, rs, { all: "mandatory" });
  return found.filter((x) => x.policy === policy).map((x) => x.message);
}

describe("model rules over the config objects the stack writes", function () {
  this.timeout(60_000);

  describe("models-keep-rollback-versions", () => {
    const rule = "models-keep-rollback-versions";
    it("fires in prod on no version policy (Triton's latest 1), latest 1, and one specific version", async () => {
      for (const text of [
        edit(/version_policy .*\n/, ""),
        edit(/num_versions: 2/, "num_versions: 1"),
        edit(/latest \{ num_versions: 2 \}/, "specific { versions: [ 7 ] }"),
      ]) {
        const ms = await fired(rule, prod, withConfig(text));
        assert.equal(ms.length, 1, text);
        assert.match(ms[0], /config of model resnet50 \(content\): version_policy serves 1 version\(s\), must serve >= 2/);
      }
    });
    it("is silent on latest 2, two specific versions, all, in dev, and for a model no pod loads", async () => {
      assert.deepEqual(await fired(rule, prod, withConfig(GOOD)), []);
      assert.deepEqual(await fired(rule, prod, withConfig(edit(/latest \{ num_versions: 2 \}/, "specific { versions: [ 6, 7 ] }"))), []);
      assert.deepEqual(await fired(rule, prod, withConfig(edit(/latest \{ num_versions: 2 \}/, "all { }"))), []);
      assert.deepEqual(await fired(rule, dev, withConfig(edit(/num_versions: 2/, "num_versions: 1"))), []);
      assert.deepEqual(await fired(rule, prod, withConfig(edit(/num_versions: 2/, "num_versions: 1"), "unloaded_model")), []);
    });
    it("reports a config it cannot read, with its file, line and column", async () => {
      const ms = await fired(rule, prod, withConfig('name: "resnet50"\nmax_batch: 1\n'));
      assert.equal(ms.length, 1);
      assert.match(ms[0], /models\/resnet50\/config\.pbtxt:2:1: unknown field "max_batch"/);
    });
  });

  describe("models-warm-up-on-gpu", () => {
    const rule = "models-warm-up-on-gpu";
    const cold = edit(/model_warmup .*$/, "");
    it("fires in prod for a GPU model without warm-up: KIND_GPU, KIND_AUTO in a GPU pod, no instance group in a GPU pod", async () => {
      for (const text of [cold, cold.replace("KIND_GPU", "KIND_AUTO"), cold.replace(/instance_group .*\n/, "")]) {
        const ms = await fired(rule, prod, withConfig(text));
        assert.equal(ms.length, 1, text);
        assert.match(ms[0], /config of model resnet50 \(content\): a GPU model without model_warmup in prod/);
      }
    });
    it("is silent with warm-up, for a CPU model, in dev", async () => {
      assert.deepEqual(await fired(rule, prod, withConfig(GOOD)), []);
      assert.deepEqual(await fired(rule, prod, withConfig(cold.replace("KIND_GPU", "KIND_CPU"))), []);
      assert.deepEqual(await fired(rule, dev, withConfig(cold)), []);
    });
  });

  it("the rendered configs of the rules' own example pass both rules (the compliant config is compliant)", async () => {
    const found = await evaluatePolicies(rules, [...structuredClone(prod), configObject(prod, "resnet50", GOOD)], { all: "mandatory" });
    assert.deepEqual(
      found.filter((x) => x.policy.startsWith("models-")),
      [],
    );
  });
});

declareMutations([
  {
    rule: "models-keep-rollback-versions",
    breaks: "writes resnet50's config with Triton's default version policy (latest 1)",
    mutate: withConfig(edit(/version_policy .*\n/, "")),
  },
  {
    rule: "models-warm-up-on-gpu",
    breaks: "writes resnet50's config (KIND_GPU) without model_warmup",
    mutate: withConfig(edit(/model_warmup .*$/, "")),
  },
]);
