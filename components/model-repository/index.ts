// The model repository Triton reads: a hardened S3 bucket read through an IRSA role, or an
// encrypted EFS file system mounted read-only. Args → resolveModelRepositoryArgs (./schema:
// defaults and rules, once) → pure builders (./builders, ./s3, ./policies, ./efs) → this thin component.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { Release } from "@pulumi/kubernetes/helm/v3";
import * as s3 from "@pulumi/aws/s3";
import * as iam from "@pulumi/aws/iam";
import * as kms from "@pulumi/aws/kms";
import * as efs from "@pulumi/aws/efs";
import { SecurityGroup } from "@pulumi/aws/ec2/securityGroup";
import { SecurityGroupIngressRule } from "@pulumi/aws/vpc/securityGroupIngressRule";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import { getPartitionOutput } from "@pulumi/aws/getPartition";
import type { ModelRepositoryBinding } from "../contracts";
import type * as v from "valibot";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { modelRepositorySettings, resolveModelRepositoryArgs, type ModelRepositoryArgs } from "./schema";
import {
  kmsAliasArgs,
  kmsKeyArgs,
  publisherPrincipals,
  publisherRoleArgs,
  publisherTrustPolicyJson,
  readerRoleArgs,
  readerTrustPolicyJson,
  regionalArgs,
  repositoryEgressPort,
  tritonServiceAccount,
} from "./builders";
import { bucketArgs, bucketArn, bucketHardening, modelConfigObjectArgs, replicaBucketPrefix, replicationConfig, s3ModelRepositoryUri, s3ReaderEnv } from "./s3";
import {
  accountKeyPolicy,
  modelConfigKey,
  modelPublishPolicy,
  modelReadPolicy,
  replicationPolicy,
  replicationTrustPolicy,
  tlsOnlyBucketPolicy,
} from "./policies";
import { REPLICATION_TIME_MINUTES } from "./schema";
import { renderContract } from "../triton/model-config";
import { modelNameOf, type ModelContract } from "../triton/schema";
import type { DeepReadonly } from "../../lib/schema";
import {
  EFS_MOUNT_PATH,
  efsAccessPointArgs,
  efsClaim,
  efsCsiRelease,
  efsFileSystemArgs,
  efsObjectNames,
  efsPersistentVolume,
  efsStorageClass,
  mountTargetArgs,
  mountTargetName,
  nfsIngressRuleArgs,
  nfsSecurityGroupArgs,
} from "./efs";

export * from "./schema";
export * from "./builders";
export * from "./s3";
export * from "./policies";
export * from "./efs";

/** What a stack's disaster-recovery choice implies, as its outputs state it. */
export type DisasterRecoveryRecord =
  | { strategy: "replicate"; replicaBucket: string; replicaRegion: string; replicaKmsKeyArn: string; recoveryPointMinutes: number }
  | { strategy: "republish"; recoveryTimeHours: number };

/** A config.pbtxt the stack writes into the repository (a contracted model's, components/triton/model-config). */
export interface ModelConfigFile {
  readonly model: string;
  readonly text: string;
}

/** The component's arguments: its settings and references, and the model configs the stack owns. */
export type ModelRepositoryComponentArgs = ModelRepositoryArgs & {
  /** Configs of contracted models, written at <modelPrefix>/<model>/config.pbtxt (s3 only; the stack config refuses them with efs). */
  readonly modelConfigs?: readonly ModelConfigFile[];
};

export class ModelRepository extends pulumi.ComponentResource {
  /** What the serving groups consume. */
  readonly binding: ModelRepositoryBinding;
  readonly uri: pulumi.Output<string>;
  readonly serviceAccount: k8s.core.v1.ServiceAccount;
  readonly bucketName?: pulumi.Output<string>;
  readonly readerRoleArn?: pulumi.Output<string>;
  readonly publisherRoleArn?: pulumi.Output<string>;
  readonly fileSystemId?: pulumi.Output<string>;
  /** The stack's disaster-recovery choice for the bucket (s3.disasterRecovery), with what recovery it implies; absent when not stated. */
  readonly disasterRecovery?: pulumi.Output<DisasterRecoveryRecord>;

