// The GPU nodes' volume key, through the IAM simulator (@cloud-copilot/iam-simulate): its key
// policy (components/gpu/builders.ts gpuVolumeKeyPolicy, as the prod fixture plan records it) lets
// the account's EC2 Auto Scaling service-linked role do what launching an encrypted volume needs
// (EC2 Auto Scaling user guide, "Required AWS KMS key policy for use with encrypted volumes":
// Encrypt, Decrypt, ReEncrypt*, GenerateDataKey*, DescribeKey, and CreateGrant for AWS resources
// only), and nothing else: not to administer the key, not a grant for a non-AWS grantee, and nothing
// to the GPU node role (its AWS-managed policies grant no KMS action) or to another account.
import { strict as assert } from "node:assert";
import { runSimulation } from "@cloud-copilot/iam-simulate";
import { WORKER_NODE_MANAGED_POLICIES } from "../components/upstream/eks";
import { autoScalingServiceLinkedRoleArn } from "../components/gpu/builders";
import { FAKE_ACCOUNT_ID } from "../tools/planner/fakes";
import { AWS_MANAGED_POLICIES } from "./support/aws-managed-policies";
import { one, plan } from "./helpers";

const ACCOUNT = FAKE_ACCOUNT_ID;
/** The session EC2 Auto Scaling acts as (the service-linked role's path is part of the role ARN, not of the session). */
const SLR_SESSION = `arn:aws:sts::${ACCOUNT}:assumed-role/AWSServiceRoleForAutoScaling/AutoScaling`;
const NODE_SESSION = `arn:aws:sts::${ACCOUNT}:assumed-role/gpu-node-0000000/i-0123456789abcdef0`;
const FOREIGN = "arn:aws:iam::210987654321:role/someone-else";
const NODE_POLICIES = WORKER_NODE_MANAGED_POLICIES.map((n) => ({ name: n, policy: AWS_MANAGED_POLICIES[n].document }));

type Outcome = "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied";

async function keyOfPlan(): Promise<{ arn: string; policy: unknown }> {
  const p = await plan("prod");
  const key = one(p.resources, "aws:kms/key:Key", "gpu-volumes");
  const lt = one(p.resources, "aws:ec2/launchTemplate:LaunchTemplate");
  const arn = String(lt.props.blockDeviceMappings[0].ebs.kmsKeyId);
  return { arn, policy: JSON.parse(key.props.policy) };
}

async function evaluate(
  principal: string,
  action: string,
  context: Record<string, string>,
  identityPolicies: { name: string; policy: unknown }[] = [],
  editPolicy: (p: { Statement: { Sid: string }[] }) => unknown = (p) => p,
): Promise<Outcome> {
  const { arn, policy: planned } = await keyOfPlan();
  const policy = editPolicy(planned as { Statement: { Sid: string }[] });
  const accountId = arn.split(":")[4];
  const result = await runSimulation(
    {
      request: { principal, action, resource: { resource: arn, accountId }, contextVariables: context },
      identityPolicies,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      resourcePolicy: policy,
    },
    {},
  );
  assert.notEqual(result.resultType, "error", result.resultType === "error" ? JSON.stringify(result.errors) : "");
  if (result.resultType !== "single") throw new Error(`${action}: expected one result`);
  assert.deepEqual(result.result.ignoredContextKeys ?? [], [], `${action}: every context key applies`);
  return result.overallResult;
}

const AWS_RESOURCE = { "kms:GrantIsForAWSResource": "true" };

describe("the GPU volume key through the IAM simulator", () => {
  it("names the account's AWSServiceRoleForAutoScaling, by its ARN with the service path", async () => {
    const { policy } = await keyOfPlan();
    const principals = JSON.stringify(policy);
    assert.ok(principals.includes(autoScalingServiceLinkedRoleArn("aws", ACCOUNT)), principals);
  });

  describe("the EC2 Auto Scaling service-linked role", () => {
    for (const action of [
      "kms:Encrypt",
      "kms:Decrypt",
      "kms:ReEncryptFrom",
      "kms:ReEncryptTo",
      "kms:GenerateDataKeyWithoutPlaintext",
      "kms:GenerateDataKey",
      "kms:DescribeKey",
    ]) {
      it(`may ${action} (launching an encrypted volume)`, async () => assert.equal(await evaluate(SLR_SESSION, action, {}), "Allowed"));
    }
    it("may create a grant for an AWS resource (EBS attaching the volume)", async () =>
      assert.equal(await evaluate(SLR_SESSION, "kms:CreateGrant", AWS_RESOURCE), "Allowed"));
    it("may not create a grant for anything else", async () => {
      assert.equal(await evaluate(SLR_SESSION, "kms:CreateGrant", { "kms:GrantIsForAWSResource": "false" }), "ImplicitlyDenied");
      assert.equal(await evaluate(SLR_SESSION, "kms:CreateGrant", {}), "ImplicitlyDenied");
    });
    it("is refused once the key policy's Auto Scaling statements are gone (the allowance is the key policy's, not the role's)", async () => {
      const onlyAccount = (p: { Statement: { Sid: string }[] }) => ({ ...p, Statement: p.Statement.filter((x) => x.Sid === "EnableIamPolicies") });
      assert.equal(await evaluate(SLR_SESSION, "kms:Decrypt", {}, [], onlyAccount), "ImplicitlyDenied");
      assert.equal(await evaluate(SLR_SESSION, "kms:CreateGrant", AWS_RESOURCE, [], onlyAccount), "ImplicitlyDenied");
    });
    for (const action of ["kms:ScheduleKeyDeletion", "kms:PutKeyPolicy", "kms:DisableKey", "kms:RevokeGrant"]) {
      it(`may not ${action}`, async () => assert.equal(await evaluate(SLR_SESSION, action, {}), "ImplicitlyDenied"));
    }
  });

  describe("the GPU node role (its managed policies) and another account", () => {
    for (const action of ["kms:Decrypt", "kms:GenerateDataKeyWithoutPlaintext", "kms:DescribeKey"]) {
      it(`the node role may not ${action}`, async () => assert.equal(await evaluate(NODE_SESSION, action, {}, NODE_POLICIES), "ImplicitlyDenied"));
    }
    it("the node role may not create a grant, even for an AWS resource", async () =>
      assert.equal(await evaluate(NODE_SESSION, "kms:CreateGrant", AWS_RESOURCE, NODE_POLICIES), "ImplicitlyDenied"));
    it("another account's role may not decrypt or create grants", async () => {
      assert.equal(await evaluate(FOREIGN, "kms:Decrypt", {}), "ImplicitlyDenied");
      assert.equal(await evaluate(FOREIGN, "kms:CreateGrant", AWS_RESOURCE), "ImplicitlyDenied");
    });
  });
});
