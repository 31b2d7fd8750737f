// One Envoy gateway input for the unit tests: two serving groups (one with a canary), each
// with its models, and a group helper for variants.
import { envoyBootstrap, type EnvoyConfigInput, type GatewayGroup } from "../components/gateway";
import { fromJson, toJson } from "../components/upstream/envoy";

/** A serving group as the gateway sees it; the canary serves the primary's models unless told otherwise. */
export function group(name: string, over: Partial<GatewayGroup> = {}): GatewayGroup {
  const canary = over.canary ?? false;
  const models = over.models ?? [`${name}-model`];
  return {
    name,
    canary,
    models,
    canaryModels: canary ? models : [],
    canaryTrafficPercent: 0,
    maxPods: { primary: 4, canary: canary ? 1 : 0 },
    ...over,
  };
}

export function envoyInput(over: Partial<EnvoyConfigInput> = {}): EnvoyConfigInput {
  return {
    servingGroups: [group("vision", { canary: true, models: ["resnet50", "yolo"] }), group("text", { models: ["bert", "yolo"] })],
    tritonNamespace: "triton",
    clusterDomain: "cluster.local",
    defaultGroup: "vision",
    mirrorPercent: 10,
    inferTimeoutSeconds: 60,
    maxRequestsPerPod: 64,
    gatewayReplicas: 3,
    maxClientConnections: 4096,
    memoryLimitBytes: 256 * 2 ** 20,
    ...over,
  };
}

/** Build a bootstrap, serialise it and read it back: assertions are on what Envoy would read. */
export function readBackBootstrap(input: EnvoyConfigInput): Record<string, any> {
  return fromJson(toJson(envoyBootstrap(input))) as Record<string, any>;
}
