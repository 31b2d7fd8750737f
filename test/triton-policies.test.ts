import { strict as assert } from "node:assert";
import { evaluatePolicies } from "../tools/planner/policy";
import type { RecordedResource } from "../tools/planner";
import { rules as tritonRules } from "../policies/rules/triton";
import { rules } from "../policies/rules";
import { HORIZONTAL_POD_AUTOSCALER, POD_DISRUPTION_BUDGET, STATEFUL_SET } from "../policies/rules/types";
import { standardLabels } from "../components/naming";
import { resolveTritonServer, tritonHorizontalPodAutoscaler, tritonPodDisruptionBudget, tritonStatefulSet } from "../components/triton";
import { declareMutations, first, tritonSts, tritonContainer } from "./support/mutations";
import { ROLLOUT_ANNOTATION } from "../components/contracts";

const TYPES: Record<string, string> = {
  StatefulSet: STATEFUL_SET,
  PodDisruptionBudget: POD_DISRUPTION_BUDGET,
  HorizontalPodAutoscaler: HORIZONTAL_POD_AUTOSCALER,
};

/** A compliant prod serving group (primary StatefulSet, its PDB and HPA) as the planner records it. */
function compliant(environment: "prod" | "dev" = "prod"): RecordedResource[] {
  const binding = { uri: "s3://ml-prod-models/triton", serviceAccountName: "triton", env: [], egressPort: 443 as const };
  const r = resolveTritonServer({
    name: "vision",
    namespace: "triton",
    labels: standardLabels({ environment }),
    modelRepository: binding,
    priorityClassName: "triton-serving",
    zoneCount: 3,
    longestRequestSeconds: 60,
    models: ["resnet50"],
    image: { tag: "25.01-py3" },
    replicas: 3,
    gpu: { type: "nvidia-l4" },
    cpu: "6",
    memory: "24Gi",
    shmSize: "4Gi",
  });
  const manifests = [tritonStatefulSet(r, r.tracks[0], binding), tritonPodDisruptionBudget(r, "primary"), tritonHorizontalPodAutoscaler(r)];
  return manifests.map((m) => ({
    urn: `urn:pulumi:prod::triton-platform::${TYPES[m.kind]}::${m.metadata.name}`,
    type: TYPES[m.kind],
    name: m.metadata.name,
    custom: true,
    parent: null,
    provider: null,
    dependencies: [],
    props: JSON.parse(JSON.stringify(m)),
  }));
}

function rule(name: string) {
  const r = tritonRules.find((x) => x.name === name);
  assert.ok(r, `rule ${name} exists`);
  return r;
}

async function violations(name: string, resources: RecordedResource[]): Promise<string[]> {
  return (await evaluatePolicies([rule(name)], resources, { all: "mandatory" })).map((v) => v.message);
}

/** The compliant group with one property of the StatefulSet (or another kind) broken. */
function broken(edit: (sts: any, all: RecordedResource[]) => void, environment: "prod" | "dev" = "prod"): RecordedResource[] {
  const rs = compliant(environment);
  edit(rs[0].props, rs);
  return rs;
}
const tritonC = (sts: any) => sts.spec.template.spec.containers[0];

