import { strict as assert } from "node:assert";
import fc from "fast-check";
import { loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";
import { prodWith, problems } from "./support/config-problems";

function expectProblem(raw: Record<string, string>, re: RegExp) {
  const ps = problems(raw);
  assert.ok(
    ps.some((p) => re.test(p)),
    `expected ${re} among:\n${ps.join("\n") || "(no problems)"}`,
  );
}

describe("serving group config", () => {
  it("accepts the repository's stacks, with defaults applied", () => {
    for (const stack of ["dev", "staging", "prod"]) {
      const cfg = loadConfig(fixtureConfig(stack), stack);
      const g = cfg.triton.groups[0];
      assert.equal(g.name, "vision");
      assert.equal(g.modelControlMode, "explicit");
      assert.equal(g.image.repository, "nvcr.io/nvidia/tritonserver");
    }
    const prod = loadConfig(fixtureConfig("prod"), "prod").triton.groups[0];
    assert.equal(prod.replicas, 3);
    assert.equal(prod.canary?.replicas, 1);
  });

  it("shm larger than the memory limit is an error on shmSize", () => {
    expectProblem(
      prodWith((g) => (g.shmSize = "32Gi")),
      /^triton-platform:triton\.groups\[0\]\.shmSize must be smaller than memory \(24Gi\).*got "32Gi"/,
    );
  });

  it("a startup budget shorter than one probe period is an error on modelLoadBudgetSeconds", () => {
    expectProblem(
      prodWith((g) => {
        g.modelLoadBudgetSeconds = 5;
        g.startupProbePeriodSeconds = 10;
      }),
      /groups\[0\]\.modelLoadBudgetSeconds must be at least one startup probe period \(startupProbePeriodSeconds = 10\), got 5/,
    );
  });

  it("a canary with zero replicas is an error on canary.replicas", () => {
    expectProblem(
      prodWith((g) => (g.canary.replicas = 0)),
      /groups\[0\]\.canary\.replicas must be >= 1: a canary with no pods receives no mirrored traffic.*got 0/,
    );
  });

  it("an unknown, false or deprecated flag in extraArgs is an error naming the flag", () => {
    expectProblem(
      prodWith((g) => g.extraArgs.push("--gpus=all")),
      /groups\[0\]\.extraArgs\[1\] must be a real, current tritonserver flag.*--gpus: is not a tritonserver flag/,
    );
    expectProblem(
      prodWith((g) => g.extraArgs.push("--strict-model-config=false")),
      /extraArgs\[1\].*--strict-model-config: is deprecated upstream; use --disable-auto-complete-config/,
    );
    expectProblem(
      prodWith((g) => g.extraArgs.push("--load-model=other")),
      /extraArgs\[1\].*--load-model: is set from the group's typed settings/,
    );
  });

  describe("termination covers the gateway's longest request (gateway.inferTimeoutSeconds 120 in the prod fixture)", () => {
    it("an exit timeout below the gateway's route timeout is an error on exitTimeoutSecs, naming the gateway key", () => {
      expectProblem(
        prodWith((g) => (g.exitTimeoutSecs = 30)),
        /groups\[0\]\.exitTimeoutSecs must be at least the longest request the gateway lets through \(gateway\.inferTimeoutSeconds: 120 s\).*got 30/,
      );
    });

    it("a raised gateway timeout breaks a group's pinned exit timeout", () => {
      const raw = prodWith((g) => (g.exitTimeoutSecs = 120));
      assert.deepEqual(problems(raw), []);
      const gw = JSON.parse(raw["triton-platform:gateway"]);
      raw["triton-platform:gateway"] = JSON.stringify({ ...gw, inferTimeoutSeconds: 300 });
      expectProblem(raw, /groups\[0\]\.exitTimeoutSecs must be at least .*gateway\.inferTimeoutSeconds: 300 s.*got 120/);
    });

    it("a grace period short of preStop + the derived exit timeout is an error on terminationGracePeriodSeconds", () => {
      expectProblem(
        prodWith((g) => (g.terminationGracePeriodSeconds = 60)),
        /groups\[0\]\.terminationGracePeriodSeconds must be at least preStopSleepSeconds \(10\) \+ the exit timeout derived from gateway\.inferTimeoutSeconds \(120\) \+ 15 s = 145.*got 60/,
      );
    });

    it("a given grace period short of preStop + the given exit timeout is an error on terminationGracePeriodSeconds", () => {
      expectProblem(
        prodWith((g) => Object.assign(g, { exitTimeoutSecs: 200, terminationGracePeriodSeconds: 210 })),
        /groups\[0\]\.terminationGracePeriodSeconds must be at least preStopSleepSeconds \(10\) \+ exitTimeoutSecs \(200\) \+ 15 s = 225.*got 210/,
      );
    });

    it("reasonable variants pass: derived, a longer exit timeout, a roomier grace period, no preStop", () => {
      for (const edit of [
        () => undefined,
        (g: Record<string, any>) => (g.exitTimeoutSecs = 300),
        (g: Record<string, any>) => (g.terminationGracePeriodSeconds = 600),
        (g: Record<string, any>) => Object.assign(g, { preStopSleepSeconds: 0, exitTimeoutSecs: 120, terminationGracePeriodSeconds: 135 }),
      ]) {
        assert.deepEqual(problems(prodWith(edit)), [], String(edit));
      }
    });
  });

  it("image tags must be releases; latest and unknown keys are refused", () => {
    expectProblem(
      prodWith((g) => (g.image.tag = "latest")),
      /groups\[0\]\.image\.tag must be a Triton release tag.*got "latest"/,
    );
    expectProblem(
      prodWith((g) => (g.replica = 3)),
      /groups\[0\]\.replica is not a known key/,
    );
    expectProblem(
      prodWith((g) => (g.canary.replicsa = 1)),
      /groups\[0\]\.canary\.replicsa is not a known key/,
    );
  });

  it("HPA bounds must contain the replica count", () => {
    expectProblem(
      prodWith((g) => (g.hpa.min = 4)),
      /groups\[0\]\.replicas must be between hpa\.min \(4\) and hpa\.max \(9\)/,
    );
    expectProblem(
      prodWith((g) => (g.hpa.max = 2)),
      /groups\[0\]\.hpa\.min must be <= hpa\.max \(2\)/,
    );
  });

  it("explicit model control needs models; other modes refuse them", () => {
    expectProblem(
      prodWith((g) => delete g.models),
      /groups\[0\]\.models must list the models to load/,
    );
    expectProblem(
      prodWith((g) => (g.modelControlMode = "poll")),
      /groups\[0\]\.models must be left out with modelControlMode "poll"/,
    );
  });

  it("a group's GPU type must be the one the GPU node group is labelled with", () => {
    expectProblem(
      prodWith((g) => (g.gpu.type = "nvidia-a10g")),
      /groups\[0\]\.gpu\.type must be the GPU node group's gpu-type \(nvidia-l4\): no node carries that label.*got "nvidia-a10g"/,
    );
  });

  it("group names (and their -canary names) must be unique", () => {
    expectProblem(
      prodWith((g, t) => t.groups.push({ ...g, name: "vision-canary", canary: undefined })),
      /groups\[1\]\.name must be unique: vision-canary is also used by groups\[0\]/,
    );
  });

  it("fast-check: shmSize is accepted exactly when it is below memory", () => {
    const gi = fc.integer({ min: 1, max: 64 });
    fc.assert(
      fc.property(gi, gi, (shm, mem) => {
        const ps = problems(
          prodWith((g) => {
            g.shmSize = `${shm}Gi`;
            g.memory = `${mem}Gi`;
          }),
        );
        assert.equal(
          ps.some((p) => p.includes(".shmSize ")),
          shm >= mem,
          ps.join("\n"),
        );
      }),
      { numRuns: 100 },
    );
  });
});

describe("triton config: releases the option table covers, and forward patterns that keep the admin key", () => {
  it("refuses an image release the option table does not cover, primary or canary, naming the key", () => {
    expectProblem(
      prodWith((g) => (g.image.tag = "24.10-py3")),
      /^triton-platform:triton\.groups\[0\]\.image\.tag must be a release the tritonserver option table covers \(25\.01 to 26\.08/,
    );
    expectProblem(
      prodWith((g) => (g.canary.image = { tag: "27.01-py3" })),
      /^triton-platform:triton\.groups\[0\]\.canary\.image\.tag must be a release the tritonserver option table covers/,
    );
    assert.deepEqual(problems(prodWith((g) => (g.image.tag = "26.08-py3"))), []);
  });

  it("checks extraArgs against each track's release: a flag newer than the canary's release is refused", () => {
    expectProblem(
      prodWith((g) => {
        g.image.tag = "26.08-py3";
        g.canary.image = { tag: "26.02-py3" };
        g.extraArgs = ["--allow-client-shm=false"];
      }),
      /extraArgs\[0\] must be a real, current tritonserver flag .*not a flag of tritonserver 26\.02/,
    );
    assert.deepEqual(
      problems(
        prodWith((g) => {
          g.image.tag = "26.08-py3";
          g.canary.image = { tag: "26.05-py3" };
          g.extraArgs = ["--allow-client-shm=false"];
        }),
      ),
      [],
    );
  });

  it("refuses a header forward pattern that would forward the admin key into request parameters", () => {
    for (const pattern of [".*", "triton-.*", "x-request-id|admin", "ADMIN-KEY", "(unclosed"]) {
      expectProblem(
        prodWith((g) => (g.headerForwardPattern = pattern)),
        /^triton-platform:triton\.groups\[0\]\.headerForwardPattern must not match triton-/,
      );
    }
    for (const pattern of ["x-request-id", "^x-request-id$", "x-request-id|traceparent", "x-b3-.*"]) {
      assert.deepEqual(problems(prodWith((g) => (g.headerForwardPattern = pattern))), [], pattern);
    }
  });
});
