// gpu-capacity-holds-serving-pods: the GPU node groups at their maximum hold every GPU pod at
// its own maximum (HPA maxReplicas, else replicas), per GPU type. A shortfall is red where the
// levels say so (mandatory in staging and prod, advisory in dev), so the plan's exit code and
// `pulumi preview --policy-pack` agree; the numbers are the capacity plan's (config/capacity.ts).
import { strict as assert } from "node:assert";
import { rules as gpuRules } from "../policies/rules/gpu-nodes";
import { evaluatePolicies } from "../tools/planner/policy";
import { exitCode } from "../tools/planner/cli";
import type { RecordedResource } from "../tools/planner";
import { fixtureLevels, fixtureStack, plan, planFixture } from "./helpers";
import { HORIZONTAL_POD_AUTOSCALER as HPA, NODE_GROUP as NG, STATEFUL_SET as STS } from "../policies/rules/types";
import { declareMutations, first } from "./support/mutations";

const RULE = "gpu-capacity-holds-serving-pods";
const rule = gpuRules.find((r) => r.name === RULE)!;

async function violations(resources: RecordedResource[]): Promise<string[]> {
  return (await evaluatePolicies([rule], resources, { all: "mandatory" } as never)).map((v) => v.message);
}

async function copyOf(shape: string, edit: (rs: RecordedResource[]) => void = () => {}): Promise<RecordedResource[]> {
  const rs: RecordedResource[] = JSON.parse(JSON.stringify((await plan(shape)).resources));
  edit(rs);
  return rs;
}
const nodeGroup = (rs: RecordedResource[]) => first(rs, NG);
const hpa = (rs: RecordedResource[]) => first(rs, HPA, (r) => r.props.spec?.scaleTargetRef?.name === "vision");
const primary = (rs: RecordedResource[]) => first(rs, STS, (r) => r.props.metadata?.name === "vision");

describe(`policy ${RULE}`, () => {
  it("is advisory in the pack, in domain gpu-nodes, fixed at gpu.scaling.max", () => {
    assert.equal(rule.enforcementLevel, "advisory");
    assert.equal(rule.domain, "gpu-nodes");
    assert.equal(rule.configKeyFor([]), "gpu.scaling.max");
  });

  for (const shape of ["dev", "staging", "prod"])
    it(`is silent on the ${shape} fixture plan, whose node group holds its pods at their maximum`, async () => {
      assert.deepEqual(await violations(await copyOf(shape)), []);
    });

  describe("fires", () => {
    it("when the HPA maximum outgrows the node group, with both sides' numbers", async () => {
      const rs = await copyOf("staging", (x) => {
        const max = nodeGroup(x).props.scalingConfig.maxSize as number;
        hpa(x).props.spec.maxReplicas = max + 1; // + the canary's pod: two GPUs short
      });
      const [v, ...rest] = await violations(rs);
      assert.equal(rest.length, 0);
      assert.match(
        v,
        /^NodeGroup gpu: scalingConfig\.maxSize (\d+) × 1 GPU \(g6\.xlarge\) = \1: at most \1 nvidia-l4 GPUs, but the pods need \d+ at their maximum/,
      );
      assert.match(v, /\(StatefulSet vision HPA max \d+ × 1; StatefulSet vision-canary 1 × 1\): 2 GPU\(s\) of pods stay Pending$/);
    });

    it("for pods without an HPA, counting their replicas, and for a Deployment as well as a StatefulSet", async () => {
      const rs = await copyOf("staging", (x) => {
        const sts = primary(x);
        x.splice(x.indexOf(hpa(x)), 1);
        sts.props.spec.replicas = nodeGroup(x).props.scalingConfig.maxSize;
        const dep = JSON.parse(JSON.stringify(sts)) as RecordedResource;
        dep.type = "kubernetes:apps/v1:Deployment";
        dep.urn = dep.urn.replace(STS, dep.type).replace(/::vision$/, "::batch");
        dep.props.kind = "Deployment";
        dep.props.metadata.name = "batch";
        dep.props.spec.replicas = 2;
        x.push(dep);
      });
      const [v] = await violations(rs);
      assert.match(v, /StatefulSet vision \d+ × 1; StatefulSet vision-canary 1 × 1; Deployment batch 2 × 1\)/);
      assert.match(v, /: 3 GPU\(s\) of pods stay Pending$/);
    });

    it("counting every GPU of a pod (two GPUs per pod need twice the nodes)", async () => {
      const rs = await copyOf("prod", (x) => {
        const c = primary(x).props.spec.template.spec.containers[0];
        c.resources.limits["nvidia.com/gpu"] = "2";
        c.resources.requests["nvidia.com/gpu"] = "2";
      });
      const [v] = await violations(rs);
      assert.match(v, /StatefulSet vision HPA max \d+ × 2;/);
    });
  });

  describe("does not fire", () => {
    it("for pods of another GPU type than the node group's (the node group cannot run them: not its capacity)", async () => {
      const rs = await copyOf("staging", (x) => {
        hpa(x).props.spec.maxReplicas = 50;
        for (const term of primary(x).props.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms)
          for (const e of term.matchExpressions) e.values = ["nvidia-a10g"];
      });
      // No node group carries a10g: a placement problem (the config's triton.groups[].gpu.type rule), not the l4 group's capacity.
      assert.deepEqual(await violations(rs), []);
    });

    it("when the node group's maximum is raised to cover the pods", async () => {
      const rs = await copyOf("staging", (x) => {
        hpa(x).props.spec.maxReplicas = 8;
        nodeGroup(x).props.scalingConfig.maxSize = 9;
      });
      assert.deepEqual(await violations(rs), []);
    });

    it("for GPU-less workloads (the gateway, Prometheus)", async () => {
      const rs = await copyOf("staging", (x) => {
        for (const c of primary(x).props.spec.template.spec.containers) {
          delete c.resources.limits["nvidia.com/gpu"];
          delete c.resources.requests["nvidia.com/gpu"];
        }
        hpa(x).props.spec.maxReplicas = 50;
      });
      assert.deepEqual(await violations(rs), []);
    });
  });

  describe("through the plan: red in staging and prod, advisory in dev", () => {
    const short = (s: Record<string, any>) => {
      s.triton.groups[0].hpa.max = s.gpu.scaling.max + 1;
    };
    for (const [shape, level, exit] of [
      ["staging", "mandatory", 1],
      ["prod", "mandatory", 1],
      ["dev", "advisory", 0],
    ] as const)
      it(`${shape}: a shortfall is ${level} (exit ${exit}), located at gpu.scaling.max`, async () => {
        const p = await planFixture(fixtureStack(shape, short));
        const v = p.report.violations.filter((x) => x.policy === RULE);
        assert.equal(v.length, 1, JSON.stringify(p.report.violations.map((x) => x.policy)));
        assert.equal(v[0].level, level);
        assert.equal(exitCode([p.report]), exit);
        assert.equal(rule.configKeyFor([]), "gpu.scaling.max");
      });

    it("the shapes' levels files leave the rule at the level of `all` (no override weakens it)", () => {
      for (const shape of ["staging", "prod"]) assert.equal((fixtureLevels(shape) as Record<string, unknown>)[RULE], undefined);
    });
  });
});

declareMutations([
  {
    rule: RULE,
    breaks: "raises the primary's HPA maximum beyond what the GPU node group's maxSize holds",
    mutate: (rs) => {
      const ng = first(rs, NG);
      hpa(rs).props.spec.maxReplicas = (ng.props.scalingConfig.maxSize as number) + 1;
    },
  },
]);
