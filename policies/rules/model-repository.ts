// Rules the model repository makes enforceable: a bucket that holds model weights is
// encrypted with KMS, versioned, never public and TLS-only; IAM never grants S3 actions on
// "*"; pods never carry static AWS keys (IRSA instead).
import type { PolicyResource } from "@pulumi/policy";
import { NODE_LABEL_ROLE, NODE_ROLE_GPU } from "../../components/contracts";
import { isGpuAmiType } from "../../components/upstream/eks";
import { containersOf, metadataOf, podSpecsOf, propsOf, securityGroupIngressOf, statementsOf, type PolicyDocument, type PropsOf } from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Rule } from "./rule";
import {
  BUCKET,
  BUCKET_ENCRYPTION,
  BUCKET_LIFECYCLE,
  BUCKET_LOGGING,
  BUCKET_OWNERSHIP_CONTROLS,
  BUCKET_POLICY,
  BUCKET_PUBLIC_ACCESS_BLOCK,
  BUCKET_REPLICATION,
  BUCKET_VERSIONING,
  EFS_ACCESS_POINT,
  EFS_FILE_SYSTEM,
  EFS_MOUNT_TARGET,
  LAUNCH_TEMPLATE,
  NODE_GROUP,
  SECURITY_GROUP,
} from "./types";
import { decodeJson, environmentsSchema, isTritonContainer, isWorkload, type EnvConfig } from "./util";
import { ENVIRONMENT_TAG } from "../../components/naming";
import { DISASTER_RECOVERY_TAG, RECOVERY_TIME_TAG } from "../../components/model-repository/s3";

type Bucket = PropsOf<typeof BUCKET>;
type BucketSettingType =
  | typeof BUCKET_ENCRYPTION
  | typeof BUCKET_VERSIONING
  | typeof BUCKET_PUBLIC_ACCESS_BLOCK
  | typeof BUCKET_POLICY
  | typeof BUCKET_OWNERSHIP_CONTROLS
  | typeof BUCKET_LIFECYCLE
  | typeof BUCKET_LOGGING
  | typeof BUCKET_REPLICATION;

/** Settings resources (aws v7: one per concern) that belong to a bucket: they depend on it, or name it; with their typed props. */
export function settingsOf<Type extends BucketSettingType>(
  resources: readonly PolicyResource[],
  bucket: PolicyResource,
  type: Type,
): { r: PolicyResource; props: PropsOf<Type> }[] {
  const name = (bucket.props as Bucket).bucket;
  return resources.flatMap((r) => {
    const props = propsOf(r, type);
    if (!props) return [];
    const belongs = r.dependencies.some((d) => d.urn === bucket.urn) || (name !== undefined && props.bucket === name);
    return belongs ? [{ r, props }] : [];
  });
}

function bucketLabel(b: PolicyResource): string {
  const name = (b.props as Bucket).bucket;
  return `S3 bucket ${b.name}${name ? ` (${name})` : ""}`;
}

/** A check over every bucket: at most one finding per bucket, reported on the bucket. */
function perBucket(check: (bucket: PolicyResource, props: Bucket, all: readonly PolicyResource[]) => Omit<Finding, "urn"> | undefined) {
  return (resources: readonly PolicyResource[]): Finding[] =>
    resources.flatMap((b) => {
      const props = propsOf(b, BUCKET);
      const problem = props && check(b, props, resources);
      return problem ? [{ ...problem, urn: b.urn }] : [];
    });
}

const KMS_ALGORITHMS: readonly unknown[] = ["aws:kms", "aws:kms:dsse"];

/** The names a bucket goes by in the stack: its own bucket input, and the bucket input of every settings resource that depends on it. */
function bucketNames(resources: readonly PolicyResource[], bucket: PolicyResource): Set<string> {
  const names = new Set<string>();
  const own = (bucket.props as Bucket).bucket;
  if (own) names.add(own);
  for (const r of resources) {
    const name = (r.props as { bucket?: unknown }).bucket;
    if (r.type.startsWith("aws:s3/") && typeof name === "string" && r.dependencies.some((d) => d.urn === bucket.urn)) names.add(name);
  }
  return names;
}

const LOG_DELIVERY = "logging.s3.amazonaws.com";

