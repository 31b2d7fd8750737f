// The capacity plan (config/capacity.ts) and its facts: what one GPU node offers a pod, the
// rejections a plan exits 2 on (each naming its key and numbers), the warnings, and the facts
// tables checked against sources other than the ones they were written from.
import { strict as assert } from "node:assert";
import { ConfigError, loadConfig } from "../config";
import { capacityPlan, instanceCapacity } from "../config/capacity";
import { EC2_GPU_FAMILIES, GPU_INSTANCE_TYPES, gpuInstanceType } from "../components/upstream/ec2-gpu-instances";
import {
  amiAllocatable,
  EVICTION_HARD_MEMORY_MIB,
  KARPENTER_VM_MEMORY_OVERHEAD,
  kubeReservedCpuMillis,
  kubeReservedMemoryMiB,
  vpcCniMaxPods,
} from "../components/upstream/eks-ami";
import { GPU_NODE_DAEMONSETS, gpuNodeDaemonSetRequests } from "../components/upstream/gpu-node-daemonsets";
import { GPU_BY_INSTANCE_FAMILY, instanceFamily } from "../components/upstream/eks";
import { fixtureConfig, fixtureStack, fixtureYaml, type Overrides } from "./support/stacks";
import { planFixture, runTool, tempProject } from "./helpers";
import { formatText } from "../tools/planner/report";

type Sections = Record<string, any>;

