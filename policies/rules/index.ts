// All rules of the pack. A rule lives in the file of the domain it protects
// (policies/rules/<domain>.ts, its `domain` field), as a named export; the pack's entry file,
// the offline planner and the docs script all read this list, so all run the same rules.
import { autoscalerRules } from "./autoscaler";
import { firewallRules } from "./firewall";
import { foundationRules } from "./foundation";
import { gatewayRules } from "./gateway";
import { gpuNodeRules } from "./gpu-nodes";
import { modelRepositoryRules } from "./model-repository";
import { monitoringRules } from "./monitoring";
import type { Rule } from "./rule";
import { tritonRules } from "./triton";
import { workloadRules } from "./workloads";
import { exposureRules } from "./exposure";
import { rbacRules } from "./rbac";
import { iamRules } from "./iam";
import { secretsRules } from "./secrets";

export type { Finding, Rule } from "./rule";

export const rules: Rule[] = [
  ...foundationRules,
  ...gpuNodeRules,
  ...autoscalerRules,
  ...modelRepositoryRules,
  ...monitoringRules,
  ...tritonRules,
  ...firewallRules,
  ...gatewayRules,
  ...workloadRules,
  ...exposureRules,
  ...rbacRules,
  ...iamRules,
  ...secretsRules,
];
