// The Cluster Autoscaler component: its settings (defaults, rules with their key paths), the chart
// values it hands the release, and the plan of each fixture shape: role, policy, release, the GPU
// node group's node-template tags on its Auto Scaling group.
import { strict as assert } from "node:assert";
import { autoscalerValues, resolveClusterAutoscalerArgs, type ClusterAutoscalerArgs } from "../components/autoscaler";
import { autoscalerNodeTemplateTags, gpuNodeGroupLabels } from "../components/gpu";
import { GPU_NODE_LABEL, CLUSTER_AUTOSCALER_CHART } from "../components/upstream/cluster-autoscaler";
import { loadConfig } from "../config";
import { isSettingsError } from "../lib/errors";
import { fixtureConfig, ofType, one, plan, SHAPES } from "./helpers";
import { gpuInstanceType } from "../components/upstream/ec2-gpu-instances";

const base: ClusterAutoscalerArgs = { clusterName: "ml-prod", region: "us-east-1", oidcIssuerUrl: "https://oidc.example/id/X", labels: {} };

function problemsOf(f: () => unknown): { key: string; rule: string }[] {
  try {
    f();
  } catch (e) {
    assert.ok(isSettingsError(e), String(e));
    return e.details.map((d) => ({ key: d.key, rule: d.rule }));
  }
  assert.fail("expected a SettingsError");
}

