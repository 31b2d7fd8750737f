// All rules of the pack, by domain. The pack's entry file and the offline planner both
// import this list, so both run the same rules.
import { foundationRules } from "./foundation";
import { gpuNodeRules } from "./gpu-nodes";
import { modelRepositoryRules } from "./model-repository";
import { monitoringRules } from "./monitoring";
import { firewallRules } from "./firewall";
import { gatewayRules } from "./gateway";
import { tritonRules } from "./triton";
import { stackRules } from "./stack";
import type { Rule } from "./util";

export type { Rule } from "./util";

export const rules: Rule[] = [...foundationRules, ...gpuNodeRules, ...modelRepositoryRules, ...monitoringRules, ...tritonRules, ...firewallRules, ...gatewayRules, ...stackRules];
