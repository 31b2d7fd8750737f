// Rules about IAM documents and attachments, read the way IAM evaluates them: a statement's
// Action/Resource/Principal may be a string or a list; condition values may be a scalar or a list;
// condition keys are case-insensitive (IAM User Guide, "Condition element": "Condition key names
// are not case-sensitive"). No library parses policies for us: @cloud-copilot/iam-policy (the
// parser of the iam-simulate used in tests) is AGPL-3.0-or-later (npm view, 2026-12-01), so it stays
// out of the pack.
import { iamDocumentsOf, metadataOf, propsOf, statementsOf, type PolicyDocument, type Statement } from "./props";
import { NONE, resourceRule, type Finding, type Resource, type Rule } from "./rule";
import { BUCKET, BUCKET_POLICY, IAM_POLICY, IAM_ROLE, IAM_ROLE_POLICY_ATTACHMENT } from "./types";
import { decodeJson, show } from "./util";

const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));
const list = (v: unknown): string[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v.map(text) : [text(v)]);

/** A statement's conditions flattened: operator and key lower-cased, values always a list. */
export function conditionsOf(s: Statement): { operator: string; key: string; values: string[] }[] {
  const out: { operator: string; key: string; values: string[] }[] = [];
  for (const [operator, block] of Object.entries(s.Condition ?? {})) {
    for (const [key, values] of Object.entries(block ?? {})) out.push({ operator: operator.toLowerCase(), key: key.toLowerCase(), values: list(values) });
  }
  return out;
}

// ---- resources ---------------------------------------------------------------------------------

/**
 * Actions that do not support resource-level permissions (or only list metadata), for which
 * Resource "*" is the only form IAM accepts: Describe*, non-S3 List*, and a few named ones.
 */
function starOnlyAction(action: string): boolean {
  const a = action.toLowerCase();
  const [service, verb = ""] = a.split(":");
  if (verb.startsWith("describe")) return true;
  if (verb.startsWith("list")) return service !== "s3" || a === "s3:listallmybuckets";
  return [
    "sts:getcalleridentity",
    "ecr:getauthorizationtoken",
    "ec2:getinstancetypesfrominstancerequirements",
    "cloudwatch:putmetricdata",
    "cloudwatch:getmetricdata",
    "cloudwatch:getmetricstatistics",
    "xray:puttracesegments",
    "xray:puttelemetryrecords",
  ].includes(a);
}

/** Why a Resource entry matches more than named resources, or undefined (S3 object-key wildcards inside a named bucket are fine). */
export function wildcardResource(resource: string): string | undefined {
  if (resource === "*") return `"*" (every resource)`;
  const parts = resource.split(":");
  if (parts[0] !== "arn" || parts.length < 6) return /[*?]/.test(resource) ? `${resource} is a pattern` : undefined;
  const [, partition, service, , account] = parts;
  const rest = parts.slice(5).join(":");
  if (/[*?]/.test(partition) || /[*?]/.test(service)) return `${resource} matches every service`;
  if (service === "s3") {
    const bucket = rest.split("/")[0];
    if (/[*?]/.test(bucket)) return `${resource}: bucket ${bucket} is a pattern that matches other buckets`;
    return undefined;
  }
  if (/[*?]/.test(account)) return `${resource} matches every account`;
  if (/^[*?]+$/.test(rest) || /^[\w-]+[/:][*?]+$/.test(rest))
    return `${resource} matches every ${rest.split(/[/:]/)[0] === rest ? "resource" : rest.split(/[/:]/)[0]}`;
  return undefined;
}

