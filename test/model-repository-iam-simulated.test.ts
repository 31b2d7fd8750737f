// The model repository's roles, proven by the requests their users make rather than by the
// policies' shape: each request is evaluated by an IAM policy simulator (@cloud-copilot/iam-simulate,
// AGPL-3.0, a devDependency used here only) against the role's identity policy together with the
// resource policy AWS applies to it (the TLS-only bucket policy for S3, the key policy for KMS).
// Every document comes from the component's own builders; the last block checks that the prod
// plan carries exactly those documents.
//
// Triton's S3 requests, from triton-inference-server/core src/filesystem/implementations/s3.h at
// r25.01 (the core of the 25.01/25.02 images the stack pins; unchanged to r25.12):
// - CheckClient: HeadBucket(bucket) before anything else.
// - IsDirectory(path): HeadBucket(bucket), then ListObjectsV2(Prefix = AppendSlash(object)), no
//   Delimiter. Called for the repository, each model and version folder, and each file
//   (FileExists and FileModificationTime call it first, so a file's key + "/" is listed too).
// - GetDirectoryContents(path): ListObjectsV2(Prefix = AppendSlash(dir)), no Delimiter, paged with
//   ContinuationToken.
// - FileExists / FileModificationTime: HeadObject(key) after IsDirectory.
// - ReadTextFile (config.pbtxt) and LocalizePath (every file of a model): GetObject(key).
// How S3 authorises them (S3 API reference, "Permissions" of each operation): HeadBucket and
// ListObjectsV2 need s3:ListBucket on the bucket (s3:prefix = the request's Prefix, absent without
// one); HeadObject and GetObject need s3:GetObject on the object; reading an SSE-KMS object makes
// S3 call kms:Decrypt with the caller's credentials (kms:ViaService = s3.<region>.amazonaws.com).
// The publisher's requests are those of the AWS CLI's `aws s3 sync|cp|rm` on the prefix: PutObject
// (also what CreateMultipartUpload, UploadPart and CompleteMultipartUpload are authorised as),
// AbortMultipartUpload, DeleteObject, and kms:GenerateDataKey + kms:Decrypt via S3 (an SSE-KMS
// multipart upload needs both: S3 user guide, "Using server-side encryption with AWS KMS keys").
import { strict as assert } from "node:assert";
import { runSimulation, type Simulation } from "@cloud-copilot/iam-simulate";
import {
  accountKeyPolicy,
  modelConfigKey,
  modelPublishPolicy,
  modelReadPolicy,
  tlsOnlyBucketPolicy,
  bucketArn as bucketArnOf,
  type BucketAccess,
} from "../components/model-repository";
import { plan, one } from "./helpers";
import { FAKE_ACCOUNT_ID } from "../tools/planner/fakes";

const ACCOUNT = FAKE_ACCOUNT_ID;
const REGION = "us-east-1";
const BUCKET = "triton-models-prod-00000000000000000000000000";
const BUCKET_ARN = bucketArnOf("aws", BUCKET);
const KEY_ARN = `arn:aws:kms:${REGION}:${ACCOUNT}:key/00000000-0000-4000-8000-000000000000`;
const ACCESS: BucketAccess = { bucketArn: BUCKET_ARN, prefix: "models", kmsKeyArn: KEY_ARN, region: REGION };
const OTHER_BUCKET_ARN = bucketArnOf("aws", "another-teams-bucket");
const OTHER_KEY_ARN = `arn:aws:kms:${REGION}:${ACCOUNT}:key/11111111-2222-4333-8444-555555555555`;

/** The callers: IRSA and sts:AssumeRole both give an assumed-role session of the role. */
const READER = `arn:aws:sts::${ACCOUNT}:assumed-role/model-repository-reader-1234567/botocore-session-1`;
const PUBLISHER = `arn:aws:sts::${ACCOUNT}:assumed-role/model-repository-publisher-1234567/ci-run-42`;

/** What every request over HTTPS carries (the SDK's default TLS is 1.2 or later). */
const TLS = { "aws:SecureTransport": "true", "s3:TlsVersion": "1.3" };
const VIA_S3 = { "kms:ViaService": `s3.${REGION}.amazonaws.com` };

type Outcome = "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied";

interface Request {
  /** The API operation and what it is for. */
  readonly what: string;
  readonly action: string;
  readonly resource: string;
  readonly context: Record<string, string>;
}