describe("Cluster Autoscaler", () => {
  describe("settings", () => {
    it("defaults: enabled, chart 9.59.0 in kube-system, one replica, least-waste", () => {
      const r = resolveClusterAutoscalerArgs(base);
      assert.deepEqual([r.enabled, r.version, r.namespace, r.replicas, r.expander], [true, CLUSTER_AUTOSCALER_CHART.version, "kube-system", 1, "least-waste"]);
    });

    it("refuses the price expander (the AWS provider has no pricing: the autoscaler exits), priority, an unpinned chart, 0 replicas", () => {
      for (const expander of ["price", "priority", "leastwaste"]) {
        const p = problemsOf(() => resolveClusterAutoscalerArgs({ ...base, expander } as never));
        assert.equal(p[0].key, "expander");
        assert.match(p[0].rule, /must be one of "least-waste", "least-nodes", "most-pods", "random"/);
      }
      assert.equal(problemsOf(() => resolveClusterAutoscalerArgs({ ...base, version: "^9.59.0" }))[0].key, "version");
      assert.equal(problemsOf(() => resolveClusterAutoscalerArgs({ ...base, replicas: 0 }))[0].key, "replicas");
      for (const imageTag of ["latest", "1.33.0", "v1.33"]) {
        assert.deepEqual(
          problemsOf(() => resolveClusterAutoscalerArgs({ ...base, imageTag })),
          [{ key: "imageTag", rule: "must be an autoscaler release tag such as v1.35.0" }],
        );
      }
      assert.equal(problemsOf(() => resolveClusterAutoscalerArgs({ ...base, replica: 2 } as never))[0].key, "replica");
    });

    it("prod needs 2 replicas; staging and dev may run 1; a disabled autoscaler needs none", () => {
      assert.throws(
        () => loadConfig(fixtureConfig("prod", { autoscaler: { replicas: 1 } }), "prod"),
        /triton-platform:autoscaler\.replicas must be at least 2 in prod .*got 1/,
      );
      assert.throws(() => loadConfig(fixtureConfig("prod", { autoscaler: {} }), "prod"), /autoscaler\.replicas must be at least 2 in prod/);
      assert.equal(loadConfig(fixtureConfig("prod"), "prod").autoscaler.replicas, 2);
      assert.equal(loadConfig(fixtureConfig("prod", { autoscaler: { enabled: false } }), "prod").autoscaler.enabled, false);
      assert.equal(loadConfig(fixtureConfig("staging"), "staging").autoscaler.replicas, 1);
      assert.equal(loadConfig(fixtureConfig("dev", { autoscaler: { replicas: 1 } }), "dev").autoscaler.replicas, 1);
    });
  });

  describe("chart values", () => {
    const v = autoscalerValues(resolveClusterAutoscalerArgs({ ...base, replicas: 2 }), "arn:aws:iam::123456789012:role/ca") as any;
    it("discovers the cluster's node groups by the EKS tags and runs on AWS in the stack's region", () => {
      assert.deepEqual([v.cloudProvider, v.awsRegion, v.autoDiscovery], ["aws", "us-east-1", { clusterName: "ml-prod" }]);
      assert.equal(v.autoscalingGroups, undefined, "no --nodes beside auto-discovery (the README: they conflict)");
    });
    it("states the image tag: the chart's v1.35.0 by default, the cluster's minor when set", () => {
      assert.deepEqual(v.image, { tag: "v1.35.0" });
      const older = autoscalerValues(resolveClusterAutoscalerArgs({ ...base, imageTag: "v1.33.6" }), "arn") as any;
      assert.deepEqual(older.image, { tag: "v1.33.6" });
    });
    it("balances similar groups, picks the least waste, keeps skip-nodes-with-system-pods at its default", () => {
      assert.deepEqual(v.extraArgs, { expander: "least-waste", "balance-similar-node-groups": true });
    });
    it("runs 2 replicas behind the chart's PDB, as the IRSA ServiceAccount the role trusts", () => {
      assert.equal(v.replicaCount, 2);
      assert.deepEqual(v.podDisruptionBudget, { maxUnavailable: 1 });
      assert.equal(v.rbac.serviceAccount.name, "cluster-autoscaler");
      assert.equal(v.rbac.serviceAccount.annotations["eks.amazonaws.com/role-arn"], "arn:aws:iam::123456789012:role/ca");
    });
    it("stays off the GPU nodes: no toleration, required anti-affinity to the GPU role label", () => {
      assert.equal(v.tolerations, undefined);
      assert.deepEqual(v.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, [
        { matchExpressions: [{ key: "triton-platform/node-role", operator: "NotIn", values: ["gpu"] }] },
      ]);
    });
  });

  describe("node-template tags of the GPU node group", () => {
    it("one label tag per node label, the taint in the autoscaler's <value>:<Effect> form, the GPU count when known", () => {
      assert.deepEqual(autoscalerNodeTemplateTags("nvidia-l4", 4), [
        { key: "k8s.io/cluster-autoscaler/node-template/label/triton-platform/node-role", value: "gpu" },
        { key: "k8s.io/cluster-autoscaler/node-template/label/triton-platform/gpu-type", value: "nvidia-l4" },
        { key: "k8s.io/cluster-autoscaler/node-template/label/k8s.amazonaws.com/accelerator", value: "nvidia-l4" },
        { key: "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu", value: "true:NoSchedule" },
        { key: "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu", value: "4" },
      ]);
      assert.equal(autoscalerNodeTemplateTags("nvidia-l4").length, 4);
      // The taint value the autoscaler accepts (aws_manager.go extractTaintsFromAsg).
      for (const t of autoscalerNodeTemplateTags("nvidia-t4").filter((x) => x.key.includes("/taint/"))) {
        assert.match(t.value, /^(.*):(?:NoSchedule|NoExecute|PreferNoSchedule)$/);
      }
      assert.equal(gpuNodeGroupLabels("nvidia-a10g")[GPU_NODE_LABEL], "nvidia-a10g");
    });
  });

  for (const shape of SHAPES) {
    describe(`the ${shape} plan`, () => {
      it("has the autoscaler with its role, its policy and a pinned release; the node group's ASG carries the template tags", async function () {
        this.timeout(120_000);
        const p = await plan(shape);
        const rel = ofType(p.resources, "kubernetes:helm.sh/v3:Release").filter((r) => r.props.chart === "cluster-autoscaler");
        assert.equal(rel.length, 1);
        assert.deepEqual(
          [rel[0].props.version, rel[0].props.repositoryOpts.repo, rel[0].props.namespace],
          ["9.59.0", CLUSTER_AUTOSCALER_CHART.repo, "kube-system"],
        );
        assert.equal(rel[0].props.values.replicaCount, shape === "prod" ? 2 : 1);
        const role = one(p.resources, "aws:iam/role:Role", "cluster-autoscaler");
        assert.equal(rel[0].props.values.rbac.serviceAccount.annotations["eks.amazonaws.com/role-arn"], `arn:aws:iam::123456789012:role/${role.name}-0000000`);
        assert.ok(
          rel[0].dependencies.some((d) => d.includes("aws:iam/rolePolicy:RolePolicy::cluster-autoscaler")),
          "after its policy",
        );
        const ng = one(p.resources, "aws:eks/nodeGroup:NodeGroup");
        const tags = ofType(p.resources, "aws:autoscaling/tag:Tag");
        assert.deepEqual(
          tags.map((t) => t.props.tag),
          // The GPU count comes from the instance facts: the fewest GPUs among the group's types.
          autoscalerNodeTemplateTags(
            ng.props.labels["triton-platform/gpu-type"],
            Math.min(...(ng.props.instanceTypes as string[]).map((t) => gpuInstanceType(t)!.gpus)),
          ).map((t) => ({ ...t, propagateAtLaunch: false })),
        );
        for (const t of tags) assert.equal(t.props.autoscalingGroupName, `eks-${ng.name}-0000000-00000000-0000-4000-8000-000000000000`);
        assert.equal(p.outputs.clusterAutoscalerRoleArn, `arn:aws:iam::123456789012:role/${role.name}-0000000`);
      });
    });
  }
});