  /** The config.pbtxt objects the stack owns, by model. */
  readonly modelConfigObjects: Readonly<Record<string, s3.BucketObjectv2>> = {};
  /**
   * What a serving pod needs before it starts (the ServiceAccount; the reader role's policy, or the
   * EFS claim), without the rest of the repository (its hardening, replication, publisher): a
   * dependsOn on the whole component expands to every child, 1,000 config objects at 100 groups.
   * A pod also waits for its own models' config objects (modelConfigObjects).
   */
  readonly podPrerequisites: readonly pulumi.Resource[];

  constructor(name: string, componentArgs: ModelRepositoryComponentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:model-repository:ModelRepository", name, {}, opts);
    const { modelConfigs = [], ...args } = componentArgs;
    const r = resolveModelRepositoryArgs(args, name);
    if (r.backend === "efs" && modelConfigs.length)
      throw new Error(`ModelRepository "${name}": model configs (${modelConfigs.map((c) => c.model).join(", ")}) need the s3 backend (docs/triton-serving.md)`);
    const parent = { parent: this };
    const namespace = pulumi.output(r.namespace);
    const partition = getPartitionOutput({}, parent).partition;
    const accountId = getCallerIdentityOutput({}, parent).accountId;

    // S3 resources may live in another region than the provider's (aws v7 per-resource region).
    const regional = regionalArgs(r);

    let kmsKeyArn: pulumi.Output<string>;
    if (r.kmsKeyArn) {
      kmsKeyArn = pulumi.output(r.kmsKeyArn);
    } else {
      const keyPolicy = pulumi.all([partition, accountId]).apply(([p, account]) => JSON.stringify(accountKeyPolicy(p, account)));
      const key = new kms.Key(`${name}-key`, { ...kmsKeyArgs(r.backend, keyPolicy), ...regional }, parent);
      new kms.Alias(`${name}-key`, { ...kmsAliasArgs(key.keyId), ...regional }, parent);
      kmsKeyArn = key.arn;
    }

    let serviceAccountRoleArn: pulumi.Output<string> | undefined;
    const podNeeds: pulumi.Resource[] = [];
    let env: ModelRepositoryBinding["env"] = [];
    let volume: ModelRepositoryBinding["volume"];

    if (r.backend === "s3") {
      const settings = r.s3;
      let bucketName: pulumi.Output<string>;
      let arn: pulumi.Output<string>;
      if (settings.existingBucket !== undefined) {
        const existing = settings.existingBucket;
        bucketName = pulumi.output(existing);
        arn = partition.apply((p) => bucketArn(p, existing));
      } else {
        const dr = settings.disasterRecovery;
        const bucket = new s3.Bucket(`${name}-bucket`, { ...bucketArgs(settings.bucketPrefix, dr), ...regional }, parent);
        const versioning = this.hardenBucket(name, bucket, kmsKeyArn, settings.noncurrentVersionDays, regional);
        bucketName = bucket.bucket;
        arn = bucket.arn;
        if (dr?.strategy === "replicate" && dr.replicaRegion !== undefined) {
          // The replica: a bucket of its own in replicaRegion, hardened as the source is, under a key of that region.
          const inReplicaRegion = { region: dr.replicaRegion };
          const keyPolicy = pulumi.all([partition, accountId]).apply(([p, account]) => JSON.stringify(accountKeyPolicy(p, account)));
          const replicaKey = new kms.Key(`${name}-replica-key`, { ...kmsKeyArgs(r.backend, keyPolicy), ...inReplicaRegion }, parent);
          new kms.Alias(`${name}-replica-key`, { ...kmsAliasArgs(replicaKey.keyId), ...inReplicaRegion }, parent);
          const replica = new s3.Bucket(`${name}-replica`, { ...bucketArgs(replicaBucketPrefix(settings.bucketPrefix)), ...inReplicaRegion }, parent);
          const replicaVersioning = this.hardenBucket(`${name}-replica`, replica, replicaKey.arn, settings.noncurrentVersionDays, inReplicaRegion);
          const role = new iam.Role(
            `${name}-replication`,
            { description: "S3: replicate the model prefix to the replica bucket", assumeRolePolicy: JSON.stringify(replicationTrustPolicy()) },
            parent,
          );
          const policy = pulumi.all([bucket.arn, kmsKeyArn, replica.arn, replicaKey.arn]).apply(([source, key, replicaArn, replicaKeyArn]) =>
            JSON.stringify(
              replicationPolicy({
                source: { bucketArn: source, prefix: r.modelPrefix, kmsKeyArn: key, region: settings.bucketRegion },
                replica: { bucketArn: replicaArn, kmsKeyArn: replicaKeyArn, region: inReplicaRegion.region },
              }),
            ),
          );
          const rolePolicy = new iam.RolePolicy(`${name}-replication`, { role: role.id, policy }, parent);
          // Both buckets versioned first (S3 refuses replication otherwise), and the role able to act before S3 first assumes it.
          new s3.BucketReplicationConfig(
            `${name}-replication`,
            {
              ...replicationConfig<pulumi.Input<string>>({
                bucket: bucket.id,
                role: role.arn,
                replicaBucketArn: replica.arn,
                replicaKmsKeyArn: replicaKey.arn,
                prefix: r.modelPrefix,
              }),
              ...regional,
            },
            { parent: this, dependsOn: [versioning, replicaVersioning, rolePolicy] },
          );
          this.disasterRecovery = pulumi.all([replica.bucket, replicaKey.arn]).apply(([replicaBucket, replicaKmsKeyArn]): DisasterRecoveryRecord => ({
            strategy: "replicate",
            replicaBucket,
            replicaRegion: inReplicaRegion.region,
            replicaKmsKeyArn,
            recoveryPointMinutes: REPLICATION_TIME_MINUTES,
          }));
        }
      }
      const access = pulumi
        .all([arn, kmsKeyArn])
        .apply(([bucketArn, key]) => ({ bucketArn, prefix: r.modelPrefix, kmsKeyArn: key, region: settings.bucketRegion }));

      const readerTrust = pulumi
        .all([partition, accountId, r.oidcIssuerUrl, namespace])
        .apply(([p, account, issuerUrl, ns]) =>
          readerTrustPolicyJson({ partition: p, accountId: account, issuerUrl, namespace: ns, serviceAccount: r.serviceAccountName }),
        );
      const reader = new iam.Role(`${name}-reader`, readerRoleArgs(readerTrust), parent);
      podNeeds.push(new iam.RolePolicy(`${name}-reader`, { role: reader.id, policy: access.apply((a) => JSON.stringify(modelReadPolicy(a))) }, parent));
      serviceAccountRoleArn = reader.arn;
      this.readerRoleArn = reader.arn;

      if (settings.publisher.enabled) {
        const principals = pulumi.all([partition, accountId]).apply(([p, account]) => publisherPrincipals(settings.publisher.trustedPrincipalArns, p, account));
        const publisher = new iam.Role(`${name}-publisher`, publisherRoleArgs(principals.apply(publisherTrustPolicyJson)), parent);
        const owned = modelConfigs.map((c) => modelConfigKey(r.modelPrefix, c.model));
        new iam.RolePolicy(`${name}-publisher`, { role: publisher.id, policy: access.apply((a) => JSON.stringify(modelPublishPolicy(a, owned))) }, parent);
        this.publisherRoleArn = publisher.arn;
      }

      if (settings.disasterRecovery?.strategy === "republish") {
        const record: DisasterRecoveryRecord = { strategy: "republish", recoveryTimeHours: settings.disasterRecovery.recoveryTimeHours ?? 0 };
        this.disasterRecovery = pulumi.output(record);
      }

      // Each contracted model's config beside its version folders, encrypted as the bucket encrypts (SSE-KMS, bucket key).
      const objects: Record<string, s3.BucketObjectv2> = {};
      for (const c of modelConfigs) {
        objects[c.model] = new s3.BucketObjectv2(
          `${name}-config-${c.model}`,
          { ...modelConfigObjectArgs<pulumi.Input<string>>(bucketName, r.modelPrefix, c, kmsKeyArn), ...regional },
          parent,
        );
      }
      this.modelConfigObjects = objects;
      this.bucketName = bucketName;
      this.uri = bucketName.apply((b) => s3ModelRepositoryUri(b, r.modelPrefix));
      env = s3ReaderEnv(settings.bucketRegion, r.clusterRegion);
    } else {
      const fileSystem = new efs.FileSystem(`${name}-fs`, efsFileSystemArgs({ kmsKeyId: kmsKeyArn, throughputMode: r.efs.throughputMode }), parent);
      const sg = new SecurityGroup(`${name}-nfs`, nfsSecurityGroupArgs(r.vpcId), parent);
      new SecurityGroupIngressRule(`${name}-nfs-from-gpu-nodes`, nfsIngressRuleArgs<pulumi.Input<string>>(sg.id, r.nodeSecurityGroupId), parent);
      const mountTargets = r.efs.subnetIds.map(
        (subnetId) => new efs.MountTarget(mountTargetName(name, subnetId), mountTargetArgs<pulumi.Input<string>>(fileSystem.id, subnetId, sg.id), parent),
      );
      const accessPoint = new efs.AccessPoint(`${name}-ap`, efsAccessPointArgs(fileSystem.id, r.modelPrefix), parent);
      const driver = new Release(`${name}-efs-csi`, efsCsiRelease(), parent);
      const names = namespace.apply(efsObjectNames);
      const sc = names.apply((n) => efsStorageClass(n.storageClass, r.labels));
      const storageClass = new k8s.storage.v1.StorageClass(
        `${name}-efs`,
        {
          metadata: sc.apply((o) => o.metadata),
          provisioner: sc.apply((o) => o.provisioner),
          reclaimPolicy: sc.apply((o) => o.reclaimPolicy),
          volumeBindingMode: sc.apply((o) => o.volumeBindingMode),
        },
        { parent: this, dependsOn: [driver] },
      );
      const pv = pulumi.all([names, namespace, fileSystem.id, accessPoint.id]).apply(([n, ns, fsId, apId]) =>
        efsPersistentVolume({
          name: n.volume,
          storageClass: n.storageClass,
          claim: { namespace: ns, name: n.claim },
          fileSystemId: fsId,
          accessPointId: apId,
          labels: r.labels,
        }),
      );
      // A pod scheduled before the mount targets exist would fail to mount: the volume waits for them.
      const persistentVolume = new k8s.core.v1.PersistentVolume(
        `${name}-efs`,
        { metadata: pv.apply((o) => o.metadata), spec: pv.apply((o) => o.spec) },
        { parent: this, dependsOn: [storageClass, ...mountTargets] },
      );
      const pvc = pulumi
        .all([names, namespace])
        .apply(([n, ns]) => efsClaim({ name: n.claim, namespace: ns, volume: n.volume, storageClass: n.storageClass, labels: r.labels }));
      const claim = new k8s.core.v1.PersistentVolumeClaim(
        `${name}-efs`,
        { metadata: pvc.apply((o) => o.metadata), spec: pvc.apply((o) => o.spec) },
        { parent: this, dependsOn: [persistentVolume] },
      );
      this.fileSystemId = fileSystem.id;
      this.uri = pulumi.output(EFS_MOUNT_PATH);
      volume = { claimName: claim.metadata.name, mountPath: EFS_MOUNT_PATH };
      podNeeds.push(claim);
    }

    const sa = tritonServiceAccount<pulumi.Input<string>>({ name: r.serviceAccountName, namespace, labels: r.labels, roleArn: serviceAccountRoleArn });
    this.serviceAccount = new k8s.core.v1.ServiceAccount(`${name}-sa`, sa, parent);
    this.podPrerequisites = [this.serviceAccount, ...podNeeds];

    this.binding = {
      uri: this.uri,
      serviceAccountName: this.serviceAccount.metadata.name,
      env,
      ...(volume ? { volume } : {}),
      egressPort: repositoryEgressPort(r.backend),
    };
    this.registerOutputs({
      uri: this.uri,
      serviceAccountName: this.binding.serviceAccountName,
      bucketName: this.bucketName,
      readerRoleArn: this.readerRoleArn,
      publisherRoleArn: this.publisherRoleArn,
      fileSystemId: this.fileSystemId,
      disasterRecovery: this.disasterRecovery,
    });
  }

