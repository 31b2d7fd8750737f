// Contracted models' config.pbtxt in the model repository: one S3 object per model that the stack
// owns (encrypted like the bucket, never overwritable by the publisher), a pod-template hash so a
// changed config rolls the pods that load it, and the plan's artifacts models/<group>/<model>/config.pbtxt,
// each accepted by Debian's protoc at the release of every track that loads it, for fixtures and for
// every example stack (an invariant: no values of those files are asserted).
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as v from "valibot";
import { modelContract } from "../components/triton/schema";
import { MODEL_CONFIGS_ANNOTATION } from "../components/triton/builders";
import { modelConfigMessage, parseModelConfig } from "../components/triton/model-config";
import { MODEL_CONFIG_PROTO_OF_RELEASE } from "../components/upstream/triton-model-config";
import { listStacks, planStack, REPOSITORY } from "../tools/planner";
import { ConfigError, loadConfig } from "../config";
import { fixtureConfig, fixtureStack, ofType, one, planFixture } from "./helpers";
import { HAVE_PROTOC, MODEL_CONFIG_DIR, protocEncode } from "./support/model-config-proto";
import type { RecordedResource } from "../tools/planner/record";

const OBJECT = "aws:s3/bucketObjectv2:BucketObjectv2";
const STS = "kubernetes:apps/v1:StatefulSet";

const resnet = (maxQueueDelayUs = 2000) => ({
  name: "resnet50",
  backend: "onnxruntime",
  maxBatchSize: 16,
  dynamicBatching: { preferredBatchSizes: [4, 8, 16], maxQueueDelayUs },
  instanceGroups: [{ kind: "KIND_GPU", count: 2, gpus: [0] }],
  versionPolicy: { latest: 2 },
  warmup: [{ name: "zeros", batchSize: 4, inputs: { input: { dataType: "TYPE_FP32", dims: [3, 224, 224], zeroData: true } } }],
});
const bert = { name: "bert", platform: "tensorrt_plan", maxBatchSize: 8, versionPolicy: { latest: 2 } };

/** The prod fixture with its group's models contracted (one bare name kept). */
const contracted = (delay = 2000) =>
  fixtureStack("prod", (s) => {
    s.triton.groups[0].models = [resnet(delay), bert, "efficientnet_b0"];
  });

/** Release (yy.mm) of each serving StatefulSet's image, by group label. */
function releasesByGroup(resources: readonly RecordedResource[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const s of ofType([...resources], STS)) {
    const group = s.props.metadata?.labels?.["app.kubernetes.io/instance"];
    const image = s.props.spec.template.spec.containers.find((c: { name: string }) => c.name === "triton")?.image as string | undefined;
    if (!group || !image) continue;
    const tag = /:(\d{2}\.\d{2})-/.exec(image)?.[1];
    if (tag) out.set(group, new Set([...(out.get(group) ?? []), tag]));
  }
  return out;
}

/** Every models/<group>/<model>/config.pbtxt under a plan's stack folder, accepted by protoc at each release of its group. */
function checkArtifacts(stackDir: string, resources: readonly RecordedResource[]): string[] {
  const root = path.join(stackDir, "models");
  if (!fs.existsSync(root)) return [];
  const releases = releasesByGroup(resources);
  const checked: string[] = [];
  for (const group of fs.readdirSync(root))
    for (const model of fs.readdirSync(path.join(root, group))) {
      const file = path.join(root, group, model, "config.pbtxt");
      const text = fs.readFileSync(file, "utf8");
      assert.equal(parseModelConfig(text, file).name, model, `${file} names its folder`);
      const rs = [...(releases.get(group) ?? [])];
      assert.ok(rs.length > 0, `group ${group} of ${file} has a serving StatefulSet`);
      for (const release of rs) {
        const r = protocEncode(MODEL_CONFIG_PROTO_OF_RELEASE[release], text);
        assert.ok(r.ok, `${file} at ${release}: ${r.ok ? "" : r.error}`);
      }
      checked.push(path.relative(stackDir, file));
    }
  return checked;
}

