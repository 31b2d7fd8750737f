// The model repository Triton reads: a hardened S3 bucket read through an IRSA role, or an
// encrypted EFS file system mounted read-only. Args → resolveModelRepositoryArgs (defaults and
// validation, once) → pure builders (./s3, ./policies, ./efs) → this thin component.
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
import { EFS_CSI_CHART, NFS_PORT } from "../upstream/aws-efs-csi";
import { IRSA_REGIONAL_STS_ANNOTATION, IRSA_ROLE_ANNOTATION, oidcProviderArn } from "../upstream/aws-iam";
import { bucketHardening, s3ModelRepositoryUri, s3ReaderEnv } from "./s3";
import { irsaTrustPolicy, kmsKeyRegion, modelPublishPolicy, modelReadPolicy, publisherTrustPolicy, tlsOnlyBucketPolicy } from "./policies";
import {
  EFS_MOUNT_PATH,
  efsAccessPointArgs,
  efsClaim,
  efsCsiValues,
  efsFileSystemArgs,
  efsObjectNames,
  efsPersistentVolume,
  efsStorageClass,
  nfsIngressRuleArgs,
  type EfsThroughputMode,
} from "./efs";

export * from "./s3";
export * from "./policies";
export * from "./efs";

export type ModelRepositoryBackend = "s3" | "efs";

/** S3 backend settings. */
export interface ModelRepositoryS3Args {
  /** Prefix of the bucket the stack creates (AWS appends a unique suffix). @default "triton-models-" */
  readonly bucketPrefix?: string;
  /** Use this existing bucket instead of creating one (its hardening is then its owner's job). */
  readonly existingBucket?: string;
  /** Region of the bucket. @default the cluster's region */
  readonly bucketRegion?: string;
  /** Days a replaced or deleted model object version is kept. @default 30 */
  readonly noncurrentVersionDays?: number;
  /** Optional role the CI assumes to upload models (write to the prefix only). */
  readonly publisher?: {
    /** @default false */
    readonly enabled?: boolean;
    /** Principals allowed to assume it. @default the account root (delegates to the account's IAM policies) */
    readonly trustedPrincipalArns?: string[];
  };
}

/** EFS backend settings. */
export interface ModelRepositoryEfsArgs {
  /** One mount target per subnet: a subnet in every zone the GPU nodes run in. */
  readonly subnetIds: string[];
  /** @default "elastic" */
  readonly throughputMode?: EfsThroughputMode;
}

export interface ModelRepositoryArgs {
  /** @default "s3" */
  readonly backend?: ModelRepositoryBackend;
  /** Namespace of the Triton pods: the ServiceAccount (and the EFS claim) live there. */
  readonly namespace: pulumi.Input<string>;
  /** ServiceAccount the Triton pods run as. @default "triton" */
  readonly serviceAccountName?: string;
  /** Standard labels for the Kubernetes objects. */
  readonly labels: Record<string, string>;
  /** The cluster's (and the stack's) region. */
  readonly clusterRegion: string;
  /** OIDC issuer URL of the cluster, for the IRSA trust policy. */
  readonly oidcIssuerUrl: pulumi.Input<string>;
  /** Folder of the model repository in the bucket / on the file system. @default "models" */
  readonly modelPrefix?: string;
  /** KMS key (ARN) that encrypts the bucket or file system. @default a key the stack creates */
  readonly kmsKeyArn?: string;
  readonly s3?: ModelRepositoryS3Args;
  readonly efs?: ModelRepositoryEfsArgs;
  /** VPC of the cluster (EFS backend: the mount targets' security group). */
  readonly vpcId?: pulumi.Input<string>;
  /** Security group of the GPU nodes: the only source admitted to NFS (EFS backend). */
  readonly nodeSecurityGroupId?: pulumi.Input<string>;
}

export interface ResolvedModelRepositoryArgs {
  backend: ModelRepositoryBackend;
  serviceAccountName: string;
  labels: Record<string, string>;
  clusterRegion: string;
  /** Region of the models: the bucket's (s3) or the cluster's (efs, mounted in-region). */
  dataRegion: string;
  modelPrefix: string;
  kmsKeyArn?: string;
  s3: {
    bucketPrefix: string;
    existingBucket?: string;
    bucketRegion: string;
    noncurrentVersionDays: number;
    publisher: { enabled: boolean; trustedPrincipalArns?: string[] };
  };
  efs: { subnetIds: string[]; throughputMode: EfsThroughputMode };
}


