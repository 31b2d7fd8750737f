// A GPU node's own shutdown (Spot interruption, instance refresh, a terminate outside a drain)
// gives the serving pods their whole grace period: kubelet's graceful node shutdown, in every AMI
// family's user data, leaves regular pods shutdownGracePeriod − shutdownGracePeriodCriticalPods,
// at least the longest terminationGracePeriodSeconds among the pods that run on GPU nodes.
// Checked on the user data as each reader sees it (nodeadm's YAML part, Bottlerocket's TOML, AL2's
// kubelet config file after the user data's jq edit, run with the real jq) and on planned fixtures.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as yaml from "js-yaml";
import { gpuUserData, K8S_DEFAULT_GRACE_SECONDS } from "../components/gpu/user-data";
import { NODEADM } from "../components/upstream/eks";
import { parseMime, parseToml } from "./support/user-data";
import { gpuLaunchTemplateArgs, resolveGpuNodeGroupArgs } from "../components/gpu";
import { fixtureStack, ofType, one, planFixture } from "./helpers";
import type { RecordedResource } from "../tools/planner";

/** A kubelet Duration (Go time.ParseDuration: h, m, s, ms) in seconds. */
function durationSeconds(d: string): number {
  assert.match(d, /^(\d+(\.\d+)?(h|m|s|ms))+$/, `a Go duration: ${d}`);
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  let total = 0;
  for (const [, n, , u] of d.matchAll(/(\d+(\.\d+)?)(h|ms|m|s)/g)) total += Number(n) * unit[u];
  return total;
}

/** kubelet's shutdownGracePeriod and its critical-pods share, in seconds, as the node reads them from this user data. */
async function kubeletShutdown(userData: string): Promise<{ total: number; critical: number }> {
  if (!userData.startsWith("MIME-Version")) {
    const k = (await parseToml(userData)).settings.kubernetes;
    return { total: durationSeconds(k["shutdown-grace-period"]), critical: durationSeconds(k["shutdown-grace-period-for-critical-pods"]) };
  }
  const parts = await parseMime(userData);
  const nodeConfig = parts.find((p) => p.mimeType === NODEADM.contentType);
  if (nodeConfig) {
    const c = (yaml.load(nodeConfig.body) as any).spec.kubelet.config;
    return { total: durationSeconds(c.shutdownGracePeriod), critical: durationSeconds(c.shutdownGracePeriodCriticalPods) };
  }
  // AL2: the shell part edits the AMI's kubelet config file; run its kubelet lines with the real jq
  // on a copy of such a file (other keys must survive: bootstrap.sh edits the same file after it).
  const script = parts.map((p) => p.body).join("\n");
  const dir = mkdtempSync(join(tmpdir(), "kubelet-"));
  const file = join(dir, "kubelet-config.json");
  writeFileSync(file, JSON.stringify({ kind: "KubeletConfiguration", apiVersion: "kubelet.config.k8s.io/v1beta1", clusterDNS: ["10.100.0.10"] }));
  const lines = script.split("\n");
  const from = lines.findIndex((l) => l.startsWith("KUBELET_CONFIG="));
  assert.ok(from >= 0, "the AL2 shell part edits the kubelet config file");
  const edit = lines
    .slice(from, from + 3)
    .join("\n")
    .replace("/etc/kubernetes/kubelet/kubelet-config.json", file);
  const run = spawnSync("bash", ["-euo", "pipefail", "-c", edit], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const c = JSON.parse(readFileSync(file, "utf8"));
  assert.deepEqual(c.clusterDNS, ["10.100.0.10"], "the edit keeps the file's other keys");
  return { total: durationSeconds(c.shutdownGracePeriod), critical: durationSeconds(c.shutdownGracePeriodCriticalPods) };
}

/** The longest grace period among the pods that run on GPU nodes (they request nvidia.com/gpu). */
function longestGpuPodGrace(resources: RecordedResource[]): number {
  const graces = ofType(resources, "kubernetes:apps/v1:StatefulSet")
    .map((s) => s.props.spec.template.spec)
    .filter((spec) => spec.containers.some((c: any) => c.resources?.limits?.["nvidia.com/gpu"] !== undefined))
    .map((spec) => spec.terminationGracePeriodSeconds ?? K8S_DEFAULT_GRACE_SECONDS);
  assert.ok(graces.length > 0, "the plan has GPU pods");
  return Math.max(...graces);
}

const userDataOf = (resources: RecordedResource[]) =>
  Buffer.from(one(resources, "aws:ec2/launchTemplate:LaunchTemplate").props.userData, "base64").toString("utf8");

describe("GPU node shutdown covers the serving pods' grace period", () => {
  for (const family of ["al2023", "al2", "bottlerocket"] as const) {
    it(`${family}: regular pods get the grace period asked for, critical pods 15 s after them`, async () => {
      for (const grace of [0, 30, 145, 600]) {
        const k = await kubeletShutdown(gpuUserData(family, grace));
        assert.equal(k.total - k.critical, grace, `${family} at ${grace} s`);
        assert.equal(k.critical, 15);
      }
    });
  }

  it("every fixture plan's GPU nodes give their GPU pods the longest grace period among them", async () => {
    for (const shape of ["dev", "staging", "prod"]) {
      const { resources } = await planFixture(fixtureStack(shape), { shared: true });
      const k = await kubeletShutdown(userDataOf(resources));
      assert.equal(k.total - k.critical, longestGpuPodGrace(resources), shape);
    }
  });

  it("a group that pins a long grace period, on Bottlerocket, lengthens the nodes' shutdown to it", async () => {
    const stack = fixtureStack(
      "prod",
      (s) => {
        s.triton.groups[0].terminationGracePeriodSeconds = 900;
        s.gpu.amiType = "BOTTLEROCKET_x86_64_NVIDIA";
      },
      "prod-long-grace",
    );
    const { resources } = await planFixture(stack);
    assert.equal(longestGpuPodGrace(resources), 900);
    const k = await kubeletShutdown(userDataOf(resources));
    assert.equal(k.total - k.critical, 900);
  });

  it("a direct caller of GpuNodeGroup that names no pods gets Kubernetes' default grace period; a bad value is refused by key", async () => {
    const args = {
      clusterName: "c",
      vpcId: "vpc-1",
      clusterSecurityGroupId: "sg-1",
      region: "us-east-1",
      tags: {},
      zones: ["us-east-1a"],
      instanceTypes: ["g6.xlarge"],
      scaling: { min: 1, desired: 1, max: 2 },
    };
    const r = resolveGpuNodeGroupArgs(args);
    const lt = gpuLaunchTemplateArgs(r, ["sg-1"], "arn:aws:kms:us-east-1:123456789012:key/1");
    const k = await kubeletShutdown(Buffer.from(lt.userData as string, "base64").toString("utf8"));
    assert.equal(k.total - k.critical, K8S_DEFAULT_GRACE_SECONDS);
    assert.throws(() => resolveGpuNodeGroupArgs({ ...args, podShutdownSeconds: -1 }), /podShutdownSeconds.*whole number of seconds.*-1/s);
  });
});
