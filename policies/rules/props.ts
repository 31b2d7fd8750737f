// Typed views of the inputs the engine records for each resource type the rules read, so a
// rule walks `sts.spec?.template?.spec?.containers` with the Kubernetes/AWS field names
// checked by the compiler instead of `Record<string, any>`. The types are the SDKs' own
// input types (@pulumi/kubernetes types/input, @pulumi/aws <service>/<resource> *Args) with every Input<T>
// resolved to T (the engine sees plain values) and every field optional (a rule must cope
// with what is absent). Type-only imports: the pack loads neither SDK for them.
// Each type is imported from its own module, not from the SDKs' index files: the whole of
// @pulumi/aws would make the pack's type check take many seconds longer (the policy host
// no longer type-checks it, see policies/index.cjs; npm test does).
import type * as pulumi from "@pulumi/pulumi";
import type * as k8sInput from "@pulumi/kubernetes/types/input";
import type { ReleaseArgs } from "@pulumi/kubernetes/helm/v3/release";
import type { LaunchTemplateArgs } from "@pulumi/aws/ec2/launchTemplate";
import type { SecurityGroupArgs } from "@pulumi/aws/ec2/securityGroup";
import type { SecurityGroupRuleArgs } from "@pulumi/aws/ec2/securityGroupRule";
import type { NodeGroupArgs } from "@pulumi/aws/eks/nodeGroup";
import type { RoleArgs } from "@pulumi/aws/iam/role";
import type { BucketReplicationConfigArgs } from "@pulumi/aws/s3/bucketReplicationConfig";
import type { RolePolicyAttachmentArgs } from "@pulumi/aws/iam/rolePolicyAttachment";
import type { ProviderArgs } from "@pulumi/aws/provider";
import type { BucketArgs } from "@pulumi/aws/s3/bucket";
import type { BucketPublicAccessBlockArgs } from "@pulumi/aws/s3/bucketPublicAccessBlock";
import type { BucketServerSideEncryptionConfigurationArgs } from "@pulumi/aws/s3/bucketServerSideEncryptionConfiguration";
import type { BucketVersioningArgs } from "@pulumi/aws/s3/bucketVersioning";
import type { SecurityGroupIngressRuleArgs } from "@pulumi/aws/vpc/securityGroupIngressRule";
import type { Resource } from "./rule";
import * as T from "./types";

type Primitive = string | number | boolean | bigint | symbol | null | undefined;
type Unwrap<X> = X extends PromiseLike<infer U> ? U : X extends pulumi.OutputInstance<infer U> ? U : X;
/** An SDK input type as the engine records it: Input<T> resolved, every field optional and read-only. */
export type Plain<X> = X extends Primitive
  ? X
  : X extends readonly (infer E)[]
    ? readonly Plain<Unwrap<E>>[]
    : X extends object
      ? { readonly [K in keyof X as string extends K ? never : K]?: Plain<Unwrap<X[K]>> } & IndexOf<X>
      : X;
/** A string index signature (labels, annotations, data) stays one: its values are present where its keys are. */
type IndexOf<X> = string extends keyof X ? { readonly [k: string]: Plain<Unwrap<X[string & keyof X]>> } : unknown;

export type ObjectMeta = Plain<k8sInput.meta.v1.ObjectMeta>;
export type PodSpec = Plain<k8sInput.core.v1.PodSpec>;
export type Container = Plain<k8sInput.core.v1.Container>;
export type ServicePort = Plain<k8sInput.core.v1.ServicePort>;
export type NetworkPolicyPeer = Plain<k8sInput.networking.v1.NetworkPolicyPeer>;

/** A prometheus-operator ServiceMonitor (a CRD: no SDK type), the fields the rules read. */
export interface ServiceMonitor {
  readonly metadata?: ObjectMeta;
  readonly spec?: {
    readonly namespaceSelector?: { readonly any?: boolean; readonly matchNames?: readonly string[] };
    readonly selector?: Plain<k8sInput.meta.v1.LabelSelector>;
    readonly endpoints?: readonly {
      readonly port?: string;
      readonly targetPort?: string | number;
      readonly relabelings?: readonly Relabeling[];
    }[];
  };
}

/** A Prometheus relabel step, as a ServiceMonitor (camelCase) or a raw scrape config (snake_case) spells it. */
export interface Relabeling {
  readonly action?: string;
  readonly sourceLabels?: readonly string[];
  readonly source_labels?: readonly string[];
  readonly separator?: string;
  readonly regex?: string;
}

