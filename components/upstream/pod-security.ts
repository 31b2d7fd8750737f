// Pod Security Standards, as the Kubernetes release the stack targets enforces them.
// Source: kubernetes/pod-security-admission at tag v0.33.9 (the staging repository of
// Kubernetes 1.33; commit 7b264a87d90fb1033697171e4dd3f06e82c8f6c9, 2026-02-27), policy/check_*.go,
// read 2026-12-01. The checks themselves are implemented in policies/rules/workloads.ts, each
// citing its check file; the lists below are the allowed values those files state.

/** The Pod Security Standards version the namespaces pin (EKS clusters of the stack run 1.33; the planner's cluster lookup fake says so too). */
export const POD_SECURITY_VERSION = "v1.33";

/** Namespace labels of Pod Security Admission (pod-security.kubernetes.io/<mode>[-version]). */
export const POD_SECURITY_LABEL_PREFIX = "pod-security.kubernetes.io/";
export const POD_SECURITY_MODES = ["enforce", "warn", "audit"] as const;

/** check_capabilities_baseline.go capabilities_allowed_1_0: the default set baseline allows in capabilities.add. */
export const BASELINE_CAPABILITIES: readonly string[] = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
];

/** check_sysctls.go sysctlsAllowedV1Dot32 (in force from 1.32): the safe sysctls. */
export const SAFE_SYSCTLS: readonly string[] = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
];

/** check_seLinuxOptions.go selinuxAllowedTypes1_31 (in force from 1.31). */
export const SELINUX_TYPES: readonly string[] = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

/** check_restrictedVolumes.go: the inline volume sources restricted allows (every other source is refused). */
export const RESTRICTED_VOLUME_SOURCES: readonly string[] = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "image",
  "persistentVolumeClaim",
  "projected",
  "secret",
];