  /** A bucket's hardening (./s3 bucketHardening), each setting its own resource; returns its versioning (what replication and lifecycle wait for). */
  private hardenBucket(
    name: string,
    bucket: s3.Bucket,
    kmsKeyArn: pulumi.Input<string>,
    noncurrentVersionDays: number,
    regional: { region?: string },
  ): s3.BucketVersioning {
    const parent = { parent: this };
    const h = bucketHardening<pulumi.Input<string>>(bucket.id, kmsKeyArn, noncurrentVersionDays);
    const versioning = new s3.BucketVersioning(`${name}-versioning`, { ...h.versioning, ...regional }, parent);
    new s3.BucketServerSideEncryptionConfiguration(`${name}-encryption`, { ...h.encryption, ...regional }, parent);
    const publicAccessBlock = new s3.BucketPublicAccessBlock(`${name}-public-access-block`, { ...h.publicAccessBlock, ...regional }, parent);
    new s3.BucketOwnershipControls(`${name}-ownership`, { ...h.ownership, ...regional }, parent);
    // Lifecycle after versioning: a rule on noncurrent versions of an unversioned bucket is rejected.
    new s3.BucketLifecycleConfiguration(`${name}-lifecycle`, { ...h.lifecycle, ...regional }, { parent: this, dependsOn: [versioning] });
    new s3.BucketPolicy(
      `${name}-tls-only`,
      { bucket: bucket.id, policy: bucket.arn.apply((a) => JSON.stringify(tlsOnlyBucketPolicy(a))), ...regional },
      { parent: this, dependsOn: [publicAccessBlock] },
    );
    return versioning;
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
declare module "../component" {
  interface StackSettings {
    modelRepository: v.InferOutput<typeof modelRepositorySettings>;
  }
  interface Produced {
    /** The model repository: its binding (URI, IRSA service account or EFS claim, egress port) is what serving reads models through. */
    modelRepository: ModelRepository;
  }
}

/**
 * The config.pbtxt of every contracted model of the stack, one per model (the stack config has
 * checked that every contract of a model is the same), in the order the groups list them.
 */
export function stackModelConfigs(
  groups: readonly {
    readonly models?: readonly (string | DeepReadonly<ModelContract>)[];
    readonly canary?: { readonly models?: readonly (string | DeepReadonly<ModelContract>)[] };
  }[],
): ModelConfigFile[] {
  const out = new Map<string, ModelConfigFile>();
  for (const g of groups)
    for (const m of [...(g.models ?? []), ...(g.canary?.models ?? [])])
      if (typeof m !== "string" && !out.has(modelNameOf(m))) out.set(m.name, { model: m.name, text: renderContract(m) });
  return [...out.values()];
}

/** Model repository (S3 + IRSA, or EFS): what the serving groups read their models from. */
export const modelRepositoryComponent: ComponentDescriptor = {
  name: "model-repository",
  sections: { modelRepository: sectionSpec<"modelRepository">(modelRepositorySettings, "docs/model-repository.md") },
  policyDomains: ["model-repository", "iam"],
  argumentKeys: { clusterRegion: "aws:region" },
  build(ctx) {
    const cluster = ctx.need("cluster");
    const modelRepository = new ModelRepository(
      "model-repository",
      {
        ...ctx.settings.modelRepository,
        namespace: ctx.need("servingNamespace").name,
        labels: ctx.need("labels"),
        clusterRegion: ctx.region,
        oidcIssuerUrl: cluster.oidcIssuerUrl,
        vpcId: cluster.vpcId,
        // NFS is admitted from the GPU nodes' own security group only.
        nodeSecurityGroupId: ctx.need("gpuNodes").ref.securityGroupId,
        modelConfigs: stackModelConfigs(ctx.settings.triton.groups),
      },
      { providers: [cluster.aws, cluster.k8s] },
    );
    return { modelRepository };
  },
  outputs(ctx) {
    const m = ctx.need("modelRepository");
    return {
      modelRepositoryUri: m.uri,
      // Backend-specific details (absent keys are simply not exported).
      modelRepositoryDetails: {
        bucketName: m.bucketName,
        readerRoleArn: m.readerRoleArn,
        publisherRoleArn: m.publisherRoleArn,
        fileSystemId: m.fileSystemId,
        serviceAccountName: m.binding.serviceAccountName,
        disasterRecovery: m.disasterRecovery,
      },
    };
  },
};
