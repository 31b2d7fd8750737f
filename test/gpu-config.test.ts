// The gpu section of the stack config: defaults, and named errors for bad values, including the
// Triton image ↔ node driver check across sections.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ConfigError, loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";

/** A stack's raw config with its JSON sections edited. */
function rawWith(stack: string, edit: (sections: Record<string, any>) => void): Record<string, string> {
  const raw = { ...fixtureConfig(stack) };
  const sections: Record<string, any> = {};
  for (const k of ["gpu", "triton", "cluster"]) sections[k] = JSON.parse(raw[`triton-platform:${k}`]);
  edit(sections);
  for (const [k, v] of Object.entries(sections)) raw[`triton-platform:${k}`] = JSON.stringify(v);
  return raw;
}

function problems(stack: string, edit: (s: Record<string, any>) => void): string[] {
  try {
    loadConfig(rawWith(stack, edit), stack);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe("gpu stack config", () => {
  it("each stack's gpu section is valid; gpuType comes from the instance family", () => {
    for (const [stack, gpuType] of [
      ["dev", "nvidia-t4"],
      ["staging", "nvidia-l4"],
      ["prod", "nvidia-l4"],
    ]) {
      const cfg = loadConfig(fixtureConfig(stack), stack);
      assert.equal(cfg.gpu.gpuType, gpuType);
      assert.equal(cfg.gpu.operator.namespace, "gpu-operator");
      // Off: the monitoring component scrapes dcgm-exporter itself (DCGM_SCRAPED_BY_MONITORING).
      assert.equal(cfg.gpu.operator.serviceMonitor, false);
    }
  });

  it("names an unknown AMI type, an unpinned chart and a typo'd key", () => {
    const p = problems("dev", (s) => {
      s.gpu.amiType = "AL2023_x86_64_STANDARD";
      s.gpu.operator.version = "latest";
      s.gpu.rootVolumGiB = 100;
    });
    assert.ok(
      p.some((m) => /triton-platform:gpu\.amiType must be one of "AL2023_x86_64_NVIDIA".*got "AL2023_x86_64_STANDARD"/.test(m)),
      p.join("\n"),
    );
    assert.ok(
      p.some((m) => /triton-platform:gpu\.operator\.version must be an exact version.*got "latest"/.test(m)),
      p.join("\n"),
    );
    assert.ok(
      p.some((m) => /triton-platform:gpu\.rootVolumGiB is not a known key/.test(m)),
      p.join("\n"),
    );
  });

  it("names scaling that is out of order", () => {
    const p = problems("dev", (s) => (s.gpu.scaling = { min: 2, desired: 1, max: 3 }));
    assert.ok(
      p.some((m) => /triton-platform:gpu\.scaling\.min must be <= desired \(1\), got 2/.test(m)),
      p.join("\n"),
    );
  });

  it("refuses mixed GPU models, unknown GPU families without a gpuType, and a gpuType that contradicts them", () => {
    let p = problems("dev", (s) => (s.gpu.instanceTypes = ["g5.xlarge", "g6.xlarge"]));
    assert.ok(
      p.some((m) => /gpu\.instanceTypes must all have the same GPU model.*nvidia-a10g, nvidia-l4/.test(m)),
      p.join("\n"),
    );
    p = problems("dev", (s) => (s.gpu.instanceTypes = ["m5.large"]));
    assert.ok(
      p.some((m) => /gpu\.instanceTypes\[0\] is not an NVIDIA GPU instance family.*got "m5\.large"/.test(m)),
      p.join("\n"),
    );
    p = problems("dev", (s) => (s.gpu.gpuType = "nvidia-h100"));
    assert.ok(
      p.some((m) => /gpu\.gpuType must match the instance types' GPU \(nvidia-t4\)/.test(m)),
      p.join("\n"),
    );
  });

  it("prod: at most one node out at a time, and at least one node per zone", () => {
    const p = problems("prod", (s) => {
      s.gpu.maxUnavailable = 2;
      s.gpu.scaling = { min: 2, desired: 3, max: 9 };
    });
    assert.ok(
      p.some((m) => /triton-platform:gpu\.maxUnavailable must be 1 in prod.*got 2/.test(m)),
      p.join("\n"),
    );
    assert.ok(
      p.some((m) => /triton-platform:gpu\.scaling\.min must be at least the number of cluster\.zones \(3\).*got 2/.test(m)),
      p.join("\n"),
    );
    assert.deepEqual(
      problems("dev", (s) => (s.gpu.maxUnavailable = 2)),
      [],
    );
  });

  it("a serving group's Triton image that needs a newer driver is an error naming both versions", () => {
    const p = problems("prod", (s) => {
      s.gpu.amiType = "AL2_x86_64_GPU";
      s.triton.groups[0].image = { tag: "25.08-py3" };
    });
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(p[0], /^triton-platform:triton\.groups\[0\]\.image is incompatible with gpu\.amiType: Triton 25\.08 .*R575.*AL2_x86_64_GPU nodes ship R570/);
    assert.match(p[0], /got \{"tag":"25\.08-py3"\}$/);
  });

  it("the canary's image is checked too, under its own key", () => {
    const p = problems("prod", (s) => {
      s.gpu.amiType = "AL2_x86_64_GPU";
      s.triton.groups[0].image = { tag: "25.01-py3" };
      s.triton.groups[0].canary.image = { tag: "25.08-py3" };
    });
    assert.equal(p.length, 1, p.join("\n"));
    assert.match(p[0], /^triton-platform:triton\.groups\[0\]\.canary\.image is incompatible with gpu\.amiType: Triton 25\.08/);
  });

  it("a compatible image, or a custom image that names no Triton release, passes", () => {
    assert.deepEqual(
      problems("prod", (s) => (s.triton.groups[0].image = { tag: "25.08-py3" })),
      [],
    );
    assert.deepEqual(
      problems("prod", (s) => (s.triton.groups[0].image = { repository: "registry.example.com/ml/vision-server", tag: "25.08-py3" })),
      [],
    );
  });

  it("property: any scaling triple is accepted exactly when min <= desired <= max and max >= 1", () => {
    fc.assert(
      fc.property(fc.nat(12), fc.nat(12), fc.nat(12), (min, desired, max) => {
        const p = problems("dev", (s) => (s.gpu.scaling = { min, desired, max }));
        return (p.length === 0) === (min <= desired && desired <= max && max >= 1);
      }),
      { numRuns: 200 },
    );
  });
});
