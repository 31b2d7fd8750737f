// The EFS (NFS) backend as plain data: file system, access point, NFS ingress rule, the
// static StorageClass / PersistentVolume / PersistentVolumeClaim and the CSI driver's values.
import type * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@pulumi/kubernetes";

/** Plain (Input-free) manifest types: schema-checked data that tests read directly. */
type Plain<T> = pulumi.Unwrap<T>;
import { EFS_CSI_CHART, EFS_CSI_DRIVER, NFS_PORT, efsVolumeHandle } from "../upstream/aws-efs-csi";
import { TRITON_GID, TRITON_UID } from "../contracts";
import { helmRelease } from "../helm";
import type { EfsThroughputMode } from "./schema";

/** Where Triton mounts the repository; also its --model-repository value for EFS. */
export const EFS_MOUNT_PATH = "/models";
/** EFS enforces no size; Kubernetes requires one on PV and PVC (they must agree for binding). */
export const EFS_NOMINAL_CAPACITY = "1Ti";

export function efsFileSystemArgs<K>(args: { kmsKeyId: K; throughputMode: EfsThroughputMode }) {
  return {
    // Encrypted at rest with the stack's (or the given) key.
    encrypted: true,
    kmsKeyId: args.kmsKeyId,
    performanceMode: "generalPurpose",
    // elastic: a rollout where every pod reads the weights at once is a burst that
    // bursting-mode credits of a small file system cannot serve.
    throughputMode: args.throughputMode,
  };
}

/** Names of the Kubernetes objects of the EFS backend. PV and StorageClass are cluster-scoped, so they carry the namespace. */
export function efsObjectNames(namespace: string) {
  return { storageClass: `${namespace}-model-repository-efs`, volume: `${namespace}-model-repository`, claim: "model-repository" };
}

/**
 * Access point rooted at the model folder: Triton's user (uid/gid 1000) owns it, and every
 * NFS operation through it runs as that user, whatever uid the client claims.
 */
export function efsAccessPointArgs<T>(fileSystemId: T, modelPrefix: string) {
  return {
    fileSystemId,
    posixUser: { uid: TRITON_UID, gid: TRITON_GID },
    rootDirectory: {
      path: `/${modelPrefix}`,
      // EFS creates the folder with this owner on first mount; without it the root is owned by root and unreadable.
      creationInfo: { ownerUid: TRITON_UID, ownerGid: TRITON_GID, permissions: "0755" },
    },
  };
}

/** The mount targets' security group. */
export function nfsSecurityGroupArgs<T>(vpcId: T) {
  // No inline rules: the provider then removes AWS's default allow-all egress; NFS replies are stateful.
  return { vpcId, description: "EFS mount targets of the Triton model repository: NFS from GPU nodes only" };
}

/** A mount target in one subnet, behind the NFS security group. */
export function mountTargetArgs<T>(fileSystemId: T, subnetId: string, securityGroupId: T) {
  return { fileSystemId, subnetId, securityGroups: [securityGroupId] };
}

/** Resource name of a subnet's mount target: named by subnet, not position, so reordering the list replaces nothing. */
export function mountTargetName(name: string, subnetId: string): string {
  return `${name}-mt-${subnetId}`;
}

/** The only ingress of the mount targets' security group: NFS from the GPU nodes' security group. */
export function nfsIngressRuleArgs<T>(securityGroupId: T, nodeSecurityGroupId: T) {
  return {
    securityGroupId,
    referencedSecurityGroupId: nodeSecurityGroupId,
    ipProtocol: "tcp",
    fromPort: NFS_PORT,
    toPort: NFS_PORT,
    description: "NFS from the GPU nodes (Triton model repository)",
  };
}

export function efsStorageClass(name: string, labels: Record<string, string>): Plain<k8s.types.input.storage.v1.StorageClass> {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name, labels },
    provisioner: EFS_CSI_DRIVER,
    // Static volumes only: the PV below is bound by name; Retain so deleting a claim never touches the models.
    reclaimPolicy: "Retain",
    volumeBindingMode: "Immediate",
  };
}

export function efsPersistentVolume(args: {
  name: string;
  storageClass: string;
  claim: { namespace: string; name: string };
  fileSystemId: string;
  accessPointId: string;
  labels: Record<string, string>;
}): Plain<k8s.types.input.core.v1.PersistentVolume> {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: args.name, labels: args.labels },
    spec: {
      capacity: { storage: EFS_NOMINAL_CAPACITY },
      volumeMode: "Filesystem",
      // ReadWriteMany FIRST: kubelet passes the PV's first mode to the driver, which rejects
      // ReadOnlyMany (MULTI_NODE_READER_ONLY). ReadOnlyMany is listed so the read-only claim binds.
      accessModes: ["ReadWriteMany", "ReadOnlyMany"],
      persistentVolumeReclaimPolicy: "Retain",
      storageClassName: args.storageClass,
      // Pre-bound to our claim: no other claim in the cluster can take the model volume.
      claimRef: { namespace: args.claim.namespace, name: args.claim.name },
      csi: {
        driver: EFS_CSI_DRIVER,
        volumeHandle: efsVolumeHandle(args.fileSystemId, args.accessPointId),
        // Mounted read-only (the driver adds "ro"), whatever the pod asks for: Triton cannot alter the models.
        readOnly: true,
      },
    },
  };
}

export function efsClaim(args: {
  name: string;
  namespace: string;
  volume: string;
  storageClass: string;
  labels: Record<string, string>;
}): Plain<k8s.types.input.core.v1.PersistentVolumeClaim> {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: args.name, namespace: args.namespace, labels: args.labels },
    spec: {
      accessModes: ["ReadOnlyMany"],
      storageClassName: args.storageClass,
      volumeName: args.volume,
      resources: { requests: { storage: EFS_NOMINAL_CAPACITY } },
    },
  };
}

/** The EFS CSI driver's Helm release: the pinned chart in its own namespace. */
export function efsCsiRelease() {
  return helmRelease({ chart: EFS_CSI_CHART, namespace: EFS_CSI_CHART.namespace, values: efsCsiValues() });
}

/** Values of the aws-efs-csi-driver chart. */
export function efsCsiValues() {
  return {
    // No controller: static volumes need no CreateVolume, so no privileged Deployment and no
    // IAM role for the driver (the node plugin mounts through the mount targets, not the EFS API).
    controller: { create: false, serviceAccount: { create: false } },
    // The node plugin must run on the tainted GPU nodes, or Triton's mounts there hang in ContainerCreating.
    node: { tolerations: [{ operator: "Exists" }] },
  };
}