const object = (key: string, bucketArn = BUCKET_ARN) => `${bucketArn}/${key}`;
const list = (what: string, prefix: string | undefined, bucketArn = BUCKET_ARN): Request => ({
  what,
  action: "s3:ListBucket",
  resource: bucketArn,
  context: prefix === undefined ? TLS : { ...TLS, "s3:prefix": prefix },
});
const onObject = (what: string, action: string, key: string, bucketArn = BUCKET_ARN, context: Record<string, string> = TLS): Request => ({
  what,
  action,
  resource: object(key, bucketArn),
  context,
});
const onBucket = (what: string, action: string, bucketArn = BUCKET_ARN): Request => ({ what, action, resource: bucketArn, context: TLS });
const onKey = (what: string, action: string, context: Record<string, string>, keyArn = KEY_ARN): Request => ({ what, action, resource: keyArn, context });

/** The policies AWS evaluates for a request: the caller's identity policy and the resource's own policy. */
function simulation(principal: string, identityPolicy: unknown, r: Request): Simulation {
  const resourcePolicy = r.action.startsWith("kms:")
    ? r.resource === KEY_ARN
      ? accountKeyPolicy("aws", ACCOUNT)
      : undefined
    : r.resource.startsWith(BUCKET_ARN)
      ? tlsOnlyBucketPolicy(BUCKET_ARN)
      : undefined;
  return {
    request: { principal, action: r.action, resource: { resource: r.resource, accountId: ACCOUNT }, contextVariables: r.context },
    identityPolicies: [{ name: "role-policy", policy: identityPolicy }],
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(resourcePolicy ? { resourcePolicy } : {}),
  };
}

async function evaluate(principal: string, identityPolicy: unknown, r: Request): Promise<Outcome> {
  const result = await runSimulation(simulation(principal, identityPolicy, r), {});
  assert.notEqual(result.resultType, "error", `${r.what}: the simulation is valid (${result.resultType === "error" ? result.errors.message : ""})`);
  assert.equal(result.resultType, "single", r.what);
  if (result.resultType !== "single") throw new Error("unreachable");
  // A context key the action does not take would be dropped silently and prove nothing.
  assert.deepEqual(result.result.ignoredContextKeys ?? [], [], `${r.what}: every context key applies to ${r.action}`);
  return result.overallResult;
}

function expect(principal: string, identityPolicy: () => unknown, outcome: Outcome, requests: Request[]) {
  for (const r of requests) {
    it(`${outcome === "Allowed" ? "allows" : outcome === "ExplicitlyDenied" ? "explicitly denies" : "denies"} ${r.what}`, async () => {
      assert.equal(await evaluate(principal, identityPolicy(), r), outcome, `${r.what} (${r.action} on ${r.resource})`);
    });
  }
}

/** Requests over plain HTTP or old TLS: the bucket policy's Deny wins over any Allow. */
const insecure = (r: Request): Request[] => [
  { ...r, what: `${r.what} over plain HTTP`, context: { ...r.context, "aws:SecureTransport": "false" } },
  { ...r, what: `${r.what} over TLS 1.1`, context: { ...r.context, "s3:TlsVersion": "1.1" } },
];

