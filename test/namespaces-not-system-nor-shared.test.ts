// The namespaces the stack creates and labels (triton.namespace, gpu.operator.namespace beside
// the fixed monitoring and node-exporter ones) are never Kubernetes system namespaces, and the
// pairs whose isolation the stack relies on differ: through the config and through the pack.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { loadConfig } from "../config";
import { MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE } from "../components/contracts";
import { isSettingsError } from "../lib/errors";
import { fixtureStack } from "./helpers";

function problems(overrides: (s: Record<string, any>) => void): string[] {
  const s = fixtureStack("prod", overrides);
  try {
    loadConfig(s.config, s.stack, s.secretKeys, s.securePaths);
  } catch (e) {
    if (isSettingsError(e)) return e.problems;
    throw e;
  }
  return [];
}

const SYSTEM = ["default", "kube-system", "kube-public", "kube-node-lease"];

describe("namespaces are neither system namespaces nor shared where isolation relies on it", () => {
  for (const ns of SYSTEM) {
    it(`refuses triton.namespace ${ns} and gpu.operator.namespace ${ns}, each by its key`, () => {
      const t = problems((s) => (s.triton.namespace = ns));
      assert.deepEqual(t.length, 1, t.join("\n"));
      assert.match(t[0], new RegExp(`^triton-platform:triton\\.namespace must not be a Kubernetes system namespace .*, got "${ns}"$`));
      const g = problems((s) => (s.gpu.operator = { ...s.gpu.operator, namespace: ns }));
      assert.deepEqual(g.length, 1, g.join("\n"));
      assert.match(g[0], new RegExp(`^triton-platform:gpu\\.operator\\.namespace must not be a Kubernetes system namespace .*, got "${ns}"$`));
    });
  }

  it("refuses any kube-* name and accepts names that only contain kube", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]{1,20}$/), (tail) => {
        assert.equal(problems((s) => (s.triton.namespace = `kube-${tail}`)).length, 1);
        assert.deepEqual(
          problems((s) => (s.triton.namespace = `serving-kube${tail}`)),
          [],
        );
      }),
      { numRuns: 10 },
    );
  });

  it("refuses a serving namespace shared with monitoring, node-exporter or the GPU Operator, saying why", () => {
    const m = problems((s) => (s.triton.namespace = MONITORING_NAMESPACE));
    assert.deepEqual(m.length, 1, m.join("\n"));
    assert.match(m[0], /^triton-platform:triton\.namespace must not be the monitoring namespace \(monitoring\): .*Pod Security baseline.*NetworkPolicies/);
    const n = problems((s) => (s.triton.namespace = NODE_EXPORTER_NAMESPACE));
    assert.match(n.join("\n"), /^triton-platform:triton\.namespace must not be the node-exporter namespace .*privileged/);
    const g = problems((s) => (s.triton.namespace = s.gpu.operator?.namespace ?? "gpu-operator"));
    assert.match(g.join("\n"), /^triton-platform:triton\.namespace must not be the GPU Operator's \(gpu\.operator\.namespace\) namespace/);
  });

  it("refuses a GPU Operator namespace that is monitoring's or node-exporter's", () => {
    for (const ns of [MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE]) {
      const p = problems((s) => (s.gpu.operator = { ...s.gpu.operator, namespace: ns }));
      assert.deepEqual(p.length, 1, p.join("\n"));
      assert.match(p[0], /^triton-platform:gpu\.operator\.namespace must not be the (monitoring|node-exporter) namespace/);
    }
  });

  it("accepts other namespaces of the stack's own", () => {
    assert.deepEqual(
      problems((s) => {
        s.triton.namespace = "ml-serving";
        s.gpu.operator = { ...s.gpu.operator, namespace: "nvidia-gpu-operator" };
      }),
      [],
    );
  });
});