/** Is the bucket a server-access-log target? (a BucketLogging or inline logging names it, or its policy admits the log delivery service) */
function isLogTarget(resources: readonly PolicyResource[], bucket: PolicyResource): boolean {
  const names = bucketNames(resources, bucket);
  for (const r of resources) {
    const logging = propsOf(r, BUCKET_LOGGING);
    if (
      logging &&
      ((logging.targetBucket && names.has(logging.targetBucket)) || (r.dependencies.some((d) => d.urn === bucket.urn) && !names.has(String(logging.bucket))))
    )
      return true;
    const b: { loggings?: { targetBucket?: string }[]; logging?: { targetBucket?: string } } | undefined = propsOf(r, BUCKET);
    if (b && r !== bucket && [...(b.loggings ?? []), ...(b.logging ? [b.logging] : [])].some((l) => l.targetBucket !== undefined && names.has(l.targetBucket)))
      return true;
  }
  const policies = [decodeJson((bucket.props as Bucket).policy), ...settingsOf(resources, bucket, BUCKET_POLICY).map((p) => decodeJson(p.props.policy))];
  return policies.some((doc) =>
    statementsOf(doc).some(
      (s) => s?.Effect === "Allow" && ([] as unknown[]).concat((s.Principal as { Service?: unknown } | undefined)?.Service ?? []).includes(LOG_DELIVERY),
    ),
  );
}

export const s3BucketEncrypted = stackRule({
  name: "s3-bucket-encrypted",
  domain: "model-repository",
  description:
    "Every S3 bucket has default encryption with a KMS key (SSE-KMS) and the S3 bucket key on; a server-access-log target bucket may use " +
    "SSE-S3 (the only encryption log delivery supports).",
  prevents: "Model weights readable by anyone who obtains s3:GetObject alone; with SSE-KMS a reader also needs kms:Decrypt on the key.",
  remediationSteps:
    "Add an aws.s3.BucketServerSideEncryptionConfiguration for the bucket with applyServerSideEncryptionByDefault.sseAlgorithm " +
    '"aws:kms" and bucketKeyEnabled: true (components/model-repository/s3.ts bucketHardening).',
  check: perBucket((b, props, all) => {
    const inline = props.serverSideEncryptionConfiguration?.rule?.applyServerSideEncryptionByDefault?.sseAlgorithm;
    const logTarget = isLogTarget(all, b);
    // Server access log delivery supports only SSE-S3 on the target bucket (S3 User Guide, "Enabling Amazon S3 server access logging").
    const accepted = logTarget ? [...KMS_ALGORITHMS, "AES256"] : KMS_ALGORITHMS;
    if (accepted.includes(inline)) return undefined;
    const configs = settingsOf(all, b, BUCKET_ENCRYPTION);
    if (configs.length === 0) {
      return {
        path: "serverSideEncryptionConfiguration",
        value: props.serverSideEncryptionConfiguration,
        message:
          `${bucketLabel(b)} has no BucketServerSideEncryptionConfiguration (default encryption with a KMS key) and ` +
          `serverSideEncryptionConfiguration is ${JSON.stringify(props.serverSideEncryptionConfiguration ?? null)}`,
      };
    }
    for (const { r: c, props: config } of configs) {
      const algos: unknown[] = (config.rules ?? []).map((r) => r?.applyServerSideEncryptionByDefault?.sseAlgorithm);
      if (!algos.some((a) => accepted.includes(a))) {
        return {
          path: "rules[].applyServerSideEncryptionByDefault.sseAlgorithm",
          value: algos,
          message: `${bucketLabel(b)}: ${c.name} rules[].applyServerSideEncryptionByDefault.sseAlgorithm is ${JSON.stringify(algos)}, expected "aws:kms"${logTarget ? ' or "AES256" (an access-log bucket)' : ""}`,
        };
      }
      // With SSE-KMS, the bucket key: without it every object request is a KMS call (throttling at rollout, cost).
      const kmsRules = (config.rules ?? []).filter((r) => KMS_ALGORITHMS.includes(r?.applyServerSideEncryptionByDefault?.sseAlgorithm));
      if (kmsRules.length && !kmsRules.every((r) => r?.bucketKeyEnabled === true)) {
        const value = kmsRules.map((r) => r?.bucketKeyEnabled);
        return {
          path: "rules[].bucketKeyEnabled",
          value,
          message: `${bucketLabel(b)}: ${c.name} rules[].bucketKeyEnabled is ${JSON.stringify(value)} with SSE-KMS, must be true`,
        };
      }
    }
    return undefined;
  }),
});

