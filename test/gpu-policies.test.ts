// Each gpu-nodes rule fires on a broken resource and stays silent on the compliant prod plan.
import { strict as assert } from "node:assert";
import { rules as gpuNodeRules } from "../policies/rules/gpu-nodes";
import { rules as allRules } from "../policies/rules";
import { evaluatePolicies } from "../tools/planner/policy";
import type { RecordedResource } from "../tools/planner";
import { plan } from "./helpers";
import { NODE_GROUP as NG, LAUNCH_TEMPLATE as LT, HELM_RELEASE as REL } from "../policies/rules/types";
import { declareMutations, first } from "./support/mutations";

const rule = (name: string) => {
  const r = allRules.find((x) => x.name === name);
  if (!r) throw new Error(`no rule ${name}`);
  return r;
};

/** The prod plan's resources, deep-copied, with `edit` applied to the first resource of `type` (the gpu-operator one for Helm releases). */
async function prodWith(type: string, edit: (props: Record<string, any>, r: RecordedResource) => void): Promise<RecordedResource[]> {
  const resources: RecordedResource[] = JSON.parse(JSON.stringify((await plan("prod")).resources));
  // Other components add Helm releases (monitoring): pick the GPU Operator's.
  const target = resources.find((r) => r.type === type && (type !== REL || r.props.chart === "gpu-operator"));
  if (!target) throw new Error(`no ${type} in the prod plan`);
  edit(target.props, target);
  return resources;
}

async function violations(name: string, resources?: RecordedResource[], cfg: Record<string, any> = {}) {
  const rs = resources ?? (await plan("prod")).resources;
  return (await evaluatePolicies([rule(name)], rs, cfg)).map((v) => v.message);
}

