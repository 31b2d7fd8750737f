// The model repository's settings: the stack file's `modelRepository` section and the
// arguments of a ModelRepository used directly resolve through this one module, so each
// default, rule and description is written once, here. Runtime-free (no Pulumi SDK):
// config/ composes it, and loadConfig tests need not load the SDK.
import type * as pulumi from "@pulumi/pulumi";
import * as v from "valibot";
import { SettingsError, show, type SettingProblem } from "../../lib/errors";
import { bool, checkSettings, type DeepReadonly, dnsLabel, doc, integer, list, oneOf, pattern, refined, section, uniqueList } from "../../lib/schema";
import { KMS_KEY_ARN, kmsKeyRegion } from "./policies";
// One region rule for every region-valued key (aws:region's, from @pulumi/aws's Region list).
import { awsRegion } from "../cluster/schema";

export const MODEL_REPOSITORY_BACKENDS = ["s3", "efs"] as const;
export type ModelRepositoryBackend = (typeof MODEL_REPOSITORY_BACKENDS)[number];
export const EFS_THROUGHPUT_MODES = ["elastic", "bursting"] as const;
/** How the models come back when the bucket's region is lost: a replica the stack keeps, or the publisher's own source. */
export const DISASTER_RECOVERY_STRATEGIES = ["replicate", "republish"] as const;
export type DisasterRecoveryStrategy = (typeof DISASTER_RECOVERY_STRATEGIES)[number];
/**
 * S3 Replication Time Control's commitment: 99.99% of new objects replicated within 15 minutes
 * (S3 user guide, "Meeting compliance requirements with S3 Replication Time Control"); the
 * replication rule states it (destination.replicationTime.time.minutes, the only value S3 takes).
 */
export const REPLICATION_TIME_MINUTES = 15;
export type EfsThroughputMode = (typeof EFS_THROUGHPUT_MODES)[number];

/**
 * Prefix of the bucket the stack creates. Not a `v.optional` default: it applies only when no
 * existingBucket is given, and the rule that the two exclude each other must see what was written.
 */
export const DEFAULT_BUCKET_PREFIX = "triton-models-";

const kmsKeyArn = pattern(KMS_KEY_ARN, "must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>); an alias cannot scope kms:Decrypt");
const iamPrincipalArn = pattern(
  /^arn:aws[a-z-]*:iam::\d{12}:(root|role\/[\w+=,.@/-]{1,512}|user\/[\w+=,.@/-]{1,512})$/,
  "must be an IAM role, user or account-root ARN",
);
const subnetId = pattern(/^subnet-([0-9a-f]{8}|[0-9a-f]{17})$/, "must be a subnet ID such as subnet-0a1b2c3d4e5f67890");

/** The rule a replica in the bucket's own region breaks; one wording for the schema's check and the resolver's. */
export function replicaRegionRule(bucketRegion: string): string {
  return `must be another region than the bucket's ${bucketRegion} (a replica in the same region is lost with it)`;
}

/** The rule a KMS key outside the data's region breaks; one wording for the schema's check and the resolver's. */
export function kmsKeyRegionRule(backend: ModelRepositoryBackend, dataRegion: string): string {
  return backend === "s3"
    ? `must be a key in the bucket's region ${dataRegion} (SSE-KMS keys are regional)`
    : `must be a key in the file system's region ${dataRegion} (EFS encrypts with a key of its own region)`;
}

const disasterRecoverySection = section({
  strategy: doc(
    oneOf(DISASTER_RECOVERY_STRATEGIES),
    "replicate: the stack replicates the model prefix to a bucket it creates in replicaRegion (versioned, SSE-KMS with a key of that " +
      "region, Replication Time Control); republish: the publisher's CI re-publishes every model from its source into a new bucket, in " +
      "recoveryTimeHours. Required in prod (policy s3-model-bucket-disaster-recovery).",
  ),
  replicaRegion: doc(v.optional(awsRegion), "Region of the replica bucket and its key (replicate only, and required there): not the bucket's own region."),
  recoveryTimeHours: doc(
    v.optional(integer({ min: 1, max: 720 })),
    "Hours the publisher's CI takes to re-publish every model from its source (republish only, and required there): the recovery time " +
      "this stack accepts, recorded on the bucket (tag triton-platform:recovery-time-hours).",
  ),
});

