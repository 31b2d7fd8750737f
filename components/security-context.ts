// The one builder of the Pod Security "restricted" securityContext (components/upstream/pod-security.ts
// states the profile's version; policies/rules/workloads.ts checks it): every workload the stack
// renders itself (Triton, the gateway, and any later one) takes its pod and container contexts
// from here, so the profile is written once. A chart's pods are set through its values instead.
import type * as k8s from "@pulumi/kubernetes";

/** Who the pod's processes run as: the image's own non-root user. */
export interface RestrictedUser {
  readonly uid: number;
  readonly gid: number;
  /** Group that owns mounted volumes (Triton's EFS access point writes as it); none when the pod writes no volume it must own. */
  readonly fsGroup?: number;
  /**
   * Also state the user and the seccomp profile on the container, not only on the pod
   * (Triton's container does: a container-level reader such as an image scanner sees them there too).
   */
  readonly alsoOnContainer?: boolean;
}

/**
 * The restricted pod and container securityContext for `user`: non-root as the image's user,
 * RuntimeDefault seccomp, no privilege escalation, a read-only root filesystem and no capabilities.
 */
export function restrictedSecurityContext(user: RestrictedUser): {
  pod: k8s.types.input.core.v1.PodSecurityContext;
  container: k8s.types.input.core.v1.SecurityContext;
} {
  const runAs = { runAsUser: user.uid, runAsGroup: user.gid };
  // RuntimeDefault: the runtime's syscall filter; "restricted" refuses Unconfined and an unset profile.
  const seccompProfile = { type: "RuntimeDefault" };
  return {
    pod: { runAsNonRoot: true, ...runAs, ...(user.fsGroup !== undefined ? { fsGroup: user.fsGroup } : {}), seccompProfile },
    container: {
      allowPrivilegeEscalation: false,
      // Writable paths are the emptyDir mounts the builder declares (/tmp, /dev/shm): nothing else can be changed in the image.
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      ...(user.alsoOnContainer ? runAs : {}),
      capabilities: { drop: ["ALL"] },
      ...(user.alsoOnContainer ? { seccompProfile } : {}),
    },
  };
}
