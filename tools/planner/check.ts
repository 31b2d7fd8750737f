// The policy pack over a resources array, with a stack's enforcement levels. Kept apart
// from the recorder so `npm run policy` does not load the Pulumi SDK.
import * as fs from "node:fs";
import * as path from "node:path";
import { checkPolicyConfig, evaluatePolicies, readPolicyConfig } from "./policy";
import type { RecordedResource } from "./record";
import { readStackFile } from "./stackfile";
import { REPOSITORY, type Project } from "./project";

/**
 * The pack's rules over `resources` at the levels of `<project's policies>/config/<stack>.json`
 * (a missing file is a UsageError naming the file to copy).
 */
export async function checkResources(resources: RecordedResource[], stack: string, policiesDir = REPOSITORY.policiesDir, project: Project = REPOSITORY) {
  const rules = project.rules();
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