const s3Section = section({
  bucketPrefix: doc(
    v.optional(pattern(/^[a-z0-9][a-z0-9-]{0,36}$/, "must be 1-37 lower-case letters, digits or '-' (a bucket name prefix)")),
    "Prefix of the bucket the stack creates (AWS appends a unique suffix). No dots: they break TLS on virtual-hosted addressing. " + "Not with existingBucket.",
    { default: `${JSON.stringify(DEFAULT_BUCKET_PREFIX)} when the stack creates the bucket (no existingBucket)` },
  ),
  existingBucket: doc(
    v.optional(pattern(/^(?!xn--)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "must be an S3 bucket name (3-63 lower-case letters, digits, '.' and '-')")),
    "An existing bucket to read instead of creating one: no bucket and no key are created, and the bucket's hardening is its " +
      "owner's job; the roles and the ServiceAccount are scoped to it and to kmsKeyArn (required with it).",
  ),
  bucketRegion: doc(
    v.optional(awsRegion),
    "Region of the bucket (and of its key). When it is not the cluster's, the bucket and key are created there (aws v7 " +
      "per-resource region) and Triton gets AWS_DEFAULT_REGION=<bucketRegion>.",
    { default: "the cluster's region (aws:region)" },
  ),
  noncurrentVersionDays: doc(
    v.optional(integer({ min: 1, max: 3650 }), 30),
    "Days a replaced or deleted model object version is kept: long enough to roll back a bad push, not forever (weights are large).",
  ),
  publisher: doc(
    v.optional(
      section({
        enabled: doc(v.optional(bool(), false), "Create the publisher role: put/get/delete on the model prefix and kms:GenerateDataKey/Decrypt."),
        trustedPrincipalArns: doc(
          v.optional(list(iamPrincipalArn, { min: 1, what: "principal ARN" })),
          "Principals (IAM role, user or account-root ARNs) allowed to assume the publisher role, e.g. the CI's role; needs enabled: true.",
          { default: "the account root (whoever the account's IAM policies allow)" },
        ),
      }),
      {},
    ),
    "Optional role the CI assumes to upload models (write to the model prefix only, never the bucket's configuration).",
  ),
  disasterRecovery: doc(
    v.optional(disasterRecoverySection),
    "How the models come back when the bucket's region is lost (docs/model-repository.md, Disaster recovery). Required in prod.",
    { default: "not stated (refused in prod by the policy pack)" },
  ),
});

const efsSection = section({
  subnetIds: doc(
    uniqueList(subnetId, { min: 1, what: "subnet" }, "must not repeat a subnet"),
    "One mount target per subnet: a subnet in every zone the GPU nodes run in (distinct subnet IDs). Required for the efs backend.",
  ),
  throughputMode: doc(
    v.optional(oneOf(EFS_THROUGHPUT_MODES), "elastic"),
    "Throughput mode of the file system: elastic serves a rollout where every pod reads the weights at once, a burst that " +
      "bursting-mode credits of a small file system cannot serve.",
  ),
});

