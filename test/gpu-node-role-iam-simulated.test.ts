// The GPU node role, proven by the requests the node's own agents make: each request is evaluated by
// an IAM policy simulator (@cloud-copilot/iam-simulate, AGPL-3.0, tests only) against the policies the
// role has. The role has no policy of its own (policy gpu-node-role-least-privilege), only the three
// AWS managed policies the plan attaches; their documents are fixtures
// (test/support/aws-managed-policies.ts, with their source and version), since neither the
// simulator nor the plan carries them. What rests on those fixtures: that AWS's current default
// versions are the recorded ones.
//
// The requests: the kubelet and nodeadm (eks:DescribeCluster at bootstrap, ec2:DescribeInstances for
// the node's addresses and zone), the VPC CNI (aws-node: ENIs and secondary IPs, tagging its ENIs),
// the container runtime's ECR pulls (GetAuthorizationToken, BatchGetImage, GetDownloadUrlForLayer,
// BatchCheckLayerAvailability: the EKS add-on images and pause image come from ECR), and EKS Pod
// Identity (eks-auth:AssumeRoleForPodIdentity). SSM is not granted: the role does not attach
// AmazonSSMManagedInstanceCore, so Session Manager does not reach GPU nodes (denied below, on purpose).
import { strict as assert } from "node:assert";
import { runSimulation } from "@cloud-copilot/iam-simulate";
import { nodeRolePolicyArns } from "../components/gpu";
import { WORKER_NODE_MANAGED_POLICIES } from "../components/upstream/eks";
import { FAKE_ACCOUNT_ID } from "../tools/planner/fakes";
import { AWS_MANAGED_POLICIES } from "./support/aws-managed-policies";
import { ofType, plan } from "./helpers";

const ACCOUNT = FAKE_ACCOUNT_ID;
const REGION = "us-east-1";
const NODE = `arn:aws:sts::${ACCOUNT}:assumed-role/gpu-node-1234567/i-0123456789abcdef0`;
const ec2 = (what: string) => `arn:aws:ec2:${REGION}:${ACCOUNT}:${what}`;
const ecrRepo = (account: string, name: string) => `arn:aws:ecr:${REGION}:${account}:repository/${name}`;
// The ECR account that hosts the EKS add-on images in us-east-1 (amazon-eks-ami: 602401143452).
const EKS_ECR = "602401143452";

type Outcome = "Allowed" | "ImplicitlyDenied";
interface Request {
  readonly what: string;
  readonly action: string;
  readonly resource: string;
}

