// Rules the model repository makes enforceable: a bucket that holds model weights is
// encrypted with KMS, versioned, never public and TLS-only; IAM never grants S3 actions on
// "*"; pods never carry static AWS keys (IRSA instead).
import type { PolicyResource, StackValidationPolicy } from "@pulumi/policy";
import { STATIC_AWS_CREDENTIAL_ENV } from "../../components/upstream/aws-iam";
import { decodeJson, isK8sObject, reportAt, type Finding, type Rule } from "./util";
import { BUCKET, BUCKET_ENCRYPTION, BUCKET_POLICY, BUCKET_PUBLIC_ACCESS_BLOCK, BUCKET_VERSIONING } from "./types";


/** Settings resources (aws v7: one per concern) that belong to a bucket: they depend on it, or name it. */
export function settingsOf(resources: PolicyResource[], bucket: PolicyResource, type: string): PolicyResource[] {
  return resources.filter(
    (r) =>
      r.type === type &&
      (r.dependencies.some((d) => d.urn === bucket.urn) || (bucket.props.bucket !== undefined && r.props.bucket === bucket.props.bucket)),
  );
}

function bucketLabel(b: PolicyResource): string {
  return `S3 bucket ${b.name}${b.props.bucket ? ` (${b.props.bucket})` : ""}`;
}

/** A bucket's problem: the message, and the property path and value (of the bucket or its settings resource). */
type Problem = Finding & { message: string };

/** A stack rule over every bucket. */
function perBucket(check: (bucket: PolicyResource, all: PolicyResource[]) => Problem | undefined): StackValidationPolicy["validateStack"] {
  return (args, report) => {
    for (const b of args.resources.filter((r) => r.type === BUCKET)) {
      const problem = check(b, args.resources);
      if (problem) reportAt(report, problem, problem.message, b.urn);
    }
  };
}

const KMS_ALGORITHMS = ["aws:kms", "aws:kms:dsse"];

const s3Encrypted: Rule = {
  name: "s3-bucket-encrypted",
  domain: "model-repository",
  description: "Every S3 bucket has default encryption with a KMS key (SSE-KMS).",
  prevents: "Model weights readable by anyone who obtains s3:GetObject alone; with SSE-KMS a reader also needs kms:Decrypt on the key.",
  remediationSteps: "Add an aws.s3.BucketServerSideEncryptionConfiguration for the bucket with applyServerSideEncryptionByDefault.sseAlgorithm \"aws:kms\" (components/model-repository/s3.ts bucketHardening).",
  enforcementLevel: "advisory",
  validateStack: perBucket((b, all) => {
    const inline = b.props.serverSideEncryptionConfiguration?.rule?.applyServerSideEncryptionByDefault?.sseAlgorithm;
    if (KMS_ALGORITHMS.includes(inline)) return undefined;
    const configs = settingsOf(all, b, BUCKET_ENCRYPTION);
    if (configs.length === 0) {
      return {
        path: "serverSideEncryptionConfiguration",
        value: b.props.serverSideEncryptionConfiguration,
        message: `${bucketLabel(b)} has no BucketServerSideEncryptionConfiguration (default encryption with a KMS key) and serverSideEncryptionConfiguration is ${JSON.stringify(b.props.serverSideEncryptionConfiguration ?? null)}`,
      };
    }
    for (const c of configs) {
      const algos: unknown[] = (c.props.rules ?? []).map((r: any) => r?.applyServerSideEncryptionByDefault?.sseAlgorithm);
      if (!algos.some((a) => KMS_ALGORITHMS.includes(a as string))) {
        return {
          path: "rules[].applyServerSideEncryptionByDefault.sseAlgorithm",
          value: algos,
          message: `${bucketLabel(b)}: ${c.name} rules[].applyServerSideEncryptionByDefault.sseAlgorithm is ${JSON.stringify(algos)}, expected "aws:kms"`,
        };
      }
    }
    return undefined;
  }),
};

const s3Versioned: Rule = {
  name: "s3-bucket-versioned",
  domain: "model-repository",
  description: "Every S3 bucket has versioning enabled.",
  prevents: "A bad or accidental model push (or delete) that overwrites the only copy of the weights serving depends on.",
  remediationSteps: "Add an aws.s3.BucketVersioning for the bucket with versioningConfiguration.status \"Enabled\".",
  enforcementLevel: "advisory",
  validateStack: perBucket((b, all) => {
    if (b.props.versioning?.enabled === true) return undefined;
    const configs = settingsOf(all, b, BUCKET_VERSIONING);
    if (configs.length === 0) {
      return { path: "versioning.enabled", value: b.props.versioning?.enabled, message: `${bucketLabel(b)} has no BucketVersioning and versioning.enabled is ${JSON.stringify(b.props.versioning?.enabled ?? null)}` };
    }
    const bad = configs.find((c) => c.props.versioningConfiguration?.status !== "Enabled");
    if (bad) {
      const status = bad.props.versioningConfiguration?.status;
      return { path: "versioningConfiguration.status", value: status, message: `${bucketLabel(b)}: ${bad.name} versioningConfiguration.status is ${JSON.stringify(status)}, expected "Enabled"` };
    }
    return undefined;
  }),
};

