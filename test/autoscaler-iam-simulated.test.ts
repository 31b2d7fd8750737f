// The Cluster Autoscaler's role, proven by the requests the autoscaler makes rather than by the
// policy's shape: each request is evaluated by an IAM policy simulator (@cloud-copilot/iam-simulate,
// AGPL-3.0, a devDependency used in tests only) against the role's identity policy.
//
// The requests are those of the AWS provider at cluster-autoscaler-1.35.0 (the appVersion of chart
// 9.59.0; cloudprovider/aws/README.md, aws_wrapper.go): auto-discovery describes the Auto Scaling
// groups, their instances, launch templates and scaling activities, the instance types, and, for a
// managed node group at zero nodes, eks:DescribeNodegroup; a scale-up is SetDesiredCapacity and a
// scale-down TerminateInstanceInAutoScalingGroup, both on one group. Auto Scaling authorises those two
// on the group's ARN with the group's tags as aws:ResourceTag/<key> (Service Authorization Reference,
// Amazon EC2 Auto Scaling: the simulator's data refuses a context key the action does not take, see
// `evaluate`). The groups of this cluster carry the tags EKS puts on a managed node group's ASG.
import { strict as assert } from "node:assert";
import { runSimulation } from "@cloud-copilot/iam-simulate";
import { autoscalerPolicy, autoscalerTrustPolicy, AUTOSCALER_SERVICE_ACCOUNT } from "../components/autoscaler";
import { discoveryClusterTag, DISCOVERY_ENABLED_TAG } from "../components/upstream/cluster-autoscaler";
import { oidcProviderArn } from "../components/upstream/aws-iam";
import { FAKE_ACCOUNT_ID } from "../tools/planner/fakes";
import { one, plan } from "./helpers";

const ACCOUNT = FAKE_ACCOUNT_ID;
const REGION = "us-east-1";
const CLUSTER = "ml-prod";
const SCOPE = { partition: "aws", accountId: ACCOUNT, region: REGION, clusterName: CLUSTER };
const CALLER = `arn:aws:sts::${ACCOUNT}:assumed-role/cluster-autoscaler-1234567/1700000000000000000`;

type Outcome = "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied";
interface Request {
  readonly what: string;
  readonly action: string;
  readonly resource: string;
  readonly context?: Record<string, string>;
}

const asgArn = (name: string, region = REGION, account = ACCOUNT) =>
  `arn:aws:autoscaling:${region}:${account}:autoScalingGroup:5ec4c0de-0000-4000-8000-000000000000:autoScalingGroupName/${name}`;
const nodegroupArn = (cluster: string, name: string) => `arn:aws:eks:${REGION}:${ACCOUNT}:nodegroup/${cluster}/${name}/0ac8-0000-0000`;

/** The tags EKS gives the ASG of a managed node group of `cluster`, as the request's aws:ResourceTag keys. */
const eksTags = (cluster: string): Record<string, string> => ({
  [`aws:ResourceTag/${discoveryClusterTag(cluster)}`]: "owned",
  [`aws:ResourceTag/${DISCOVERY_ENABLED_TAG}`]: "true",
  [`aws:ResourceTag/eks:cluster-name`]: cluster,
});
const OWN_ASG = asgArn("eks-gpu-0000000-00000000-0000-4000-8000-000000000000");
const OTHER_ASG = asgArn("eks-web-1111111-11111111-1111-4111-8111-111111111111");