/** Apply defaults once and check the rules between arguments; throws naming every broken one. */
export function resolveModelRepositoryArgs(args: ModelRepositoryArgs): ResolvedModelRepositoryArgs {
  const backend = args.backend ?? "s3";
  const bucketRegion = args.s3?.bucketRegion ?? args.clusterRegion;
  const r: ResolvedModelRepositoryArgs = {
    backend,
    serviceAccountName: args.serviceAccountName ?? "triton",
    labels: args.labels,
    clusterRegion: args.clusterRegion,
    dataRegion: backend === "s3" ? bucketRegion : args.clusterRegion,
    modelPrefix: args.modelPrefix ?? "models",
    kmsKeyArn: args.kmsKeyArn,
    s3: {
      bucketPrefix: args.s3?.bucketPrefix ?? "triton-models-",
      existingBucket: args.s3?.existingBucket,
      bucketRegion,
      noncurrentVersionDays: args.s3?.noncurrentVersionDays ?? 30,
      publisher: { enabled: args.s3?.publisher?.enabled ?? false, trustedPrincipalArns: args.s3?.publisher?.trustedPrincipalArns },
    },
    efs: { subnetIds: args.efs?.subnetIds ?? [], throughputMode: args.efs?.throughputMode ?? "elastic" },
  };
  const errors: pulumi.InputPropertyErrorDetails[] = [];
  if (/^\/|\/$/.test(r.modelPrefix)) errors.push({ propertyPath: "modelPrefix", reason: `must not start or end with '/', got ${JSON.stringify(r.modelPrefix)}` });
  if (backend === "efs") {
    if (r.efs.subnetIds.length === 0) errors.push({ propertyPath: "efs.subnetIds", reason: "is required for the efs backend (one subnet per GPU zone)" });
    if (args.vpcId === undefined) errors.push({ propertyPath: "vpcId", reason: "is required for the efs backend" });
    if (args.nodeSecurityGroupId === undefined) errors.push({ propertyPath: "nodeSecurityGroupId", reason: "is required for the efs backend (the only NFS source)" });
  } else {
    if (r.s3.existingBucket && !r.kmsKeyArn) {
      errors.push({ propertyPath: "kmsKeyArn", reason: "is required with s3.existingBucket (the reader role must be granted kms:Decrypt on the bucket's key)" });
    }
  }
  // SSE-KMS and EFS both need the key in the data's own region.
  if (r.kmsKeyArn && kmsKeyRegion(r.kmsKeyArn) !== r.dataRegion) {
    errors.push({ propertyPath: "kmsKeyArn", reason: `must be a key in ${r.dataRegion} (the ${backend === "s3" ? "bucket's" : "file system's"} region), got ${r.kmsKeyArn}` });
  }
  if (errors.length) {
    throw new pulumi.InputPropertiesError({ message: `invalid model repository arguments: ${errors.map((e) => `${e.propertyPath} ${e.reason}`).join("; ")}`, errors });
  }
  return r;
}

/** The Kubernetes ServiceAccount of the Triton pods (annotated with the IRSA role for S3). */
export function tritonServiceAccount<T>(args: { name: string; namespace: T; labels: Record<string, string>; roleArn?: T }) {
  return {
    metadata: {
      name: args.name,
      namespace: args.namespace,
      labels: args.labels,
      ...(args.roleArn !== undefined ? { annotations: { [IRSA_ROLE_ANNOTATION]: args.roleArn, [IRSA_REGIONAL_STS_ANNOTATION]: "true" } } : {}),
    },
    // Triton never talks to the Kubernetes API; the IRSA token is a separate projected volume.
    automountServiceAccountToken: false,
  };
}

export class ModelRepository extends pulumi.ComponentResource {
  /** What the serving groups consume. */
  readonly binding: ModelRepositoryBinding;
  readonly uri: pulumi.Output<string>;
  readonly serviceAccount: k8s.core.v1.ServiceAccount;
  readonly bucketName?: pulumi.Output<string>;
  readonly readerRoleArn?: pulumi.Output<string>;
  readonly publisherRoleArn?: pulumi.Output<string>;
  readonly fileSystemId?: pulumi.Output<string>;