export const s3BucketVersioned = stackRule({
  name: "s3-bucket-versioned",
  domain: "model-repository",
  configKey: "modelRepository.s3",
  description: "Every S3 bucket has versioning enabled.",
  prevents: "A bad or accidental model push (or delete) that overwrites the only copy of the weights serving depends on.",
  remediationSteps: 'Add an aws.s3.BucketVersioning for the bucket with versioningConfiguration.status "Enabled".',
  check: perBucket((b, props, all) => {
    if (props.versioning?.enabled === true) return undefined;
    const configs = settingsOf(all, b, BUCKET_VERSIONING);
    if (configs.length === 0) {
      const value = props.versioning?.enabled;
      return {
        path: "versioning.enabled",
        value,
        message: `${bucketLabel(b)} has no BucketVersioning and versioning.enabled is ` + `${JSON.stringify(value ?? null)}`,
      };
    }
    const bad = configs.find((c) => c.props.versioningConfiguration?.status !== "Enabled");
    if (bad) {
      const status = bad.props.versioningConfiguration?.status;
      return {
        path: "versioningConfiguration.status",
        value: status,
        message: `${bucketLabel(b)}: ${bad.r.name} versioningConfiguration.status ` + `is ${JSON.stringify(status)}, expected "Enabled"`,
      };
    }
    return undefined;
  }),
});

const PUBLIC_ACCESS_FLAGS = ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"] as const;

export const s3PublicAccessBlocked = stackRule({
  name: "s3-public-access-blocked",
  domain: "model-repository",
  description: "Every S3 bucket has a public access block with all four settings true.",
  prevents: "A later ACL or bucket policy change that publishes proprietary model weights to the internet.",
  remediationSteps:
    "Add an aws.s3.BucketPublicAccessBlock for the bucket with blockPublicAcls, blockPublicPolicy, ignorePublicAcls and " + "restrictPublicBuckets all true.",
  check: perBucket((b, _props, all) => {
    const blocks = settingsOf(all, b, BUCKET_PUBLIC_ACCESS_BLOCK);
    if (blocks.length === 0) {
      return { path: "BucketPublicAccessBlock", value: null, message: `${bucketLabel(b)} has no BucketPublicAccessBlock: BucketPublicAccessBlock is null` };
    }
    for (const { r: p, props: block } of blocks) {
      const off = PUBLIC_ACCESS_FLAGS.filter((f) => block[f] !== true);
      if (off.length) {
        return {
          path: off[0],
          value: block[off[0]],
          message: `${bucketLabel(b)}: ${p.name} ${off.map((f) => `${f} is ${JSON.stringify(block[f])}`).join(", ")}; all four must be true`,
        };
      }
    }
    return undefined;
  }),
});

/**
 * Does a bucket policy document deny every non-TLS request? A Deny for everyone ("*", {AWS: "*"}
 * or a list holding "*") of s3:* (or *) when aws:SecureTransport is false, in any spelling IAM
 * accepts: Bool or BoolIfExists, the key in any case, the value a scalar or a list, string or boolean.
 */
export function deniesInsecureTransport(doc: PolicyDocument | undefined): boolean {
  return statementsOf(doc).some((s) => {
    if (s?.Effect !== "Deny") return false;
    const principal = s.Principal as Record<string, unknown> | string | undefined;
    const everyone = principal === "*" || (typeof principal === "object" && principal !== null && ([] as unknown[]).concat(principal.AWS ?? []).includes("*"));
    const actions: readonly string[] = ([] as string[]).concat(s.Action ?? []).map((a) => String(a).toLowerCase());
    const allActions = actions.includes("s3:*") || actions.includes("*");
    const insecure = Object.entries(s.Condition ?? {}).some(
      ([op, block]) =>
        ["bool", "boolifexists"].includes(op.toLowerCase()) &&
        Object.entries(block ?? {}).some(
          ([k, v]) => k.toLowerCase() === "aws:securetransport" && ([] as unknown[]).concat(v).some((x) => String(x).toLowerCase() === "false"),
        ),
    );
    return everyone && allActions && insecure;
  });
}