/** The section as written, with its rules between keys (they read what was written, before derived defaults). */
const written = refined(
  section({
    backend: doc(
      v.optional(oneOf(MODEL_REPOSITORY_BACKENDS), "s3"),
      "Where the models live: s3 (a hardened bucket read through an IRSA role) or efs (an encrypted EFS file system mounted read-only over NFS).",
    ),
    modelPrefix: doc(
      v.optional(
        pattern(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/, "must be a relative path of letters, digits and . _ - separated by '/' (no leading or trailing '/')"),
        "models",
      ),
      "Folder of the model repository in the bucket / on the file system (relative path, no leading or trailing '/').",
    ),
    serviceAccountName: doc(
      v.optional(dnsLabel, "triton"),
      "ServiceAccount the Triton pods run as, in the Triton namespace (for s3, the only identity the IRSA reader role trusts).",
    ),
    kmsKeyArn: doc(
      v.optional(kmsKeyArn),
      "KMS key (an ARN, not an alias) that encrypts the bucket or file system; in the data's region. Required with s3.existingBucket.",
      { default: "a key the stack creates (builders.ts kmsKeyArgs), with an alias" },
    ),
    s3: doc(v.optional(s3Section), "S3 backend settings (only with backend s3).", { default: "the defaults of its keys, when backend is s3" }),
    efs: doc(v.optional(efsSection), "EFS backend settings (only with backend efs, and required there)."),
  }),
  (mr, ctx) => {
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
    const dr = mr.s3?.disasterRecovery;
    if (dr?.strategy === "replicate") {
      if (dr.replicaRegion === undefined)
        ctx.addIssue({ path: ["s3", "disasterRecovery", "replicaRegion"], message: 'is required when strategy is "replicate" (the replica bucket\'s region)' });
      if (dr.recoveryTimeHours !== undefined)
        ctx.addIssue({
          path: ["s3", "disasterRecovery", "recoveryTimeHours"],
          message: 'applies only when strategy is "republish" (a replica is current within Replication Time Control\'s 15 minutes)',
        });
      if (mr.s3?.existingBucket !== undefined)
        ctx.addIssue({
          path: ["s3", "disasterRecovery", "strategy"],
          message: 'cannot be "replicate" with s3.existingBucket (an existing bucket\'s replication is its owner\'s configuration); use "republish"',
        });
      if (dr.replicaRegion !== undefined && dr.replicaRegion === mr.s3?.bucketRegion)
        ctx.addIssue({ path: ["s3", "disasterRecovery", "replicaRegion"], message: replicaRegionRule(dr.replicaRegion) });
    }
    if (dr?.strategy === "republish") {
      if (dr.recoveryTimeHours === undefined)
        ctx.addIssue({
          path: ["s3", "disasterRecovery", "recoveryTimeHours"],
          message: 'is required when strategy is "republish" (the hours the publisher takes to re-publish every model: the recovery time)',
        });
      if (dr.replicaRegion !== undefined)
        ctx.addIssue({ path: ["s3", "disasterRecovery", "replicaRegion"], message: 'applies only when strategy is "replicate" (republish keeps no replica)' });
    }
    // An explicit bucket region is checked here; the cluster's region (its default) in resolveModelRepositoryArgs.
    const keyRegion = mr.kmsKeyArn && kmsKeyRegion(mr.kmsKeyArn);
    if (keyRegion && mr.backend === "s3" && mr.s3?.bucketRegion && keyRegion !== mr.s3.bucketRegion) {
      ctx.addIssue({ path: ["kmsKeyArn"], message: kmsKeyRegionRule("s3", mr.s3.bucketRegion) });
    }
  },
);

type Written = v.InferOutput<typeof written>;
type WrittenS3 = v.InferOutput<typeof s3Section>;
type Common = Omit<Written, "backend" | "s3" | "efs">;

/** The bucket part: an existing bucket, or the prefix of the one the stack creates (with its default). */
function s3Defaults({ bucketPrefix, existingBucket, ...rest }: WrittenS3) {
  return existingBucket !== undefined
    ? { ...rest, existingBucket, bucketPrefix: undefined }
    : { ...rest, existingBucket, bucketPrefix: bucketPrefix ?? DEFAULT_BUCKET_PREFIX };
}

/**
 * The defaults that depend on other keys, applied once the rules passed: the backend's own
 * section (an absent s3 section gets its keys' defaults), the created bucket's prefix. The
 * result parses to itself, so a resolved stack config can be handed to the component as is.
 */
function withDerivedDefaults({
  s3,
  efs,
  ...common
}: Written):
  | (Common & { backend: "s3"; s3: ReturnType<typeof s3Defaults>; efs?: undefined })
  | (Common & { backend: "efs"; efs: v.InferOutput<typeof efsSection>; s3?: undefined }) {
  if (common.backend === "efs") {
    if (efs === undefined) throw new Error("unreachable: the efs section is required for the efs backend");
    return { ...common, backend: "efs" as const, efs };
  }
  return { ...common, backend: "s3" as const, s3: s3Defaults(s3 ?? v.parse(s3Section, {})) };
}

/** The `modelRepository` section of the stack file, and the settings of a ModelRepository used directly. */
export const modelRepositorySettings = doc(
  v.pipe(written, v.transform(withDerivedDefaults)),
  "Where Triton's models live (S3 or EFS) and how it reads them (components/model-repository).",
);

/** The settings as a stack file or a direct caller writes them. */
export type ModelRepositorySettingsInput = v.InferInput<typeof modelRepositorySettings>;
/** The settings with every default applied: s3 or efs, with that backend's section. */
export type ModelRepositorySettings = v.InferOutput<typeof modelRepositorySettings>;
export type S3ModelRepositorySettings = Extract<ModelRepositorySettings, { backend: "s3" }>;
export type EfsModelRepositorySettings = Extract<ModelRepositorySettings, { backend: "efs" }>;

/** What the component takes besides its settings: references to the cluster and the stack's labels. */
export interface ModelRepositoryReferences {
  /** Namespace of the Triton pods: the ServiceAccount (and the EFS claim) live there. */
  readonly namespace: pulumi.Input<string>;
  /** Standard labels for the Kubernetes objects. */
  readonly labels: Record<string, string>;
  /** The cluster's (and the stack's) region. */
  readonly clusterRegion: string;
  /** OIDC issuer URL of the cluster, for the IRSA trust policy. */
  readonly oidcIssuerUrl: pulumi.Input<string>;
  /** VPC of the cluster (efs backend: the mount targets' security group). */
  readonly vpcId?: pulumi.Input<string>;
  /** Security group of the GPU nodes: the only source admitted to NFS (efs backend). */
  readonly nodeSecurityGroupId?: pulumi.Input<string>;
}

