// Under the planner's mocks, each stack's GPU node group has the AMI type, taint, labels,
// scaling, zones and launch template its config asks for, and exposes what other components use.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { GPU_TAINT, NODE_LABEL_GPU_TYPE, NODE_LABEL_ROLE } from "../components/contracts";
import { gpuLaunchTemplateArgs, gpuUserData, resolveGpuNodeGroupArgs, type GpuNodeGroupArgs } from "../components/gpu";
import { isSettingsError, type SettingProblem } from "../lib/errors";
import { checkSettings } from "../lib/schema";
import { sections } from "../config/schema";
import { plan, planFixture, one, ofType } from "./helpers";
import { fixtureStack } from "./support/stacks";
import { NODE_GROUP as NG, LAUNCH_TEMPLATE as LT } from "../policies/rules/types";

const expected = {
  dev: { instanceTypes: ["g4dn.xlarge"], gpuType: "nvidia-t4", scaling: [1, 1, 1], zones: 1, volume: 100 },
  staging: { instanceTypes: ["g6.xlarge"], gpuType: "nvidia-l4", scaling: [2, 2, 5], zones: 2, volume: 200 },
  prod: { instanceTypes: ["g6.4xlarge"], gpuType: "nvidia-l4", scaling: [3, 3, 10], zones: 3, volume: 300 },
};

