// One builder gives every workload the stack renders its Pod Security "restricted" contexts
// (components/security-context.ts): what it returns passes the pack's pod-security-restricted
// rule (policies/rules/workloads.ts, which implements the upstream check_*.go files), each
// field it sets is one that rule needs, and both workload builders take their contexts from it.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { recorded, ROOT, ruleViolations } from "./helpers";
import { restrictedSecurityContext } from "../components/security-context";

const deployment = (pod: object, container: object) =>
  recorded("kubernetes:apps/v1:Deployment", "w", {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "w", namespace: "triton" },
    spec: { template: { spec: { securityContext: pod, containers: [{ name: "c", image: "x@sha256:" + "0".repeat(64), securityContext: container }] } } },
  });

describe("the restricted securityContext has one builder", () => {
  it("the rule reads this resource shape: an empty context is a violation", async () => {
    assert.ok((await ruleViolations("pod-security-restricted", [deployment({}, {})])).length >= 4);
  });

  for (const user of [
    { uid: 101, gid: 101 },
    { uid: 1000, gid: 1000, fsGroup: 1000, alsoOnContainer: true },
  ]) {
    it(`passes pod-security-restricted (${JSON.stringify(user)})`, async () => {
      const { pod, container } = restrictedSecurityContext(user);
      assert.deepEqual(await ruleViolations("pod-security-restricted", [deployment(pod, container)]), []);
    });
  }

  it("each field it sets is one the rule needs: dropping it is a violation", async () => {
    const { pod, container } = restrictedSecurityContext({ uid: 101, gid: 101 });
    for (const key of ["allowPrivilegeEscalation", "capabilities"] as const) {
      const { [key]: _dropped, ...rest } = container;
      void _dropped;
      assert.ok((await ruleViolations("pod-security-restricted", [deployment(pod, rest)])).length > 0, `container without ${key}`);
    }
    for (const key of ["runAsNonRoot", "seccompProfile"] as const) {
      const { [key]: _dropped, ...rest } = pod;
      void _dropped;
      const { runAsNonRoot: _n, ...containerRest } = container;
      void _n;
      assert.ok((await ruleViolations("pod-security-restricted", [deployment(rest, containerRest)])).length > 0, `pod without ${key}`);
    }
  });

  it("every workload builder takes its contexts from it (none writes its own)", () => {
    for (const f of ["components/triton/builders.ts", "components/gateway/builders.ts"]) {
      const text = readFileSync(join(ROOT, f), "utf8");
      assert.match(text, /restrictedSecurityContext\(/, f);
      assert.doesNotMatch(text, /runAsNonRoot|allowPrivilegeEscalation|seccompProfile/, `${f} writes a securityContext field itself`);
    }
  });
});