const CASES: { rule: string; breaks: (sts: any, all: RecordedResource[]) => void; message: RegExp }[] = [
  {
    rule: "triton-gpu-limits-equal-requests",
    breaks: (s) => (tritonC(s).resources.requests["nvidia.com/gpu"] = "2"),
    message: /StatefulSet triton\/vision: spec\.template\.spec\.containers\[0\]\.resources\.requests\["nvidia\.com\/gpu"\] is "2" but limits is "1"/,
  },
  {
    rule: "triton-shm-sized",
    breaks: (s) => (s.spec.template.spec.volumes[0].emptyDir = { medium: "Memory" }),
    message:
      /volume dshm at \/dev\/shm \(spec\.template\.spec\.volumes\[0\]\.emptyDir\) is \{"medium":"Memory"\}, must be emptyDir \{medium: Memory, sizeLimit\}/,
  },
  {
    rule: "triton-startup-probe",
    breaks: (s) => delete tritonC(s).startupProbe,
    message: /containers\[0\]\.startupProbe is missing/,
  },
  {
    rule: "triton-real-flags",
    breaks: (s) => tritonC(s).args.push("--log-format=json"),
    message: /args has "--log-format=json": tritonserver flag --log-format: value "json" must be one of default, ISO8601/,
  },
  {
    rule: "triton-pdb-exists",
    breaks: (_s, all) => all.splice(1, 1),
    message: /StatefulSet triton\/vision: no PodDisruptionBudget in namespace triton selects its pod labels/,
  },
  {
    rule: "triton-min-replicas",
    breaks: (s) => (s.spec.replicas = 2),
    message: /StatefulSet triton\/vision: spec\.replicas is 2, must be >= 3 in prod/,
  },
  {
    rule: "triton-zone-spread",
    breaks: (s) => (s.spec.template.spec.topologySpreadConstraints[0].whenUnsatisfiable = "ScheduleAnyway"),
    message: /topology\.kubernetes\.io\/zone with whenUnsatisfiable ScheduleAnyway; needs topology\.kubernetes\.io\/zone with DoNotSchedule/,
  },
  {
    rule: "triton-explicit-model-control",
    breaks: (s) => {
      const c = tritonC(s);
      c.args = c.args
        .filter((a: string) => !a.startsWith("--load-model"))
        .map((a: string) => (a === "--model-control-mode=explicit" ? "--model-control-mode=poll" : a));
    },
    message: /args has --model-control-mode=poll, must be explicit/,
  },
  {
    rule: "hpa-target-exists",
    breaks: (_s, all) => (all[2].props.spec.scaleTargetRef.name = "vison"),
    message: /^HorizontalPodAutoscaler triton\/vision: spec\.scaleTargetRef .* names no StatefulSet vison in namespace triton$/,
  },
  {
    rule: "triton-canary-rollout-in-order",
    breaks: (s) =>
      (s.metadata.annotations = {
        [ROLLOUT_ANNOTATION]: JSON.stringify({ stage: "split-5", stages: [{ name: "split-5", trafficPercent: 5, minDurationMinutes: 60 }] }),
      }),
    message:
      /StatefulSet vision: metadata\.annotations\["triton-platform\.io\/rollout"\]\.stages\[0\]\.trafficPercent: the first stage \(split-5\) splits 5 % of real traffic to the canary; prod starts with a mirror-only stage/,
  },
];