describe("model repository IAM, evaluated by an IAM simulator", () => {
  describe("the reader role (Triton, through IRSA)", () => {
    const policy = () => modelReadPolicy(ACCESS);

    describe("what Triton sends when it loads s3://<bucket>/models", () => {
      expect(READER, policy, "Allowed", [
        list("HeadBucket (CheckClient, and the start of every IsDirectory)", undefined),
        list("ListObjectsV2 Prefix=models/ (the repository's GetDirectoryContents)", "models/"),
        list("ListObjectsV2 Prefix=models/resnet/ (IsDirectory of one model's folder)", "models/resnet/"),
        list("ListObjectsV2 Prefix=models/resnet/1/ (a version folder, LocalizePath)", "models/resnet/1/"),
        list("ListObjectsV2 Prefix=models/resnet/config.pbtxt/ (IsDirectory of a file, in FileExists)", "models/resnet/config.pbtxt/"),
        onObject("HeadObject models/resnet/config.pbtxt (FileExists, FileModificationTime)", "s3:GetObject", "models/resnet/config.pbtxt"),
        onObject("GetObject models/resnet/config.pbtxt (ReadTextFile)", "s3:GetObject", "models/resnet/config.pbtxt"),
        onObject("GetObject models/resnet/1/model.onnx (LocalizePath)", "s3:GetObject", "models/resnet/1/model.onnx"),
        onKey("kms:Decrypt through S3 (GetObject of an SSE-KMS object)", "kms:Decrypt", VIA_S3),
      ]);
    });

    describe("writes, deletes and configuration", () => {
      expect(READER, policy, "ImplicitlyDenied", [
        onObject("PutObject models/resnet/1/model.onnx", "s3:PutObject", "models/resnet/1/model.onnx"),
        onObject("DeleteObject models/resnet/1/model.onnx", "s3:DeleteObject", "models/resnet/1/model.onnx"),
        onObject("DeleteObject of a version (s3:DeleteObjectVersion)", "s3:DeleteObjectVersion", "models/resnet/1/model.onnx"),
        onObject("GetObject of an older version (s3:GetObjectVersion)", "s3:GetObjectVersion", "models/resnet/1/model.onnx"),
        onBucket("PutBucketPolicy", "s3:PutBucketPolicy"),
        onBucket("DeleteBucketPolicy", "s3:DeleteBucketPolicy"),
        onBucket("PutBucketVersioning (suspending it)", "s3:PutBucketVersioning"),
        onBucket("DeleteBucket", "s3:DeleteBucket"),
      ]);
    });

    describe("other prefixes and other buckets", () => {
      expect(READER, policy, "ImplicitlyDenied", [
        onObject("GetObject other/secret.bin", "s3:GetObject", "other/secret.bin"),
        onObject("GetObject models-private/weights.bin (a sibling whose name starts with the prefix)", "s3:GetObject", "models-private/weights.bin"),
        onObject("GetObject models (the prefix's own key, outside <prefix>/*)", "s3:GetObject", "models"),
        list("ListObjectsV2 Prefix=other/", "other/"),
        list("ListObjectsV2 Prefix=models-private/", "models-private/"),
        list("ListObjectsV2 Prefix=models (no slash: would match models-private/ too)", "models"),
        list("ListObjectsV2 Prefix= (present and empty)", ""),
        list("HeadBucket of another bucket", undefined, OTHER_BUCKET_ARN),
        list("ListObjectsV2 Prefix=models/ of another bucket", "models/", OTHER_BUCKET_ARN),
        onObject("GetObject models/resnet/config.pbtxt of another bucket", "s3:GetObject", "models/resnet/config.pbtxt", OTHER_BUCKET_ARN),
      ]);
    });

    describe("the key outside S3", () => {
      expect(READER, policy, "ImplicitlyDenied", [
        onKey("kms:Decrypt called directly (no kms:ViaService)", "kms:Decrypt", {}),
        onKey("kms:Decrypt through another service", "kms:Decrypt", { "kms:ViaService": `secretsmanager.${REGION}.amazonaws.com` }),
        onKey("kms:Decrypt through S3 in another region", "kms:Decrypt", { "kms:ViaService": "s3.eu-west-1.amazonaws.com" }),
        onKey("kms:GenerateDataKey through S3 (encrypting is writing)", "kms:GenerateDataKey", VIA_S3),
        onKey("kms:Decrypt of another key through S3", "kms:Decrypt", VIA_S3, OTHER_KEY_ARN),
        onKey("kms:ScheduleKeyDeletion", "kms:ScheduleKeyDeletion", {}),
        onKey("kms:PutKeyPolicy", "kms:PutKeyPolicy", {}),
      ]);
    });

    describe("without TLS 1.2 or later", () => {
      expect(READER, policy, "ExplicitlyDenied", [
        ...insecure(list("HeadBucket", undefined)),
        ...insecure(list("ListObjectsV2 Prefix=models/", "models/")),
        ...insecure(onObject("GetObject models/resnet/1/model.onnx", "s3:GetObject", "models/resnet/1/model.onnx")),
      ]);
    });

    describe("what allowing HeadBucket costs", () => {
      // IAM cannot tell HeadBucket from a listing without Prefix (policies.ts listStatements): the
      // reader can list every key name in the bucket, and still read only the prefix's objects.
      expect(READER, policy, "Allowed", [list("ListObjectsV2 without Prefix (the whole bucket's key names)", undefined)]);
      expect(READER, policy, "ImplicitlyDenied", [onObject("GetObject of a key that listing shows outside the prefix", "s3:GetObject", "other/secret.bin")]);
    });
  });

  describe("the publisher role (the CI)", () => {
    const policy = () => modelPublishPolicy(ACCESS);

    describe("what `aws s3 sync|cp|rm` on s3://<bucket>/models/ sends", () => {
      expect(PUBLISHER, policy, "Allowed", [
        list("HeadBucket", undefined),
        list("ListObjectsV2 Prefix=models/ (sync compares the prefix)", "models/"),
        list("ListObjectsV2 Prefix=models/resnet/", "models/resnet/"),
        onObject("PutObject models/resnet/1/model.onnx (and the multipart upload's create, parts and complete)", "s3:PutObject", "models/resnet/1/model.onnx"),
        onObject("AbortMultipartUpload models/resnet/1/model.onnx", "s3:AbortMultipartUpload", "models/resnet/1/model.onnx"),
        onObject("DeleteObject models/resnet/2/model.onnx (sync --delete; versioning keeps the old version)", "s3:DeleteObject", "models/resnet/2/model.onnx"),
        onObject("GetObject models/resnet/config.pbtxt", "s3:GetObject", "models/resnet/config.pbtxt"),
        onKey("kms:GenerateDataKey through S3 (PutObject of an SSE-KMS object)", "kms:GenerateDataKey", VIA_S3),
        onKey("kms:Decrypt through S3 (multipart upload, GetObject)", "kms:Decrypt", VIA_S3),
      ]);
    });

    describe("writes elsewhere, history and configuration", () => {
      expect(PUBLISHER, policy, "ImplicitlyDenied", [
        onObject("PutObject other/x.bin", "s3:PutObject", "other/x.bin"),
        onObject("PutObject models-private/x.bin", "s3:PutObject", "models-private/x.bin"),
        onObject("DeleteObject other/x.bin", "s3:DeleteObject", "other/x.bin"),
        onObject("PutObject models/resnet/1/model.onnx in another bucket", "s3:PutObject", "models/resnet/1/model.onnx", OTHER_BUCKET_ARN),
        list("ListObjectsV2 Prefix=other/", "other/"),
        list("HeadBucket of another bucket", undefined, OTHER_BUCKET_ARN),
        onObject("DeleteObjectVersion (a permanent delete: no rollback left)", "s3:DeleteObjectVersion", "models/resnet/1/model.onnx"),
        onObject("PutObjectAcl", "s3:PutObjectAcl", "models/resnet/1/model.onnx"),
        onBucket("PutBucketPolicy", "s3:PutBucketPolicy"),
        onBucket("DeleteBucketPolicy", "s3:DeleteBucketPolicy"),
        onBucket("PutBucketVersioning (suspending it)", "s3:PutBucketVersioning"),
        onBucket("PutLifecycleConfiguration", "s3:PutLifecycleConfiguration"),
        onBucket("PutEncryptionConfiguration", "s3:PutEncryptionConfiguration"),
        onBucket("DeleteBucket", "s3:DeleteBucket"),
      ]);
    });

    describe("the key outside S3", () => {
      expect(PUBLISHER, policy, "ImplicitlyDenied", [
        onKey("kms:GenerateDataKey called directly", "kms:GenerateDataKey", {}),
        onKey("kms:Decrypt called directly", "kms:Decrypt", {}),
        onKey("kms:Encrypt through S3", "kms:Encrypt", VIA_S3),
        onKey("kms:GenerateDataKey of another key through S3", "kms:GenerateDataKey", VIA_S3, OTHER_KEY_ARN),
        onKey("kms:ScheduleKeyDeletion", "kms:ScheduleKeyDeletion", {}),
        onKey("kms:PutKeyPolicy", "kms:PutKeyPolicy", {}),
        onKey("kms:DisableKey", "kms:DisableKey", {}),
      ]);
    });

    describe("without TLS 1.2 or later", () => {
      expect(PUBLISHER, policy, "ExplicitlyDenied", [
        ...insecure(onObject("PutObject models/resnet/1/model.onnx", "s3:PutObject", "models/resnet/1/model.onnx")),
        ...insecure(onObject("DeleteObject models/resnet/1/model.onnx", "s3:DeleteObject", "models/resnet/1/model.onnx")),
      ]);
    });
  });

  describe("the publisher role with configs the stack owns (contracted models)", () => {
    // The stack writes models/resnet/config.pbtxt (a contract); models/bert is a bare name, its config the publisher's.
    const owned = [modelConfigKey("models", "resnet")];
    const policy = () => modelPublishPolicy(ACCESS, owned);

    describe("the stack's config: readable, never overwritten nor deleted", () => {
      expect(PUBLISHER, policy, "ExplicitlyDenied", [
        onObject("PutObject models/resnet/config.pbtxt (aws s3 sync of a folder with its own config)", "s3:PutObject", "models/resnet/config.pbtxt"),
        onObject("DeleteObject models/resnet/config.pbtxt (sync --delete)", "s3:DeleteObject", "models/resnet/config.pbtxt"),
      ]);
      expect(PUBLISHER, policy, "Allowed", [onObject("GetObject models/resnet/config.pbtxt", "s3:GetObject", "models/resnet/config.pbtxt")]);
    });

    describe("everything else the publisher did stays allowed", () => {
      expect(PUBLISHER, policy, "Allowed", [
        onObject("PutObject models/resnet/1/model.onnx (the contracted model's weights)", "s3:PutObject", "models/resnet/1/model.onnx"),
        onObject("PutObject models/resnet/labels.txt (a file beside the config)", "s3:PutObject", "models/resnet/labels.txt"),
        onObject("DeleteObject models/resnet/2/model.onnx", "s3:DeleteObject", "models/resnet/2/model.onnx"),
        onObject("PutObject models/bert/config.pbtxt (a bare-name model: the publisher owns its config)", "s3:PutObject", "models/bert/config.pbtxt"),
        onObject("PutObject models/resnet/config.pbtxt.bak (not the config's key)", "s3:PutObject", "models/resnet/config.pbtxt.bak"),
        onObject("AbortMultipartUpload models/resnet/1/model.onnx", "s3:AbortMultipartUpload", "models/resnet/1/model.onnx"),
      ]);
    });

    it("without owned configs the policy is the one before (no Deny statement)", () => {
      assert.deepEqual(modelPublishPolicy(ACCESS, []), modelPublishPolicy(ACCESS));
      assert.ok(!modelPublishPolicy(ACCESS).Statement.some((st) => st.Effect === "Deny"));
    });
  });

  describe("the key policy", () => {
    it("is what lets the roles' IAM grants count: a key policy that does not name the account refuses the reader's decrypt", async () => {
      const foreign = {
        Version: "2012-10-17",
        Statement: [{ Effect: "Allow", Principal: { AWS: "arn:aws:iam::210987654321:root" }, Action: "kms:*", Resource: "*" }],
      };
      const s = simulation(READER, modelReadPolicy(ACCESS), onKey("kms:Decrypt through S3", "kms:Decrypt", VIA_S3));
      const result = await runSimulation({ ...s, resourcePolicy: foreign }, {});
      assert.equal(result.resultType === "error" ? result.errors.message : result.overallResult, "ImplicitlyDenied");
    });
  });

  describe("the documents the prod plan carries are these builders' output", () => {
    it("reader, publisher, bucket policy and key policy", async function () {
      this.timeout(60_000);
      const rs = (await plan("prod")).resources;
      const bucket = one(rs, "aws:s3/bucket:Bucket");
      const bucketArn = bucketArnOf("aws", `${bucket.props.bucketPrefix}00000000000000000000000000`);
      const keyArn: string = one(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules[0]
        .applyServerSideEncryptionByDefault.kmsMasterKeyId;
      const access = { bucketArn, prefix: "models", kmsKeyArn: keyArn, region: REGION };
      const doc = (type: string, name?: string) => JSON.parse(one(rs, type, name).props.policy as string);
      assert.deepEqual(doc("aws:iam/rolePolicy:RolePolicy", "model-repository-reader"), modelReadPolicy(access));
      assert.deepEqual(doc("aws:iam/rolePolicy:RolePolicy", "model-repository-publisher"), modelPublishPolicy(access));
      assert.deepEqual(doc("aws:s3/bucketPolicy:BucketPolicy"), tlsOnlyBucketPolicy(bucketArn));
      assert.deepEqual(doc("aws:kms/key:Key", "model-repository-key"), accountKeyPolicy("aws", ACCOUNT));
      // The simulations above used these names: the planned bucket and key are the ones simulated.
      assert.equal(bucketArn, BUCKET_ARN);
      assert.equal(keyArn, KEY_ARN);
    });
  });
});
