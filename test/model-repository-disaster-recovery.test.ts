// The model bucket's disaster recovery (modelRepository.s3.disasterRecovery): replicate plans a
// second bucket in another region, hardened as the first, under a key of that region, and a
// replication rule whose role S3 can use for the model prefix and nothing else (evaluated by an
// IAM simulator, @cloud-copilot/iam-simulate, against the TLS-only bucket policies and the key
// policy); republish records the choice and its recovery time on the bucket. The policy
// s3-model-bucket-disaster-recovery refuses a prod bucket that states neither.
import { strict as assert } from "node:assert";
import { runSimulation } from "@cloud-copilot/iam-simulate";
import { loadConfig } from "../config";
import { isSettingsError } from "../lib/errors";
import {
  accountKeyPolicy,
  bucketArn as bucketArnOf,
  DISASTER_RECOVERY_TAG,
  RECOVERY_TIME_TAG,
  replicationPolicy,
  tlsOnlyBucketPolicy,
  type ReplicationAccess,
} from "../components/model-repository";
import { evaluatePolicies, type Violation } from "../tools/planner/policy";
import { rules } from "../policies/rules";
import type { RecordedResource } from "../tools/planner";
import { checkAtLevels, fixtureConfig, fixtureStack, one, ofType, planFixture } from "./helpers";
import { declareMutations, first } from "./support/mutations";
import { FAKE_ACCOUNT_ID } from "../tools/planner/fakes";

const RULE = "s3-model-bucket-disaster-recovery";
const BUCKET_TYPE = "aws:s3/bucket:Bucket";
const REPLICATION = "aws:s3/bucketReplicationConfig:BucketReplicationConfig";

/** The prod fixture with its disaster recovery set to `dr` (undefined: not stated). */
const prodWith = (dr: unknown) =>
  fixtureStack("prod", (s) => {
    if (dr === undefined) delete s.modelRepository.s3.disasterRecovery;
    else s.modelRepository.s3.disasterRecovery = dr;
  });

const REPLICATE = { strategy: "replicate", replicaRegion: "us-west-2" };

function configProblems(overrides: Record<string, unknown>, shape = "prod"): string[] {
  const f = fixtureStack(shape, (s) => Object.assign(s.modelRepository.s3, overrides));
  try {
    loadConfig(f.config, f.stack, f.secretKeys);
  } catch (e) {
    assert.ok(isSettingsError(e), String(e));
    return e.problems;
  }
  return [];
}

