// IAM and bucket policy documents of the model repository: pure functions of plain
// strings that return JSON-serialisable objects, so tests and the policy pack can read
// them without the Pulumi runtime.
import { IAM_POLICY_VERSION, type PolicyDocument, type PolicyStatement } from "../upstream/aws-iam";

/** A KMS key ARN (not an alias: an alias cannot scope kms:Decrypt, and the EBS CSI driver takes the full ARN). */
export const KMS_KEY_ARN =
  /^arn:aws[a-z-]*:kms:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:key\/(mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** Region part of a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>). */
export function kmsKeyRegion(arn: string): string | undefined {
  return arn.split(":")[3] || undefined;
}

export { irsaTrustPolicy, type PolicyDocument, type PolicyStatement } from "../upstream/aws-iam";

/** Object ARN pattern of a prefix: arn:aws:s3:::bucket/prefix/* (the prefix alone, never the bucket). */
export function prefixObjectsArn(bucketArn: string, prefix: string): string {
  return `${bucketArn}/${prefix}/*`;
}

/**
 * The s3:ListBucket grants on the bucket, for the two requests S3 authorises as s3:ListBucket
 * (S3 API reference, "Permissions" of HeadBucket and of ListObjectsV2). What Triton sends is in
 * triton-inference-server/core src/filesystem/implementations/s3.h (r25.01, unchanged to r25.12):
 *
 * - ListObjectsV2 with Prefix `<object>/` and no Delimiter (IsDirectory and GetDirectoryContents
 *   both AppendSlash): s3:prefix is that Prefix, so `<prefix>/*` is enough (`*` also matches the
 *   empty rest, so `<prefix>/` itself). The bare `<prefix>` is not granted: as a Prefix it would
 *   also list `<prefix>-other/…`, and no client of the repository needs it without the slash.
 * - HeadBucket, sent first by CheckClient and by every IsDirectory: it carries no s3:prefix, and a
 *   condition on a key the request lacks is false (IAM condition operators reference), so the
 *   prefix statement alone refused it and every model load got 403.
 *
 * The second statement is the narrowest one that admits HeadBucket, and it is not narrow: IAM
 * cannot tell HeadBucket from a ListObjectsV2 without a Prefix (neither has s3:prefix, and no
 * other key of theirs differs), so a `Null s3:prefix true` grant, like StringLikeIfExists or an
 * unconditional ListBucket, lets the role list every key name in the bucket. It lists names,
 * sizes and dates, never contents: GetObject stays on `<prefix>/*` and kms:Decrypt on the key via
 * S3. For the bucket the stack creates, every key is the model repository's, so nothing else is
 * revealed; with s3.existingBucket shared with other data, those keys' names become visible to
 * the role (a dedicated bucket avoids that). Kept as two statements rather than one IfExists
 * condition so the grant HeadBucket needs reads as what it is.
 */
function listStatements(a: BucketAccess): PolicyStatement[] {
  return [
    { Sid: "ListModelPrefix", Effect: "Allow", Action: "s3:ListBucket", Resource: a.bucketArn, Condition: { StringLike: { "s3:prefix": `${a.prefix}/*` } } },
    { Sid: "HeadBucket", Effect: "Allow", Action: "s3:ListBucket", Resource: a.bucketArn, Condition: { Null: { "s3:prefix": "true" } } },
  ];
}

/** kms:ViaService: the key is usable by this role only through S3 in the bucket's region, not directly. */
function viaS3(region: string): PolicyStatement["Condition"] {
  return { StringEquals: { "kms:ViaService": `s3.${region}.amazonaws.com` } };
}

export interface BucketAccess {
  /** arn:<partition>:s3:::<bucket> */
  readonly bucketArn: string;
  /** Model prefix inside the bucket, without leading or trailing '/'. */
  readonly prefix: string;
  /** The key the bucket encrypts with (SSE-KMS). */
  readonly kmsKeyArn: string;
  /** Region of the bucket (and of the key). */
  readonly region: string;
}

/** Read-only access for Triton: HeadBucket, list the prefix, get its objects, decrypt through S3. Nothing else, nowhere else. */
export function modelReadPolicy(a: BucketAccess): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      ...listStatements(a),
      // GetObject also authorises HeadObject (Triton's FileExists and FileModificationTime).
      { Sid: "ReadModels", Effect: "Allow", Action: "s3:GetObject", Resource: prefixObjectsArn(a.bucketArn, a.prefix) },
      { Sid: "DecryptModels", Effect: "Allow", Action: "kms:Decrypt", Resource: a.kmsKeyArn, Condition: viaS3(a.region) },
    ],
  };
}

/**
 * Write access for the CI that publishes models: the same prefix, plus put/delete and the
 * data key SSE-KMS needs for uploads. Never the bucket's configuration, never other prefixes.
 */