const PUBLIC_ACCESS_FLAGS = ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"] as const;

const s3PublicAccessBlocked: Rule = {
  name: "s3-public-access-blocked",
  domain: "model-repository",
  description: "Every S3 bucket has a public access block with all four settings true.",
  prevents: "A later ACL or bucket policy change that publishes proprietary model weights to the internet.",
  remediationSteps: "Add an aws.s3.BucketPublicAccessBlock for the bucket with blockPublicAcls, blockPublicPolicy, ignorePublicAcls and restrictPublicBuckets all true.",
  enforcementLevel: "advisory",
  validateStack: perBucket((b, all) => {
    const blocks = settingsOf(all, b, BUCKET_PUBLIC_ACCESS_BLOCK);
    if (blocks.length === 0) {
      return { path: "BucketPublicAccessBlock", value: null, message: `${bucketLabel(b)} has no BucketPublicAccessBlock: BucketPublicAccessBlock is null` };
    }
    for (const p of blocks) {
      const off = PUBLIC_ACCESS_FLAGS.filter((f) => p.props[f] !== true);
      if (off.length) {
        return { path: off[0], value: p.props[off[0]], message: `${bucketLabel(b)}: ${p.name} ${off.map((f) => `${f} is ${JSON.stringify(p.props[f])}`).join(", ")}; all four must be true` };
      }
    }
    return undefined;
  }),
};

/** A policy document's statements: IAM allows one statement object or a list of them. */
function statementsOf(doc: any): any[] {
  return Array.isArray(doc?.Statement) ? doc.Statement : doc?.Statement ? [doc.Statement] : [];
}

/** Does a bucket policy document deny every non-TLS request (aws:SecureTransport false)? */
export function deniesInsecureTransport(doc: any): boolean {
  const statements = statementsOf(doc);
  return statements.some((s) => {
    if (s?.Effect !== "Deny") return false;
    const principal = s.Principal;
    const everyone = principal === "*" || principal?.AWS === "*" || (Array.isArray(principal?.AWS) && principal.AWS.includes("*"));
    const actions: string[] = [].concat(s.Action ?? []);
    const allActions = actions.includes("s3:*") || actions.includes("*");
    const cond = s.Condition?.Bool?.["aws:SecureTransport"];
    return everyone && allActions && (cond === "false" || cond === false);
  });
}

const s3TlsOnly: Rule = {
  name: "s3-tls-only",
  domain: "model-repository",
  description: "Every S3 bucket has a bucket policy that denies requests without TLS (aws:SecureTransport false).",
  prevents: "Model weights and credentials-bearing requests sent in clear text over plain HTTP.",
  remediationSteps: "Add an aws.s3.BucketPolicy with a Deny statement for Principal \"*\", Action \"s3:*\", Condition Bool aws:SecureTransport \"false\" (components/model-repository/policies.ts tlsOnlyBucketPolicy).",
  enforcementLevel: "advisory",
  validateStack: perBucket((b, all) => {
    const policies = settingsOf(all, b, BUCKET_POLICY);
    const inline = decodeJson(b.props.policy);
    if (inline !== undefined && deniesInsecureTransport(inline)) return undefined;
    if (policies.length === 0) {
      return { path: "policy", value: b.props.policy, message: `${bucketLabel(b)} has no BucketPolicy denying aws:SecureTransport "false", and its policy is ${JSON.stringify(b.props.policy ?? null)}` };
    }
    // The document is unknown during a preview when it depends on the new bucket's ARN: nothing to judge yet.
    const known = policies.filter((p) => p.props.policy !== undefined);
    if (known.length === 0) return undefined;
    if (known.some((p) => deniesInsecureTransport(decodeJson(p.props.policy)))) return undefined;
    const statements = known.flatMap((p) => [].concat(decodeJson(p.props.policy)?.Statement ?? []));
    return {
      path: "policy.Statement",
      value: statements,
      message: `${bucketLabel(b)}: no statement of ${known.map((p) => p.name).join(", ")} policy denies Principal "*" Action "s3:*" when aws:SecureTransport is "false" (policy.Statement has ${statements.length})`,
    };
  }),
};