async function evaluate(r: Request): Promise<Outcome> {
  const result = await runSimulation(
    {
      request: { principal: CALLER, action: r.action, resource: { resource: r.resource, accountId: ACCOUNT }, contextVariables: r.context ?? {} },
      identityPolicies: [{ name: "cluster-autoscaler", policy: autoscalerPolicy(SCOPE) }],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  assert.notEqual(result.resultType, "error", `${r.what}: the simulation is valid (${result.resultType === "error" ? result.errors.message : ""})`);
  if (result.resultType !== "single") throw new Error(`${r.what}: expected a single result`);
  // A context key the action does not take would be dropped silently and prove nothing.
  assert.deepEqual(result.result.ignoredContextKeys ?? [], [], `${r.what}: every context key applies to ${r.action}`);
  return result.overallResult;
}

function expect(outcome: Outcome, requests: Request[]) {
  for (const r of requests) {
    it(`${outcome === "Allowed" ? "allows" : "denies"} ${r.what}`, async () => {
      assert.equal(await evaluate(r), outcome, `${r.what} (${r.action} on ${r.resource})`);
    });
  }
}

describe("Cluster Autoscaler IAM, evaluated by an IAM simulator", () => {
  describe("what auto-discovery and template building send", () => {
    expect("Allowed", [
      { what: "DescribeAutoScalingGroups (discovery by tag)", action: "autoscaling:DescribeAutoScalingGroups", resource: "*" },
      { what: "DescribeAutoScalingInstances", action: "autoscaling:DescribeAutoScalingInstances", resource: "*" },
      { what: "DescribeLaunchConfigurations", action: "autoscaling:DescribeLaunchConfigurations", resource: "*" },
      { what: "DescribeScalingActivities (failed scale-ups)", action: "autoscaling:DescribeScalingActivities", resource: "*" },
      { what: "ec2:DescribeLaunchTemplateVersions (the node group's launch template)", action: "ec2:DescribeLaunchTemplateVersions", resource: "*" },
      { what: "ec2:DescribeInstanceTypes (the dynamic instance list: vCPU, memory, GPUs)", action: "ec2:DescribeInstanceTypes", resource: "*" },
      { what: "ec2:DescribeImages", action: "ec2:DescribeImages", resource: "*" },
      { what: "ec2:GetInstanceTypesFromInstanceRequirements", action: "ec2:GetInstanceTypesFromInstanceRequirements", resource: "*" },
      {
        what: "eks:DescribeNodegroup of this cluster's GPU group (labels, taints at zero nodes)",
        action: "eks:DescribeNodegroup",
        resource: nodegroupArn(CLUSTER, "gpu-0000000"),
      },
    ]);
  });

  describe("scaling this cluster's managed node groups", () => {
    expect("Allowed", [
      { what: "SetDesiredCapacity on the GPU group's ASG (scale-up)", action: "autoscaling:SetDesiredCapacity", resource: OWN_ASG, context: eksTags(CLUSTER) },
      {
        what: "TerminateInstanceInAutoScalingGroup on the GPU group's ASG (scale-down)",
        action: "autoscaling:TerminateInstanceInAutoScalingGroup",
        resource: OWN_ASG,
        context: eksTags(CLUSTER),
      },
    ]);
  });

  describe("other clusters' groups, untagged groups and everything else", () => {
    const { [`aws:ResourceTag/${DISCOVERY_ENABLED_TAG}`]: _enabled, ...withoutEnabled } = eksTags(CLUSTER);
    const { [`aws:ResourceTag/${discoveryClusterTag(CLUSTER)}`]: _cluster, ...withoutCluster } = eksTags(CLUSTER);
    expect("ImplicitlyDenied", [
      { what: "SetDesiredCapacity on another cluster's group", action: "autoscaling:SetDesiredCapacity", resource: OTHER_ASG, context: eksTags("ml-staging") },
      {
        what: "TerminateInstanceInAutoScalingGroup on another cluster's group",
        action: "autoscaling:TerminateInstanceInAutoScalingGroup",
        resource: OTHER_ASG,
        context: eksTags("ml-staging"),
      },
      { what: "SetDesiredCapacity on an untagged group", action: "autoscaling:SetDesiredCapacity", resource: OTHER_ASG, context: {} },
      { what: "SetDesiredCapacity on a group without the enabled tag", action: "autoscaling:SetDesiredCapacity", resource: OTHER_ASG, context: withoutEnabled },
      {
        what: "SetDesiredCapacity on a group without this cluster's tag",
        action: "autoscaling:SetDesiredCapacity",
        resource: OTHER_ASG,
        context: withoutCluster,
      },
      {
        what: "SetDesiredCapacity on a group whose cluster tag is not owned (shared)",
        action: "autoscaling:SetDesiredCapacity",
        resource: OTHER_ASG,
        context: { ...eksTags(CLUSTER), [`aws:ResourceTag/${discoveryClusterTag(CLUSTER)}`]: "shared" },
      },
      {
        what: "SetDesiredCapacity on a tagged group in another region",
        action: "autoscaling:SetDesiredCapacity",
        resource: asgArn("eks-gpu-x", "us-west-2"),
        context: eksTags(CLUSTER),
      },
      { what: "eks:DescribeNodegroup of another cluster's group", action: "eks:DescribeNodegroup", resource: nodegroupArn("ml-staging", "gpu-0000000") },
      {
        what: "ec2:TerminateInstances (around the ASG)",
        action: "ec2:TerminateInstances",
        resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:instance/i-0123456789abcdef0`,
      },
      { what: "ec2:RunInstances", action: "ec2:RunInstances", resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:instance/i-0123456789abcdef1` },
      { what: "UpdateAutoScalingGroup (changing min/max)", action: "autoscaling:UpdateAutoScalingGroup", resource: OWN_ASG, context: eksTags(CLUSTER) },
      { what: "DeleteAutoScalingGroup", action: "autoscaling:DeleteAutoScalingGroup", resource: OWN_ASG, context: eksTags(CLUSTER) },
      { what: "CreateOrUpdateTags (re-tagging a group to reach it)", action: "autoscaling:CreateOrUpdateTags", resource: OTHER_ASG, context: {} },
      { what: "eks:UpdateNodegroupConfig", action: "eks:UpdateNodegroupConfig", resource: nodegroupArn(CLUSTER, "gpu-0000000") },
      { what: "iam:PassRole", action: "iam:PassRole", resource: `arn:aws:iam::${ACCOUNT}:role/gpu-node-0000000` },
    ]);
  });

  describe("the trust policy", () => {
    // Not simulated: the simulator does not know the OIDC provider's own condition keys
    // (<issuer>:sub, <issuer>:aud) and drops them as ignored context keys, so a simulation
    // would prove nothing. What rests on reading: exactly one ServiceAccount, StringEquals, the STS audience.
    it("trusts only the cluster's OIDC provider, for the autoscaler's ServiceAccount in its namespace and the STS audience", () => {
      const issuer = `https://oidc.eks.${REGION}.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF`;
      const provider = oidcProviderArn("aws", ACCOUNT, issuer);
      const host = issuer.replace("https://", "");
      const trust = autoscalerTrustPolicy({ providerArn: provider, issuerUrl: issuer, namespace: "kube-system" });
      assert.equal(trust.Statement.length, 1);
      const [st] = trust.Statement;
      assert.deepEqual([st.Effect, st.Principal, st.Action, st.Resource], ["Allow", { Federated: provider }, "sts:AssumeRoleWithWebIdentity", undefined]);
      assert.deepEqual(st.Condition, {
        StringEquals: { [`${host}:sub`]: `system:serviceaccount:kube-system:${AUTOSCALER_SERVICE_ACCOUNT}`, [`${host}:aud`]: "sts.amazonaws.com" },
      });
    });
  });

  it("the prod plan carries exactly this policy and trust policy", async function () {
    this.timeout(60_000);
    const rs = (await plan("prod")).resources;
    const policy = JSON.parse(one(rs, "aws:iam/rolePolicy:RolePolicy", "cluster-autoscaler").props.policy as string);
    assert.deepEqual(policy, autoscalerPolicy(SCOPE));
    const trust = JSON.parse(one(rs, "aws:iam/role:Role", "cluster-autoscaler").props.assumeRolePolicy as string);
    const issuer = trust.Statement[0].Principal.Federated.split("oidc-provider/")[1];
    assert.deepEqual(
      trust,
      autoscalerTrustPolicy({ providerArn: oidcProviderArn("aws", ACCOUNT, `https://${issuer}`), issuerUrl: `https://${issuer}`, namespace: "kube-system" }),
    );
  });
});
