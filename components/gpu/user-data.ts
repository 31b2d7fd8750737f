// Host tuning for GPU nodes, as user data valid for each AMI family. With a launch template
// that names no AMI, EKS merges this with its own bootstrap: AL2 and AL2023 take MIME
// multi-part (AL2023's NodeConfig part is merged into EKS's), Bottlerocket takes TOML settings.
import * as yaml from "js-yaml";
import { NODEADM, type AmiFamily } from "../upstream/eks";

/** The tuning every GPU node gets, whatever its family. */
export const HOST_TUNING = {
  // Model weights and pinned buffers must stay in RAM: should any swap exist, the kernel drops
  // page cache long before it pages out a Triton process.
  swappiness: 1,
  // Transparent hugepages: khugepaged compaction stalls show up as multi-millisecond latency
  // spikes in inference; CUDA pins its own memory and gains nothing from THP.
  transparentHugepages: "never",
} as const;

/**
 * Kubelet graceful node shutdown: when the instance shuts down (a Spot interruption, an instance
 * refresh, a terminate outside a drain), kubelet holds a systemd inhibitor lock for
 * shutdownGracePeriod, gives regular pods all of it but the last shutdownGracePeriodCriticalPods,
 * then the critical pods (DaemonSets of system-node-critical: the NVIDIA operands, the CNI) the
 * rest. Regular pods get min(their terminationGracePeriodSeconds, that share): the share must cover
 * the longest serving pod's grace period, or a node shutdown kills Triton mid-drain.
 * (Kubernetes docs, "Node Shutdowns"; kubelet raises logind's InhibitDelayMaxSec to match.)
 */
export const CRITICAL_PODS_SHUTDOWN_SECONDS = 15;

/** Kubernetes' default terminationGracePeriodSeconds, for a direct caller that names no pods. */
export const K8S_DEFAULT_GRACE_SECONDS = 30;

/** The kubelet's shutdown periods for nodes whose longest-lived pod takes podGraceSeconds to stop. */
export function nodeShutdownGrace(podGraceSeconds: number): { total: string; criticalPods: string } {
  return { total: `${podGraceSeconds + CRITICAL_PODS_SHUTDOWN_SECONDS}s`, criticalPods: `${CRITICAL_PODS_SHUTDOWN_SECONDS}s` };
}

/** MIME boundary: a string that cannot occur in the parts below. */
export const MIME_BOUNDARY = "==TRITON-PLATFORM-BOUNDARY==";

/**
 * AL2 only: graceful node shutdown in the AMI's kubelet config file. AL2 has no nodeadm; its
 * bootstrap.sh (which EKS appends after this part) edits /etc/kubernetes/kubelet/kubelet-config.json
 * in place with jq and keeps other keys, the way AWS's knowledge-center article on kubelet settings
 * for managed node groups edits it from user data.
 */
function al2KubeletShutdown(podGraceSeconds: number): string[] {
  const g = nodeShutdownGrace(podGraceSeconds);
  return [
    "# Kubelet graceful node shutdown (components/gpu/user-data.ts nodeShutdownGrace); bootstrap.sh keeps these keys.",
    "KUBELET_CONFIG=/etc/kubernetes/kubelet/kubelet-config.json",
    `jq '.shutdownGracePeriod = "${g.total}" | .shutdownGracePeriodCriticalPods = "${g.criticalPods}"' "$KUBELET_CONFIG" > "$KUBELET_CONFIG.tmp"`,
    'mv "$KUBELET_CONFIG.tmp" "$KUBELET_CONFIG"',
    "",
  ];
}

/** Shell tuning for Amazon Linux (AL2, AL2023): sysctl, THP at every boot, and no swap. */
export function tuningScript(extra: readonly string[] = []): string {
  return [
    "#!/bin/bash",
    "# triton-platform GPU host tuning (components/gpu/user-data.ts)",
    "set -euo pipefail",
    "",
    "cat > /etc/sysctl.d/90-triton-platform.conf <<'EOF'",
    `vm.swappiness = ${HOST_TUNING.swappiness}`,
    "EOF",
    "sysctl -p /etc/sysctl.d/90-triton-platform.conf",
    "",
    "# user data runs once per instance; the unit re-applies THP on every boot, before kubelet.",
    "cat > /etc/systemd/system/triton-platform-thp.service <<'EOF'",
    "[Unit]",
    "Description=Transparent hugepages off for inference (triton-platform)",
    "DefaultDependencies=no",
    "After=sysinit.target local-fs.target",
    "Before=kubelet.service",
    "",
    "[Service]",
    "Type=oneshot",
    `ExecStart=/bin/sh -c 'echo ${HOST_TUNING.transparentHugepages} > /sys/kernel/mm/transparent_hugepage/enabled && echo ${HOST_TUNING.transparentHugepages} > /sys/kernel/mm/transparent_hugepage/defrag'`,
    "",
    "[Install]",
    "WantedBy=basic.target",
    "EOF",
    "systemctl daemon-reload",
    "systemctl enable --now triton-platform-thp.service",
    "",
    "# No swap: kubelet's memory accounting and Triton's latency both assume none.",
    "swapoff -a",
    "sed -i -E '/[[:space:]]swap[[:space:]]/d' /etc/fstab",
    "",
    ...extra,
  ].join("\n");
}