/** IAM policy documents a resource carries: Role inlinePolicies, RolePolicy/Policy/UserPolicy/GroupPolicy policy. */
export function iamDocuments(type: string, props: Record<string, any>): { where: string; doc: any }[] {
  if (type === "aws:iam/role:Role") {
    return (props.inlinePolicies ?? []).map((p: any, i: number) => ({ where: `inlinePolicies[${i}].policy`, doc: decodeJson(p?.policy) }));
  }
  if (["aws:iam/rolePolicy:RolePolicy", "aws:iam/policy:Policy", "aws:iam/userPolicy:UserPolicy", "aws:iam/groupPolicy:GroupPolicy"].includes(type)) {
    return [{ where: "policy", doc: decodeJson(props.policy) }];
  }
  return [];
}

/** Statements that Allow an S3 action on Resource "*" (or every bucket, arn:aws:s3:::*). */
export function wildcardS3Statements(doc: any): any[] {
  const statements = statementsOf(doc);
  return statements.filter((s) => {
    if (s?.Effect !== "Allow") return false;
    const actions: string[] = [].concat(s.Action ?? []);
    const s3 = actions.some((a) => a === "*" || a.toLowerCase().startsWith("s3:"));
    const resources: string[] = [].concat(s.Resource ?? []);
    const everything = resources.some((r) => r === "*" || /^arn:aws[a-z-]*:s3:::\*$/.test(r));
    return s3 && everything;
  });
}

const iamNoWildcardS3: Rule = {
  name: "iam-no-wildcard-s3-resource",
  domain: "model-repository",
  description: "No IAM policy statement allows S3 actions on Resource \"*\" (or arn:aws:s3:::*).",
  prevents: "A model reader (or a CI role) that can read or overwrite every bucket in the account, not just the model prefix.",
  remediationSteps: "Name the bucket ARN (for s3:ListBucket, with an s3:prefix condition) and <bucket ARN>/<prefix>/* (for object actions) as Resource (components/model-repository/policies.ts).",
  enforcementLevel: "advisory",
  validateResource: (args, report) => {
    for (const { where, doc } of iamDocuments(args.type, args.props)) {
      const all = statementsOf(doc);
      for (const s of wildcardS3Statements(doc)) {
        const path = `${where}.Statement[${all.indexOf(s)}].Resource`;
        reportAt(report, { path, value: s.Resource }, `${args.type} ${args.name}: ${path} (statement ${s.Sid ? `"${s.Sid}" ` : ""}allowing ${JSON.stringify(s.Action)}) is ${JSON.stringify(s.Resource)}`);
      }
    }
  },
};

/** Pod specs of a workload manifest with their property paths. */
export function podSpecPaths(props: Record<string, any>): { spec: any; path: string }[] {
  switch (props.kind) {
    case "Pod":
      return [{ spec: props.spec, path: "spec" }];
    case "CronJob":
      return [{ spec: props.spec?.jobTemplate?.spec?.template?.spec, path: "spec.jobTemplate.spec.template.spec" }];
    case "Deployment":
    case "StatefulSet":
    case "DaemonSet":
    case "ReplicaSet":
    case "Job":
    case "ReplicationController":
      return [{ spec: props.spec?.template?.spec, path: "spec.template.spec" }];
    default:
      return [];
  }
}

const STATIC_KEYS: readonly string[] = STATIC_AWS_CREDENTIAL_ENV;

const noStaticAwsKeys: Rule = {
  name: "no-static-aws-keys-in-pod-env",
  domain: "model-repository",
  description: "No container sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_SESSION_TOKEN; pods get AWS access through IRSA.",
  prevents: "Long-lived access keys copied into manifests and Secrets, where they leak, never rotate and outlive the pod that needed them.",
  remediationSteps: "Remove the variables; run the pod as the ServiceAccount annotated with eks.amazonaws.com/role-arn (ModelRepositoryBinding.serviceAccountName).",
  enforcementLevel: "advisory",
  validateResource: (args, report) => {
    if (!isK8sObject(args.type, args.props)) return;
    for (const { spec, path: at } of podSpecPaths(args.props)) {
      for (const group of ["initContainers", "containers", "ephemeralContainers"] as const) {
        (spec?.[group] ?? []).forEach((c: any, i: number) => {
          (c?.env ?? []).forEach((e: any, j: number) => {
            if (STATIC_KEYS.includes(e?.name)) {
              const path = `${at}.${group}[${i}].env[${j}].name`;
              reportAt(report, { path, value: e.name }, `${args.props.kind} ${args.props.metadata?.name ?? args.name}: ${path} (container ${c.name}) is ${e.name}`);
            }
          });
        });
      }
    }
  },
};

export const modelRepositoryRules: Rule[] = [s3Encrypted, s3Versioned, s3PublicAccessBlocked, s3TlsOnly, iamNoWildcardS3, noStaticAwsKeys];