describe("gpu-nodes policy rules", () => {
  it("every rule is advisory in the pack and names what it prevents", () => {
    for (const r of gpuNodeRules) {
      assert.equal(r.enforcementLevel, "advisory", r.name);
      assert.equal(r.domain, "gpu-nodes");
      assert.ok(r.prevents.length > 20 && r.remediationSteps, r.name);
    }
  });

  for (const r of gpuNodeRules) {
    it(`${r.name} is silent on the prod plan`, async () => {
      assert.deepEqual(await violations(r.name), []);
    });
  }

  it("gpu-nodegroup-tainted fires on a GPU node group without the taint", async () => {
    const v = await violations(
      "gpu-nodegroup-tainted",
      await prodWith(NG, (p) => (p.taints = [{ key: "nvidia.com/gpu", value: "true", effect: "PREFER_NO_SCHEDULE" }])),
    );
    assert.equal(v.length, 1);
    assert.match(v[0], /NodeGroup gpu: taints lacks \{key: "nvidia\.com\/gpu", effect: "NO_SCHEDULE"\}, got .*PREFER_NO_SCHEDULE/);
  });

  it("gpu-nodegroup-max-unavailable fires on 2 nodes or a percentage, and follows its max setting", async () => {
    let v = await violations("gpu-nodegroup-max-unavailable", await prodWith(NG, (p) => (p.updateConfig = { maxUnavailable: 2 })));
    assert.match(v[0], /updateConfig\.maxUnavailable must be <= 1, got 2/);
    v = await violations("gpu-nodegroup-max-unavailable", await prodWith(NG, (p) => (p.updateConfig = { maxUnavailablePercentage: 33 })));
    assert.match(v[0], /maxUnavailablePercentage is 33/);
    v = await violations("gpu-nodegroup-max-unavailable", await prodWith(NG, (p) => (p.updateConfig = { maxUnavailable: 2 })), {
      "gpu-nodegroup-max-unavailable": { max: 2 },
    });
    assert.deepEqual(v, []);
  });

  it("launch-template-imdsv2 fires on optional tokens and on a hop limit above 1 (2 lets every pod reach the node role)", async () => {
    const v = await violations(
      "launch-template-imdsv2",
      await prodWith(LT, (p) => (p.metadataOptions = { httpEndpoint: "enabled", httpTokens: "optional", httpPutResponseHopLimit: 3 })),
    );
    assert.equal(v.length, 2);
    assert.match(v[0], /LaunchTemplate gpu: metadataOptions\.httpTokens must be "required", got "optional"/);
    assert.match(v[1], /httpPutResponseHopLimit must be <= 1, got 3/);
    const two = await prodWith(LT, (p) => (p.metadataOptions = { httpEndpoint: "enabled", httpTokens: "required", httpPutResponseHopLimit: 2 }));
    assert.deepEqual(await violations("launch-template-imdsv2", two), ["LaunchTemplate gpu: metadataOptions.httpPutResponseHopLimit must be <= 1, got 2"]);
    const unset = await prodWith(LT, (p) => delete p.metadataOptions.httpPutResponseHopLimit);
    assert.match((await violations("launch-template-imdsv2", unset))[0], /httpPutResponseHopLimit must be <= 1, got nothing/);
    // Variants that pass: the stack's own hop limit 1, IMDS off, and 2 where a levels file states the need (maxHopLimit: 2).
    assert.deepEqual(await violations("launch-template-imdsv2", await prodWith(LT, () => undefined)), []);
    assert.deepEqual(await violations("launch-template-imdsv2", await prodWith(LT, (p) => (p.metadataOptions = { httpEndpoint: "disabled" }))), []);
    assert.deepEqual(await violations("launch-template-imdsv2", two, { "launch-template-imdsv2": { maxHopLimit: 2 } }), []);
  });

  it("launch-template-encrypted-volumes fires on an unencrypted volume and on no mappings", async () => {
    let v = await violations("launch-template-encrypted-volumes", await prodWith(LT, (p) => (p.blockDeviceMappings[0].ebs.encrypted = "false")));
    assert.match(v[0], /blockDeviceMappings\[0\]\.ebs\.encrypted \(\/dev\/xvda\) must be "true", got "false"/);
    v = await violations("launch-template-encrypted-volumes", await prodWith(LT, (p) => delete p.blockDeviceMappings));
    assert.match(v[0], /blockDeviceMappings is empty/);
  });

  it("launch-template-encrypted-volumes requires a customer-managed key in prod: absent or alias/aws/ebs fires", async () => {
    const P = "launch-template-encrypted-volumes";
    assert.deepEqual(await violations(P, await prodWith(LT, () => undefined)), []);
    let v = await violations(P, await prodWith(LT, (p) => delete p.blockDeviceMappings[0].ebs.kmsKeyId));
    assert.equal(v.length, 1);
    assert.match(v[0], /blockDeviceMappings\[0\]\.ebs\.kmsKeyId \(\/dev\/xvda\) must name a customer-managed KMS key in prod, got nothing/);
    for (const aws of ["alias/aws/ebs", "arn:aws:kms:us-east-1:123456789012:alias/aws/ebs"]) {
      v = await violations(P, await prodWith(LT, (p) => (p.blockDeviceMappings[0].ebs.kmsKeyId = aws)));
      assert.equal(v.length, 1, aws);
      assert.match(v[0], /must name a customer-managed KMS key in prod/);
    }
  });

  it("launch-template-encrypted-volumes: reasonable variants pass (a key id or a customer alias; no key outside the listed environments)", async () => {
    const P = "launch-template-encrypted-volumes";
    for (const key of ["1234abcd-12ab-34cd-56ef-1234567890ab", "alias/triton-gpu-volumes-x", "arn:aws:kms:us-east-1:123456789012:alias/shared-ebs"]) {
      assert.deepEqual(await violations(P, await prodWith(LT, (p) => (p.blockDeviceMappings[0].ebs.kmsKeyId = key))), [], key);
    }
    const noKey = await prodWith(LT, (p) => delete p.blockDeviceMappings[0].ebs.kmsKeyId);
    assert.deepEqual(await violations(P, noKey, { [P]: { environments: ["staging"] } }), []);
    const dev = JSON.parse(JSON.stringify((await plan("dev")).resources)) as RecordedResource[];
    delete dev.find((r) => r.type === LT)!.props.blockDeviceMappings[0].ebs.kmsKeyId;
    assert.deepEqual(await violations(P, dev), []);
  });

  it("helm-release-pinned fires on the GPU Operator without a version or from another repository", async () => {
    const v = await violations(
      "helm-release-pinned",
      await prodWith(REL, (p) => {
        delete p.version;
        p.repositoryOpts.repo = "https://example.com/charts";
      }),
    );
    assert.equal(v.length, 2);
    assert.match(v[0], /Helm release gpu-operator \(chart gpu-operator\): version is nothing, must be an exact chart version/);
    assert.match(v[1], /repositoryOpts\.repo is "https:\/\/example\.com\/charts", not the chart's upstream https:\/\/helm\.ngc\.nvidia\.com\/nvidia/);
  });

  it("gpu-operator-matches-node-image fires when the operator would install the AMI's driver, or a second device plugin on Bottlerocket", async () => {
    let v = await violations("gpu-operator-matches-node-image", await prodWith(REL, (p) => (p.values.driver = { enabled: true, version: "580.105.08" })));
    assert.deepEqual(v, ["Release gpu-operator: values.driver.enabled must be false because AL2023_x86_64_NVIDIA nodes ship it, got true"]);
    v = await violations("gpu-operator-matches-node-image", await prodWith(NG, (p) => (p.amiType = "BOTTLEROCKET_x86_64_NVIDIA")));
    assert.deepEqual(v, ["Release gpu-operator: values.devicePlugin.enabled must be false because BOTTLEROCKET_x86_64_NVIDIA nodes ship it, got true"]);
  });

  it("gpu-node-role-least-privilege fires on an extra managed policy and on inline policies", async () => {
    const v = await violations(
      "gpu-node-role-least-privilege",
      await prodWith("aws:iam/rolePolicyAttachment:RolePolicyAttachment", (p) => (p.policyArn = "arn:aws:iam::aws:policy/AmazonS3FullAccess")),
    );
    assert.deepEqual(v, [
      `RolePolicyAttachment gpu-node-AmazonEKSWorkerNodePolicy: policyArn "arn:aws:iam::aws:policy/AmazonS3FullAccess" is not one of the worker node policies`,
    ]);
    const inline = await violations(
      "gpu-node-role-least-privilege",
      await prodWith("aws:iam/role:Role", (p) => (p.inlinePolicies = [{ name: "s3", policy: "{}" }])),
    );
    assert.match(inline[0], /Role gpu-node: inlinePolicies must be empty, got 1/);
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "gpu-nodegroup-tainted",
    breaks: "removes the nvidia.com/gpu taint from the GPU node group",
    mutate: (rs) => (first(rs, "aws:eks/nodeGroup:NodeGroup").props.taints = []),
  },
  {
    rule: "gpu-nodegroup-max-unavailable",
    breaks: "lets a GPU node group rollout take two nodes out at once",
    mutate: (rs) => (first(rs, "aws:eks/nodeGroup:NodeGroup").props.updateConfig = { maxUnavailable: 2 }),
  },
  {
    rule: "launch-template-imdsv2",
    breaks: "makes IMDSv2 tokens optional on the GPU launch template",
    mutate: (rs) => (first(rs, "aws:ec2/launchTemplate:LaunchTemplate").props.metadataOptions.httpTokens = "optional"),
  },
  {
    rule: "launch-template-encrypted-volumes",
    breaks: "turns off encryption of the GPU nodes' data volume",
    mutate: (rs) => (first(rs, "aws:ec2/launchTemplate:LaunchTemplate").props.blockDeviceMappings[0].ebs.encrypted = "false"),
  },
  {
    rule: "gpu-operator-matches-node-image",
    breaks: "has the GPU Operator install a driver on AL2023 NVIDIA nodes that ship one",
    mutate: (rs) =>
      (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "gpu-operator").props.values.driver = { enabled: true, version: "580.105.08" }),
  },
  {
    rule: "gpu-node-role-least-privilege",
    breaks: "attaches AmazonS3FullAccess to the GPU node role",
    mutate: (rs) => (first(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").props.policyArn = "arn:aws:iam::aws:policy/AmazonS3FullAccess"),
  },
  {
    rule: "helm-release-pinned",
    breaks: "adds the EFS CSI driver's release on a version range",
    mutate: (rs) => {
      const r = structuredClone(first(rs, "kubernetes:helm.sh/v3:Release", (x) => x.props.chart === "gpu-operator"));
      rs.push({
        ...r,
        urn: `${r.urn}-efs`,
        name: "efs-csi",
        props: {
          chart: "aws-efs-csi-driver",
          version: "~3.2",
          namespace: "kube-system",
          repositoryOpts: { repo: "https://kubernetes-sigs.github.io/aws-efs-csi-driver/" },
          values: {},
        },
      });
    },
  },
]);