/** The problems loadConfig reports for a fixture edited in place (none: []). */
function problems(shape: string, edit: (s: Sections) => void): string[] {
  try {
    loadConfig(fixtureConfig(shape, edit as Overrides), shape);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

const capacityProblemsOf = (ps: string[]) => ps.filter((p) => /must (be an NVIDIA GPU instance type|fit one|hold the serving groups)/.test(p));

function planOf(shape: string, edit: (s: Sections) => void = () => {}) {
  return capacityPlan(loadConfig(fixtureConfig(shape, edit as Overrides), shape));
}

const vision = (s: Sections) => s.triton.groups[0];
const g64 = instanceCapacity(gpuInstanceType("g6.4xlarge")!, { efs: false });

describe("capacity plan: rejections name the key and the numbers", () => {
  it("an instance type that does not exist (a typo of a real one) is refused, with the nearest real type", () => {
    const p = problems("prod", (s) => (s.gpu.instanceTypes = ["g6.4xlage"]));
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(
      p[0],
      /^triton-platform:gpu\.instanceTypes\[0\] must be an NVIDIA GPU instance type EKS offers .*did you mean g6\.4xlarge\?, got "g6\.4xlage"$/,
    );
    // The second of two: its index, and nothing about the first.
    const q = problems("prod", (s) => (s.gpu.instanceTypes = ["g6.4xlarge", "g6.9xlarge"]));
    assert.deepEqual(
      q.map((m) => m.split(" ")[0]),
      ["triton-platform:gpu.instanceTypes[1]"],
    );
    // A size its family does not come in (p5 has 4xlarge and 48xlarge) is refused too.
    assert.match(problems("prod", (s) => (s.gpu.instanceTypes = ["p5.24xlarge"])).join("\n"), /gpu\.instanceTypes\[0\] must be an NVIDIA GPU instance type/);
  });

  it("gpu.count above the GPUs of every instance type (4 on a one-GPU g6.4xlarge)", () => {
    // 3 + 1 pods × 4 GPUs are also more than the 9 nodes × 1 GPU: both are reported.
    const p = capacityProblemsOf(problems("prod", (s) => (vision(s).gpu.count = 4)));
    assert.deepEqual(
      p.map((m) => m.split(" ")[0]),
      ["triton-platform:triton.groups[0].gpu.count", "triton-platform:gpu.scaling.max"],
    );
    assert.match(
      p[0],
      /^triton-platform:triton\.groups\[0\]\.gpu\.count must fit one GPU node: vision's pods request 4 GPUs, the most one node .* is 1 \(g6\.4xlarge\), got 4$/,
    );
    // Two GPUs on a one-GPU dev node also: the bound is the node's, not a constant.
    assert.match(
      problems("dev", (s) => (vision(s).gpu.count = 2)).join("\n"),
      /triton\.groups\[0\]\.gpu\.count must fit one GPU node: .* 1 \(g4dn\.xlarge\), got 2/,
    );
  });

  it('cpu: "32" on a 16 vCPU g6.4xlarge names the cores left after the reserve and the DaemonSets', () => {
    const p = capacityProblemsOf(problems("prod", (s) => (vision(s).cpu = "32")));
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(
      p[0],
      /^triton-platform:triton\.groups\[0\]\.cpu must fit one GPU node's allocatable CPU: vision's pods request 32 cores, the most a node offers is 15\.805 \(g6\.4xlarge: 16 vCPUs − 0\.11 kube-reserved − 0\.085 DaemonSets\), got "32"$/,
    );
    // 16 cores (the node's vCPUs) do not fit either: the reserve is real.
    assert.equal(capacityProblemsOf(problems("prod", (s) => (vision(s).cpu = "16"))).length, 1);
  });

  it("memory: 200Gi on a 64 GiB g6.4xlarge", () => {
    const p = capacityProblemsOf(problems("prod", (s) => (vision(s).memory = "200Gi")));
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(
      p[0],
      /^triton-platform:triton\.groups\[0\]\.memory must fit one GPU node's allocatable memory: vision's pods request 200Gi, the most a node offers is at most 60\.98Gi \(g6\.4xlarge: 64Gi − 2\.86Gi kube-reserved .* − 0\.16Gi DaemonSets\), got "200Gi"$/,
    );
    // 64Gi, the instance's nominal memory, does not fit.
    assert.equal(capacityProblemsOf(problems("prod", (s) => (vision(s).memory = "64Gi"))).length, 1);
  });

  it("a staging stack whose groups need 5 GPUs at their minimum, with a node group max of 4", () => {
    const p = capacityProblems5();
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(
      p[0],
      /^triton-platform:gpu\.scaling\.max must hold the serving groups' minimum: they need 5 GPUs at their minimum \(vision: 4 primary \+ 1 canary × 1 GPU\), the GPU node group has at most 4 \(gpu\.scaling\.max 4 node\(s\) × 1 GPU \(g6\.xlarge\) = 4\), got 4$/,
    );
  });

  it("a group's gpu.type that no instance type of the node group carries: one problem, on that key", () => {
    const p = problems("prod", (s) => (vision(s).gpu.type = "nvidia-a10g"));
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(p[0], /^triton-platform:triton\.groups\[0\]\.gpu\.type must be the GPU node group's gpu-type \(nvidia-l4\).*, got "nvidia-a10g"$/);
    // The capacity rules leave such a group to that rule (no second problem about its GPUs).
    assert.deepEqual(capacityProblemsOf(p), []);
  });

  it("several problems are reported together", () => {
    const p = capacityProblemsOf(
      problems("prod", (s) => {
        vision(s).cpu = "32";
        vision(s).memory = "200Gi";
        vision(s).gpu.count = 4;
      }),
    );
    assert.deepEqual(p.map((m) => m.split(" ")[0]).sort(), [
      "triton-platform:gpu.scaling.max",
      "triton-platform:triton.groups[0].cpu",
      "triton-platform:triton.groups[0].gpu.count",
      "triton-platform:triton.groups[0].memory",
    ]);
  });

  it("the plan CLI exits 2 on a capacity rejection, naming the key and the stack", async function () {
    this.timeout(60_000);
    const dir = tempProject({ prod: fixtureYaml("prod", (s) => (s.gpu.instanceTypes = ["g6.4xlage"])) });
    const r = await runTool(dir, "plan", ["--stack", "prod"]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /stack prod: .*triton-platform:gpu\.instanceTypes\[0\] must be an NVIDIA GPU instance type/s);
  });
});

function capacityProblems5(): string[] {
  return capacityProblemsOf(
    problems("staging", (s) => {
      Object.assign(vision(s), { replicas: 4, hpa: { min: 4, max: 4 } });
      s.gpu.scaling = { min: 2, desired: 2, max: 4 };
    }),
  );
}

describe("capacity plan: variants that must pass", () => {
  it("the fixtures of every shape plan without a capacity problem", () => {
    for (const shape of ["dev", "staging", "prod"]) assert.deepEqual(capacityProblemsOf(problems(shape, () => {})), [], shape);
  });

  it("a pod that exactly fits one node is accepted; a millicore or a MiB more is not", () => {
    const exact = (s: Sections) => Object.assign(vision(s), { cpu: `${g64.forPods.cpuMillis}m`, memory: `${g64.forPods.memoryMiB}Mi` });
    assert.deepEqual(capacityProblemsOf(problems("prod", exact)), []);
    assert.equal(
      capacityProblemsOf(
        problems("prod", (s) => {
          exact(s);
          vision(s).cpu = `${g64.forPods.cpuMillis + 1}m`;
        }),
      ).length,
      1,
    );
    assert.equal(
      capacityProblemsOf(
        problems("prod", (s) => {
          exact(s);
          vision(s).memory = `${g64.forPods.memoryMiB + 1}Mi`;
        }),
      ).length,
      1,
    );
    // Accepted, but warned: above what the node likely has once the kernel's share is taken.
    assert.ok(planOf("prod", exact).warnings.some((w) => /triton\.groups\[0\]\.memory .* may not schedule/.test(w)));
  });

  it("several instance types: a pod that fits the larger one is accepted (with a warning), one that fits none is refused", () => {
    const two = (cpu: string, types: string[]) => (s: Sections) => {
      s.gpu.instanceTypes = types;
      vision(s).cpu = cpu;
    };
    assert.deepEqual(capacityProblemsOf(problems("prod", two("20", ["g6.4xlarge", "g6.8xlarge"]))), []);
    assert.ok(planOf("prod", two("20", ["g6.4xlarge", "g6.8xlarge"])).warnings.some((w) => /fit no node of g6\.4xlarge; only g6\.8xlarge/.test(w)));
    const p = capacityProblemsOf(problems("prod", two("20", ["g6.xlarge", "g6.2xlarge"])));
    assert.equal(p.length, 1);
    assert.match(p[0], /cpu must fit .* 7\.825 \(g6\.2xlarge: 8 vCPUs/);
    // Four GPUs per pod on a mixed group with a 4-GPU type.
    assert.deepEqual(
      capacityProblemsOf(
        problems("prod", (s) => {
          s.gpu.instanceTypes = ["g6.4xlarge", "g6.12xlarge"];
          vision(s).gpu.count = 4;
          s.gpu.scaling = { min: 4, desired: 4, max: 10 };
        }),
      ),
      [],
    );
    // A pod that fits one type by CPU (g6.12xlarge: 48 vCPU, 192 GiB) and another by memory
    // (gr6.8xlarge: 32 vCPU, 256 GiB), both L4, fits no node at all.
    const split = capacityProblemsOf(
      problems("prod", (s) => {
        s.gpu.instanceTypes = ["g6.12xlarge", "gr6.8xlarge"];
        Object.assign(vision(s), { cpu: "40", memory: "220Gi" });
      }),
    );
    assert.equal(split.length, 1, split.join("\n"));
    assert.match(
      split[0],
      /^triton-platform:triton\.groups\[0\]\.cpu must fit one GPU node together with gpu\.count and memory: no single instance type .* 1 GPU, 40 cores and 220Gi at once/,
    );
  });

  it("a second serving group adds its GPUs; the minimum beyond the maximum names both", () => {
    const second = (min: number) => (s: Sections) => {
      s.triton.groups.push({ ...structuredClone(vision(s)), name: "text", replicas: min, hpa: { min, max: min }, canary: undefined });
      delete s.triton.groups[1].canary;
    };
    const plan = planOf("prod", second(2));
    assert.deepEqual(plan.gpus.needed, { min: 4 + 2, max: 10 + 2 });
    assert.deepEqual(capacityProblemsOf(problems("prod", second(2))), []);
    const p = capacityProblemsOf(problems("prod", second(7)));
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(p[0], /gpu\.scaling\.max .* need 11 GPUs at their minimum \(vision: 3 primary \+ 1 canary × 1 GPU; text: 7 primary × 1 GPU\), .* at most 10/);
  });

  it("HPA maxima beyond the node group are a warning, not a rejection; so is a minimum above gpu.scaling.min", () => {
    const nine = (s: Sections) => void (s.gpu.scaling.max = 9);
    const plan = planOf("prod", nine); // 3..9 nodes, 3..9 primary + 1 canary
    assert.deepEqual(plan.gpus, { needed: { min: 4, max: 10 }, available: { min: 3, max: 9 } });
    assert.equal(plan.warnings.length, 2, plan.warnings.join("\n"));
    assert.match(plan.warnings[0], /need 10 GPUs at their HPA maxima .* at most 9/);
    assert.match(plan.warnings[1], /need 4 GPUs at their minimum .* starts with 3 .* 1 GPU\(s\) of pods wait for the cluster autoscaler/);
    const fits = planOf("prod", (s) => (s.gpu.scaling = { min: 4, desired: 4, max: 10 }));
    assert.deepEqual(fits.warnings, []);
  });

  it("the planner's report carries the capacity and its warnings, and prints the block", async function () {
    this.timeout(60_000);
    const r = (await planFixture(fixtureStack("prod", (s) => void (s.gpu.scaling.max = 9)))).report;
    assert.deepEqual(r.capacity?.gpus, { needed: { min: 4, max: 10 }, available: { min: 3, max: 9 } });
    assert.equal(r.warnings.length, 2);
    const text = formatText(r);
    assert.match(text, /capacity: GPUs needed 4 at minimum, 10 at maximum; available 3 at minimum, 9 at maximum/);
    assert.match(text, /g6\.4xlarge: 1 × nvidia-l4 .* for pods 15\.805 CPU, 60\.98Gi/);
    assert.match(text, /\n {2}warning: triton\.groups need 10 GPUs/);
  });
});

// Karpenter v1.14.1 website/content/en/docs/reference/instance-types.md, "Resources" of each type
// (cpu millicores, memory MiB, pods): an independent implementation of the AL2023 reserve, which
// also subtracts its VM memory overhead estimate (KARPENTER_VM_MEMORY_OVERHEAD).
const KARPENTER_RESOURCES: [string, number, number, number][] = [
  ["g4dn.xlarge", 3920, 14481, 29],
  ["g4dn.2xlarge", 7910, 29636, 29],
  ["g4dn.4xlarge", 15890, 59946, 29],
  ["g4dn.8xlarge", 31850, 120248, 58],
  ["g4dn.12xlarge", 47810, 178933, 234],
  ["g4dn.16xlarge", 63770, 241490, 58],
  ["g4dn.metal", 95690, 355262, 737],
  ["g5.xlarge", 3920, 14162, 58],
  ["g5.2xlarge", 7910, 29317, 58],
  ["g5.4xlarge", 15890, 57691, 234],
  ["g5.8xlarge", 31850, 118312, 234],
  ["g5.12xlarge", 47810, 173400, 737],
  ["g5.16xlarge", 63770, 239554, 234],
  ["g5.24xlarge", 95690, 355262, 737],
  ["g5.48xlarge", 191450, 723299, 345],
  ["g6.xlarge", 3920, 14162, 58],
  ["g6.2xlarge", 7910, 29317, 58],
  ["g6.4xlarge", 15890, 57691, 234],
  ["g6.8xlarge", 31850, 118312, 234],
  ["g6.12xlarge", 47810, 178933, 234],
  ["g6.16xlarge", 63770, 234021, 737],
  ["g6.24xlarge", 95690, 355262, 737],
  ["g6.48xlarge", 191450, 718987, 737],
  ["g6e.xlarge", 3920, 29317, 58],
  ["g6e.2xlarge", 7910, 59627, 58],
  ["g6e.4xlarge", 15890, 118312, 234],
  ["g6e.8xlarge", 31850, 239554, 234],
  ["g6e.12xlarge", 47810, 360157, 292],
  ["g6e.16xlarge", 63770, 476504, 737],
  ["g6e.24xlarge", 95690, 721682, 492],
  ["g6e.48xlarge", 191450, 1449132, 492],
  ["g7e.2xlarge", 7910, 57471, 254],
  ["g7e.4xlarge", 15890, 115320, 506],
  ["g7e.8xlarge", 31850, 236562, 506],
  ["g7e.12xlarge", 47810, 477659, 632],
  ["g7e.24xlarge", 95690, 962625, 632],
  ["g7e.48xlarge", 191450, 1932558, 632],
  ["gr6.4xlarge", 15890, 118312, 234],
  ["gr6.8xlarge", 31850, 239554, 234],
  ["p4d.24xlarge", 95690, 1082712, 737],
  ["p4de.24xlarge", 95690, 1082712, 737],
  ["p5.4xlarge", 15890, 240830, 118],
  ["p5.48xlarge", 191450, 1938410, 100],
  ["p5e.48xlarge", 191450, 1938410, 100],
  ["p5en.48xlarge", 191450, 1937332, 198],
  ["p6-b200.48xlarge", 191450, 1937332, 198],
  ["p6-b300.48xlarge", 191450, 3877198, 198],
];

// AWS Batch user guide, "GPU jobs" table (docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html,
// read 2026-12-01 in its translated copies): GPUs, total GPU memory GiB, vCPUs, memory GiB.
const AWS_BATCH_GPU_TABLE: [string, number, number, number, number][] = [
  ["g4dn.xlarge", 1, 16, 4, 16],
  ["g4dn.2xlarge", 1, 16, 8, 32],
  ["g4dn.4xlarge", 1, 16, 16, 64],
  ["g4dn.8xlarge", 1, 16, 32, 128],
  ["g4dn.12xlarge", 4, 64, 48, 192],
  ["g4dn.16xlarge", 1, 16, 64, 256],
  ["g5.xlarge", 1, 24, 4, 16],
  ["g5.2xlarge", 1, 24, 8, 32],
  ["g5.4xlarge", 1, 24, 16, 64],
  ["g5.8xlarge", 1, 24, 32, 128],
  ["g5.16xlarge", 1, 24, 64, 256],
  ["g5.12xlarge", 4, 96, 48, 192],
  ["g5.24xlarge", 4, 96, 96, 384],
  ["g5.48xlarge", 8, 192, 192, 768],
  ["g6.xlarge", 1, 24, 4, 16],
  ["g6.2xlarge", 1, 24, 8, 32],
  ["g6.4xlarge", 1, 24, 16, 64],
  ["g6.8xlarge", 1, 24, 32, 128],
  ["g6.16xlarge", 1, 24, 64, 256],
];

describe("capacity facts against other sources", () => {
  it("every instance type's reserve and max pods equal Karpenter's published AL2023 resources", () => {
    assert.equal(KARPENTER_RESOURCES.length, GPU_INSTANCE_TYPES.length, "one Karpenter row per instance type of the table");
    for (const [type, cpu, memory, pods] of KARPENTER_RESOURCES) {
      const t = gpuInstanceType(type);
      assert.ok(t, type);
      const maxPods = vpcCniMaxPods(t.enis, t.ipv4PerEni);
      assert.equal(maxPods, pods, `${type} max pods`);
      const a = amiAllocatable({ ...t, maxPods });
      assert.equal(a.cpuMillis, cpu, `${type} cpu`);
      assert.equal(
        Math.trunc(t.memoryMiB * (1 - KARPENTER_VM_MEMORY_OVERHEAD) - kubeReservedMemoryMiB(maxPods) - EVICTION_HARD_MEMORY_MIB),
        memory,
        `${type} memory`,
      );
    }
  });

  it("the reserve is nodeadm's: 6/1/0.5/0.25 % of cores 1, 2, 3-4, 5+; 11 MiB per pod + 255 MiB", () => {
    assert.deepEqual([1, 2, 4, 8, 16, 192].map(kubeReservedCpuMillis), [60, 70, 80, 90, 110, 550]);
    assert.equal(kubeReservedMemoryMiB(29), 574);
    assert.equal(vpcCniMaxPods(3, 10), 29);
  });

  it("vCPUs, memory, GPUs (and the T4's memory) agree with AWS Batch's GPU table", () => {
    for (const [type, gpus, gpuMemGiB, vcpu, memGiB] of AWS_BATCH_GPU_TABLE) {
      const t = gpuInstanceType(type);
      assert.ok(t, type);
      assert.deepEqual([t.gpus, t.vcpu, t.memoryMiB], [gpus, vcpu, memGiB * 1024], type);
      // The EC2 API's GPU memory is what the driver exposes: the T4's is its nominal 16 GiB, the
      // A10G's and L4's (nominal 24 GiB) 22888 MiB. The total is per-GPU × GPUs either way.
      if (t.gpuName === "t4") assert.equal(t.gpus * t.gpuMemoryMiB, gpuMemGiB * 1024, type);
      else assert.ok(t.gpus * t.gpuMemoryMiB < gpuMemGiB * 1024 && t.gpus * t.gpuMemoryMiB > gpuMemGiB * 1024 * 0.9, type);
    }
  });

  it("each family's GPU label is the one the node group derives from the family (components/upstream/eks.ts)", () => {
    for (const [family, label] of Object.entries(GPU_BY_INSTANCE_FAMILY)) {
      const types = GPU_INSTANCE_TYPES.filter((t) => t.family === family);
      assert.ok(types.length > 0, `${family} is in the facts table`);
      for (const t of types) assert.equal(t.gpuLabel, label, t.name);
    }
    for (const t of GPU_INSTANCE_TYPES) assert.equal(instanceFamily(t.name), t.family, t.name);
  });

  it("families AWS states share a GPU have the same GPU and GPU memory: g6 and gr6 (L4), p5e and p5en (H200)", () => {
    // aws-sdk-go v1.51.15 release notes: "G6 instances powered by NVIDIA L4 ... Gr6 instances also feature NVIDIA L4 GPUs".
    const gpuOf = (f: keyof typeof EC2_GPU_FAMILIES) => {
      const ts = Object.values(EC2_GPU_FAMILIES[f].types) as { gpuMemoryMiB: number }[];
      return { name: EC2_GPU_FAMILIES[f].gpuName, memory: [...new Set(ts.map((x) => x.gpuMemoryMiB))] };
    };
    assert.deepEqual(gpuOf("gr6"), gpuOf("g6"));
    assert.deepEqual(gpuOf("p5en"), gpuOf("p5e"));
    // p4de is p4d with the 80 GB A100: same GPU name, twice the memory.
    assert.equal(gpuOf("p4de").name, gpuOf("p4d").name);
    assert.equal(gpuOf("p4de").memory[0], 2 * gpuOf("p4d").memory[0]);
  });

  it("the GPU nodes' DaemonSets: every row is sourced; EFS adds the EFS node plugin", () => {
    for (const d of GPU_NODE_DAEMONSETS) assert.ok(d.source.length > 20, d.name);
    const s3 = gpuNodeDaemonSetRequests({ efs: false });
    const efs = gpuNodeDaemonSetRequests({ efs: true });
    assert.equal(efs.daemonSets.length, s3.daemonSets.length + 1);
    assert.deepEqual([s3.cpuMillis, s3.memoryMiB], [85, 168]); // aws-node 50m, ebs-csi-node 30m/104Mi, NFD worker 5m/64Mi
  });
});