  constructor(name: string, args: ModelRepositoryArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:model-repository:ModelRepository", name, {}, opts);
    const r = resolveModelRepositoryArgs(args);
    const parent = { parent: this };
    const namespace = pulumi.output(args.namespace);
    const partition = getPartitionOutput({}, parent).partition;
    const accountId = getCallerIdentityOutput({}, parent).accountId;

    // S3 resources may live in another region than the provider's (aws v7 per-resource region).
    const regional = r.dataRegion !== r.clusterRegion ? { region: r.dataRegion } : {};

    let kmsKeyArn: pulumi.Output<string>;
    if (r.kmsKeyArn) {
      kmsKeyArn = pulumi.output(r.kmsKeyArn);
    } else {
      const key = new kms.Key(
        `${name}-key`,
        {
          description: `Triton model repository (${r.backend})`,
          // Rotation: a key leaked in year one no longer decrypts new data in year two.
          enableKeyRotation: true,
          // Longest window: deleting the key destroys every model it encrypted; 30 days to notice.
          deletionWindowInDays: 30,
          ...regional,
        },
        parent,
      );
      new kms.Alias(`${name}-key`, { namePrefix: "alias/triton-model-repository-", targetKeyId: key.keyId, ...regional }, parent);
      kmsKeyArn = key.arn;
    }

    let serviceAccountRoleArn: pulumi.Output<string> | undefined;
    let env: ModelRepositoryBinding["env"] = [];
    let volume: ModelRepositoryBinding["volume"];

    if (r.backend === "s3") {
      let bucketName: pulumi.Output<string>;
      let bucketArn: pulumi.Output<string>;
      if (r.s3.existingBucket) {
        const existing = r.s3.existingBucket;
        bucketName = pulumi.output(existing);
        bucketArn = partition.apply((p) => `arn:${p}:s3:::${existing}`);
      } else {
        // forceDestroy false: `pulumi destroy` fails on a non-empty bucket instead of deleting the models.
        const bucket = new s3.Bucket(`${name}-bucket`, { bucketPrefix: r.s3.bucketPrefix, forceDestroy: false, ...regional }, parent);
        const h = bucketHardening<pulumi.Input<string>>(bucket.id, kmsKeyArn, r.s3.noncurrentVersionDays);
        const versioning = new s3.BucketVersioning(`${name}-versioning`, { ...h.versioning, ...regional }, parent);
        new s3.BucketServerSideEncryptionConfiguration(`${name}-encryption`, { ...h.encryption, ...regional }, parent);
        const publicAccessBlock = new s3.BucketPublicAccessBlock(`${name}-public-access-block`, { ...h.publicAccessBlock, ...regional }, parent);
        new s3.BucketOwnershipControls(`${name}-ownership`, { ...h.ownership, ...regional }, parent);
        // Lifecycle after versioning: a rule on noncurrent versions of an unversioned bucket is rejected.
        new s3.BucketLifecycleConfiguration(`${name}-lifecycle`, { ...h.lifecycle, ...regional }, { parent: this, dependsOn: [versioning] });
        new s3.BucketPolicy(
          `${name}-tls-only`,
          { bucket: bucket.id, policy: bucket.arn.apply((arn) => JSON.stringify(tlsOnlyBucketPolicy(arn))), ...regional },
          { parent: this, dependsOn: [publicAccessBlock] },
        );
        bucketName = bucket.bucket;
        bucketArn = bucket.arn;
      }
      const access = pulumi.all([bucketArn, kmsKeyArn]).apply(([arn, key]) => ({ bucketArn: arn, prefix: r.modelPrefix, kmsKeyArn: key, region: r.s3.bucketRegion }));

      const reader = new iam.Role(
        `${name}-reader`,
        {
          description: "Triton: read-only access to the model repository prefix (IRSA)",
          assumeRolePolicy: pulumi.all([partition, accountId, args.oidcIssuerUrl, namespace]).apply(([p, account, issuer, ns]) =>
            JSON.stringify(
              irsaTrustPolicy({ providerArn: oidcProviderArn(p, account, issuer), issuerUrl: issuer, namespace: ns, serviceAccount: r.serviceAccountName }),
            ),
          ),
          maxSessionDuration: 3600,
        },
        parent,
      );
      new iam.RolePolicy(`${name}-reader`, { role: reader.id, policy: access.apply((a) => JSON.stringify(modelReadPolicy(a))) }, parent);
      serviceAccountRoleArn = reader.arn;
      this.readerRoleArn = reader.arn;

      if (r.s3.publisher.enabled) {
        const principals = pulumi
          .all([partition, accountId])
          .apply(([p, account]) => r.s3.publisher.trustedPrincipalArns ?? [`arn:${p}:iam::${account}:root`]);
        const publisher = new iam.Role(
          `${name}-publisher`,
          {
            description: "CI: publish models to the model repository prefix",
            assumeRolePolicy: principals.apply((ps) => JSON.stringify(publisherTrustPolicy(ps))),
            maxSessionDuration: 3600,
          },
          parent,
        );
        new iam.RolePolicy(`${name}-publisher`, { role: publisher.id, policy: access.apply((a) => JSON.stringify(modelPublishPolicy(a))) }, parent);
        this.publisherRoleArn = publisher.arn;
      }

      this.bucketName = bucketName;
      this.uri = bucketName.apply((b) => s3ModelRepositoryUri(b, r.modelPrefix));
      env = s3ReaderEnv(r.s3.bucketRegion, r.clusterRegion);
    } else {
      const fileSystem = new efs.FileSystem(
        `${name}-fs`,
        efsFileSystemArgs({ kmsKeyId: kmsKeyArn, throughputMode: r.efs.throughputMode }),
        parent,
      );
      const sg = new SecurityGroup(
        `${name}-nfs`,
        // No inline rules: the provider then removes AWS's default allow-all egress; NFS replies are stateful.
        { vpcId: args.vpcId, description: "EFS mount targets of the Triton model repository: NFS from GPU nodes only" },
        parent,
      );
      new SecurityGroupIngressRule(`${name}-nfs-from-gpu-nodes`, nfsIngressRuleArgs<pulumi.Input<string>>(sg.id, args.nodeSecurityGroupId!), parent);
      const mountTargets = r.efs.subnetIds.map(
        // Named by subnet, not position: reordering the list must not replace mount targets.
        (subnetId) => new efs.MountTarget(`${name}-mt-${subnetId}`, { fileSystemId: fileSystem.id, subnetId, securityGroups: [sg.id] }, parent),
      );
      const accessPoint = new efs.AccessPoint(`${name}-ap`, efsAccessPointArgs(fileSystem.id, r.modelPrefix), parent);
      const driver = new Release(
        `${name}-efs-csi`,
        {
          name: EFS_CSI_CHART.chart,
          chart: EFS_CSI_CHART.chart,
          version: EFS_CSI_CHART.version,
          repositoryOpts: { repo: EFS_CSI_CHART.repo },
          namespace: EFS_CSI_CHART.namespace,
          values: efsCsiValues(),
        },
        parent,
      );
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
      const pv = pulumi
        .all([names, namespace, fileSystem.id, accessPoint.id])
        .apply(([n, ns, fsId, apId]) =>
          efsPersistentVolume({ name: n.volume, storageClass: n.storageClass, claim: { namespace: ns, name: n.claim }, fileSystemId: fsId, accessPointId: apId, labels: r.labels }),
        );
      // A pod scheduled before the mount targets exist would fail to mount: the volume waits for them.
      const persistentVolume = new k8s.core.v1.PersistentVolume(`${name}-efs`, { metadata: pv.apply((o) => o.metadata), spec: pv.apply((o) => o.spec) }, { parent: this, dependsOn: [storageClass, ...mountTargets] });
      const pvc = pulumi
        .all([names, namespace])
        .apply(([n, ns]) => efsClaim({ name: n.claim, namespace: ns, volume: n.volume, storageClass: n.storageClass, labels: r.labels }));
      const claim = new k8s.core.v1.PersistentVolumeClaim(`${name}-efs`, { metadata: pvc.apply((o) => o.metadata), spec: pvc.apply((o) => o.spec) }, { parent: this, dependsOn: [persistentVolume] });
      this.fileSystemId = fileSystem.id;
      this.uri = pulumi.output(EFS_MOUNT_PATH);
      volume = { claimName: claim.metadata.name, mountPath: EFS_MOUNT_PATH };
    }

    const sa = tritonServiceAccount<pulumi.Input<string>>({ name: r.serviceAccountName, namespace, labels: r.labels, roleArn: serviceAccountRoleArn });
    this.serviceAccount = new k8s.core.v1.ServiceAccount(`${name}-sa`, sa, parent);

    this.binding = {
      uri: this.uri,
      serviceAccountName: this.serviceAccount.metadata.name,
      env,
      ...(volume ? { volume } : {}),
      egressPort: r.backend === "s3" ? 443 : NFS_PORT,
    };
    this.registerOutputs({
      uri: this.uri,
      serviceAccountName: this.binding.serviceAccountName,
      bucketName: this.bucketName,
      readerRoleArn: this.readerRoleArn,
      publisherRoleArn: this.publisherRoleArn,
      fileSystemId: this.fileSystemId,
    });
  }
}
