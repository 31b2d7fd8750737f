// Rules the model repository makes enforceable: a bucket that holds model weights is
// encrypted with KMS, versioned, never public and TLS-only; IAM never grants S3 actions on
// "*"; pods never carry static AWS keys (IRSA instead).
import type { PolicyResource } from "@pulumi/policy";
import { STATIC_AWS_CREDENTIAL_ENV } from "../../components/upstream/aws-iam";
import { iamDocumentsOf, metadataOf, podSpecsOf, propsOf, statementsOf, type PolicyDocument, type PropsOf, type Statement } from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Rule } from "./rule";
import { BUCKET, BUCKET_ENCRYPTION, BUCKET_POLICY, BUCKET_PUBLIC_ACCESS_BLOCK, BUCKET_VERSIONING } from "./types";
import { decodeJson, isK8sObject } from "./util";

type Bucket = PropsOf<typeof BUCKET>;
type BucketSettingType = typeof BUCKET_ENCRYPTION | typeof BUCKET_VERSIONING | typeof BUCKET_PUBLIC_ACCESS_BLOCK | typeof BUCKET_POLICY;

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

export const s3BucketEncrypted = stackRule({
  name: "s3-bucket-encrypted",
  domain: "model-repository",
  description: "Every S3 bucket has default encryption with a KMS key (SSE-KMS).",
  prevents: "Model weights readable by anyone who obtains s3:GetObject alone; with SSE-KMS a reader also needs kms:Decrypt on the key.",
  remediationSteps:
    "Add an aws.s3.BucketServerSideEncryptionConfiguration for the bucket with applyServerSideEncryptionByDefault.sseAlgorithm " +
    '"aws:kms" (components/model-repository/s3.ts bucketHardening).',
  check: perBucket((b, props, all) => {
    const inline = props.serverSideEncryptionConfiguration?.rule?.applyServerSideEncryptionByDefault?.sseAlgorithm;
    if (KMS_ALGORITHMS.includes(inline)) return undefined;
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
      if (!algos.some((a) => KMS_ALGORITHMS.includes(a))) {
        return {
          path: "rules[].applyServerSideEncryptionByDefault.sseAlgorithm",
          value: algos,
          message: `${bucketLabel(b)}: ${c.name} rules[].applyServerSideEncryptionByDefault.sseAlgorithm is ${JSON.stringify(algos)}, expected "aws:kms"`,
        };
      }
    }
    return undefined;
  }),
});

export const s3BucketVersioned = stackRule({
  name: "s3-bucket-versioned",
  domain: "model-repository",
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

/** Does a bucket policy document deny every non-TLS request (aws:SecureTransport false)? */
export function deniesInsecureTransport(doc: PolicyDocument | undefined): boolean {
  return statementsOf(doc).some((s) => {
    if (s?.Effect !== "Deny") return false;
    const principal = s.Principal as { AWS?: unknown } | string | undefined;
    const aws = typeof principal === "object" ? principal?.AWS : undefined;
    const everyone = principal === "*" || aws === "*" || (Array.isArray(aws) && aws.includes("*"));
    const actions: readonly string[] = ([] as string[]).concat(s.Action ?? []);
    const allActions = actions.includes("s3:*") || actions.includes("*");
    const cond = s.Condition?.Bool?.["aws:SecureTransport"];
    return everyone && allActions && (cond === "false" || cond === false);
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

/** Statements that Allow an S3 action on Resource "*" (or every bucket, arn:aws:s3:::*). */
export function wildcardS3Statements(doc: PolicyDocument | undefined): Statement[] {
  return statementsOf(doc).filter((s) => {
    if (s?.Effect !== "Allow") return false;
    const actions: readonly string[] = ([] as string[]).concat(s.Action ?? []);
    const s3 = actions.some((a) => a === "*" || a.toLowerCase().startsWith("s3:"));
    const resources: readonly string[] = ([] as string[]).concat(s.Resource ?? []);
    const everything = resources.some((r) => r === "*" || /^arn:aws[a-z-]*:s3:::\*$/.test(r));
    return s3 && everything;
  });
}

export const iamNoWildcardS3Resource = resourceRule({
  name: "iam-no-wildcard-s3-resource",
  domain: "model-repository",
  description: 'No IAM policy statement allows S3 actions on Resource "*" (or arn:aws:s3:::*).',
  prevents: "A model reader (or a CI role) that can read or overwrite every bucket in the account, not just the model prefix.",
  remediationSteps:
    "Name the bucket ARN (for s3:ListBucket, with an s3:prefix condition) and <bucket ARN>/<prefix>/* (for object actions) as " +
    "Resource (components/model-repository/policies.ts).",
  check: (r) =>
    iamDocumentsOf(r).flatMap(({ where, doc }) => {
      const all = statementsOf(doc);
      return wildcardS3Statements(doc).map((s) => {
        const path = `${where}.Statement[${all.indexOf(s)}].Resource`;
        return {
          path,
          value: s.Resource,
          message: `${r.type} ${r.name}: ${path} (statement ${s.Sid ? `"${s.Sid}" ` : ""}allowing ${JSON.stringify(s.Action)}) is ${JSON.stringify(s.Resource)}`,
        };
      });
    }),
});

const STATIC_KEYS: readonly string[] = STATIC_AWS_CREDENTIAL_ENV;

export const noStaticAwsKeysInPodEnv = resourceRule({
  name: "no-static-aws-keys-in-pod-env",
  domain: "model-repository",
  description: "No container sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_SESSION_TOKEN; pods get AWS access through IRSA.",
  prevents: "Long-lived access keys copied into manifests and Secrets, where they leak, never rotate and outlive the pod that needed them.",
  remediationSteps:
    "Remove the variables; run the pod as the ServiceAccount annotated with eks.amazonaws.com/role-arn " + "(ModelRepositoryBinding.serviceAccountName).",
  check: (r) => {
    if (!isK8sObject(r.type, r.props)) return NONE;
    const out: Finding[] = [];
    for (const { spec, path: at } of podSpecsOf(r)) {
      for (const group of ["initContainers", "containers", "ephemeralContainers"] as const) {
        (spec?.[group] ?? []).forEach((c, i) => {
          (c?.env ?? []).forEach((e, j) => {
            if (STATIC_KEYS.includes(e?.name as string)) {
              const path = `${at}.${group}[${i}].env[${j}].name`;
              out.push({ path, value: e.name, message: `${r.props.kind} ${metadataOf(r).name ?? r.name}: ${path} (container ${c.name}) is ${e.name}` });
            }
          });
        });
      }
    }
    return out;
  },
});

export const modelRepositoryRules: Rule[] = [
  s3BucketEncrypted,
  s3BucketVersioned,
  s3PublicAccessBlocked,
  s3TlsOnly,
  iamNoWildcardS3Resource,
  noStaticAwsKeysInPodEnv,
];
