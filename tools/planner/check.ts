// The policy pack over a resources array, with a stack's enforcement levels. Kept apart
// from the recorder so `npm run policy` does not load the Pulumi SDK.
import * as fs from "node:fs";
import * as path from "node:path";
import { checkPolicyConfig, evaluatePolicies, readPolicyConfig } from "./policy";
import type { RecordedResource } from "./record";
import { readStackFile } from "./stackfile";

export const POLICIES_DIR = path.resolve(__dirname, "..", "..", "policies");

export async function checkResources(resources: RecordedResource[], stack: string, policiesDir = POLICIES_DIR) {
  // Loaded on first use, after the program has run: the rules share pure modules with the
  // components (contracts, upstream tables), which are then compiled once, not twice.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { rules } = require("../../policies/rules") as typeof import("../../policies/rules");
  const cfg = readPolicyConfig(policiesDir, stack, stackEnvironment(path.dirname(policiesDir), stack));
  checkPolicyConfig(rules, cfg, `policies/config/${stack}.json`);
  return evaluatePolicies(rules, resources, cfg);
}

/** The `environment` a stack file beside the pack sets, if there is one (it names the levels file a new stack copies). */
function stackEnvironment(root: string, stack: string): string | undefined {
  if (!fs.existsSync(path.join(root, "Pulumi.yaml"))) return undefined;
  try {
    const { config } = readStackFile(root, stack);
    return Object.entries(config).find(([k]) => k.endsWith(":environment"))?.[1];
  } catch {
    return undefined; // no (readable) stack file: the message falls back to the nearest name
  }
}
