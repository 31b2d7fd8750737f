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

/** Kubelet graceful shutdown (AL2023): Triton drains in-flight requests (--exit-timeout-secs 30) before the node stops. */
export const SHUTDOWN_GRACE = { total: "45s", criticalPods: "15s" } as const;

/** MIME boundary: a string that cannot occur in the parts below. */
export const MIME_BOUNDARY = "==TRITON-PLATFORM-BOUNDARY==";

/** Shell tuning for Amazon Linux (AL2, AL2023): sysctl, THP at every boot, and no swap. */
export function tuningScript(): string {
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
  ].join("\n");
}

/** The partial nodeadm NodeConfig EKS merges with its own (cluster details come from EKS). */
export function nodeConfig(): Record<string, unknown> {
  return {
    apiVersion: NODEADM.apiVersion,
    kind: NODEADM.kind,
    spec: {
      kubelet: {
        config: { shutdownGracePeriod: SHUTDOWN_GRACE.total, shutdownGracePeriodCriticalPods: SHUTDOWN_GRACE.criticalPods },
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
export function bottlerocketSettings(): string {
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
    // No swap setting: aws-k8s variants up to 1.34 have no swap device; the 1.35 variants add a
    // zram device (bottlerocket v1.53.0) that kubelet's default swapBehavior NoSwap keeps from pods.
  ].join("\n");
}

/** User data (plain text; the launch template takes it base64-encoded) for an AMI family. */
export function gpuUserData(family: AmiFamily): string {
  switch (family) {
    case "al2023":
      return mimeMultipart([
        { contentType: NODEADM.contentType, body: "---\n" + yaml.dump(nodeConfig(), { lineWidth: -1 }) },
        { contentType: 'text/x-shellscript; charset="us-ascii"', body: tuningScript() },
      ]);
    case "al2":
      // EKS appends its bootstrap.sh part to this document.
      return mimeMultipart([{ contentType: 'text/x-shellscript; charset="us-ascii"', body: tuningScript() }]);
    case "bottlerocket":
      return bottlerocketSettings();
  }
}