export const s3TlsOnly = stackRule({
  name: "s3-tls-only",
  domain: "model-repository",
  description: "Every S3 bucket has a bucket policy that denies requests without TLS (aws:SecureTransport false).",
  prevents: "Model weights and credentials-bearing requests sent in clear text over plain HTTP.",
  remediationSteps:
    'Add an aws.s3.BucketPolicy with a Deny statement for Principal "*", Action "s3:*", Condition Bool aws:SecureTransport ' +
    '"false" (components/model-repository/policies.ts tlsOnlyBucketPolicy).',
  check: perBucket((b, props, all) => {
    const policies = settingsOf(all, b, BUCKET_POLICY);
    const inline = decodeJson(props.policy);
    if (inline !== undefined && deniesInsecureTransport(inline)) return undefined;
    if (policies.length === 0) {
      return {
        path: "policy",
        value: props.policy,
        message: `${bucketLabel(b)} has no BucketPolicy denying aws:SecureTransport "false", and its ` + `policy is ${JSON.stringify(props.policy ?? null)}`,
      };
    }
    // The document is unknown during a preview when it depends on the new bucket's ARN: nothing to judge yet.
    const known = policies.filter((p) => p.props.policy !== undefined);
    if (known.length === 0) return undefined;
    if (known.some((p) => deniesInsecureTransport(decodeJson(p.props.policy)))) return undefined;
    const statements = known.flatMap((p) => ([] as unknown[]).concat(decodeJson(p.props.policy)?.Statement ?? []));
    return {
      path: "policy.Statement",
      value: statements,
      message: `${bucketLabel(b)}: no statement of ${known.map((p) => p.r.name).join(", ")} policy denies Principal "*" Action "s3:*" when aws:SecureTransport is "false" (policy.Statement has ${statements.length})`,
    };
  }),
});

export const s3BucketOwnerEnforced = stackRule({
  name: "s3-bucket-owner-enforced",
  domain: "model-repository",
  description: "Every S3 bucket has object ownership BucketOwnerEnforced (ACLs disabled).",
  prevents:
    "Objects uploaded by another account (a publisher, a log writer) that the bucket owner cannot read or protect, and ACLs that grant access past the bucket policy.",
  remediationSteps: 'Add an aws.s3.BucketOwnershipControls for the bucket with rule.objectOwnership "BucketOwnerEnforced" (components/model-repository/s3.ts).',
  check: perBucket((b, _props, all) => {
    const controls = settingsOf(all, b, BUCKET_OWNERSHIP_CONTROLS);
    const bad = controls.find((c) => c.props.rule?.objectOwnership !== "BucketOwnerEnforced");
    if (controls.length && !bad) return undefined;
    const value = bad?.props.rule?.objectOwnership ?? null;
    return {
      path: "rule.objectOwnership",
      value,
      message: `${bucketLabel(b)}: rule.objectOwnership is ${JSON.stringify(value)}${bad ? ` (${bad.r.name})` : " (no BucketOwnershipControls)"}, must be "BucketOwnerEnforced"`,
    };
  }),
});

export const s3NoncurrentVersionsExpire = stackRule({
  name: "s3-noncurrent-versions-expire",
  domain: "model-repository",
  description: "Every S3 bucket has an enabled lifecycle rule that expires noncurrent object versions (noncurrentVersionExpiration.noncurrentDays).",
  prevents: "Every overwritten model version kept forever: a versioned model bucket that grows (and bills) without bound.",
  remediationSteps:
    "Add an aws.s3.BucketLifecycleConfiguration with an Enabled rule noncurrentVersionExpiration { noncurrentDays } (components/model-repository/s3.ts).",
  check: perBucket((b, props, all) => {
    const inline = (props as { lifecycleRules?: { enabled?: boolean; noncurrentVersionExpiration?: { days?: number } }[] }).lifecycleRules ?? [];
    if (inline.some((r) => r.enabled === true && (r.noncurrentVersionExpiration?.days ?? 0) > 0)) return undefined;
    const configs = settingsOf(all, b, BUCKET_LIFECYCLE);
    const rules = configs.flatMap((c) => c.props.rules ?? []);
    if (rules.some((r) => r.status === "Enabled" && (r.noncurrentVersionExpiration?.noncurrentDays ?? 0) > 0)) return undefined;
    return {
      path: "rules",
      value: configs.length ? rules : null,
      message: `${bucketLabel(b)}: rules is ${configs.length ? JSON.stringify(rules) : "null (no BucketLifecycleConfiguration)"}; no Enabled rule expires noncurrent versions`,
    };
  }),
});