describe("model repository disaster recovery", function () {
  this.timeout(180_000);

  describe("the settings", () => {
    it("each strategy requires its own key and refuses the other's, naming the key, the rule and the value", () => {
      assert.deepEqual(configProblems({ disasterRecovery: { strategy: "replicate" } }), [
        `triton-platform:modelRepository.s3.disasterRecovery.replicaRegion is required when strategy is "replicate" (the replica bucket's region), got nothing`,
      ]);
      assert.deepEqual(configProblems({ disasterRecovery: { strategy: "republish" } }), [
        `triton-platform:modelRepository.s3.disasterRecovery.recoveryTimeHours is required when strategy is "republish" (the hours the publisher takes to re-publish every model: the recovery time), got nothing`,
      ]);
      assert.match(
        configProblems({ disasterRecovery: { ...REPLICATE, recoveryTimeHours: 4 } }).join("\n"),
        /disasterRecovery\.recoveryTimeHours applies only when strategy is "republish".*, got 4/,
      );
      assert.match(
        configProblems({ disasterRecovery: { strategy: "republish", recoveryTimeHours: 4, replicaRegion: "us-west-2" } }).join("\n"),
        /disasterRecovery\.replicaRegion applies only when strategy is "replicate".*, got "us-west-2"/,
      );
      assert.match(
        configProblems({ disasterRecovery: { strategy: "mirror" } }).join("\n"),
        /disasterRecovery\.strategy must be one of "replicate", "republish", got "mirror"/,
      );
      assert.match(
        configProblems({ disasterRecovery: { strategy: "republish", recoveryTimeHours: 0 } }).join("\n"),
        /recoveryTimeHours must be an integer from 1 to 720, got 0/,
      );
    });

    it("replicate is refused with an existing bucket (its replication is its owner's), republish is not", () => {
      const existing = { bucketPrefix: undefined, existingBucket: "models-bucket" };
      const withKey = (s: Record<string, any>, dr: unknown) => {
        Object.assign(s.modelRepository.s3, existing, { disasterRecovery: dr });
        delete s.modelRepository.s3.bucketPrefix;
        s.modelRepository.kmsKeyArn = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-4333-8444-555555555555";
      };
      const f = fixtureStack("prod", (s) => withKey(s, REPLICATE));
      assert.throws(
        () => loadConfig(f.config, f.stack, f.secretKeys),
        /disasterRecovery\.strategy cannot be "replicate" with s3\.existingBucket.*, got "replicate"/,
      );
      const g = fixtureStack("prod", (s) => withKey(s, { strategy: "republish", recoveryTimeHours: 8 }));
      assert.doesNotThrow(() => loadConfig(g.config, g.stack, g.secretKeys));
    });

    it("a replica in the bucket's own region is refused: an explicit bucketRegion in the schema, the cluster's at the component, at the stack key", async () => {
      assert.match(
        configProblems({ bucketRegion: "eu-west-1", disasterRecovery: { strategy: "replicate", replicaRegion: "eu-west-1" } }).join("\n"),
        /disasterRecovery\.replicaRegion must be another region than the bucket's eu-west-1 .*, got "eu-west-1"/,
      );
      // No bucketRegion: the bucket is in aws:region (us-east-1), known to the component only.
      assert.deepEqual(configProblems({ disasterRecovery: { strategy: "replicate", replicaRegion: "us-east-1" } }), []);
      await assert.rejects(planFixture(prodWith({ strategy: "replicate", replicaRegion: "us-east-1" }), { shared: false }), (e: unknown) => {
        assert.ok(isSettingsError(e), String(e));
        assert.deepEqual(e.problems, [
          `triton-platform:modelRepository.s3.disasterRecovery.replicaRegion must be another region than the bucket's us-east-1 (a replica in the same region is lost with it), got "us-east-1"`,
        ]);
        return true;
      });
    });

    it("is optional outside prod: dev's fixture without it loads", () => {
      assert.doesNotThrow(() => loadConfig(fixtureConfig("dev"), "dev", []));
    });
  });

  describe("replicate (the prod fixture with replicaRegion us-west-2)", () => {
    let rs: RecordedResource[];
    let source: RecordedResource;
    let replica: RecordedResource;
    let replication: RecordedResource;
    before(async () => {
      const p = await planFixture(prodWith(REPLICATE));
      rs = p.resources;
      source = one(rs, BUCKET_TYPE, "model-repository-bucket");
      replica = one(rs, BUCKET_TYPE, "model-repository-replica");
      replication = one(rs, REPLICATION);
      assert.deepEqual(
        p.report.violations.filter((v) => v.level === "mandatory"),
        [],
      );
    });

    const settingOf = (type: string, bucket: RecordedResource) => {
      const found = ofType(rs, type).filter((r) => r.dependencies.includes(bucket.urn));
      assert.equal(found.length, 1, `${type} of ${bucket.name}`);
      return found[0];
    };

    it("creates the replica and its key in the replica region, the source where it was", () => {
      assert.equal(replica.props.region, "us-west-2");
      assert.equal(source.props.region, undefined, "the source stays in the provider's region");
      assert.equal(replica.props.forceDestroy, false);
      assert.match(replica.props.bucketPrefix, /^triton-models-prod-dr-$/);
      const key = one(rs, "aws:kms/key:Key", "model-repository-replica-key");
      assert.equal(key.props.region, "us-west-2");
      assert.equal(key.props.enableKeyRotation, true);
    });

    it("hardens the replica as the source: versioned, SSE-KMS with the replica's own key, public access blocked, TLS only", () => {
      const replicaKeyArn = settingOf("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", replica).props.rules[0]
        .applyServerSideEncryptionByDefault;
      assert.equal(replicaKeyArn.sseAlgorithm, "aws:kms");
      assert.match(replicaKeyArn.kmsMasterKeyId, /^arn:aws:kms:us-west-2:/);
      assert.deepEqual(settingOf("aws:s3/bucketVersioning:BucketVersioning", replica).props.versioningConfiguration, { status: "Enabled" });
      assert.equal(settingOf("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", replica).props.blockPublicPolicy, true);
      for (const type of [
        "aws:s3/bucketVersioning:BucketVersioning",
        "aws:s3/bucketPolicy:BucketPolicy",
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
      ])
        assert.equal(settingOf(type, replica).props.region, "us-west-2", type);
    });

    it("replicates the model prefix's SSE-KMS objects to the replica, re-encrypted with its key, under Replication Time Control", () => {
      const [rule] = replication.props.rules;
      assert.equal(replication.props.rules.length, 1);
      assert.equal(rule.status, "Enabled");
      assert.deepEqual(rule.filter, { prefix: "models/" });
      assert.deepEqual(rule.sourceSelectionCriteria, { sseKmsEncryptedObjects: { status: "Enabled" } });
      assert.deepEqual(rule.deleteMarkerReplication, { status: "Enabled" });
      assert.equal(rule.destination.bucket, `arn:aws:s3:::${replica.props.bucketPrefix}00000000000000000000000000`);
      assert.match(rule.destination.encryptionConfiguration.replicaKmsKeyId, /^arn:aws:kms:us-west-2:/);
      assert.deepEqual(rule.destination.replicationTime, { status: "Enabled", time: { minutes: 15 } });
      assert.deepEqual(rule.destination.metrics, { status: "Enabled", eventThreshold: { minutes: 15 } });
      const versionings = ofType(rs, "aws:s3/bucketVersioning:BucketVersioning").map((v) => v.urn);
      assert.equal(versionings.filter((u) => replication.dependencies.includes(u)).length, 2, "waits for both buckets' versioning");
    });

    it("the replication role is assumed by S3 only, and its policy is the builder's for these two buckets and keys", () => {
      const role = one(rs, "aws:iam/role:Role", "model-repository-replication");
      assert.deepEqual(JSON.parse(role.props.assumeRolePolicy).Statement, [
        { Sid: "S3Replication", Effect: "Allow", Principal: { Service: "s3.amazonaws.com" }, Action: "sts:AssumeRole" },
      ]);
      assert.equal(replication.props.role, `arn:aws:iam::${FAKE_ACCOUNT_ID}:role/model-repository-replication-0000000`);
      const sourceKey = settingOf("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", source).props.rules[0]
        .applyServerSideEncryptionByDefault.kmsMasterKeyId;
      const expected = replicationPolicy({
        source: { bucketArn: `arn:aws:s3:::${replication.props.bucket}`, prefix: "models", kmsKeyArn: sourceKey, region: "us-east-1" },
        replica: {
          bucketArn: replication.props.rules[0].destination.bucket,
          kmsKeyArn: replication.props.rules[0].destination.encryptionConfiguration.replicaKmsKeyId,
          region: "us-west-2",
        },
      });
      assert.deepEqual(JSON.parse(one(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-replication").props.policy), expected);
    });

    it("states what recovery it gives in the stack outputs", async () => {
      const p = await planFixture(prodWith(REPLICATE));
      const dr = (p.outputs as any).modelRepositoryDetails.disasterRecovery;
      assert.equal(dr.strategy, "replicate");
      assert.equal(dr.replicaRegion, "us-west-2");
      assert.equal(dr.recoveryPointMinutes, 15);
    });
  });

  describe("republish (the prod fixture's choice)", () => {
    it("tags the bucket with the choice and its recovery time, and creates no replica", async () => {
      const p = await planFixture(prodWith({ strategy: "republish", recoveryTimeHours: 6 }));
      const bucket = one(p.resources, BUCKET_TYPE);
      assert.equal(bucket.props.tags[DISASTER_RECOVERY_TAG], "republish");
      assert.equal(bucket.props.tags[RECOVERY_TIME_TAG], "6");
      assert.equal(ofType(p.resources, REPLICATION).length, 0);
      assert.deepEqual((p.outputs as any).modelRepositoryDetails.disasterRecovery, { strategy: "republish", recoveryTimeHours: 6 });
    });
  });

  describe(`the policy ${RULE}`, () => {
    let replicated: RecordedResource[];
    let republished: RecordedResource[];
    let unstated: RecordedResource[];
    before(async () => {
      replicated = (await planFixture(prodWith(REPLICATE))).resources;
      republished = (await planFixture(prodWith({ strategy: "republish", recoveryTimeHours: 6 }))).resources;
      unstated = (await planFixture(prodWith(undefined))).resources;
    });
    const copy = (rs: RecordedResource[]): RecordedResource[] => JSON.parse(JSON.stringify(rs));
    const fired = async (rs: RecordedResource[]): Promise<Violation[]> =>
      (await evaluatePolicies(rules, rs, { all: "mandatory" } as never)).filter((v) => v.policy === RULE);

    it("fires at prod's level on a prod bucket that states neither, naming the bucket, and is silent on both choices", async () => {
      const v = (await checkAtLevels(unstated, "prod")).filter((x) => x.policy === RULE);
      assert.equal(v.length, 1);
      assert.equal(v[0].level, "mandatory");
      assert.match(v[0].message, /S3 bucket model-repository-bucket .*\(prod\) has no disaster recovery: no BucketReplicationConfig replicates it/);
      assert.deepEqual(await fired(replicated), []);
      assert.deepEqual(await fired(republished), []);
    });

    it("never asks a replica for a replica of its own", async () => {
      assert.deepEqual(
        (await fired(replicated)).map((v) => v.resource),
        [],
      );
    });

    const breaks: [string, (rs: RecordedResource[]) => void, RegExp][] = [
      ["the replication rule disabled", (rs) => (first(rs, REPLICATION).props.rules[0].status = "Disabled"), /is "Disabled", not "Enabled"/],
      [
        "SSE-KMS objects left out (every model is SSE-KMS)",
        (rs) => delete first(rs, REPLICATION).props.rules[0].sourceSelectionCriteria,
        /sseKmsEncryptedObjects\.status is not "Enabled"/,
      ],
      [
        "the replica in the source's region",
        (rs) => (first(rs, BUCKET_TYPE, (r) => r.name === "model-repository-replica").props.region = undefined),
        /in the bucket's own region/,
      ],
      [
        "the replica not versioned",
        (rs) =>
          (first(rs, "aws:s3/bucketVersioning:BucketVersioning", (r) => r.name === "model-repository-replica-versioning").props.versioningConfiguration.status =
            "Suspended"),
        /is not versioned/,
      ],
      [
        "the replica under SSE-S3",
        (rs) =>
          (first(
            rs,
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            (r) => r.name === "model-repository-replica-encryption",
          ).props.rules[0].applyServerSideEncryptionByDefault = {
            sseAlgorithm: "AES256",
          }),
        /has no SSE-KMS default encryption/,
      ],
      ["no replica key", (rs) => delete first(rs, REPLICATION).props.rules[0].destination.encryptionConfiguration, /replicaKmsKeyId is not set/],
      [
        "a destination outside the stack",
        (rs) => (first(rs, REPLICATION).props.rules[0].destination.bucket = "arn:aws:s3:::someone-elses-bucket"),
        /is no bucket of this stack/,
      ],
    ];
    for (const [what, mutate, message] of breaks) {
      it(`fires on replicate with ${what}`, async () => {
        const rs = copy(replicated);
        mutate(rs);
        // The source is reported (a replica whose source no longer replicates to it may be too: it is then a bucket like any other).
        const v = (await fired(rs)).filter((x) => /model-repository-bucket$/.test(x.resource));
        assert.equal(v.length, 1, JSON.stringify(v));
        assert.match(v[0].message, message);
      });
    }

    it("fires on republish without a number of hours, and is silent when the stack is not prod", async () => {
      const rs = copy(republished);
      first(rs, BUCKET_TYPE).props.tags[RECOVERY_TIME_TAG] = "soon";
      assert.match((await fired(rs))[0]?.message ?? "", /tags\["triton-platform:recovery-time-hours"\] is "soon"/);
      const dev = (await planFixture(fixtureStack("dev"))).resources;
      assert.deepEqual(await fired(dev), [], "dev states nothing and is not in the rule's environments");
    });
  });

  describe("the replication role, evaluated by an IAM simulator", () => {
    const ACCOUNT = FAKE_ACCOUNT_ID;
    const SOURCE = bucketArnOf("aws", "triton-models-prod-00000000000000000000000000");
    const REPLICA = bucketArnOf("aws", "triton-models-prod-dr-00000000000000000000000000");
    const SOURCE_KEY = `arn:aws:kms:us-east-1:${ACCOUNT}:key/00000000-0000-4000-8000-000000000000`;
    const REPLICA_KEY = `arn:aws:kms:us-west-2:${ACCOUNT}:key/11111111-2222-4333-8444-555555555555`;
    const ACCESS: ReplicationAccess = {
      source: { bucketArn: SOURCE, prefix: "models", kmsKeyArn: SOURCE_KEY, region: "us-east-1" },
      replica: { bucketArn: REPLICA, kmsKeyArn: REPLICA_KEY, region: "us-west-2" },
    };
    // S3 assumes the role: its requests are an assumed-role session of it.
    const ROLE_SESSION = `arn:aws:sts::${ACCOUNT}:assumed-role/model-repository-replication-0000000/s3-replication`;
    const TLS = { "aws:SecureTransport": "true" };

    type Outcome = "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied";
    async function evaluate(action: string, resource: string, context: Record<string, string>): Promise<Outcome> {
      const resourcePolicy = action.startsWith("kms:")
        ? [SOURCE_KEY, REPLICA_KEY].includes(resource)
          ? accountKeyPolicy("aws", ACCOUNT)
          : undefined
        : resource.startsWith(SOURCE)
          ? tlsOnlyBucketPolicy(SOURCE)
          : resource.startsWith(REPLICA)
            ? tlsOnlyBucketPolicy(REPLICA)
            : undefined;
      const result = await runSimulation(
        {
          request: { principal: ROLE_SESSION, action, resource: { resource, accountId: ACCOUNT }, contextVariables: context },
          identityPolicies: [{ name: "replication", policy: replicationPolicy(ACCESS) }],
          serviceControlPolicies: [],
          resourceControlPolicies: [],
          ...(resourcePolicy ? { resourcePolicy } : {}),
        },
        {},
      );
      assert.equal(result.resultType, "single", `${action} on ${resource}: ${result.resultType === "error" ? result.errors.message : ""}`);
      if (result.resultType !== "single") throw new Error("unreachable");
      assert.deepEqual(result.result.ignoredContextKeys ?? [], [], `${action}: every context key applies`);
      return result.overallResult;
    }

    const cases: [Outcome, string, string, string, Record<string, string>][] = [
      // What S3 does to replicate an object version (S3 user guide, "Setting up permissions for live replication").
      ["Allowed", "read the source's replication configuration", "s3:GetReplicationConfiguration", SOURCE, TLS],
      ["Allowed", "list the source", "s3:ListBucket", SOURCE, TLS],
      ["Allowed", "read a model's version to replicate", "s3:GetObjectVersionForReplication", `${SOURCE}/models/resnet/1/model.onnx`, TLS],
      ["Allowed", "read its ACL", "s3:GetObjectVersionAcl", `${SOURCE}/models/resnet/1/model.onnx`, TLS],
      ["Allowed", "read its tags", "s3:GetObjectVersionTagging", `${SOURCE}/models/resnet/1/model.onnx`, TLS],
      ["Allowed", "write the replica", "s3:ReplicateObject", `${REPLICA}/models/resnet/1/model.onnx`, TLS],
      ["Allowed", "replicate a delete marker", "s3:ReplicateDelete", `${REPLICA}/models/resnet/1/model.onnx`, TLS],
      ["Allowed", "replicate tags", "s3:ReplicateTags", `${REPLICA}/models/resnet/1/model.onnx`, TLS],
      ["Allowed", "decrypt the source object through S3 in its region", "kms:Decrypt", SOURCE_KEY, { "kms:ViaService": "s3.us-east-1.amazonaws.com" }],
      ["Allowed", "encrypt the replica through S3 in the replica region", "kms:Encrypt", REPLICA_KEY, { "kms:ViaService": "s3.us-west-2.amazonaws.com" }],
      // Nothing else: other prefixes and buckets, plain reads and writes, configuration, the keys outside S3.
      ["ImplicitlyDenied", "read a version outside the prefix", "s3:GetObjectVersionForReplication", `${SOURCE}/other/secret.bin`, TLS],
      ["ImplicitlyDenied", "replicate outside the prefix", "s3:ReplicateObject", `${REPLICA}/other/secret.bin`, TLS],
      ["ImplicitlyDenied", "replicate to another bucket", "s3:ReplicateObject", `${bucketArnOf("aws", "someone-elses-bucket")}/models/x`, TLS],
      ["ImplicitlyDenied", "replicate into the source", "s3:ReplicateObject", `${SOURCE}/models/x`, TLS],
      ["ImplicitlyDenied", "GetObject of a model (a read S3 replication never makes)", "s3:GetObject", `${SOURCE}/models/resnet/1/model.onnx`, TLS],
      ["ImplicitlyDenied", "PutObject into the replica", "s3:PutObject", `${REPLICA}/models/resnet/1/model.onnx`, TLS],
      ["ImplicitlyDenied", "DeleteObjectVersion in the replica", "s3:DeleteObjectVersion", `${REPLICA}/models/resnet/1/model.onnx`, TLS],
      ["ImplicitlyDenied", "change the replication", "s3:PutReplicationConfiguration", SOURCE, TLS],
      ["ImplicitlyDenied", "list the replica", "s3:ListBucket", REPLICA, TLS],
      ["ImplicitlyDenied", "decrypt the source key directly", "kms:Decrypt", SOURCE_KEY, {}],
      [
        "ImplicitlyDenied",
        "decrypt the replica (a replica is never read by this role)",
        "kms:Decrypt",
        REPLICA_KEY,
        { "kms:ViaService": "s3.us-west-2.amazonaws.com" },
      ],
      [
        "ImplicitlyDenied",
        "encrypt with the replica key through S3 in another region",
        "kms:Encrypt",
        REPLICA_KEY,
        { "kms:ViaService": "s3.us-east-1.amazonaws.com" },
      ],
      ["ImplicitlyDenied", "a data key of the source key", "kms:GenerateDataKey", SOURCE_KEY, { "kms:ViaService": "s3.us-east-1.amazonaws.com" }],
      ["ImplicitlyDenied", "schedule the replica key's deletion", "kms:ScheduleKeyDeletion", REPLICA_KEY, {}],
      // The TLS-only bucket policies bind the role as everyone.
      ["ExplicitlyDenied", "write the replica over plain HTTP", "s3:ReplicateObject", `${REPLICA}/models/x`, { "aws:SecureTransport": "false" }],
    ];
    for (const [outcome, what, action, resource, context] of cases) {
      it(`${outcome === "Allowed" ? "allows" : outcome === "ExplicitlyDenied" ? "explicitly denies" : "denies"} ${what} (${action})`, async () => {
        assert.equal(await evaluate(action, resource, context), outcome);
      });
    }
  });
});

declareMutations([
  {
    rule: RULE,
    breaks: "removes the republish choice and its recovery time from the prod model bucket (no replica either)",
    mutate: (rs) => {
      const b = first(rs, BUCKET_TYPE);
      delete b.props.tags[DISASTER_RECOVERY_TAG];
      delete b.props.tags[RECOVERY_TIME_TAG];
    },
  },
]);