/** Readonly all the way down: a caller may pass frozen or `as const` settings. */

/** Arguments of a ModelRepository: its settings (defaults and rules in modelRepositorySettings) and the references. */
export type ModelRepositoryArgs = DeepReadonly<ModelRepositorySettingsInput> & ModelRepositoryReferences;

type Resolved<S, Refs> = S &
  Omit<ModelRepositoryReferences, keyof Refs> &
  Refs & {
    /** Region of the models: the bucket's (s3) or the cluster's (efs, mounted in-region). */
    readonly dataRegion: string;
  };
/** The resolved arguments: every default applied, the references passed through (narrowed by backend). */
export type ResolvedModelRepositoryArgs =
  | Resolved<Omit<S3ModelRepositorySettings, "s3"> & { s3: S3ModelRepositorySettings["s3"] & { bucketRegion: string } }, object>
  | Resolved<EfsModelRepositorySettings, { readonly vpcId: pulumi.Input<string>; readonly nodeSecurityGroupId: pulumi.Input<string> }>;

/**
 * Apply the defaults and rules of the schema once, then the rules that read the references;
 * every problem is reported in one SettingsError.
 */
export function resolveModelRepositoryArgs(args: ModelRepositoryArgs, name?: string): ResolvedModelRepositoryArgs {
  const { namespace, labels, clusterRegion, oidcIssuerUrl, vpcId, nodeSecurityGroupId, ...settings } = args;
  // checkSettings, not parseSettings: the rules below read references (not settings), and
  // their problems are reported together with the schema's.
  const parsed = checkSettings(modelRepositorySettings, settings);
  const problems: SettingProblem[] = parsed.success ? [] : [...parsed.problems];
  const refs = { namespace, labels, clusterRegion, oidcIssuerUrl };
  let resolved: ResolvedModelRepositoryArgs | undefined;
  // The backend as resolved, or as written when other keys are broken: its references are checked either way.
  if ((parsed.success ? parsed.output.backend : settings.backend) === "efs") {
    if (vpcId === undefined) {
      problems.push({ key: "vpcId", rule: "is required for the efs backend (the mount targets' security group)", value: { shown: show(vpcId) } });
    }
    if (nodeSecurityGroupId === undefined) {
      problems.push({ key: "nodeSecurityGroupId", rule: "is required for the efs backend (the only NFS source)", value: { shown: show(nodeSecurityGroupId) } });
    }
    if (parsed.success && parsed.output.backend === "efs" && vpcId !== undefined && nodeSecurityGroupId !== undefined) {
      resolved = { ...parsed.output, ...refs, vpcId, nodeSecurityGroupId, dataRegion: clusterRegion };
    }
  } else if (parsed.success && parsed.output.backend === "s3") {
    const bucketRegion = parsed.output.s3.bucketRegion ?? clusterRegion;
    resolved = { ...parsed.output, s3: { ...parsed.output.s3, bucketRegion }, ...refs, vpcId, nodeSecurityGroupId, dataRegion: bucketRegion };
  }
  // The replica's region against the bucket's derived region (an explicit one is the schema's rule).
  const replicaRegion = resolved?.backend === "s3" ? resolved.s3.disasterRecovery?.replicaRegion : undefined;
  if (resolved?.backend === "s3" && replicaRegion !== undefined && replicaRegion === resolved.dataRegion) {
    problems.push({ key: "s3.disasterRecovery.replicaRegion", rule: replicaRegionRule(resolved.dataRegion), value: { shown: show(replicaRegion) } });
  }
  // SSE-KMS and EFS both need the key in the data's own region (here: also the derived one).
  if (resolved?.kmsKeyArn !== undefined && kmsKeyRegion(resolved.kmsKeyArn) !== resolved.dataRegion) {
    problems.push({ key: "kmsKeyArn", rule: kmsKeyRegionRule(resolved.backend, resolved.dataRegion), value: { shown: show(resolved.kmsKeyArn) } });
  }
  if (problems.length > 0 || resolved === undefined) {
    throw new SettingsError(`invalid arguments of ModelRepository${name === undefined ? "" : ` "${name}"`}`, problems);
  }
  return resolved;
}
