// The `modelRepository` section: where Triton's models live (S3 or EFS) and how it reads them,
// with the cross-field rules that name the key (an efs backend without subnets, ...).
import * as v from "valibot";
import { kmsKeyRegion } from "../components/model-repository/policies";
import { bool, dnsLabel, integer, list, oneOf, pattern, refined, section, uniqueList } from "../lib/schema";

const kmsKeyArn = pattern(
  /^arn:aws[a-z-]*:kms:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:key\/(mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/,
  "must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>); an alias cannot scope kms:Decrypt",
);
const iamPrincipalArn = pattern(
  /^arn:aws[a-z-]*:iam::\d{12}:(root|role\/[\w+=,.@/-]{1,512}|user\/[\w+=,.@/-]{1,512})$/,
  "must be an IAM role, user or account-root ARN",
);
const subnetId = pattern(/^subnet-([0-9a-f]{8}|[0-9a-f]{17})$/, "must be a subnet ID such as subnet-0a1b2c3d4e5f67890");

export const modelRepositorySection = refined(section({
  /** s3 (default) or efs (NFS). */
  backend: v.optional(oneOf(["s3", "efs"] as const), "s3"),
  /** Folder of the repository in the bucket / on the file system. @default "models" */
  modelPrefix: v.optional(pattern(
    /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/,
    "must be a relative path of letters, digits and . _ - separated by '/' (no leading or trailing '/')",
  ), "models"),
  /** ServiceAccount the Triton pods run as (IRSA for S3). @default "triton" */
  serviceAccountName: v.optional(dnsLabel, "triton"),
  /** Key that encrypts the bucket / file system. @default a key the stack creates */
  kmsKeyArn: v.optional(kmsKeyArn),
  s3: v.optional(section({
    /** Prefix of the bucket the stack creates; no dots (they break TLS on virtual-hosted addressing). */
    bucketPrefix: v.optional(pattern(/^[a-z0-9][a-z0-9-]{0,36}$/, "must be 1-37 lower-case letters, digits or '-' (a bucket name prefix)")),
    /** An existing bucket to read instead of creating one. */
    existingBucket: v.optional(pattern(/^(?!xn--)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be an S3 bucket name (3-63 lower-case letters, digits, '.' and '-')")),
    /** Region of the bucket. @default aws:region */
    bucketRegion: v.optional(pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, "must be an AWS region such as us-east-1")),
    /** Days a replaced or deleted model version is kept. @default 30 */
    noncurrentVersionDays: v.optional(integer({ min: 1, max: 3650 }), 30),
    /** Role for the CI that uploads models. */
    publisher: v.optional(section({
      enabled: v.optional(bool(), false),
      trustedPrincipalArns: v.optional(list(iamPrincipalArn, { min: 1, what: "principal ARN" })),
    })),
  })),
  efs: v.optional(section({
    /** One mount target per subnet: a subnet in each zone the GPU nodes use. */
    subnetIds: uniqueList(subnetId, { min: 1, what: "subnet" }, "must not repeat a subnet"),
    /** @default "elastic" */
    throughputMode: v.optional(oneOf(["elastic", "bursting"] as const), "elastic"),
  })),
}), (mr, ctx) => {
  const other = mr.backend === "s3" ? "efs" : "s3";
  if (mr[other] !== undefined) {
    ctx.addIssue({ path: [other], message: `applies only when backend is "${other}" (backend is "${mr.backend}")` });
  }
  if (mr.backend === "efs" && mr.efs === undefined) {
    ctx.addIssue({ path: ["efs", "subnetIds"], message: 'is required when backend is "efs" (one subnet per GPU zone for the mount targets)' });
  }
  if (mr.s3?.bucketPrefix !== undefined && mr.s3.existingBucket !== undefined) {
    ctx.addIssue({ path: ["s3", "existingBucket"], message: "cannot be combined with s3.bucketPrefix (use an existing bucket or create one, not both)" });
  }
  if (mr.s3?.existingBucket !== undefined && mr.kmsKeyArn === undefined) {
    ctx.addIssue({ path: ["kmsKeyArn"], message: "is required with s3.existingBucket (the reader role needs kms:Decrypt on the bucket's key)" });
  }
  if (mr.s3?.publisher?.trustedPrincipalArns !== undefined && !mr.s3.publisher.enabled) {
    ctx.addIssue({ path: ["s3", "publisher", "enabled"], message: "must be true when trustedPrincipalArns is set (otherwise no publisher role is created)" });
  }
  const keyRegion = mr.kmsKeyArn && kmsKeyRegion(mr.kmsKeyArn);
  if (keyRegion && mr.backend === "s3" && mr.s3?.bucketRegion && keyRegion !== mr.s3.bucketRegion) {
    ctx.addIssue({ path: ["kmsKeyArn"], message: `must be a key in the bucket's region ${mr.s3.bucketRegion} (SSE-KMS keys are regional)` });
  }
});
