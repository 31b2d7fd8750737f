// The Storage component's settings: which StorageClass the stack's persistent volumes
// (Prometheus, Alertmanager) use. By default the stack creates it; `existing` names a class
// the cluster already has instead. config/schema.ts composes this section as
// `triton-platform:storage`; a direct caller resolves through resolveClusterStorageArgs.
import * as v from "valibot";
import { KMS_KEY_ARN, kmsKeyRegion } from "../model-repository/policies";
import { SettingsError, show, type SettingProblem } from "../../lib/errors";
import { checkSettings, doc, pattern, refined, section, type DeepReadonly } from "../../lib/schema";

/** StorageClass names are DNS-1123 subdomains (metadata.name of a cluster-scoped object). */
const storageClassName = pattern(
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  "must be a StorageClass name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253 characters)",
);

// The EBS CSI driver takes "the full ARN of the key" (aws-ebs-csi-driver docs/parameters.md, kmsKeyId).
const kmsKeyArn = pattern(
  KMS_KEY_ARN,
  "must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>): the EBS CSI driver takes the key's full ARN, not an alias",
);

const storageEntries = {
  existing: doc(
    v.optional(storageClassName),
    "Name of a StorageClass the cluster already has, to use instead of creating one. It must exist before `pulumi up` (the volumes stay " +
      "Pending otherwise) and should be encrypted and WaitForFirstConsumer, as the created class is.",
    { default: "none: the stack creates an encrypted gp3 class on the EBS CSI driver" },
  ),
  kmsKeyId: doc(
    v.optional(kmsKeyArn),
    "KMS key that encrypts the created class's volumes, a key ARN in the cluster's region (aws:region). The EBS CSI driver's IAM role then needs kms:Decrypt, " +
      "kms:GenerateDataKeyWithoutPlaintext and kms:CreateGrant on it. Only with the created class (not with existing).",
    { default: "the region's AWS-managed EBS key (aws/ebs)" },
  ),
};

/** The `storage` section of a stack file. */
export const storageSettings = doc(
  refined(section(storageEntries), (s, ctx) => {
    if (s.existing !== undefined && s.kmsKeyId !== undefined) {
      ctx.addIssue({
        path: ["kmsKeyId"],
        message: "must not be set with existing (it configures the class the stack creates; the existing class keeps its own key)",
      });
    }
  }),
  "StorageClass of the stack's persistent volumes (Prometheus, Alertmanager): an encrypted gp3 class on the EBS CSI driver that the stack " +
    "creates, or an existing class by name.",
);

export type StorageSettingsInput = DeepReadonly<v.InferInput<typeof storageSettings>>;
export type StorageSettings = v.InferOutput<typeof storageSettings>;

/** Arguments of the ClusterStorage component: its settings (defaults in storageSettings) and what the stack wires in. */
export type ClusterStorageArgs = StorageSettingsInput & {
  /** Standard labels of the stack, put on the StorageClass it creates. */
  readonly labels: Readonly<Record<string, string>>;
  /** The cluster's region (aws:region): the volumes', so the KMS key's. */
  readonly region: string;
};

export interface ResolvedClusterStorage extends StorageSettings {
  readonly labels: Readonly<Record<string, string>>;
  readonly region: string;
}

/**
 * Resolve a direct caller's arguments (and the stack's section) through the schema, then the
 * rule that reads a reference: the KMS key is in the cluster's region. Every problem in one
 * SettingsError naming the component.
 */
export function resolveClusterStorageArgs(args: ClusterStorageArgs, name = "storage"): ResolvedClusterStorage {
  const { labels, region, ...settings } = args;
  const parsed = checkSettings(storageSettings, settings);
  const problems: SettingProblem[] = parsed.success ? [] : [...parsed.problems];
  // EBS encrypts a volume only with a key of the volume's own region (a multi-Region key's replica has its own ARN).
  if (parsed.success && parsed.output.kmsKeyId !== undefined && kmsKeyRegion(parsed.output.kmsKeyId) !== region) {
    problems.push({
      key: "kmsKeyId",
      rule: `must be a key in the cluster's region ${region} (EBS encrypts with a key of the volume's region)`,
      value: { shown: show(parsed.output.kmsKeyId) },
    });
  }
  if (!parsed.success || problems.length > 0) throw new SettingsError(`invalid arguments of ClusterStorage "${name}"`, problems);
  return { ...parsed.output, labels, region };
}