export const s3AccessLogging = stackRule({
  name: "s3-access-logging",
  domain: "model-repository",
  description: "Every S3 bucket (other than a log target itself) writes server access logs (advisory: CloudTrail data events are the alternative).",
  prevents: "No record of who read or changed which model object when a leak or a bad push has to be investigated.",
  remediationSteps: "Add an aws.s3.BucketLogging for the bucket with a targetBucket (SSE-S3 encrypted, owner enforced), or enable CloudTrail S3 data events.",
  check: perBucket((b, props, all) => {
    if (isLogTarget(all, b)) return undefined;
    const inline = props as { loggings?: unknown[]; logging?: unknown };
    if ((inline.loggings ?? []).length || inline.logging) return undefined;
    const names = bucketNames(all, b);
    const logs = all.filter((r) => {
      const l = propsOf(r, BUCKET_LOGGING);
      return l && (names.has(String(l.bucket)) || r.dependencies.some((d) => d.urn === b.urn && !names.has(String(l.targetBucket))));
    });
    if (logs.length) return undefined;
    return { path: "logging", value: null, message: `${bucketLabel(b)}: logging is null (no BucketLogging): no server access logs` };
  }),
});

// ---- disaster recovery -------------------------------------------------------------------------

/** A bucket's tags (its own; the provider's default tags hold no choice of its). */
const bucketTags = (b: PolicyResource): Readonly<Record<string, string>> => (b.props as Bucket).tags ?? {};

/** The region a resource is created in: its own (aws v7 per-resource region), else its provider's. */
const regionOf = (r: PolicyResource): string | undefined =>
  (r.props as { region?: string }).region ?? (r.provider?.props as { region?: string } | undefined)?.region;

/** The environment of a resource: its own tag, else its provider's defaultTags. */
const environmentOf = (r: PolicyResource): string | undefined =>
  bucketTags(r)[ENVIRONMENT_TAG] ?? decodeJson(r.provider?.props?.defaultTags)?.tags?.[ENVIRONMENT_TAG];

/** The bucket of the stack an S3 ARN (arn:<partition>:s3:::<name>) names, by any name it goes by. */
function bucketByArn(resources: readonly PolicyResource[], arn: unknown): PolicyResource | undefined {
  const name = typeof arn === "string" ? /^arn:[a-z-]+:s3:::([^/]+)$/.exec(arn)?.[1] : undefined;
  return name === undefined ? undefined : resources.find((r) => r.type === BUCKET && bucketNames(resources, r).has(name));
}

/** Why a replication rule of `source` does not give it a usable replica in another region; undefined when it does. */
function replicaProblem(
  all: readonly PolicyResource[],
  source: PolicyResource,
  rule: NonNullable<PropsOf<typeof BUCKET_REPLICATION>["rules"]>[number],
): string | undefined {
  if (rule.status !== "Enabled") return `rule ${rule.id ?? "?"} is ${JSON.stringify(rule.status)}, not "Enabled"`;
  // The bucket encrypts with SSE-KMS (s3-bucket-encrypted): S3 skips such objects unless asked.
  if (rule.sourceSelectionCriteria?.sseKmsEncryptedObjects?.status !== "Enabled")
    return `rule ${rule.id ?? "?"}: sourceSelectionCriteria.sseKmsEncryptedObjects.status is not "Enabled", so no SSE-KMS object (every model) is replicated`;
  const replica = bucketByArn(all, rule.destination?.bucket);
  if (!replica) return `rule ${rule.id ?? "?"}: destination.bucket ${JSON.stringify(rule.destination?.bucket ?? null)} is no bucket of this stack`;
  if (regionOf(replica) === regionOf(source))
    return `rule ${rule.id ?? "?"}: the replica ${replica.name} is in the bucket's own region ${regionOf(source) ?? "?"}`;
  if (!rule.destination?.encryptionConfiguration?.replicaKmsKeyId)
    return `rule ${rule.id ?? "?"}: destination.encryptionConfiguration.replicaKmsKeyId is not set`;
  const versioned = settingsOf(all, replica, BUCKET_VERSIONING).some((v) => v.props.versioningConfiguration?.status === "Enabled");
  if (!versioned) return `rule ${rule.id ?? "?"}: the replica ${replica.name} is not versioned`;
  const kms = settingsOf(all, replica, BUCKET_ENCRYPTION).some((e) =>
    (e.props.rules ?? []).some((x) => KMS_ALGORITHMS.includes(x.applyServerSideEncryptionByDefault?.sseAlgorithm)),
  );
  if (!kms) return `rule ${rule.id ?? "?"}: the replica ${replica.name} has no SSE-KMS default encryption`;
  return undefined;
}