describe("contracted models' config.pbtxt in the model repository", function () {
  this.timeout(120_000);

  it("a stack of bare names writes no config, no Deny and no pod annotation (it plans as before)", async () => {
    const rs = (await planFixture(fixtureStack("prod"))).resources;
    assert.equal(ofType(rs, OBJECT).length, 0);
    assert.ok(
      !JSON.parse(one(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-publisher").props.policy).Statement.some(
        (s: { Effect: string }) => s.Effect === "Deny",
      ),
    );
    for (const s of ofType(rs, STS)) assert.equal(s.props.spec.template.metadata.annotations?.[MODEL_CONFIGS_ANNOTATION], undefined);
  });

  it("one S3 object per contracted model at <modelPrefix>/<model>/config.pbtxt, encrypted with the bucket's key, holding the contract's config", async () => {
    const rs = (await planFixture(contracted())).resources;
    const objects = ofType(rs, OBJECT);
    assert.deepEqual(objects.map((o) => o.props.key).sort(), ["models/bert/config.pbtxt", "models/resnet50/config.pbtxt"]);
    const sse = one(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules[0]
      .applyServerSideEncryptionByDefault;
    for (const o of objects) {
      assert.equal(o.props.serverSideEncryption, sse.sseAlgorithm);
      assert.equal(o.props.kmsKeyId, sse.kmsMasterKeyId);
      assert.equal(o.props.bucketKeyEnabled, true);
    }
    const object = objects.find((o) => o.props.key === "models/resnet50/config.pbtxt")!;
    assert.deepEqual(parseModelConfig(object.props.content), modelConfigMessage(v.parse(modelContract, resnet())));
  });

  it("the publisher's Deny names exactly the stack's config objects", async () => {
    const rs = (await planFixture(contracted())).resources;
    const deny = JSON.parse(one(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-publisher").props.policy).Statement.filter(
      (s: { Effect: string }) => s.Effect === "Deny",
    );
    assert.equal(deny.length, 1);
    const bucket = one(rs, "aws:s3/bucket:Bucket");
    const arns = ofType(rs, OBJECT).map((o) => `arn:aws:s3:::${bucket.props.bucketPrefix}00000000000000000000000000/${o.props.key}`);
    assert.deepEqual([...deny[0].Resource].sort(), arns.sort());
  });

  it("a changed contract changes only that model's config and the hash on the pods that load it (they roll)", async () => {
    const [a, b] = await Promise.all([planFixture(contracted(2000)), planFixture(contracted(3000))]);
    const content = (rs: RecordedResource[], key: string) => ofType(rs, OBJECT).find((o) => o.props.key === key)!.props.content;
    assert.notEqual(content(a.resources, "models/resnet50/config.pbtxt"), content(b.resources, "models/resnet50/config.pbtxt"));
    assert.equal(content(a.resources, "models/bert/config.pbtxt"), content(b.resources, "models/bert/config.pbtxt"));
    const hash = (rs: RecordedResource[], name: string) => one(rs, STS, name).props.spec.template.metadata.annotations[MODEL_CONFIGS_ANNOTATION];
    for (const sts of ["vision", "vision-canary"]) {
      assert.match(hash(a.resources, sts), /^[0-9a-f]{16}$/);
      assert.notEqual(hash(a.resources, sts), hash(b.resources, sts), `${sts} rolls onto the new config`);
    }
  });

  it("the plan's artifacts hold models/<group>/<model>/config.pbtxt, which protoc accepts at each release the group runs", async function () {
    if (MODEL_CONFIG_DIR === undefined || !HAVE_PROTOC) this.skip();
    const p = await planFixture(contracted());
    const checked = checkArtifacts(path.join(p.outRoot, "prod"), p.resources);
    assert.deepEqual(checked.sort(), ["models/vision/bert/config.pbtxt", "models/vision/resnet50/config.pbtxt"]);
  });

  it("refuses a contract with the efs backend, naming the model's key (the stack cannot write into a read-only mount)", () => {
    const raw = fixtureConfig("prod", (s) => {
      s.triton.groups[0].models = [resnet(), "efficientnet_b0"];
      s.modelRepository = { backend: "efs", efs: { subnetIds: ["subnet-0123456789abcdef0"] } };
    });
    try {
      loadConfig(raw, "prod");
      assert.fail("accepted");
    } catch (e) {
      assert.ok(e instanceof ConfigError, String(e));
      assert.ok(
        e.problems.some((x) => /^triton-platform:triton\.groups\[0\]\.models\[0\] must be a bare model name with modelRepository\.backend efs/.test(x)),
        e.problems.join("\n"),
      );
    }
  });

  describe("every example stack: each rendered config is accepted by protoc at its group's releases", () => {
    for (const stack of listStacks(REPOSITORY.root)) {
      it(`${stack}`, async function () {
        if (MODEL_CONFIG_DIR === undefined || !HAVE_PROTOC) this.skip();
        const outRoot = fs.mkdtempSync(path.join(os.tmpdir(), `plan-models-${stack}-`));
        const p = await planStack(stack, { outRoot });
        const checked = checkArtifacts(path.join(outRoot, stack), p.resources);
        // As many files as the stack's objects reach groups: none is left unchecked.
        assert.equal(checked.length >= ofType(p.resources, OBJECT).length, true);
      });
    }
  });
});
