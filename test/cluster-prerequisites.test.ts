// A cluster that lacks a prerequisite the stack reads from its lookup (OIDC issuer, VPC,
// cluster security group, endpoint and CA) fails with an error naming the missing piece and
// how to provide it, instead of writing an IRSA trust policy with an empty issuer.
import { strict as assert } from "node:assert";
import { clusterFacts, ClusterPrerequisiteError, type ClusterLookup } from "../components/cluster";
import { INVOKES } from "../tools/planner/fakes";

/** A complete answer: the planner's own fake of aws.eks.getCluster. */
function complete(): ClusterLookup {
  return INVOKES["aws:eks/getCluster:getCluster"]({ name: "gpu-prod" }, "us-east-1") as ClusterLookup;
}

function problemsOf(lookup: ClusterLookup): string[] {
  try {
    clusterFacts("gpu-prod", lookup);
  } catch (e) {
    assert.ok(e instanceof ClusterPrerequisiteError, `expected a ClusterPrerequisiteError, got ${String(e)}`);
    assert.match(e.message, /EKS cluster "gpu-prod"/);
    assert.match(e.message, /Cluster prerequisites/);
    return e.problems;
  }
  assert.fail("clusterFacts accepted a cluster that lacks a prerequisite");
}

describe("cluster prerequisites", () => {
  it("a complete lookup gives its issuer, VPC, security group, endpoint and CA unchanged", () => {
    const lookup = complete();
    const facts = clusterFacts("gpu-prod", lookup);
    assert.equal(facts.oidcIssuerUrl, lookup.identities[0].oidcs[0].issuer);
    assert.equal(facts.vpcId, lookup.vpcConfig.vpcId);
    assert.equal(facts.clusterSecurityGroupId, lookup.vpcConfig.clusterSecurityGroupId);
    assert.equal(facts.endpoint, lookup.endpoint);
    assert.equal(facts.caData, lookup.certificateAuthorities[0].data);
  });

  const noIssuer: [string, (l: ClusterLookup) => ClusterLookup][] = [
    ["no identities", (l) => ({ ...l, identities: [] })],
    ["an identity without oidcs", (l) => ({ ...l, identities: [{ oidcs: [] }] })],
    ["an empty issuer", (l) => ({ ...l, identities: [{ oidcs: [{ issuer: "" }] }] })],
  ];
  for (const [what, breakIt] of noIssuer) {
    it(`${what}: names the IAM OIDC provider and the eksctl command that associates it`, () => {
      const problems = problemsOf(breakIt(complete()));
      assert.equal(problems.length, 1, problems.join("\n"));
      assert.match(problems[0], /no OIDC issuer/);
      assert.match(problems[0], /IAM OIDC provider/);
      assert.ok(problems[0].includes("eksctl utils associate-iam-oidc-provider --cluster gpu-prod --approve"), problems[0]);
    });
  }

  it("no VPC id: names the VPC", () => {
    const l = complete();
    const problems = problemsOf({ ...l, vpcConfig: { ...l.vpcConfig, vpcId: "" } });
    assert.equal(problems.length, 1);
    assert.match(problems[0], /no VPC/);
  });

  it("no cluster security group: names vpcConfig.clusterSecurityGroupId", () => {
    const l = complete();
    const problems = problemsOf({ ...l, vpcConfig: { ...l.vpcConfig, clusterSecurityGroupId: "" } });
    assert.equal(problems.length, 1);
    assert.match(problems[0], /vpcConfig\.clusterSecurityGroupId/);
  });

  it("a cluster that is not ACTIVE yet (no endpoint, no CA): names its status", () => {
    const problems = problemsOf({ ...complete(), endpoint: "", certificateAuthorities: [], status: "CREATING" });
    assert.equal(problems.length, 1);
    assert.match(problems[0], /status "CREATING"/);
    assert.match(problems[0], /ACTIVE/);
  });

  it("reports every missing piece at once", () => {
    const l = complete();
    const problems = problemsOf({ ...l, identities: [], vpcConfig: { ...l.vpcConfig, vpcId: "", clusterSecurityGroupId: "" } });
    assert.equal(problems.length, 3, problems.join("\n"));
  });
});