/** The partial nodeadm NodeConfig EKS merges with its own (cluster details come from EKS). */
export function nodeConfig(podGraceSeconds: number): Record<string, unknown> {
  const g = nodeShutdownGrace(podGraceSeconds);
  return {
    apiVersion: NODEADM.apiVersion,
    kind: NODEADM.kind,
    spec: {
      kubelet: {
        config: { shutdownGracePeriod: g.total, shutdownGracePeriodCriticalPods: g.criticalPods },
      },
    },
  };
}

/**
 * A MIME multi-part document (RFC 2046) of the given parts, LF line ends throughout (headers,
 * boundaries and bodies). RFC 2046 asks for CRLF, but the readers of this document take LF, and
 * a CR inside a part is not stripped: it reaches the script, whose last command then ends in
 * `\r` (exit 2, a cloud-init error on every node). The readers:
 * - cloud-init: `convert_string` (cloudinit/user_data.py) parses the document with Python's
 *   `email.message_from_string`, which splits lines on LF and keeps a part's bytes as they are;
 * - nodeadm (AL2023): `getMultipartReader` (awslabs/amazon-eks-ami
 *   nodeadm/internal/configprovider/mime.go) uses Go's net/mail and mime/multipart, whose
 *   `isBoundaryDelimiterLine` switches to LF mode when the first boundary line ends in LF;
 * - AWS CDK's `MultipartUserData.render()` (aws-cdk-lib/aws-ec2/lib/user-data.ts) writes EC2
 *   user data the same way: "MIME RFC uses CRLF to separate lines - cloud-init is fine with LF".
 */
export function mimeMultipart(parts: { contentType: string; body: string }[]): string {
  const lines = ["MIME-Version: 1.0", `Content-Type: multipart/mixed; boundary="${MIME_BOUNDARY}"`, ""];
  for (const p of parts) {
    lines.push(`--${MIME_BOUNDARY}`, `Content-Type: ${p.contentType}`, "", p.body.replace(/\n$/, ""), "");
  }
  lines.push(`--${MIME_BOUNDARY}--`, "");
  return lines.join("\n");
}

/** TOML string literal (basic string with the escapes TOML requires). */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** Bottlerocket settings (TOML). */
export function bottlerocketSettings(podGraceSeconds: number): string {
  const g = nodeShutdownGrace(podGraceSeconds);
  return [
    "# triton-platform GPU host tuning (components/gpu/user-data.ts); EKS adds the cluster settings.",
    "[settings.kernel.sysctl]",
    `${tomlString("vm.swappiness")} = ${tomlString(String(HOST_TUNING.swappiness))}`,
    "",
    "# THP from the kernel command line; the first boot reboots once to apply it.",
    "[settings.boot]",
    "reboot-to-reconcile = true",
    "",
    "[settings.boot.kernel-parameters]",
    `${tomlString("transparent_hugepage")} = [${tomlString(HOST_TUNING.transparentHugepages)}]`,
    "",
    "# Kubelet graceful node shutdown (components/gpu/user-data.ts nodeShutdownGrace).",
    "[settings.kubernetes]",
    `${tomlString("shutdown-grace-period")} = ${tomlString(g.total)}`,
    `${tomlString("shutdown-grace-period-for-critical-pods")} = ${tomlString(g.criticalPods)}`,
    "",
    // No swap setting: aws-k8s variants up to 1.34 have no swap device; the 1.35 variants add a
    // zram device (bottlerocket v1.53.0) that kubelet's default swapBehavior NoSwap keeps from pods.
  ].join("\n");
}

/** User data (plain text; the launch template takes it base64-encoded) for an AMI family. */
export function gpuUserData(family: AmiFamily, podGraceSeconds: number): string {
  switch (family) {
    case "al2023":
      return mimeMultipart([
        { contentType: NODEADM.contentType, body: "---\n" + yaml.dump(nodeConfig(podGraceSeconds), { lineWidth: -1 }) },
        { contentType: 'text/x-shellscript; charset="us-ascii"', body: tuningScript() },
      ]);
    case "al2":
      // EKS appends its bootstrap.sh part to this document.
      return mimeMultipart([{ contentType: 'text/x-shellscript; charset="us-ascii"', body: tuningScript(al2KubeletShutdown(podGraceSeconds)) }]);
    case "bottlerocket":
      return bottlerocketSettings(podGraceSeconds);
  }
}