describe("Triton policy rules", () => {
  it("every Triton rule is registered in the pack, with prevents, remediation and domain", () => {
    for (const r of tritonRules) {
      assert.ok(rules.includes(r), r.name);
      assert.equal(r.domain, "triton");
      assert.ok(r.prevents && r.remediationSteps && r.description, r.name);
    }
    assert.deepEqual(new Set(CASES.map((c) => c.rule)), new Set(tritonRules.map((r) => r.name)), "a firing case per rule");
  });

  for (const c of CASES) {
    describe(c.rule, () => {
      it("stays silent on a compliant serving group", async () => {
        assert.deepEqual(await violations(c.rule, compliant()), []);
      });
      it("fires on a broken one, naming the resource, path and value", async () => {
        const v = await violations(c.rule, broken(c.breaks));
        assert.equal(v.length, 1, v.join("\n"));
        assert.match(v[0], c.message);
      });
    });
  }

  it("triton-gpu-limits-equal-requests fires when the GPU limit is missing", async () => {
    const v = await violations(
      "triton-gpu-limits-equal-requests",
      broken((s) => delete tritonC(s).resources.limits["nvidia.com/gpu"]),
    );
    assert.match(v[0], /limits\["nvidia\.com\/gpu"\] is undefined, must be an integer >= 1/);
  });

  it("triton-shm-sized fires when shm is not below the memory limit", async () => {
    const v = await violations(
      "triton-shm-sized",
      broken((s) => (s.spec.template.spec.volumes[0].emptyDir.sizeLimit = "24Gi")),
    );
    assert.match(v[0], /\/dev\/shm spec\.template\.spec\.volumes\[0\]\.emptyDir\.sizeLimit 24Gi must be below .*resources\.limits\.memory \(24Gi\)/);
  });

  it("triton-real-flags accepts the restriction flags, and checks flags against the image's release", async () => {
    assert.deepEqual(await violations("triton-real-flags", compliant()), [], "the emitted restriction and forward flags are real");
    const laterFlag = (image: string) =>
      broken((s) => {
        tritonC(s).image = image;
        tritonC(s).args.push("--allow-client-shm=false");
      });
    const v = await violations("triton-real-flags", laterFlag("nvcr.io/nvidia/tritonserver:25.01-py3"));
    assert.match(v[0], /--allow-client-shm: is not a flag of tritonserver 25\.01: its parser has it from 26\.04 on/);
    assert.match((await violations("triton-real-flags", laterFlag(`nvcr.io/nvidia/tritonserver:25.01-py3@sha256:${"b".repeat(64)}`)))[0], /25\.01/);
    assert.deepEqual(await violations("triton-real-flags", laterFlag("nvcr.io/nvidia/tritonserver:26.08-py3")), []);
    // An image that names no release (or one the table lacks): checked against any release of the table.
    assert.deepEqual(await violations("triton-real-flags", laterFlag("registry.example.com/ml/custom:1.0")), []);
    assert.deepEqual(await violations("triton-real-flags", laterFlag("nvcr.io/nvidia/tritonserver:24.10-py3")), []);
  });

  it("triton-startup-probe fires when the probe allows less than the minimum start-up time", async () => {
    const v = await violations(
      "triton-startup-probe",
      broken((s) => (tritonC(s).startupProbe.failureThreshold = 3)),
    );
    assert.match(v[0], /allows 30s \(periodSeconds × failureThreshold\), below 60s/);
  });

  it("triton-pdb-exists: a PDB in another namespace or for another track does not cover the StatefulSet", async () => {
    const otherNs = await violations(
      "triton-pdb-exists",
      broken((_s, all) => (all[1].props.metadata.namespace = "default")),
    );
    assert.equal(otherNs.length, 1);
    const otherTrack = await violations(
      "triton-pdb-exists",
      broken((_s, all) => (all[1].props.spec.selector.matchLabels.track = "canary")),
    );
    assert.equal(otherTrack.length, 1);
  });

  it("triton-pdb-exists reads matchExpressions: a PDB whose expressions select the pods covers them, one whose expressions exclude them does not", async () => {
    const byExpressions = (operator: string, values: string[]) =>
      broken(
        (_s, all) =>
          (all[1].props.spec.selector = {
            matchExpressions: [
              { key: "app.kubernetes.io/instance", operator, values },
              { key: "track", operator: "In", values: ["primary"] },
            ],
          }),
      );
    assert.deepEqual(await violations("triton-pdb-exists", byExpressions("In", ["vision"])), []);
    const v = await violations("triton-pdb-exists", byExpressions("NotIn", ["vision"]));
    assert.equal(v.length, 1);
    assert.match(v[0], /\(spec\.template\.metadata\.labels\)$/);
    const mixed = await violations(
      "triton-pdb-exists",
      broken((_s, all) => (all[1].props.spec.selector.matchExpressions = [{ key: "track", operator: "DoesNotExist" }])),
    );
    assert.equal(mixed.length, 1, "matchLabels match but an expression excludes the pods");
  });

  it("triton-min-replicas also reads the HPA's minReplicas", async () => {
    const v = await violations(
      "triton-min-replicas",
      broken((_s, all) => (all[2].props.spec.minReplicas = 1)),
    );
    assert.match(v[0], /HorizontalPodAutoscaler vision: spec\.minReplicas is 1, must be >= 3/);
  });

  it("prod-only rules stay silent in dev, where one replica and any mode are fine", async () => {
    const dev = broken((s) => {
      s.spec.replicas = 1;
      s.spec.template.spec.topologySpreadConstraints = [];
      tritonC(s).args = tritonC(s)
        .args.map((a: string) => (a === "--model-control-mode=explicit" ? "--model-control-mode=poll" : a))
        .filter((a: string) => !a.startsWith("--load-model"));
    }, "dev");
    for (const name of ["triton-min-replicas", "triton-zone-spread", "triton-explicit-model-control"]) assert.deepEqual(await violations(name, dev), [], name);
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "triton-gpu-limits-equal-requests",
    breaks: "requests two GPUs but limits one",
    mutate: (rs) => (tritonContainer(rs).resources.requests["nvidia.com/gpu"] = "2"),
  },
  {
    rule: "triton-shm-sized",
    breaks: "drops the /dev/shm sizeLimit",
    mutate: (rs) => delete tritonSts(rs).props.spec.template.spec.volumes.find((v: { name: string }) => v.name === "dshm").emptyDir.sizeLimit,
  },
  {
    rule: "triton-startup-probe",
    breaks: "removes the startupProbe",
    mutate: (rs) => delete tritonContainer(rs).startupProbe,
  },
  {
    rule: "triton-real-flags",
    breaks: "adds a log format tritonserver does not have",
    mutate: (rs) => tritonContainer(rs).args.push("--log-format=json"),
  },
  {
    rule: "triton-pdb-exists",
    breaks: "drops the primary's PodDisruptionBudget",
    mutate: (rs) => rs.splice(rs.indexOf(first(rs, "kubernetes:policy/v1:PodDisruptionBudget", (r) => r.name === "vision")), 1),
  },
  {
    rule: "triton-min-replicas",
    breaks: "runs the primary with two replicas",
    mutate: (rs) => (tritonSts(rs).props.spec.replicas = 2),
  },
  {
    rule: "triton-zone-spread",
    breaks: "removes the zone spread",
    mutate: (rs) => {
      const spec = tritonSts(rs).props.spec.template.spec;
      spec.topologySpreadConstraints = spec.topologySpreadConstraints.filter((t: { topologyKey: string }) => t.topologyKey !== "topology.kubernetes.io/zone");
    },
  },
  {
    rule: "triton-explicit-model-control",
    breaks: "switches to poll mode without --load-model",
    mutate: (rs) => {
      const c = tritonContainer(rs);
      c.args = c.args
        .filter((a: string) => !a.startsWith("--load-model="))
        .map((a: string) => (a === "--model-control-mode=explicit" ? "--model-control-mode=poll" : a));
    },
  },
  {
    rule: "triton-canary-rollout-in-order",
    breaks: "declares a current stage that mirrors 1 % while the gateway mirrors 5 % to the canary",
    mutate: (rs) =>
      (first(rs, STATEFUL_SET, (r) => r.name === "vision-canary").props.metadata.annotations = {
        [ROLLOUT_ANNOTATION]: JSON.stringify({
          stage: "mirror-1",
          stages: [
            { name: "mirror-1", mirrorPercent: 1, minDurationMinutes: 60 },
            { name: "mirror-5", mirrorPercent: 5, minDurationMinutes: 60 },
          ],
        }),
      }),
  },
  {
    rule: "hpa-target-exists",
    breaks: "points the primary's autoscaler at a StatefulSet that does not exist",
    mutate: (rs) => (first(rs, "kubernetes:autoscaling/v2:HorizontalPodAutoscaler").props.spec.scaleTargetRef.name = "vison"),
  },
]);
