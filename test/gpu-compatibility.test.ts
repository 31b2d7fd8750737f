// The plan-time check of Triton image release against the GPU nodes' driver branch.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { branchSatisfies, checkTritonDriver, checkTritonImages, driverRequirement, tritonReleaseOf } from "../components/gpu/compatibility";
import { GPU_AMI_TYPES, GPU_AMI_TYPE_NAMES } from "../components/upstream/eks";
import { TRITON_DRIVER_REQUIREMENTS } from "../components/upstream/triton-releases";

describe("Triton ↔ NVIDIA driver compatibility", () => {
  it("reads the release from tritonserver image tags, and nothing from other images", () => {
    assert.equal(tritonReleaseOf("nvcr.io/nvidia/tritonserver:25.01-py3"), "25.01");
    assert.equal(tritonReleaseOf("123456789012.dkr.ecr.us-east-1.amazonaws.com/nvidia/tritonserver:24.08-py3-min"), "24.08");
    assert.equal(tritonReleaseOf("nvcr.io/nvidia/tritonserver:25.04-trtllm-python-py3"), "25.04");
    assert.equal(tritonReleaseOf("registry.example.com/ml/my-triton:1.4.2"), undefined);
    assert.equal(tritonReleaseOf("nvcr.io/nvidia/tritonserver@sha256:abc"), undefined);
  });

  it("rejects a release that needs a newer driver than the AMI ships, naming both versions", () => {
    // 25.04 needs R575; AL2_x86_64_GPU ships R570, which is not a forward-compatible branch.
    const msg = checkTritonDriver("25.04", "AL2_x86_64_GPU");
    assert.ok(msg);
    assert.match(msg, /Triton 25\.04/);
    assert.match(msg, /R575/);
    assert.match(msg, /AL2_x86_64_GPU nodes ship R570/);
  });

  it("accepts releases the AMI's branch runs natively", () => {
    assert.equal(checkTritonDriver("25.01", "AL2023_x86_64_NVIDIA"), undefined);
    assert.equal(checkTritonDriver("25.10", "BOTTLEROCKET_x86_64_NVIDIA"), undefined);
    assert.equal(checkTritonDriver("25.03", "AL2_x86_64_GPU"), undefined);
  });

  it("bounds an unlisted release by the next listed one, and refuses releases outside the table", () => {
    assert.equal(driverRequirement("25.05")?.basis, "25.06");
    assert.match(checkTritonDriver("25.05", "AL2_x86_64_GPU") ?? "", /bounded by 25\.06/);
    assert.match(checkTritonDriver("27.01", "AL2023_x86_64_NVIDIA") ?? "", /27\.01 is not in the driver compatibility table/);
    assert.match(checkTritonDriver("22.01", "AL2023_x86_64_NVIDIA") ?? "", /not in the driver compatibility table/);
  });

  it("checks a list of images, skipping non-strings and non-Triton images, and reports indexes", () => {
    const problems = checkTritonImages(
      [undefined, "my/custom:1", "nvcr.io/nvidia/tritonserver:25.01-py3", "nvcr.io/nvidia/tritonserver:25.08-py3"],
      "AL2_x86_64_GPU",
    );
    assert.deepEqual(
      problems.map((p) => p.index),
      [3],
    );
  });

  it("the table's driver requirements never decrease from one release to the next", () => {
    const releases = Object.keys(TRITON_DRIVER_REQUIREMENTS).sort();
    for (let i = 1; i < releases.length; i++) {
      const [a, b] = [TRITON_DRIVER_REQUIREMENTS[releases[i - 1]], TRITON_DRIVER_REQUIREMENTS[releases[i]]];
      assert.ok(a.minDriverBranch <= b.minDriverBranch, `${releases[i - 1]} → ${releases[i]}`);
    }
  });

  it("property: a release passes on an AMI type exactly when its branch meets the requirement", () => {
    const releases = Object.keys(TRITON_DRIVER_REQUIREMENTS);
    fc.assert(
      fc.property(fc.constantFrom(...releases), fc.constantFrom(...GPU_AMI_TYPE_NAMES), (release, ami) => {
        const ok = branchSatisfies(GPU_AMI_TYPES[ami].driverBranch, TRITON_DRIVER_REQUIREMENTS[release]);
        const msg = checkTritonDriver(release, ami);
        return ok ? msg === undefined : msg !== undefined && msg.includes(release) && msg.includes(`R${GPU_AMI_TYPES[ami].driverBranch}`);
      }),
    );
  });

  it("property: any yy.mm inside the table gets a requirement at least that of every earlier listed release", () => {
    const releases = Object.keys(TRITON_DRIVER_REQUIREMENTS).sort();
    fc.assert(
      fc.property(fc.integer({ min: 23, max: 26 }), fc.integer({ min: 1, max: 12 }), (yy, mm) => {
        const release = `${yy}.${String(mm).padStart(2, "0")}`;
        const found = driverRequirement(release);
        if (release < releases[0] || release > releases[releases.length - 1]) return found === undefined;
        return (
          found !== undefined &&
          releases.filter((r) => r <= release).every((r) => TRITON_DRIVER_REQUIREMENTS[r].minDriverBranch <= found.requirement.minDriverBranch)
        );
      }),
    );
  });
});
