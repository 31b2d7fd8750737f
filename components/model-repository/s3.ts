// The hardened bucket's settings as plain resource arguments (aws v7 splits them into one
import { modelConfigKey } from "./policies";
// resource per concern). Generic over the value type so tests pass strings and the
// component passes Outputs; either way the result is plain data.
import { REPLICATION_TIME_MINUTES, type DisasterRecoveryStrategy } from "./schema";

export interface BucketHardening<T> {
  versioning: { bucket: T; versioningConfiguration: { status: "Enabled" } };
  encryption: {
    bucket: T;
    rules: { applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms"; kmsMasterKeyId: T }; bucketKeyEnabled: boolean }[];
  };
  publicAccessBlock: { bucket: T; blockPublicAcls: true; blockPublicPolicy: true; ignorePublicAcls: true; restrictPublicBuckets: true };
  ownership: { bucket: T; rule: { objectOwnership: "BucketOwnerEnforced" } };
  lifecycle: {
    bucket: T;
    rules: {
      id: string;
      status: "Enabled";
      filter: Record<string, never>;
      noncurrentVersionExpiration: { noncurrentDays: number };
      abortIncompleteMultipartUpload: { daysAfterInitiation: number };
    }[];
  };
}

/** Days after which an unfinished multipart upload (a half-pushed model) is removed. */
export const ABORT_MULTIPART_DAYS = 7;

export function bucketHardening<T>(bucket: T, kmsKeyArn: T, noncurrentVersionDays: number): BucketHardening<T> {
  return {
    // Versioning: an overwritten or deleted model version can be restored (rollback of a bad push).
    versioning: { bucket, versioningConfiguration: { status: "Enabled" } },
    encryption: {
      bucket,
      rules: [
        {
          // SSE-KMS with our key: reading needs kms:Decrypt too, so a leaked S3-only grant is not enough.
          applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: kmsKeyArn },
          // Bucket key: Triton loads thousands of files at start-up; per-object KMS calls would throttle and cost.
          bucketKeyEnabled: true,
        },
      ],
    },
    // All four blocks: no ACL or policy can ever make model weights public.
    publicAccessBlock: { bucket, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true },
    // BucketOwnerEnforced disables ACLs: objects the CI uploads belong to the bucket owner, access is IAM only.
    ownership: { bucket, rule: { objectOwnership: "BucketOwnerEnforced" } },
    lifecycle: {
      bucket,
      rules: [
        {
          id: "expire-noncurrent-versions",
          status: "Enabled",
          // Empty filter: the whole bucket.
          filter: {},
          // Old versions are kept long enough to roll back, not forever (model weights are large).
          noncurrentVersionExpiration: { noncurrentDays: noncurrentVersionDays },
          abortIncompleteMultipartUpload: { daysAfterInitiation: ABORT_MULTIPART_DAYS },
        },
      ],
    },
  };
}

/** What Triton's --model-repository takes for an S3 repository. */
export function s3ModelRepositoryUri(bucket: string, prefix: string): string {
  return `s3://${bucket}/${prefix}`;
}

/**
 * Environment Triton needs to read the bucket: AWS_DEFAULT_REGION only when the bucket
 * is not in the cluster's region (the SDK would otherwise address the wrong regional endpoint).
 */
export function s3ReaderEnv(bucketRegion: string, clusterRegion: string): { name: string; value: string }[] {
  return bucketRegion === clusterRegion ? [] : [{ name: "AWS_DEFAULT_REGION", value: bucketRegion }];
}

/** Tags a republish choice leaves on the bucket: what the recovery relies on, where the pack and an auditor read it. */
export const DISASTER_RECOVERY_TAG = "triton-platform:disaster-recovery";
export const RECOVERY_TIME_TAG = "triton-platform:recovery-time-hours";

/** The replica bucket's prefix: the source's with "dr-", within the 37 characters a bucket prefix may have. */
export function replicaBucketPrefix(bucketPrefix: string): string {
  return `${bucketPrefix.slice(0, 37 - "dr-".length)}dr-`;
}

/**
 * The source bucket's replication rule (aws.s3.BucketReplicationConfig, @pulumi/aws 7.48 inputs):
 * the model prefix, SSE-KMS objects included and re-encrypted with the replica's key, delete
 * markers replicated (the replica mirrors what Triton reads; versions stay recoverable in both),
 * Replication Time Control with its metrics, so the replica is current within 15 minutes.
 */
export function replicationConfig<T>(a: { bucket: T; role: T; replicaBucketArn: T; replicaKmsKeyArn: T; prefix: string }) {
  return {
    bucket: a.bucket,
    role: a.role,
    rules: [
      {
        id: "replicate-models",
        status: "Enabled",
        priority: 1,
        // A filter (the V2 schema) requires deleteMarkerReplication.
        filter: { prefix: `${a.prefix}/` },
        deleteMarkerReplication: { status: "Enabled" },
        // SSE-KMS objects are replicated only when asked (S3 user guide, "Replicating encrypted objects").
        sourceSelectionCriteria: { sseKmsEncryptedObjects: { status: "Enabled" } },
        destination: {
          bucket: a.replicaBucketArn,
          encryptionConfiguration: { replicaKmsKeyId: a.replicaKmsKeyArn },
          replicationTime: { status: "Enabled", time: { minutes: REPLICATION_TIME_MINUTES } },
          // Replication Time Control requires its metrics (S3 API PutBucketReplication, Metrics).
          metrics: { status: "Enabled", eventThreshold: { minutes: REPLICATION_TIME_MINUTES } },
        },
      },
    ],
  };
}

/** The bucket the stack creates (a unique name from the prefix). */
export function bucketArgs(bucketPrefix: string, disasterRecovery?: { strategy: DisasterRecoveryStrategy; recoveryTimeHours?: number }) {
  // A republish choice is stated on the bucket it would rebuild (a replica states itself: the replication configuration).
  const tags =
    disasterRecovery?.strategy === "republish"
      ? { tags: { [DISASTER_RECOVERY_TAG]: "republish", [RECOVERY_TIME_TAG]: String(disasterRecovery.recoveryTimeHours) } }
      : {};
  // forceDestroy false: `pulumi destroy` fails on a non-empty bucket instead of deleting the models.
  return { bucketPrefix, forceDestroy: false, ...tags };
}

/** ARN of a bucket given by name (s3.existingBucket): S3 ARNs carry no region or account. */
export function bucketArn(partition: string, bucket: string): string {
  return `arn:${partition}:s3:::${bucket}`;
}

/**
 * A contracted model's config.pbtxt as an S3 object the stack owns (aws.s3.BucketObjectv2), at
 * <prefix>/<model>/config.pbtxt, encrypted like the bucket's default (SSE-KMS with the repository's
 * key, bucket key on) and stated on the object so it never depends on the default being in place first.
 */
export function modelConfigObjectArgs<T>(bucket: T, prefix: string, config: { readonly model: string; readonly text: string }, kmsKeyArn: T) {
  return {
    bucket,
    key: modelConfigKey(prefix, config.model),
    content: config.text,
    contentType: "text/plain; charset=utf-8",
    serverSideEncryption: "aws:kms",
    kmsKeyId: kmsKeyArn,
    bucketKeyEnabled: true,
  };
}