/** Is `bucket` the destination of a replication rule in the stack (a replica: its own recovery is its source)? */
function isReplica(all: readonly PolicyResource[], bucket: PolicyResource): boolean {
  return all.some((r) => (propsOf(r, BUCKET_REPLICATION)?.rules ?? []).some((x) => bucketByArn(all, x.destination?.bucket) === bucket));
}

export const s3ModelBucketDisasterRecovery = stackRule<EnvConfig>({
  name: "s3-model-bucket-disaster-recovery",
  domain: "model-repository",
  configKey: "modelRepository.s3.disasterRecovery",
  description:
    "In the listed environments (default prod), every S3 bucket the stack creates (other than a replica or a log target) states how its models " +
    "come back when its region is lost: an Enabled replication rule of SSE-KMS objects to a versioned, SSE-KMS bucket of the stack in another " +
    `region (with a replica key), or the tags ${DISASTER_RECOVERY_TAG}=republish and ${RECOVERY_TIME_TAG}=<hours>.`,
  prevents:
    "A regional S3 outage or a lost bucket with no stated way back: serving cannot start new pods (every pod reads its models at start-up) " +
    "for as long as nobody knows where the weights come from.",
  remediationSteps:
    "Set triton-platform:modelRepository.s3.disasterRecovery: strategy replicate with replicaRegion, or strategy republish with recoveryTimeHours " +
    "(docs/model-repository.md, Disaster recovery).",
  configSchema: {
    properties: { ...environmentsSchema("Environments whose model buckets must state their disaster recovery (tag triton-platform:environment).") },
  },
  check: (resources, { environments }) =>
    perBucket((b, _props, all) => {
      const env = environmentOf(b);
      if (env === undefined || !environments.includes(env) || isReplica(all, b) || isLogTarget(all, b)) return undefined;
      const tags = bucketTags(b);
      if (tags[DISASTER_RECOVERY_TAG] === "republish") {
        const hours = tags[RECOVERY_TIME_TAG];
        if (hours !== undefined && /^[1-9]\d*$/.test(hours)) return undefined;
        return {
          path: `tags["${RECOVERY_TIME_TAG}"]`,
          value: hours ?? null,
          message: `${bucketLabel(b)} states republish but tags["${RECOVERY_TIME_TAG}"] is ${JSON.stringify(hours ?? null)}, not a number of hours`,
        };
      }
      const configs = all.filter((r) => {
        const c = propsOf(r, BUCKET_REPLICATION);
        return c && (r.dependencies.some((d) => d.urn === b.urn) || (c.bucket !== undefined && bucketNames(all, b).has(c.bucket)));
      });
      const rules = configs.flatMap((c) => propsOf(c, BUCKET_REPLICATION)?.rules ?? []);
      const problems = rules.map((x) => replicaProblem(all, b, x));
      if (problems.some((p) => p === undefined) && rules.length > 0) return undefined;
      if (configs.length)
        return {
          path: "rules",
          value: rules,
          message: `${bucketLabel(b)} (${env}) has no disaster recovery: its replication rules give no replica: ${problems.join("; ")}`,
        };
      const path = `tags["${DISASTER_RECOVERY_TAG}"]`;
      const value = tags[DISASTER_RECOVERY_TAG] ?? null;
      return {
        path,
        value,
        message: `${bucketLabel(b)} (${env}) has no disaster recovery: no BucketReplicationConfig replicates it and ${path} is ${JSON.stringify(value)}, not "republish"`,
      };
    })(resources),
});

// ---- EFS ---------------------------------------------------------------------------------------

export const efsEncrypted = resourceRule({
  name: "efs-encrypted",
  domain: "model-repository",
  description: "Every EFS file system is encrypted at rest (encrypted: true).",
  prevents: "Model weights on unencrypted storage (EFS encryption at rest can only be chosen at creation: fixing it later means a new file system).",
  remediationSteps: "Set encrypted: true and kmsKeyId (components/model-repository/efs.ts efsFileSystemArgs).",
  check: (r) => {
    if (r.type !== EFS_FILE_SYSTEM) return NONE;
    const v = (r.props as { encrypted?: unknown }).encrypted;
    return v === true ? NONE : [{ path: "encrypted", value: v, message: `EFS FileSystem ${r.name}: encrypted is ${JSON.stringify(v ?? null)}, must be true` }];
  },
});

