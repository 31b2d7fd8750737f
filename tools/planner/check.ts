// The policy pack over a resources array, with a stack's enforcement levels. Kept apart
// from the recorder so `npm run policy` does not load the Pulumi SDK.
import * as fs from "node:fs";
import * as path from "node:path";
import { checkPolicyConfig, evaluatePolicies, readPolicyConfig } from "./policy";
import type { RecordedResource } from "./record";
import { readStackFile } from "./stackfile";
import { REPOSITORY, type Project } from "./project";

/** A stack's levels from `<policies>/config/<stack>.json`, checked against the pack, and the file they came from. */
export function loadLevels(
  stack: string,
  policiesDir = REPOSITORY.policiesDir,
  project: Project = REPOSITORY,
  environment?: string,
): { cfg: ReturnType<typeof readPolicyConfig>; file: string } {
  const rules = project.rules();
  const levelsFile = path.join(policiesDir, "config", `${stack}.json`);
  const env = environment ?? (fs.existsSync(levelsFile) ? undefined : stackEnvironment(path.dirname(policiesDir), stack));
  const cfg = readPolicyConfig(policiesDir, stack, env);
  checkPolicyConfig(rules, cfg, `policies/config/${stack}.json`);
  return { cfg, file: levelsFile };
}

/** The pack's rules over `resources` at the stack's levels (loadLevels: a missing file is a UsageError naming the file to copy). */
export async function checkResources(
  resources: RecordedResource[],
  stack: string,
  policiesDir = REPOSITORY.policiesDir,
  project: Project = REPOSITORY,
  /** The stack's environment when the caller has its config; it only words a missing file's error. */
  environment?: string,
) {
  const { cfg } = loadLevels(stack, policiesDir, project, environment);
  return evaluatePolicies(project.rules(), resources, cfg);
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