/** Recorded props per type token: the SDK input type of each resource type a rule reads. */
interface PropsByType {
  [T.STATEFUL_SET]: Plain<k8sInput.apps.v1.StatefulSet>;
  [T.DEPLOYMENT]: Plain<k8sInput.apps.v1.Deployment>;
  [T.DAEMON_SET]: Plain<k8sInput.apps.v1.DaemonSet>;
  [T.SERVICE]: Plain<k8sInput.core.v1.Service>;
  [T.CONFIG_MAP]: Plain<k8sInput.core.v1.ConfigMap>;
  [T.POD_DISRUPTION_BUDGET]: Plain<k8sInput.policy.v1.PodDisruptionBudget>;
  [T.HORIZONTAL_POD_AUTOSCALER]: Plain<k8sInput.autoscaling.v2.HorizontalPodAutoscaler>;
  [T.NETWORK_POLICY]: Plain<k8sInput.networking.v1.NetworkPolicy>;
  [T.SERVICE_MONITOR]: ServiceMonitor;
  [T.HELM_RELEASE]: Plain<Omit<ReleaseArgs, "values">> & { readonly name?: string; readonly values?: Record<string, any> };
  [T.NODE_GROUP]: Plain<NodeGroupArgs>;
  [T.LAUNCH_TEMPLATE]: Plain<LaunchTemplateArgs>;
  [T.SECURITY_GROUP]: Plain<SecurityGroupArgs>;
  [T.SECURITY_GROUP_RULE]: Plain<SecurityGroupRuleArgs>;
  [T.SECURITY_GROUP_INGRESS_RULE]: Plain<SecurityGroupIngressRuleArgs>;
  [T.BUCKET]: Plain<Omit<BucketArgs, "policy">> & { readonly policy?: unknown };
  [T.BUCKET_ENCRYPTION]: Plain<BucketServerSideEncryptionConfigurationArgs>;
  [T.BUCKET_VERSIONING]: Plain<BucketVersioningArgs>;
  [T.BUCKET_PUBLIC_ACCESS_BLOCK]: Plain<BucketPublicAccessBlockArgs>;
  [T.BUCKET_POLICY]: { readonly bucket?: string; readonly policy?: unknown };
  [T.IAM_ROLE]: Plain<Omit<RoleArgs, "inlinePolicies">> & { readonly inlinePolicies?: readonly { readonly name?: string; readonly policy?: unknown }[] };
  [T.IAM_ROLE_POLICY_ATTACHMENT]: Plain<RolePolicyAttachmentArgs>;
  [T.AWS_PROVIDER]: Omit<Plain<ProviderArgs>, "defaultTags"> & { readonly defaultTags?: unknown };
  [T.IAM_POLICY]: { readonly name?: string; readonly namePrefix?: string; readonly policy?: unknown };
  [T.BUCKET_OWNERSHIP_CONTROLS]: { readonly bucket?: string; readonly rule?: { readonly objectOwnership?: string } };
  [T.BUCKET_LIFECYCLE]: {
    readonly bucket?: string;
    readonly rules?: readonly { readonly status?: string; readonly noncurrentVersionExpiration?: { readonly noncurrentDays?: number } }[];
  };
  [T.BUCKET_LOGGING]: { readonly bucket?: string; readonly targetBucket?: string };
  [T.BUCKET_REPLICATION]: Plain<BucketReplicationConfigArgs>;
}
export type PropsOf<Type extends keyof PropsByType> = PropsByType[Type];

/** The props of `r` typed as its SDK inputs when `r` is of that type, else undefined. */
export function propsOf<Type extends keyof PropsByType>(r: Pick<Resource, "type" | "props">, type: Type): PropsByType[Type] | undefined {
  return r.type === type ? (r.props as PropsByType[Type]) : undefined;
}

/** Metadata of any Kubernetes object (its props, read as an object with metadata). */
export function metadataOf(r: Pick<Resource, "props">): ObjectMeta {
  return (r.props as { metadata?: ObjectMeta }).metadata ?? {};
}

/** A Kubernetes workload or Pod, as far as its pod template goes (kind picks the path). */
type WorkloadProps = {
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  readonly spec?: Plain<k8sInput.apps.v1.DeploymentSpec> &
    Plain<k8sInput.core.v1.PodSpec> & { readonly jobTemplate?: Plain<k8sInput.batch.v1.JobTemplateSpec> };
};

/**
 * The pod specs of a workload manifest with their property paths: a Pod's own spec, a
 * CronJob's job template's, and the pod template's of Deployment, StatefulSet, DaemonSet,
 * ReplicaSet, Job and ReplicationController (by `kind`, which every manifest carries).
 */
