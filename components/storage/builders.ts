// Pure builders of the ClusterStorage component: resolved args → the class name the volumes
// use and, unless an existing class is named, the StorageClass manifest. index.ts only
// creates the resource from them.
import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { EBS_CSI_DRIVER, EBS_PARAMETERS } from "../upstream/aws-ebs-csi";
import type { ResolvedClusterStorage } from "./schema";

/**
 * Name of the StorageClass the stack creates. Not a setting: a StorageClass's provisioner,
 * parameters and reclaim policy are immutable, so a rename is a replacement either way, and
 * the bound volumes keep the old name (their claims' storageClassName cannot change).
 */
export const CREATED_STORAGE_CLASS = "ebs-gp3-encrypted";

/** File system of the volumes: ext4, the driver's default, stated so a driver change cannot reformat new volumes differently. */
const FS_TYPE = "ext4";

/** The StorageClass every persistent volume of the stack names: the existing one, or the one the stack creates. */
export function storageClassNameOf(r: Pick<ResolvedClusterStorage, "existing">): string {
  return r.existing ?? CREATED_STORAGE_CLASS;
}

type Plain<T> = pulumi.Unwrap<T>;

/** The encrypted gp3 StorageClass on the EBS CSI driver, or undefined when an existing class is used. */
export function ebsStorageClass(r: ResolvedClusterStorage): Plain<k8s.types.input.storage.v1.StorageClass> | undefined {
  if (r.existing !== undefined) return undefined;
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: CREATED_STORAGE_CLASS, labels: { ...r.labels } },
    // The EBS CSI driver (a cluster prerequisite, README): nothing else provisions EBS volumes on EKS 1.23+.
    provisioner: EBS_CSI_DRIVER,
    parameters: {
      [EBS_PARAMETERS.type]: "gp3",
      // Encrypted at rest: the TSDB holds every label of every scraped series.
      [EBS_PARAMETERS.encrypted]: "true",
      ...(r.kmsKeyId !== undefined ? { [EBS_PARAMETERS.kmsKeyId]: r.kmsKeyId } : {}),
      [EBS_PARAMETERS.fsType]: FS_TYPE,
    },
    // An EBS volume lives in one zone: binding at the first consumer creates it in the zone the
    // scheduler picked for the pod, instead of a random zone the pod then cannot reach (Pending).
    volumeBindingMode: "WaitForFirstConsumer",
    // storageSize can grow in place (the driver resizes gp3 online) instead of a new, empty volume.
    allowVolumeExpansion: true,
    // Delete: the claims of the Prometheus and Alertmanager StatefulSets outlive their pods and the
    // Helm release (persistentVolumeClaimRetentionPolicy defaults to Retain), so a volume goes only
    // when someone deletes its claim; Retain would then leave a billed volume no new claim reattaches.
    reclaimPolicy: "Delete",
  };
}