const NFS_PORT = 2049;

/** The security groups of the GPU nodes: those of the launch templates GPU node groups use (dependencies), and of no non-GPU node group. */
function gpuNodeSecurityGroups(resources: readonly PolicyResource[]): Set<string> {
  const gpu = new Set<string>();
  const other = new Set<string>();
  for (const ng of resources) {
    const props = propsOf(ng, NODE_GROUP);
    if (!props) continue;
    const isGpu = isGpuAmiType(props.amiType) || props.labels?.[NODE_LABEL_ROLE] === NODE_ROLE_GPU;
    for (const lt of ng.dependencies.filter((d) => d.type === LAUNCH_TEMPLATE)) {
      for (const sg of (lt.props as { vpcSecurityGroupIds?: string[] }).vpcSecurityGroupIds ?? []) (isGpu ? gpu : other).add(sg);
    }
  }
  for (const sg of other) gpu.delete(sg);
  return gpu;
}

export const efsNfsOnlyFromGpuNodes = stackRule({
  name: "efs-nfs-only-from-gpu-nodes",
  domain: "model-repository",
  description:
    "The security groups of EFS mount targets admit NFS (2049) only from the GPU nodes' security group (one their launch template attaches): " +
    "no CIDR, no prefix list, no other group.",
  prevents: "Any host in the VPC (or beyond) mounting the model repository: weights read or, through another access point, replaced.",
  remediationSteps: "Keep the single NFS ingress from the GPU nodes' security group (components/model-repository/efs.ts nfsIngressRuleArgs).",
  check: (resources) => {
    const mountTargets = resources.filter((r) => r.type === EFS_MOUNT_TARGET);
    if (mountTargets.length === 0) return [];
    // The mount targets' groups: by the ids they list, and (ids being unknown in a preview) by the SecurityGroup resources they depend on.
    const targets = new Set(mountTargets.flatMap((r) => ((r.props as { securityGroups?: string[] }).securityGroups ?? []).map(String)));
    const targetGroups = new Set(mountTargets.flatMap((r) => r.dependencies.filter((d) => d.type === SECURITY_GROUP).map((d) => d.urn)));
    const gpu = gpuNodeSecurityGroups(resources);
    const out: Finding[] = [];
    for (const r of resources) {
      const raw = r.props as { referencedSecurityGroupId?: string; sourceSecurityGroupId?: string; ingress?: { securityGroups?: string[] }[] };
      securityGroupIngressOf(r).forEach((o, n) => {
        const inScope =
          r.type === SECURITY_GROUP
            ? targetGroups.has(r.urn)
            : (o.group !== undefined && targets.has(o.group)) || r.dependencies.some((d) => targetGroups.has(d.urn));
        if (!inScope) return;
        const proto = String(o.protocol).toLowerCase();
        if (!(proto === "-1" || proto === "all" || ((proto === "tcp" || proto === "6") && (o.fromPort ?? 0) <= NFS_PORT && (o.toPort ?? 65535) >= NFS_PORT)))
          return;
        for (const c of [...o.cidrs.map((x) => ({ path: x.path, value: x.cidr })), ...o.prefixLists.map((x) => ({ path: x.path, value: x.id }))]) {
          out.push({
            path: c.path,
            value: c.value,
            message: `${r.type.split(":").pop()} ${r.name}: ${c.path} is ${JSON.stringify(c.value)}: NFS to the EFS mount targets from an address range, not the GPU nodes' group`,
            urn: r.urn,
          });
        }
        const refs: { path: string; value: string }[] = [];
        if (raw.referencedSecurityGroupId !== undefined) refs.push({ path: "referencedSecurityGroupId", value: raw.referencedSecurityGroupId });
        if (raw.sourceSecurityGroupId !== undefined) refs.push({ path: "sourceSecurityGroupId", value: raw.sourceSecurityGroupId });
        (raw.ingress?.[n]?.securityGroups ?? []).forEach((g, i) => refs.push({ path: `ingress[${n}].securityGroups[${i}]`, value: g }));
        for (const ref of refs.filter((x) => !gpu.has(x.value)))
          out.push({
            path: ref.path,
            value: ref.value,
            message: `${r.type.split(":").pop()} ${r.name}: ${ref.path} is ${JSON.stringify(ref.value)}, not the GPU nodes' security group (${[...gpu].join(", ") || "none found"})`,
            urn: r.urn,
          });
      });
    }
    return out;
  },
});