export function podSpecsOf(r: Pick<Resource, "props">): { spec: PodSpec | undefined; path: string }[] {
  const props = r.props as WorkloadProps;
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

/** The three container lists of a pod spec, in the order Pod Security Admission visits them (policy/visitor.go). */
export const CONTAINER_LISTS = ["initContainers", "containers", "ephemeralContainers"] as const;

/** Every container of a pod spec (init, regular and ephemeral), each with its property path. */
export function containersOf(spec: PodSpec | undefined, at: string): { c: Container; path: string; list: (typeof CONTAINER_LISTS)[number] }[] {
  return CONTAINER_LISTS.flatMap((list) => (spec?.[list] ?? []).map((c, i) => ({ c: c ?? {}, path: `${at}.${list}[${i}]`, list })));
}

/** The pod template metadata of a workload (a Pod's own metadata; a CronJob's job template's pod template). */
export function podMetadataOf(r: Pick<Resource, "props">): ObjectMeta {
  const props = r.props as WorkloadProps;
  switch (props.kind) {
    case "Pod":
      return props.metadata ?? {};
    case "CronJob":
      return props.spec?.jobTemplate?.spec?.template?.metadata ?? {};
    default:
      return props.spec?.template?.metadata ?? {};
  }
}

/** The labels of a workload's pod template (Deployment, StatefulSet, DaemonSet: spec.template.metadata.labels). */
export function podTemplateLabelsOf(r: Pick<Resource, "props">): Readonly<Record<string, string>> {
  return podMetadataOf(r).labels ?? {};
}

/** An ingress permission as the three AWS resource shapes express it. */
export interface Opening {
  /** Each source CIDR with its property path. */
  cidrs: { path: string; cidr: string }[];
  /** Each source prefix list id with its property path. */
  prefixLists: { path: string; id: string }[];
  /** The security group the opening belongs to (its id as referenced), when the resource names it. */
  group?: string;
  protocol: string;
  fromPort?: number;
  toPort?: number;
}

/** CIDR list fields of an object, each entry with its property path. */
function cidrsAt(o: Readonly<Record<string, unknown>>, fields: string[], prefix = ""): { path: string; cidr: string }[] {
  return fields.flatMap((f) => {
    const v = o[f];
    if (Array.isArray(v)) return v.map((cidr: string, i: number) => ({ path: `${prefix}${f}[${i}]`, cidr }));
    return typeof v === "string" && v ? [{ path: `${prefix}${f}`, cidr: v }] : [];
  });
}

/** Ingress openings of an AWS security-group resource (standalone rule, legacy rule, or inline ingress). */
export function securityGroupIngressOf(r: Pick<Resource, "type" | "props">): Opening[] {
  const standalone = propsOf(r, T.SECURITY_GROUP_INGRESS_RULE);
  if (standalone) {
    return [
      {
        cidrs: cidrsAt(standalone, ["cidrIpv4", "cidrIpv6"]),
        prefixLists: cidrsAt(standalone, ["prefixListId"]).map(({ path, cidr }) => ({ path, id: cidr })),
        group: standalone.securityGroupId,
        protocol: standalone.ipProtocol as string,
        fromPort: standalone.fromPort,
        toPort: standalone.toPort,
      },
    ];
  }
  const legacy = propsOf(r, T.SECURITY_GROUP_RULE);
  if (legacy) {
    if (legacy.type !== "ingress") return [];
    return [
      {
        cidrs: cidrsAt(legacy, ["cidrBlocks", "ipv6CidrBlocks"]),
        prefixLists: cidrsAt(legacy, ["prefixListIds"]).map(({ path, cidr }) => ({ path, id: cidr })),
        group: legacy.securityGroupId,
        protocol: legacy.protocol as string,
        fromPort: legacy.fromPort,
        toPort: legacy.toPort,
      },
    ];
  }
  const group = propsOf(r, T.SECURITY_GROUP);
  if (group) {
    return (group.ingress ?? []).map((i, n) => ({
      cidrs: cidrsAt(i, ["cidrBlocks", "ipv6CidrBlocks"], `ingress[${n}].`),
      prefixLists: cidrsAt(i, ["prefixListIds"], `ingress[${n}].`).map(({ path, cidr }) => ({ path, id: cidr })),
      protocol: i.protocol as string,
      fromPort: i.fromPort,
      toPort: i.toPort,
    }));
  }
  return [];
}

/** An IAM policy document, as far as the rules read it (IAM allows one statement or a list). */
export interface PolicyDocument {
  readonly Statement?: Statement | readonly Statement[];
}
export interface Statement {
  readonly Sid?: string;
  readonly Effect?: string;
  readonly Principal?: unknown;
  readonly Action?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** A policy document's statements: IAM allows one statement object or a list of them. */
export function statementsOf(doc: PolicyDocument | undefined): readonly Statement[] {
  const s = doc?.Statement;
  return Array.isArray(s) ? s : s ? [s as Statement] : [];
}

const POLICY_DOCUMENT_TYPES: readonly string[] = [T.IAM_ROLE_POLICY, T.IAM_POLICY, T.IAM_USER_POLICY, T.IAM_GROUP_POLICY];

/** IAM policy documents a resource carries (decoded from JSON): Role inlinePolicies, RolePolicy/Policy/UserPolicy/GroupPolicy policy. */
export function iamDocumentsOf(r: Pick<Resource, "type" | "props">): { where: string; doc: PolicyDocument | undefined }[] {
  const role = propsOf(r, T.IAM_ROLE);
  if (role) return (role.inlinePolicies ?? []).map((p, i) => ({ where: `inlinePolicies[${i}].policy`, doc: decodeJson(p?.policy) }));
  if (POLICY_DOCUMENT_TYPES.includes(r.type)) return [{ where: "policy", doc: decodeJson((r.props as { policy?: unknown }).policy) }];
  return [];
}

/** Provider config objects reach the engine JSON-encoded; accept both forms. */
export function decodeJson(v: unknown): any {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}
