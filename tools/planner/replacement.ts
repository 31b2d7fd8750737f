// Which property changes make the provider REPLACE a resource (delete + create) instead of
// updating it in place. A reviewer must see these: replacing a StatefulSet or a node group
// drops every pod on it; replacing a bucket or a file system loses its data.
//
// Sources (the providers' own tables, property names as the Pulumi SDKs spell them):
// - Kubernetes: pulumi-kubernetes provider/pkg/provider/diff.go, `forceNew` and
//   `metadataForceNewProperties` (metadata.name/namespace for every kind). The planner does
//   not set the provider's enableConfigMapMutable/enableSecretMutable, so ConfigMap and
//   Secret data changes replace.
// - AWS: pulumi-aws is bridged from terraform-provider-aws; an attribute with
//   `ForceNew: true` in the Terraform schema becomes a replacement in Pulumi. Read from
//   internal/service/eks/node_group.go, internal/service/efs/file_system.go,
//   internal/service/ec2/ec2_launch_template.go, internal/service/iam/role.go and
//   internal/service/s3/bucket.go.
// Only what those tables list is here: a missing entry under-reports a replacement as an
// update, so add to it, with its source, when a component uses a new resource type.

/** Property paths (dot-separated, as in the recorded inputs) whose change forces replacement. */
export type ReplaceTable = Record<string, readonly string[]>;

const K8S_SELECTOR = ["spec.selector"];

/** Kubernetes kinds by Pulumi type token; metadata.name/namespace apply to every kind. */
export const KUBERNETES_REPLACE: ReplaceTable = {
  "kubernetes:apps/v1:StatefulSet": [...K8S_SELECTOR, "spec.podManagementPolicy", "spec.revisionHistoryLimit", "spec.serviceName", "spec.volumeClaimTemplates"],
  "kubernetes:apps/v1:Deployment": K8S_SELECTOR,
  "kubernetes:apps/v1:DaemonSet": K8S_SELECTOR,
  "kubernetes:batch/v1:Job": [...K8S_SELECTOR, "spec.completions", "spec.parallelism", "spec.template"],
  "kubernetes:core/v1:ConfigMap": ["binaryData", "data"],
  "kubernetes:core/v1:Secret": ["type", "stringData", "data"],
  "kubernetes:core/v1:Service": ["spec.clusterIP"],
  "kubernetes:core/v1:PersistentVolumeClaim": ["spec"],
  "kubernetes:core/v1:ResourceQuota": ["spec.scopes"],
  "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": ["roleRef"],
  "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": ["roleRef"],
  "kubernetes:storage.k8s.io/v1:StorageClass": ["parameters", "provisioner"],
};
export const KUBERNETES_ANY_KIND = ["metadata.name", "metadata.namespace"];

export const AWS_REPLACE: ReplaceTable = {
  "aws:eks/nodeGroup:NodeGroup": [
    "amiType",
    "capacityType",
    "clusterName",
    "diskSize",
    "instanceTypes",
    "launchTemplate.id",
    "launchTemplate.name",
    "nodeGroupName",
    "nodeGroupNamePrefix",
    "nodeRoleArn",
    "remoteAccess",
    "subnetIds",
  ],
  "aws:efs/fileSystem:FileSystem": ["availabilityZoneName", "creationToken", "encrypted", "kmsKeyId", "performanceMode"],
  "aws:ec2/launchTemplate:LaunchTemplate": ["name", "namePrefix"],
  "aws:iam/role:Role": ["name", "namePrefix"],
  "aws:s3/bucket:Bucket": ["bucket", "bucketPrefix", "objectLockEnabled"],
  "aws:s3/bucketV2:BucketV2": ["bucket", "bucketPrefix", "objectLockEnabled"],
};

/** The replace-forcing paths of a resource type. */
export function replacePaths(type: string): string[] {
  const own = KUBERNETES_REPLACE[type] ?? AWS_REPLACE[type] ?? [];
  // Kubernetes objects only: providers, Helm releases and components have no metadata to rename.
  const k8sObject = type.startsWith("kubernetes:") && !type.startsWith("kubernetes:helm.sh/") && type !== "pulumi:providers:kubernetes";
  return [...(k8sObject ? KUBERNETES_ANY_KIND : []), ...own];
}

function valueAt(v: unknown, path: string): unknown {
  let cur = v;
  for (const seg of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** Deep equality of plain JSON data (key order ignored). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * The replace-forcing paths whose value differs between two sets of inputs of a resource
 * of `type` (empty: an in-place update). `changedSecret` answers for paths whose values are
 * masked on both sides.
 */
export function replaceReasons(
  type: string,
  oldProps: Record<string, unknown>,
  newProps: Record<string, unknown>,
  changedSecret?: (path: string) => boolean,
): string[] {
  return replacePaths(type).filter((p) => !sameValue(valueAt(oldProps, p), valueAt(newProps, p)) || changedSecret?.(p) === true);
}
