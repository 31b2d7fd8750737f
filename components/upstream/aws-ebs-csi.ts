// Amazon EBS CSI driver: the names and StorageClass parameters the stack relies on, in one
// place so a version bump is one edit. Checked against kubernetes-sigs/aws-ebs-csi-driver
// v1.64.0: docs/parameters.md ("CreateVolume (StorageClass) Parameters", "Volume
// Availability Zone and Topologies"), docs/install.md ("Encrypted EBS Volumes via KMS"),
// examples/kubernetes/storageclass/manifests/storageclass.yaml. The driver itself is a cluster
// prerequisite (README, "Cluster prerequisites"): EKS add-on, Helm chart or Kustomize, with the
// AWS-managed IAM policy AmazonEBSCSIDriverPolicyV2 (install.md).

/** CSI driver name: the StorageClass provisioner (the driver's examples; pkg/plugin "normally ebs.csi.aws.com"). */
export const EBS_CSI_DRIVER = "ebs.csi.aws.com";

/**
 * StorageClass `parameters` keys (parameters.md). Values are strings: "encrypted" takes
 * "true"/"false"; "kmsKeyId" takes the key's full ARN (without it, AWS uses the region's
 * default EBS key, `aws/ebs`); "csi.storage.k8s.io/fstype" (case sensitive) takes xfs, ext3
 * or ext4, default ext4; "type" defaults to gp3, set explicitly so a driver default change
 * cannot change the volumes.
 */
export const EBS_PARAMETERS = {
  type: "type",
  encrypted: "encrypted",
  kmsKeyId: "kmsKeyId",
  fsType: "csi.storage.k8s.io/fstype",
} as const;
