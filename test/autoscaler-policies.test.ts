// autoscaler-present-for-scaling-node-groups: a node group that may grow has a Cluster Autoscaler
// release that scales its cluster. Fires on each way the release can be missing or miss the
// cluster, in both node group shapes that can grow; silent on the prod plan and on variants that
// need no autoscaler or have one.
import { strict as assert } from "node:assert";
import { rules as autoscalerRules } from "../policies/rules/autoscaler";
import { evaluatePolicies } from "../tools/planner/policy";
import type { RecordedResource } from "../tools/planner";
import { fixtureStack, plan, planFixture, recorded } from "./helpers";
import { HELM_RELEASE as REL, NODE_GROUP as NG } from "../policies/rules/types";
import { declareMutations, first } from "./support/mutations";

const RULE = "autoscaler-present-for-scaling-node-groups";
const rule = autoscalerRules.find((r) => r.name === RULE)!;

async function violations(resources: RecordedResource[]): Promise<string[]> {
  return (await evaluatePolicies([rule], resources, { all: "mandatory" } as never)).map((v) => v.message);
}

/** The prod plan's resources, deep-copied, with `edit` applied. */
async function prod(edit: (rs: RecordedResource[]) => void = () => {}): Promise<RecordedResource[]> {
  const rs: RecordedResource[] = JSON.parse(JSON.stringify((await plan("prod")).resources));
  edit(rs);
  return rs;
}
const release = (rs: RecordedResource[]) => rs.find((r) => r.type === REL && r.props.chart === "cluster-autoscaler")!;
const nodeGroup = (rs: RecordedResource[]) => rs.find((r) => r.type === NG)!;
const withoutRelease = (rs: RecordedResource[]) => void rs.splice(rs.indexOf(release(rs)), 1);

/** A second node group (a CPU group, say: no GPU AMI, no GPU label) of the same cluster. */
const cpuGroup = (min: number, max: number) =>
  recorded(
    NG,
    "general",
    { clusterName: "ml-prod", amiType: "AL2023_x86_64_STANDARD", scalingConfig: { minSize: min, desiredSize: min, maxSize: max } },
    "prod",
  );

describe(`policy ${RULE}`, () => {
  it("is advisory in the pack, in domain autoscaler, and names what it prevents", () => {
    assert.equal(rule.enforcementLevel, "advisory");
    assert.equal(rule.domain, "autoscaler");
    assert.ok(rule.prevents.length > 20 && rule.remediationSteps);
  });

  it("is silent on the prod plan (GPU group 3..10 and the autoscaler of ml-prod)", async () => {
    assert.deepEqual(await violations(await prod()), []);
  });

  describe("fires", () => {
    it("when the stack has no autoscaler release, naming the group, its sizes and the cluster", async () => {
      const v = await violations(await prod(withoutRelease));
      assert.equal(v.length, 1);
      assert.match(v[0], /^NodeGroup gpu: scalingConfig\.maxSize 10 exceeds minSize 3, but no cluster-autoscaler release scales cluster "ml-prod"$/);
    });

    it("when the release discovers another cluster's groups", async () => {
      const v = await violations(await prod((rs) => (release(rs).props.values.autoDiscovery = { clusterName: "ml-staging" })));
      assert.match(v[0], /no cluster-autoscaler release scales cluster "ml-prod" \(releases found for "ml-staging"\)/);
    });

    it("when the release discovers nothing (no clusterName, no groups)", async () => {
      assert.equal((await violations(await prod((rs) => delete release(rs).props.values.autoDiscovery))).length, 1);
    });

    it("when the release runs no pod (replicaCount 0)", async () => {
      assert.equal((await violations(await prod((rs) => (release(rs).props.values.replicaCount = 0)))).length, 1);
    });

    it("when the release is for another cloud provider", async () => {
      assert.equal((await violations(await prod((rs) => (release(rs).props.values.cloudProvider = "clusterapi")))).length, 1);
    });

    it("for a node group of any kind that may grow (a CPU group too), once per group", async () => {
      const v = await violations(
        await prod((rs) => {
          withoutRelease(rs);
          rs.push(cpuGroup(1, 4));
        }),
      );
      assert.equal(v.length, 2);
      assert.ok(v.some((m) => m.startsWith("NodeGroup general: scalingConfig.maxSize 4 exceeds minSize 1")));
    });

    it("when minSize is absent (0) and maxSize is set", async () => {
      const v = await violations(
        await prod((rs) => {
          withoutRelease(rs);
          delete nodeGroup(rs).props.scalingConfig.minSize;
        }),
      );
      assert.match(v[0], /maxSize 10 exceeds minSize nothing/);
    });

    it("in a planned stack whose autoscaler is disabled while the GPU group may grow", async function () {
      this.timeout(120_000);
      const p = await planFixture(fixtureStack("staging", { autoscaler: { enabled: false } }));
      const v = p.report.violations.filter((x) => x.policy === RULE);
      assert.equal(v.length, 1);
      assert.equal(v[0].level, "mandatory");
    });
  });

  describe("stays silent", () => {
    it("on fixed-size groups without an autoscaler (min = max, as dev's GPU group)", async () => {
      const rs = await prod((rs) => {
        withoutRelease(rs);
        const s = nodeGroup(rs).props.scalingConfig;
        s.minSize = s.desiredSize = s.maxSize = 3;
        rs.push(cpuGroup(2, 2));
      });
      assert.deepEqual(await violations(rs), []);
    });

    it("on a release that lists its groups by hand (autoscalingGroups) instead of discovering them", async () => {
      const rs = await prod((rs) => {
        const v = release(rs).props.values;
        delete v.autoDiscovery;
        v.autoscalingGroups = [{ name: "eks-gpu-0000000", minSize: 3, maxSize: 9 }];
      });
      assert.deepEqual(await violations(rs), []);
    });

    it("on a release without cloudProvider (the chart's default is aws) and several growing groups of the cluster", async () => {
      const rs = await prod((rs) => {
        delete release(rs).props.values.cloudProvider;
        rs.push(cpuGroup(1, 4));
      });
      assert.deepEqual(await violations(rs), []);
    });

    it("in the planned dev stack (GPU group 1..1) at its advisory level", async function () {
      this.timeout(120_000);
      const p = await plan("dev");
      assert.deepEqual(
        p.report.violations.filter((x) => x.policy === RULE),
        [],
      );
    });
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "autoscaler-present-for-scaling-node-groups",
    breaks: "removes the Cluster Autoscaler release while the GPU node group may grow from 3 to 10",
    mutate: (rs) => {
      rs.splice(rs.indexOf(first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "cluster-autoscaler")), 1);
    },
  },
]);
