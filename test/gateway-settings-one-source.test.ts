// The gateway's settings have one source: a direct caller of EnvoyGateway and a stack file get
// the same defaults, and a broken rule reads the same in both (one rule, one wording), with
// every problem reported at once as a SettingsError.
import { strict as assert } from "node:assert";
import { loadConfig } from "../config";
import { resolveEnvoyGatewayArgs, type EnvoyGatewayArgs } from "../components/gateway";
import { fixtureConfig } from "./support/stacks";

const direct: EnvoyGatewayArgs = {
  namespace: "triton",
  labels: {},
  servingGroups: [
    { name: "vision", canary: true },
    { name: "text", canary: false },
  ],
};
const ROOT_KEY = "triton-platform:gateway.";

function configProblems(gateway: Record<string, unknown>): string[] {
  try {
    loadConfig(fixtureConfig("staging", { gateway }), "staging");
    return [];
  } catch (e: any) {
    if (e.name === "SettingsError") return e.problems;
    throw e;
  }
}
function componentProblems(over: Partial<EnvoyGatewayArgs>): string[] {
  try {
    resolveEnvoyGatewayArgs({ ...direct, ...over });
    return [];
  } catch (e: any) {
    if (e.name === "SettingsError") return e.problems;
    throw e;
  }
}

describe("gateway settings: one source", () => {
  it("a direct caller gets the stack config's default for every key of the section", () => {
    const fromStack = loadConfig(fixtureConfig("staging", { gateway: undefined }), "staging").gateway;
    const fromComponent = resolveEnvoyGatewayArgs(direct);
    const keys = Object.keys(fromStack);
    assert.ok(keys.length >= 10, keys.join(", "));
    for (const key of keys) assert.deepEqual((fromComponent as any)[key], (fromStack as any)[key], key);
    // The one derived default: the first serving group.
    assert.equal(fromStack.defaultGroup, undefined);
    assert.equal(fromComponent.defaultGroup, "vision");
    assert.equal(fromComponent.clusterDomain, "cluster.local");
  });

  it("a broken rule reads the same in the stack file and for a direct caller", () => {
    for (const [key, value] of [
      ["mirrorPercent", 150],
      ["mirrorPercent", -1],
      ["mirrorPercent", 0.00001],
      ["replicas", 0],
      ["inferTimeoutSeconds", 3601],
      ["zoneSpread", "always"],
      ["imageTag", "latest"],
    ] as const) {
      const fromStack = configProblems({ [key]: value }).filter((p) => p.startsWith(ROOT_KEY + key));
      assert.equal(fromStack.length, 1, `${key}=${value}: ${fromStack.join("; ")}`);
      assert.deepEqual(componentProblems({ [key]: value }), [fromStack[0].slice(ROOT_KEY.length)]);
    }
  });

  it("reports every problem of a direct caller at once", () => {
    assert.deepEqual(componentProblems({ mirrorPercent: 150, replicas: 0, defaultGroup: "audio", clientCidrs: ["0.0.0.0/0"] }), [
      "mirrorPercent must be a number from 0 to 100, got 150",
      'clientCidrs[0] must not be a world-open range (/0); list the client networks, got "0.0.0.0/0"',
      "replicas must be an integer from 1 to 50, got 0",
      'defaultGroup must name one of the serving groups (vision, text), got "audio"',
      "loadBalancerSecurityGroupId is required when clientCidrs is set (the NLB's frontend security group admits only the client networks), got nothing",
    ]);
  });

  it("needs at least one serving group, and a load balancer security group exactly when there are client CIDRs", () => {
    assert.deepEqual(componentProblems({ servingGroups: [] }), ["servingGroups must be a list of at least 1 serving group(s), got []"]);
    assert.deepEqual(componentProblems({ clientCidrs: ["10.0.0.0/8"], loadBalancerSecurityGroupId: "sg-1" }), []);
    assert.deepEqual(componentProblems({ clientCidrs: [] }), []);
  });

  it("names the component in the error", () => {
    assert.throws(() => resolveEnvoyGatewayArgs({ ...direct, replicas: 0 }, "edge"), /^SettingsError: invalid arguments of EnvoyGateway "edge":/);
  });
});