async function evaluate(r: Request): Promise<Outcome> {
  const result = await runSimulation(
    {
      request: { principal: NODE, action: r.action, resource: { resource: r.resource, accountId: ACCOUNT }, contextVariables: {} },
      identityPolicies: WORKER_NODE_MANAGED_POLICIES.map((n) => ({ name: n, policy: AWS_MANAGED_POLICIES[n].document })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  assert.notEqual(result.resultType, "error", `${r.what}: the simulation is valid (${result.resultType === "error" ? result.errors.message : ""})`);
  if (result.resultType !== "single") throw new Error(`${r.what}: expected a single result`);
  return result.overallResult as Outcome;
}

function expect(outcome: Outcome, requests: Request[]) {
  for (const r of requests) {
    it(`${outcome === "Allowed" ? "allows" : "denies"} ${r.what}`, async () => {
      assert.equal(await evaluate(r), outcome, `${r.what} (${r.action} on ${r.resource})`);
    });
  }
}

describe("GPU node role IAM, evaluated by an IAM simulator", () => {
  it("simulates exactly the managed policies the plan attaches (and no other policy of the role)", async function () {
    this.timeout(60_000);
    const rs = (await plan("prod")).resources;
    const attached = ofType(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
      .filter((r) => r.parent?.includes("GpuNodeGroup"))
      .map((r) => r.props.policyArn as string);
    assert.deepEqual(attached.sort(), nodeRolePolicyArns(REGION).sort());
    assert.deepEqual(Object.keys(AWS_MANAGED_POLICIES).sort(), [...WORKER_NODE_MANAGED_POLICIES].sort());
    assert.equal(ofType(rs, "aws:iam/rolePolicy:RolePolicy").filter((r) => r.parent?.includes("GpuNodeGroup")).length, 0);
  });

  describe("the kubelet, nodeadm, the VPC CNI, image pulls", () => {
    expect("Allowed", [
      { what: "eks:DescribeCluster (nodeadm bootstrap)", action: "eks:DescribeCluster", resource: `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/ml-prod` },
      { what: "ec2:DescribeInstances (kubelet: addresses, zone)", action: "ec2:DescribeInstances", resource: "*" },
      { what: "ec2:DescribeInstanceTypes (CNI: ENI and IP limits)", action: "ec2:DescribeInstanceTypes", resource: "*" },
      { what: "ec2:CreateNetworkInterface (CNI), on the ENI", action: "ec2:CreateNetworkInterface", resource: ec2("network-interface/eni-0123456789abcdef1") },
      { what: "ec2:CreateNetworkInterface (CNI), in the node subnet", action: "ec2:CreateNetworkInterface", resource: ec2("subnet/subnet-0a00000000000000a") },
      { what: "ec2:AttachNetworkInterface (CNI)", action: "ec2:AttachNetworkInterface", resource: ec2("network-interface/eni-0123456789abcdef0") },
      { what: "ec2:AssignPrivateIpAddresses (CNI: pod IPs)", action: "ec2:AssignPrivateIpAddresses", resource: ec2("network-interface/eni-0123456789abcdef0") },
      { what: "ec2:CreateTags on its ENI (CNI)", action: "ec2:CreateTags", resource: ec2("network-interface/eni-0123456789abcdef0") },
      { what: "ecr:GetAuthorizationToken (image pull)", action: "ecr:GetAuthorizationToken", resource: "*" },
      { what: "ecr:BatchGetImage of an EKS add-on image", action: "ecr:BatchGetImage", resource: ecrRepo(EKS_ECR, "amazon-k8s-cni") },
      { what: "ecr:GetDownloadUrlForLayer", action: "ecr:GetDownloadUrlForLayer", resource: ecrRepo(EKS_ECR, "eks/pause") },
      { what: "ecr:BatchCheckLayerAvailability", action: "ecr:BatchCheckLayerAvailability", resource: ecrRepo(ACCOUNT, "triton") },
      {
        what: "eks-auth:AssumeRoleForPodIdentity (EKS Pod Identity agent)",
        action: "eks-auth:AssumeRoleForPodIdentity",
        resource: `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/ml-prod`,
      },
    ]);
  });

  describe("what pods on a GPU node must not inherit through it", () => {
    expect("ImplicitlyDenied", [
      {
        what: "s3:GetObject of the model bucket (Triton reads through its own IRSA role)",
        action: "s3:GetObject",
        resource: "arn:aws:s3:::triton-models-prod-x/models/a",
      },
      { what: "s3:ListBucket", action: "s3:ListBucket", resource: "arn:aws:s3:::triton-models-prod-x" },
      { what: "kms:Decrypt", action: "kms:Decrypt", resource: `arn:aws:kms:${REGION}:${ACCOUNT}:key/00000000-0000-4000-8000-000000000000` },
      { what: "ecr:PutImage (pushing images)", action: "ecr:PutImage", resource: ecrRepo(ACCOUNT, "triton") },
      { what: "ecr:DeleteRepository", action: "ecr:DeleteRepository", resource: ecrRepo(ACCOUNT, "triton") },
      { what: "ec2:CreateTags on an instance", action: "ec2:CreateTags", resource: ec2("instance/i-0123456789abcdef0") },
      { what: "ec2:TerminateInstances", action: "ec2:TerminateInstances", resource: ec2("instance/i-0123456789abcdef0") },
      { what: "ec2:RunInstances", action: "ec2:RunInstances", resource: ec2("instance/i-0123456789abcdef1") },
      {
        what: "autoscaling:SetDesiredCapacity (that is the autoscaler's role)",
        action: "autoscaling:SetDesiredCapacity",
        resource: `arn:aws:autoscaling:${REGION}:${ACCOUNT}:autoScalingGroup:x:autoScalingGroupName/eks-gpu`,
      },
      { what: "iam:PassRole", action: "iam:PassRole", resource: `arn:aws:iam::${ACCOUNT}:role/any` },
      { what: "sts:AssumeRole of another role", action: "sts:AssumeRole", resource: `arn:aws:iam::${ACCOUNT}:role/admin` },
      { what: "eks:UpdateClusterConfig", action: "eks:UpdateClusterConfig", resource: `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/ml-prod` },
      {
        what: "ssm:UpdateInstanceInformation (SSM agent: AmazonSSMManagedInstanceCore is not attached)",
        action: "ssm:UpdateInstanceInformation",
        resource: ec2("instance/i-0123456789abcdef0"),
      },
      { what: "ssmmessages:CreateControlChannel (Session Manager)", action: "ssmmessages:CreateControlChannel", resource: "*" },
    ]);
  });
});