export function modelPublishPolicy(a: BucketAccess, stackOwnedKeys: readonly string[] = []): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      ...listStatements(a),
      {
        Sid: "WriteModels",
        Effect: "Allow",
        Action: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
        Resource: prefixObjectsArn(a.bucketArn, a.prefix),
      },
      { Sid: "EncryptModels", Effect: "Allow", Action: ["kms:GenerateDataKey", "kms:Decrypt"], Resource: a.kmsKeyArn, Condition: viaS3(a.region) },
      // The config.pbtxt of a contracted model is the stack's (rendered from the stack file): an explicit Deny wins over
      // WriteModels, so a publisher's push cannot replace or remove it (reading it stays allowed). Only when there are any:
      // a stack of bare names keeps the policy it had.
      ...(stackOwnedKeys.length
        ? [
            {
              Sid: "KeepStackOwnedConfigs",
              Effect: "Deny" as const,
              Action: ["s3:PutObject", "s3:DeleteObject"],
              Resource: stackOwnedKeys.map((k) => `${a.bucketArn}/${k}`),
            },
          ]
        : []),
    ],
  };
}

/** The S3 key of a model's config.pbtxt under the repository's prefix (Triton: <repository>/<model>/config.pbtxt). */
export function modelConfigKey(prefix: string, model: string): string {
  return `${prefix}/${model}/config.pbtxt`;
}

/**
 * Key policy of the key the stack creates: the one statement AWS KMS writes itself when a key is
 * created through the API without a policy ("Default key policy", AWS KMS developer guide,
 * key-policy-default.html): the account may allow the key's use with IAM policies. Written out so
 * that the stack owns it (a change made by hand shows in a preview) and the simulator tests
 * evaluate the policy the key has. Narrower statements belong in the roles (the reader's
 * kms:ViaService): a key policy without the account statement can lock every administrator out.
 */
export function accountKeyPolicy(partition: string, accountId: string): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [{ Sid: "EnableIamPolicies", Effect: "Allow", Principal: { AWS: `arn:${partition}:iam::${accountId}:root` }, Action: "kms:*", Resource: "*" }],
  };
}

/** The replication's two buckets: the source (the model repository) and the replica the stack creates in another region. */
export interface ReplicationAccess {
  readonly source: BucketAccess;
  /** The replica: its bucket ARN, its key (a key of its own region) and its region; the same prefix. */
  readonly replica: Omit<BucketAccess, "prefix">;
}

/**
 * The replication role's policy: what S3 needs to replicate the model prefix's SSE-KMS objects
 * to the replica (S3 user guide, "Setting up permissions for live replication" and "Replicating
 * encrypted objects": the example policies), nothing more. On the source: the bucket's
 * replication configuration and listing, and each object version's content, ACL and tags (what
 * S3 reads to replicate it), under the prefix only. On the replica: writing replicas, delete
 * markers and tags, under the prefix only. kms:Decrypt of the source key and kms:Encrypt of the
 * replica key, each through S3 in its own region only (kms:ViaService; no encryption-context
 * condition: with S3 Bucket Keys the context is the bucket's ARN, not the object's).
 */
export function replicationPolicy(a: ReplicationAccess): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      { Sid: "ReadReplicationConfiguration", Effect: "Allow", Action: ["s3:GetReplicationConfiguration", "s3:ListBucket"], Resource: a.source.bucketArn },
      {
        Sid: "ReadSourceVersions",
        Effect: "Allow",
        Action: ["s3:GetObjectVersionForReplication", "s3:GetObjectVersionAcl", "s3:GetObjectVersionTagging"],
        Resource: prefixObjectsArn(a.source.bucketArn, a.source.prefix),
      },
      {
        Sid: "WriteReplicas",
        Effect: "Allow",
        Action: ["s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags"],
        Resource: prefixObjectsArn(a.replica.bucketArn, a.source.prefix),
      },
      { Sid: "DecryptSource", Effect: "Allow", Action: "kms:Decrypt", Resource: a.source.kmsKeyArn, Condition: viaS3(a.source.region) },
      { Sid: "EncryptReplicas", Effect: "Allow", Action: "kms:Encrypt", Resource: a.replica.kmsKeyArn, Condition: viaS3(a.replica.region) },
    ],
  };
}

/** Who may assume the replication role: the S3 service only (S3 user guide, the replication role's trust policy). */
export function replicationTrustPolicy(): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [{ Sid: "S3Replication", Effect: "Allow", Principal: { Service: "s3.amazonaws.com" }, Action: "sts:AssumeRole" }],
  };
}

/** Who may assume the publisher role: the given principals (e.g. the CI's role). */
export function publisherTrustPolicy(principalArns: string[]): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [{ Sid: "ModelPublishers", Effect: "Allow", Principal: { AWS: principalArns }, Action: "sts:AssumeRole" }],
  };
}

/**
 * Bucket policy: refuse every request that is not TLS (aws:SecureTransport false) or uses
 * TLS older than 1.2, whoever makes it. Deny statements cannot grant anything, so this
 * policy does not make the bucket public.
 */
export function tlsOnlyBucketPolicy(bucketArn: string): PolicyDocument {
  const resources = [bucketArn, `${bucketArn}/*`];
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      {
        Sid: "DenyInsecureTransport",
        Effect: "Deny",
        Principal: "*",
        Action: "s3:*",
        Resource: resources,
        Condition: { Bool: { "aws:SecureTransport": "false" } },
      },
      {
        Sid: "DenyOutdatedTls",
        Effect: "Deny",
        Principal: "*",
        Action: "s3:*",
        Resource: resources,
        Condition: { NumericLessThan: { "s3:TlsVersion": "1.2" } },
      },
    ],
  };
}