describe("GPU node group", () => {
  for (const [stack, want] of Object.entries(expected)) {
    describe(`stack ${stack}`, () => {
      it("uses the AL2023 NVIDIA AMI type, the configured instance types and scaling", async () => {
        const ng = one((await plan(stack)).resources, NG);
        assert.equal(ng.props.amiType, "AL2023_x86_64_NVIDIA");
        assert.deepEqual(ng.props.instanceTypes, want.instanceTypes);
        assert.deepEqual([ng.props.scalingConfig.minSize, ng.props.scalingConfig.desiredSize, ng.props.scalingConfig.maxSize], want.scaling);
        assert.deepEqual(ng.props.updateConfig, { maxUnavailable: 1 });
      });

      it("is tainted nvidia.com/gpu NO_SCHEDULE and labelled with role and GPU type", async () => {
        const ng = one((await plan(stack)).resources, NG);
        assert.deepEqual(ng.props.taints, [{ key: "nvidia.com/gpu", value: "true", effect: "NO_SCHEDULE" }]);
        // And the Cluster Autoscaler's GPU label (components/upstream/cluster-autoscaler.ts GPU_NODE_LABEL).
        assert.deepEqual(ng.props.labels, { [NODE_LABEL_ROLE]: "gpu", [NODE_LABEL_GPU_TYPE]: want.gpuType, "k8s.amazonaws.com/accelerator": want.gpuType });
      });

      it("spans one private subnet per configured zone", async () => {
        const ng = one((await plan(stack)).resources, NG);
        assert.equal(ng.props.subnetIds.length, want.zones);
        assert.equal(new Set(ng.props.subnetIds).size, want.zones);
      });

      it("records the zones of its subnets (looked up per subnet) in the triton-platform:zones tag", async () => {
        const p = await plan(stack);
        const ng = one(p.resources, NG);
        const zones = String(ng.props.tags?.["triton-platform:zones"]).split(" ");
        assert.equal(zones.length, want.zones);
        assert.deepEqual(zones, [...zones].sort());
        for (const z of zones) assert.match(z, /^[a-z]{2}-[a-z]+-\d[a-z]$/);
      });

      it("launches from its own template: IMDSv2, hop limit 1, encrypted data volume, both security groups", async () => {
        const p = await plan(stack);
        const ng = one(p.resources, NG);
        const lt = one(p.resources, LT);
        const sg = one(p.resources, "aws:ec2/securityGroup:SecurityGroup", "gpu-nodes");
        assert.equal(ng.props.launchTemplate.id, `${lt.name}-id`);
        assert.equal(ng.props.launchTemplate.version, "1");
        assert.deepEqual(lt.props.metadataOptions, { httpEndpoint: "enabled", httpTokens: "required", httpPutResponseHopLimit: 1 });
        // The volumes' key is the one the stack creates (rotation on), named by ARN.
        const key = one(p.resources, "aws:kms/key:Key", "gpu-volumes");
        assert.equal(key.props.enableKeyRotation, true);
        const keyArn = lt.props.blockDeviceMappings[0].ebs.kmsKeyId;
        assert.match(String(keyArn), /^arn:aws:kms:[a-z0-9-]+:\d{12}:key\//);
        assert.deepEqual(lt.props.blockDeviceMappings, [
          { deviceName: "/dev/xvda", ebs: { volumeType: "gp3", volumeSize: want.volume, encrypted: "true", kmsKeyId: keyArn, deleteOnTermination: "true" } },
        ]);
        assert.equal(lt.props.imageId, undefined, "EKS picks the AMI for the AMI type");
        assert.deepEqual(lt.props.vpcSecurityGroupIds, [`${sg.name}-id`, "sg-0c1a5e0000000000c"]);
        assert.equal(lt.props.tagSpecifications[0].tags["triton-platform:stack"], stack);
      });

      it("has a node role with exactly the worker, CNI and ECR read-only policies", async () => {
        const p = await plan(stack);
        const role = one(p.resources, "aws:iam/role:Role", "gpu-node");
        assert.equal(JSON.parse(role.props.assumeRolePolicy).Statement[0].Principal.Service, "ec2.amazonaws.com");
        const arns = ofType(p.resources, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").map((a) => {
          assert.equal(a.props.role, role.props.name ?? "gpu-node-0000000");
          return a.props.policyArn;
        });
        assert.deepEqual(arns.sort(), [
          "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
          "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
          "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
        ]);
        assert.equal(one(p.resources, NG).props.nodeRoleArn, p.outputs.gpuNodeRoleArn);
      });

      it("exports the GPU security group, node role ARN, labels and taint", async () => {
        const p = await plan(stack);
        const sg = one(p.resources, "aws:ec2/securityGroup:SecurityGroup", "gpu-nodes");
        assert.equal(p.outputs.gpuNodeSecurityGroupId, `${sg.name}-id`);
        assert.match(String(p.outputs.gpuNodeRoleArn), /^arn:aws:iam::123456789012:role\//);
        assert.deepEqual(p.outputs.gpuNodeLabels, { [NODE_LABEL_ROLE]: "gpu", [NODE_LABEL_GPU_TYPE]: want.gpuType });
        assert.deepEqual(p.outputs.gpuNodeTaint, GPU_TAINT);
      });
    });
  }

  describe("arguments", () => {
    const args: GpuNodeGroupArgs = {
      clusterName: "c",
      vpcId: "vpc-1",
      clusterSecurityGroupId: "sg-1",
      region: "us-east-1",
      zones: ["us-east-1a"],
      instanceTypes: ["g5.xlarge"],
      gpuType: "nvidia-a10g",
      scaling: { min: 1, desired: 1, max: 2 },
      tags: {},
    };
    const KEY = "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000";
    it("applies the defaults once", () => {
      const r = resolveGpuNodeGroupArgs(args);
      assert.equal(r.amiType, "AL2023_x86_64_NVIDIA");
      assert.equal(r.rootVolumeGiB, 200);
      assert.equal(r.maxUnavailable, 1);
      assert.equal(r.imdsHopLimit, 1);
      // 2 stays open to a direct caller with a stated need (a pod that reads instance metadata itself).
      assert.equal(resolveGpuNodeGroupArgs({ ...args, imdsHopLimit: 2 }).imdsHopLimit, 2);
    });
    it("Bottlerocket: sizes the data volume (/dev/xvdb), keeps the OS volume encrypted, and sends TOML", () => {
      const lt = gpuLaunchTemplateArgs(
        resolveGpuNodeGroupArgs({ ...args, amiType: "BOTTLEROCKET_x86_64_NVIDIA", rootVolumeGiB: 250, podShutdownSeconds: 200 }),
        ["sg-a"],
        KEY,
      );
      assert.deepEqual(lt.blockDeviceMappings, [
        { deviceName: "/dev/xvda", ebs: { volumeType: "gp3", encrypted: "true", kmsKeyId: KEY, deleteOnTermination: "true" } },
        { deviceName: "/dev/xvdb", ebs: { volumeType: "gp3", volumeSize: 250, encrypted: "true", kmsKeyId: KEY, deleteOnTermination: "true" } },
      ]);
      assert.equal(Buffer.from(lt.userData as string, "base64").toString("utf8"), gpuUserData("bottlerocket", 200));
    });
    /** The problems of resolving `a`, asserting it throws one SettingsError about GpuNodeGroup "gpu". */
    const problemsOf = (a: GpuNodeGroupArgs): readonly SettingProblem[] => {
      let details: readonly SettingProblem[] = [];
      assert.throws(
        () => resolveGpuNodeGroupArgs(a, "gpu"),
        (e: unknown) => {
          assert.ok(isSettingsError(e), String(e));
          assert.equal(e.subject, 'invalid arguments of GpuNodeGroup "gpu"');
          details = e.details;
          return true;
        },
      );
      return details;
    };
    it("rejects a volume key that is no key ARN (an alias), naming the key", () => {
      const problems = problemsOf({ ...args, rootVolumeKmsKeyArn: "alias/aws/ebs" });
      assert.equal(problems.length, 1);
      assert.equal(problems[0].key, "rootVolumeKmsKeyArn");
      assert.match(problems[0].rule, /must be a KMS key ARN/);
    });
    it("a given volume key is used as it is, and no key is created", async () => {
      const given = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-4333-8444-555555555555";
      const p = await planFixture(fixtureStack("prod", (s) => (s.gpu.rootVolumeKmsKeyArn = given)));
      assert.equal(ofType(p.resources, "aws:kms/key:Key").filter((k) => k.name === "gpu-volumes").length, 0);
      assert.ok(one(p.resources, LT).props.blockDeviceMappings.every((m: { ebs: { kmsKeyId: string } }) => m.ebs.kmsKeyId === given));
    });
    it("rejects inconsistent scaling and a hop limit above 2, naming the key, the rule and the value", () => {
      assert.deepEqual(problemsOf({ ...args, scaling: { min: 2, desired: 1, max: 3 } }), [
        { key: "scaling.min", rule: "must be <= desired (1)", value: { shown: "2" } },
      ]);
      assert.deepEqual(problemsOf({ ...args, imdsHopLimit: 3 }), [
        {
          key: "imdsHopLimit",
          rule: "must be 1 or 2 (2 already lets every pod on the pod network reach the node role; a higher limit adds nothing)",
          value: { shown: "3" },
        },
      ]);
    });
    it("reports every problem at once, with the stack config's rules (one schema)", () => {
      const keys = problemsOf({ ...args, instanceTypes: [], zones: [], rootVolumeGiB: 10, maxUnavailable: 0 }).map((p) => p.key);
      assert.deepEqual(keys.sort(), ["instanceTypes", "maxUnavailable", "rootVolumeGiB", "zones"]);
      // Explicit subnets make the zone lookup unnecessary.
      assert.doesNotThrow(() => resolveGpuNodeGroupArgs({ ...args, zones: [], subnetIds: ["subnet-1"] }));
    });
    it("property: a direct caller accepts a scaling triple exactly when the stack config does (one schema)", () => {
      const accepts = (f: () => unknown) => {
        try {
          f();
          return true;
        } catch {
          return false;
        }
      };
      fc.assert(
        fc.property(fc.nat(12), fc.nat(12), fc.nat(12), (min, desired, max) => {
          const scaling = { min, desired, max };
          const direct = accepts(() => resolveGpuNodeGroupArgs({ ...args, scaling }));
          const stack = checkSettings(sections.gpu, { instanceTypes: args.instanceTypes, scaling, operator: { version: "v25.10.1" } }).success;
          return direct === stack && direct === (min <= desired && desired <= max && max >= 1);
        }),
        { numRuns: 200 },
      );
    });
    it("derives gpuType from the instance family, as the stack config does", () => {
      const { gpuType: _, ...noType } = args;
      assert.equal(resolveGpuNodeGroupArgs(noType).gpuType, "nvidia-a10g");
      assert.deepEqual(problemsOf({ ...args, gpuType: "nvidia-l4" }), [
        { key: "gpuType", rule: "must match the instance types' GPU (nvidia-a10g)", value: { shown: '"nvidia-l4"' } },
      ]);
    });
  });
});
