// One Envoy gateway input for the unit tests: two serving groups (one with a canary).
import type { EnvoyConfigInput } from "../components/gateway";

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