export const efsAccessPointConfined = resourceRule({
  name: "efs-access-point-confined",
  domain: "model-repository",
  description: "Every EFS access point enforces a non-root POSIX user (uid and gid not 0, no secondary gid 0) and a root directory below / .",
  prevents: "Clients acting as root on the file system, or an access point that exposes the whole file system instead of the model folder.",
  remediationSteps: "Set posixUser { uid: 1000, gid: 1000 } and rootDirectory.path /<modelPrefix> (components/model-repository/efs.ts efsAccessPointArgs).",
  check: (r) => {
    if (r.type !== EFS_ACCESS_POINT) return NONE;
    const p = r.props as { posixUser?: { uid?: unknown; gid?: unknown; secondaryGids?: unknown[] }; rootDirectory?: { path?: unknown } };
    const out: Finding[] = [];
    const where = `EFS AccessPoint ${r.name}`;
    if (!p.posixUser) out.push({ path: "posixUser", value: null, message: `${where}: posixUser is null: clients keep their own uid, root included` });
    for (const k of ["uid", "gid"] as const)
      if (p.posixUser && Number(p.posixUser[k]) === 0)
        out.push({ path: `posixUser.${k}`, value: p.posixUser[k], message: `${where}: posixUser.${k} is 0 (root)` });
    (p.posixUser?.secondaryGids ?? []).forEach((g, i) => {
      if (Number(g) === 0)
        out.push({ path: `posixUser.secondaryGids[${i}]`, value: g, message: `${where}: posixUser.secondaryGids[${i}] is 0 (root's group)` });
    });
    const path = p.rootDirectory?.path;
    const normal = typeof path === "string" ? path.replace(/\/+(\.\/?)*/g, "/").replace(/\/+$/, "") : "";
    if (normal === "")
      out.push({
        path: "rootDirectory.path",
        value: path ?? null,
        message: `${where}: rootDirectory.path is ${JSON.stringify(path ?? null)}: the access point is rooted at / (the whole file system)`,
      });
    return out;
  },
});

/** Volume sources that carry data from outside the pod (as opposed to its own scratch space or configuration). */
const SHARED_VOLUME_SOURCES = ["persistentVolumeClaim", "csi", "nfs", "ephemeral", "awsElasticBlockStore", "hostPath", "image"];

export const servingVolumesReadOnly = resourceRule({
  name: "serving-volumes-read-only",
  domain: "model-repository",
  description:
    "Every volume a tritonserver container (any workload kind, any container list) mounts from outside the pod (PVC, CSI, NFS, ephemeral, " +
    "hostPath) is mounted readOnly.",
  prevents: "A compromised or buggy server (or a model's Python backend) altering or deleting the shared model repository every replica serves from.",
  remediationSteps: "Set volumeMounts[].readOnly: true (and persistentVolumeClaim.readOnly) for the model repository (components/triton builders).",
  check: (r) => {
    if (!isWorkload(r)) return NONE;
    const out: Finding[] = [];
    for (const { spec, path } of podSpecsOf(r)) {
      const volumes = spec?.volumes ?? [];
      for (const { c, path: cp } of containersOf(spec, path)) {
        if (!isTritonContainer(c)) continue;
        (c.volumeMounts ?? []).forEach((m, i) => {
          const v = volumes.find((x) => x.name === m.name);
          if (!v || !SHARED_VOLUME_SOURCES.some((k) => (v as Record<string, unknown>)[k] !== undefined)) return;
          if (m.readOnly === true) return;
          const at = `${cp}.volumeMounts[${i}].readOnly`;
          out.push({
            path: at,
            value: m.readOnly,
            message: `${(r.props as { kind?: string }).kind} ${metadataOf(r).name ?? r.name}: ${at} is ${JSON.stringify(m.readOnly ?? null)} for volume ${m.name} at ${m.mountPath}`,
          });
        });
      }
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  s3BucketEncrypted,
  s3BucketVersioned,
  s3PublicAccessBlocked,
  s3TlsOnly,
  s3BucketOwnerEnforced,
  s3NoncurrentVersionsExpire,
  s3AccessLogging,
  efsEncrypted,
  efsNfsOnlyFromGpuNodes,
  efsAccessPointConfined,
  servingVolumesReadOnly,
  s3ModelBucketDisasterRecovery,
];
