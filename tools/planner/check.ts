// The policy pack over a resources array, with a stack's enforcement levels. Kept apart
// from the recorder so `npm run policy` does not load the Pulumi SDK.
import * as path from "node:path";
import { rules } from "../../policies/rules";
import { checkPolicyConfig, evaluatePolicies, readPolicyConfig } from "./policy";
import type { RecordedResource } from "./record";

export const POLICIES_DIR = path.resolve(__dirname, "..", "..", "policies");

export async function checkResources(resources: RecordedResource[], stack: string, policiesDir = POLICIES_DIR) {
  const cfg = readPolicyConfig(policiesDir, stack);
  checkPolicyConfig(rules, cfg, `policies/config/${stack}.json`);
  return evaluatePolicies(rules, resources, cfg);
}