/** A condition that narrows "*" to tagged resources (the upstream cluster-autoscaler policy does this for SetDesiredCapacity). */
const scopesByResourceTag = (s: Statement) =>
  conditionsOf(s).some((c) => /^(aws|[a-z0-9-]+):resourcetag\//.test(c.key) && c.operator.startsWith("string") && !c.operator.includes("ifexists"));

/** Findings of one identity policy document: NotAction/NotResource with Allow, all-action wildcards, wildcard resources. */
export function identityStatementProblems(doc: PolicyDocument | undefined): { i: number; field: string; value: unknown; why: string }[] {
  const out: { i: number; field: string; value: unknown; why: string }[] = [];
  statementsOf(doc).forEach((s, i) => {
    if (s?.Effect !== "Allow") return;
    const st = s as Statement & { NotAction?: unknown; NotResource?: unknown };
    if (st.NotAction !== undefined) out.push({ i, field: "NotAction", value: st.NotAction, why: "NotAction with Allow grants every other action" });
    if (st.NotResource !== undefined) out.push({ i, field: "NotResource", value: st.NotResource, why: "NotResource with Allow grants every other resource" });
    const actions = list(s.Action);
    const broad = actions.filter((a) => a === "*" || /^[\w-]+:\*$/.test(a));
    if (broad.length)
      out.push({
        i,
        field: "Action",
        value: s.Action,
        why: `${broad.join(", ")} grants every action${broad.includes("*") ? " of every service" : " of the service"}`,
      });
    if (actions.length && actions.every(starOnlyAction)) return;
    if (scopesByResourceTag(s)) return;
    for (const r of list(s.Resource)) {
      const why = wildcardResource(r);
      if (why) {
        out.push({ i, field: "Resource", value: s.Resource, why: `allows ${actions.join(", ") || "(no action)"} on ${why}` });
        break;
      }
    }
  });
  return out;
}

export const iamStatementsLeastPrivilege = resourceRule({
  name: "iam-statements-least-privilege",
  domain: "iam",
  description:
    "No identity policy statement (Role inline, RolePolicy, Policy, UserPolicy, GroupPolicy) allows NotAction or NotResource, every action (* or " +
    "service:*), or actions on wildcard resources in any form (*, arn:aws:s3:::*/*, a bucket pattern such as models-*, key/*), except actions " +
    "that only accept * (Describe*, List* outside S3, s3:ListAllMyBuckets, sts:GetCallerIdentity, ...) or statements scoped by a ResourceTag condition.",
  prevents: "A model reader, CI or controller role that can read, overwrite or administer every bucket, key or service in the account.",
  remediationSteps:
    "Name the bucket ARN and <bucket ARN>/<prefix>/* (components/model-repository/policies.ts), the key ARN, the exact actions; use Allow with " +
    "Action/Resource lists, never NotAction/NotResource.",
  check: (r) =>
    iamDocumentsOf(r).flatMap(({ where, doc }) => {
      const all = statementsOf(doc);
      return identityStatementProblems(doc).map(({ i, field, value, why }) => {
        const path = `${where}.Statement[${i}].${field}`;
        const sid = all[i]?.Sid ? ` ("${all[i].Sid}")` : "";
        return { path, value, message: `${r.type} ${r.name}: ${path}${sid} is ${show(value)}: ${why}` };
      });
    }),
});

// ---- principals ---------------------------------------------------------------------------------

const KMS_KEY = "aws:kms/key:Key";
const KMS_KEY_POLICY = "aws:kms/keyPolicy:KeyPolicy";

/** Resource policies and trust policies a resource carries (decoded), with their property paths. */
function resourcePoliciesOf(r: Pick<Resource, "type" | "props">): { where: string; doc: PolicyDocument | undefined; trust: boolean }[] {
  const role = propsOf(r, IAM_ROLE);
  if (role) return [{ where: "assumeRolePolicy", doc: decodeJson(role.assumeRolePolicy), trust: true }];
  if (r.type === BUCKET || r.type === BUCKET_POLICY || r.type === KMS_KEY || r.type === KMS_KEY_POLICY) {
    const policy = (r.props as { policy?: unknown }).policy;
    return policy === undefined ? [] : [{ where: "policy", doc: decodeJson(policy), trust: false }];
  }
  return [];
}

/** Is a Principal (or NotPrincipal) everyone? "*", {AWS: "*"}, or a list holding "*". */
function isEveryone(p: unknown): boolean {
  if (p === "*") return true;
  if (p && typeof p === "object") return Object.values(p as Record<string, unknown>).some((v) => list(v).includes("*"));
  return false;
}

/** Conditions that confine "*" to the account, organisation, a source resource or a VPC endpoint. */
const CONFINING_KEYS = [
  "aws:principalorgid",
  "aws:principalaccount",
  "aws:sourceaccount",
  "aws:sourcearn",
  "aws:sourcevpce",
  "aws:sourcevpc",
  "aws:principalarn",
  "kms:calleraccount",
];

export const iamNoPublicPrincipal = resourceRule({
  name: "iam-no-public-principal",
  domain: "iam",
  description:
    'No trust policy allows Principal "*" (or {AWS: "*"}, or NotPrincipal), and no bucket or KMS key policy allows "*" without a condition ' +
    "confining it to the account, organisation, a source ARN/account or a VPC endpoint.",
  prevents: "Any AWS account assuming a stack role, or reading the model bucket or using the model key.",
  remediationSteps:
    "Name the principal (the account root, a role ARN, an OIDC provider with sub/aud conditions); add aws:PrincipalOrgID or aws:SourceAccount conditions.",
  check: (r) =>
    resourcePoliciesOf(r).flatMap(({ where, doc, trust }) =>
      statementsOf(doc).flatMap((s, i): Finding[] => {
        if (s?.Effect !== "Allow") return [];
        const st = s as Statement & { NotPrincipal?: unknown };
        if (st.NotPrincipal !== undefined) {
          const path = `${where}.Statement[${i}].NotPrincipal`;
          return [
            { path, value: st.NotPrincipal, message: `${r.type} ${r.name}: ${path} is ${show(st.NotPrincipal)}: NotPrincipal with Allow admits everyone else` },
          ];
        }
        if (!isEveryone(s.Principal)) return [];
        if (!trust && conditionsOf(s).some((c) => CONFINING_KEYS.includes(c.key) && !c.operator.includes("ifexists") && !c.values.includes("*"))) return [];
        const path = `${where}.Statement[${i}].Principal`;
        return [{ path, value: s.Principal, message: `${r.type} ${r.name}: ${path} is ${show(s.Principal)}: allows ${show(s.Action)} to everyone` }];
      }),
    ),
});

// ---- IRSA trusts ---------------------------------------------------------------------------------

const SUB = /^system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export const iamIrsaTrustExact = resourceRule({
  name: "iam-irsa-trust-exact",
  domain: "iam",
  description:
    "A role that trusts an OIDC provider (sts:AssumeRoleWithWebIdentity) requires, for that provider, an exact sub (one " +
    "system:serviceaccount:<namespace>:<name>, no wildcards) and aud sts.amazonaws.com, with StringEquals (or StringLike without wildcards).",
  prevents: "Every pod of the cluster (any ServiceAccount, or tokens minted for another audience) assuming the model reader or publisher role.",
  remediationSteps:
    "Condition StringEquals { <issuer>:sub: system:serviceaccount:<ns>:<sa>, <issuer>:aud: sts.amazonaws.com } " +
    "(components/upstream/aws-iam.ts irsaTrustPolicy).",
  check: (r) => {
    const role = propsOf(r, IAM_ROLE);
    if (!role) return NONE;
    const doc: PolicyDocument | undefined = decodeJson(role.assumeRolePolicy);
    const out: Finding[] = [];
    statementsOf(doc).forEach((s, i) => {
      if (s?.Effect !== "Allow" || !list(s.Action).some((a) => a.toLowerCase() === "sts:assumerolewithwebidentity" || a === "*" || a.toLowerCase() === "sts:*"))
        return;
      const federated = list((s.Principal as { Federated?: unknown } | undefined)?.Federated);
      for (const provider of federated) {
        const issuer = provider.split(":oidc-provider/")[1]?.toLowerCase();
        if (!issuer) continue;
        const at = `assumeRolePolicy.Statement[${i}].Condition`;
        const exact = (key: string, ok: (v: string) => boolean) => {
          const found = conditionsOf(s).filter((c) => c.key === `${issuer}:${key}`);
          const good = found.some(
            (c) =>
              (c.operator === "stringequals" || (c.operator === "stringlike" && c.values.every((v) => !/[*?]/.test(v)))) &&
              c.values.length > 0 &&
              c.values.every(ok),
          );
          const loose = found.some(
            (c) =>
              !(c.operator === "stringequals" || c.operator === "stringlike") ||
              c.values.some((v) => !ok(v) || (c.operator === "stringlike" && /[*?]/.test(v))),
          );
          return good && !loose ? undefined : found.map((c) => ({ [c.operator]: c.values }));
        };
        const sub = exact("sub", (v) => SUB.test(v));
        const aud = exact("aud", (v) => v === "sts.amazonaws.com");
        for (const [key, bad] of [
          ["sub", sub],
          ["aud", aud],
        ] as const) {
          if (bad === undefined) continue;
          out.push({
            path: at,
            value: s.Condition ?? null,
            message: `Role ${r.name}: ${at} has ${bad.length ? `${issuer}:${key} ${JSON.stringify(bad)}` : `no ${issuer}:${key}`}; needs StringEquals ${key === "sub" ? "system:serviceaccount:<ns>:<name>" : "sts.amazonaws.com"} exactly`,
          });
        }
      }
    });
    return out;
  },
});

// ---- managed policies ---------------------------------------------------------------------------------

/** AWS managed policies that grant administration (account, IAM or organisation) or near it (power user). */
const ADMIN_POLICIES = [
  "AdministratorAccess",
  "PowerUserAccess",
  "IAMFullAccess",
  "AWSOrganizationsFullAccess",
  "AdministratorAccess-Amplify",
  "AdministratorAccess-AWSElasticBeanstalk",
  "job-function/SystemAdministrator",
  "job-function/NetworkAdministrator",
  "job-function/DatabaseAdministrator",
];
const ATTACHMENT_TYPES: readonly string[] = [
  IAM_ROLE_POLICY_ATTACHMENT,
  "aws:iam/policyAttachment:PolicyAttachment",
  "aws:iam/userPolicyAttachment:UserPolicyAttachment",
  "aws:iam/groupPolicyAttachment:GroupPolicyAttachment",
  "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
];

const adminName = (arn: unknown): string | undefined => {
  const m = /^arn:aws[a-z-]*:iam::aws:policy\/(.+)$/.exec(String(arn));
  return m && ADMIN_POLICIES.some((p) => p.toLowerCase() === m[1].toLowerCase()) ? m[1] : undefined;
};

export const iamNoAdminManagedPolicies = resourceRule({
  name: "iam-no-admin-managed-policies",
  domain: "iam",
  description: `No resource attaches an administrator or power-user AWS managed policy (${ADMIN_POLICIES.join(", ")}) to any role, user or group of the stack.`,
  prevents: "A node, IRSA or CI role that can do anything in the account, attached by whichever component or hand-written resource.",
  remediationSteps: "Attach the narrow policy the workload needs (worker node policies for nodes, the model reader policy for Triton).",
  check: (r) => {
    const arns: { path: string; arn: unknown }[] = [];
    if (ATTACHMENT_TYPES.includes(r.type)) {
      const p = r.props as { policyArn?: unknown; policyArns?: unknown[] };
      if (p.policyArn !== undefined) arns.push({ path: "policyArn", arn: p.policyArn });
      (p.policyArns ?? []).forEach((arn, i) => arns.push({ path: `policyArns[${i}]`, arn }));
    }
    const role = propsOf(r, IAM_ROLE) as { managedPolicyArns?: unknown[] } | undefined;
    (role?.managedPolicyArns ?? []).forEach((arn, i) => arns.push({ path: `managedPolicyArns[${i}]`, arn }));
    if (r.type.startsWith("aws:iam/user:") || r.type.startsWith("aws:iam/group:")) return NONE;
    return arns.flatMap(({ path, arn }) => {
      const name = adminName(arn);
      return name ? [{ path, value: arn, message: `${r.type} ${r.name}: ${path} is ${show(arn)}, the AWS managed ${name} policy` }] : [];
    });
  },
});

const AWS_MANAGED_NAMES =
  /^(Amazon|AWS)[A-Z0-9]|^(AdministratorAccess|PowerUserAccess|ReadOnlyAccess|ViewOnlyAccess|IAMFullAccess|IAMReadOnlyAccess|SecurityAudit|SupportUser|Billing)([-_].*)?$/;

export const iamNoAwsManagedPolicyNames = resourceRule({
  name: "iam-no-aws-managed-policy-names",
  domain: "iam",
  description: "No customer managed policy is named (or name-prefixed) like an AWS managed one (Amazon*, AWS*, AdministratorAccess, ReadOnlyAccess, ...).",
  prevents: "A reviewer or auditor trusting a policy because its name reads as AWS's reviewed one, while its document grants something else.",
  remediationSteps: "Name customer policies after the stack and their purpose, e.g. triton-platform-<stack>-model-reader.",
  check: (r) => {
    const p = propsOf(r, IAM_POLICY) as { name?: unknown; namePrefix?: unknown } | undefined;
    if (!p) return NONE;
    const [path, value] = p.name !== undefined ? ["name", p.name] : p.namePrefix !== undefined ? ["namePrefix", p.namePrefix] : ["name", r.name];
    if (!AWS_MANAGED_NAMES.test(text(value))) return NONE;
    return [{ path, value, message: `Policy ${r.name}: ${path} is ${show(value)}, which reads as an AWS managed policy` }];
  },
});

// ---- KMS ------------------------------------------------------------------------------------

export const kmsKeyRotation = resourceRule({
  name: "kms-key-rotation",
  domain: "iam",
  description: "Every symmetric KMS key of the stack rotates its key material (enableKeyRotation true, rotationPeriodInDays at most 365 when set).",
  prevents: "Key material that never changes for the life of the model repository: one leak or cryptanalytic weakness exposes every object ever written.",
  remediationSteps: "Set enableKeyRotation: true on the aws.kms.Key (components/model-repository).",
  check: (r) => {
    if (r.type !== KMS_KEY) return NONE;
    const p = r.props as {
      enableKeyRotation?: unknown;
      customerMasterKeySpec?: unknown;
      keySpec?: unknown;
      rotationPeriodInDays?: unknown;
      keyUsage?: unknown;
    };
    const spec = p.keySpec ?? p.customerMasterKeySpec ?? "SYMMETRIC_DEFAULT";
    if (spec !== "SYMMETRIC_DEFAULT" || (p.keyUsage !== undefined && p.keyUsage !== "ENCRYPT_DECRYPT")) return NONE; // AWS rotates only symmetric encryption keys
    const name = metadataOf(r).name ?? r.name;
    if (p.enableKeyRotation !== true)
      return [
        { path: "enableKeyRotation", value: p.enableKeyRotation, message: `KMS Key ${name}: enableKeyRotation is ${show(p.enableKeyRotation)}, must be true` },
      ];
    if (typeof p.rotationPeriodInDays === "number" && p.rotationPeriodInDays > 365)
      return [
        {
          path: "rotationPeriodInDays",
          value: p.rotationPeriodInDays,
          message: `KMS Key ${name}: rotationPeriodInDays is ${p.rotationPeriodInDays}, above 365`,
        },
      ];
    return NONE;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  iamStatementsLeastPrivilege,
  iamNoPublicPrincipal,
  iamIrsaTrustExact,
  iamNoAdminManagedPolicies,
  iamNoAwsManagedPolicyNames,
  kmsKeyRotation,
];
