// One Envoy gateway input for the unit tests: two serving groups (one with a canary).
import { envoyBootstrap, type EnvoyConfigInput } from "../components/gateway";
import { fromJson, toJson } from "../components/upstream/envoy";

export function envoyInput(over: Partial<EnvoyConfigInput> = {}): EnvoyConfigInput {
  return {
    servingGroups: [
      { name: "vision", canary: true },
      { name: "text", canary: false },
    ],
    tritonNamespace: "triton",
    clusterDomain: "cluster.local",
    defaultGroup: "vision",
    mirrorPercent: 10,
    inferTimeoutSeconds: 60,
    maxRequests: 512,
    ...over,
  };
}

/** Build a bootstrap, serialise it and read it back: assertions are on what Envoy would read. */
export function readBackBootstrap(input: EnvoyConfigInput): Record<string, any> {
  return fromJson(toJson(envoyBootstrap(input))) as Record<string, any>;
}
