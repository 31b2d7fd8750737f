// Amazon EFS CSI driver: the names the stack relies on, in one place so a version bump is
// one edit. Checked against kubernetes-sigs/aws-efs-csi-driver (charts/aws-efs-csi-driver,
// pkg/driver/node.go, examples/kubernetes/access_points).

/** CSI driver name: StorageClass provisioner and PersistentVolume spec.csi.driver. */
export const EFS_CSI_DRIVER = "efs.csi.aws.com";

/** The driver's Helm chart, pinned (chart 3.2.1 ships driver v2.1.10, per the chart CHANGELOG). */
export const EFS_CSI_CHART = {
  chart: "aws-efs-csi-driver",
  version: "3.2.1",
  repo: "https://kubernetes-sigs.github.io/aws-efs-csi-driver/",
  namespace: "kube-system",
} as const;

/** NFS port every EFS mount target listens on. */
export const NFS_PORT = 2049;

/**
 * volumeHandle of a statically provisioned PV that mounts through an access point:
 * `<fs-id>::<fsap-id>` (file system, empty sub-path, access point). The driver then adds
 * `accesspoint=` and `tls` itself (node.go), so no deprecated mountOptions are needed.
 */
export function efsVolumeHandle(fileSystemId: string, accessPointId: string): string {
  return `${fileSystemId}::${accessPointId}`;
}

/**
 * CSI access modes the driver's node plugin accepts (node.go volumeCapAccessModes):
 * SINGLE_NODE_WRITER and MULTI_NODE_MULTI_WRITER only. kubelet sends the PV's FIRST
 * access mode, so a PV that lists ReadOnlyMany first fails every mount with "invalid
 * access mode: MULTI_NODE_READER_ONLY" (aws-efs-csi-driver issues #502, #972).
 */
export const EFS_SUPPORTED_FIRST_ACCESS_MODES = ["ReadWriteOnce", "ReadWriteMany"] as const;
