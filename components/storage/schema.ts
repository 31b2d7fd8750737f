// The Storage component's settings: which StorageClass the stack's persistent volumes
// (Prometheus, Alertmanager) use. By default the stack creates it; `existing` names a class
// the cluster already has instead. config/schema.ts composes this section as
// `triton-platform:storage`; a direct caller resolves through resolveClusterStorageArgs.
import * as v from "valibot";
import { doc, parseSettings, pattern, refined, section, type DeepReadonly } from "../../lib/schema";

/** StorageClass names are DNS-1123 subdomains (metadata.name of a cluster-scoped object). */
const storageClassName = pattern(
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  "must be a StorageClass name (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253 characters)",
);

// The EBS CSI driver takes "the full ARN of the key" (aws-ebs-csi-driver docs/parameters.md, kmsKeyId).
const kmsKeyArn = pattern(
  /^arn:aws[a-z-]*:kms:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:key\/(mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/,
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
    "KMS key that encrypts the created class's volumes, a key ARN. The EBS CSI driver's IAM role then needs kms:Decrypt, " +
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

/** Arguments of the ClusterStorage component: its settings (defaults in storageSettings) and the stack's labels. */
export type ClusterStorageArgs = StorageSettingsInput & {
  /** Standard labels of the stack, put on the StorageClass it creates. */
  readonly labels: Readonly<Record<string, string>>;
};

export interface ResolvedClusterStorage extends StorageSettings {
  readonly labels: Readonly<Record<string, string>>;
}

/** Resolve a direct caller's arguments through the schema: every bad argument in one SettingsError naming the component. */
export function resolveClusterStorageArgs(args: ClusterStorageArgs, name = "storage"): ResolvedClusterStorage {
  const { labels, ...settings } = args;
  return { ...parseSettings(storageSettings, settings, `invalid arguments of ClusterStorage "${name}"`), labels };
}
