// The offline planner as a library: plan a stack (record, write, evaluate policies).
import * as fs from "node:fs";
import * as path from "node:path";
import { writeManifests } from "./manifests";
import { checkResources } from "./check";
import { recordStack, type RecordedResource } from "./record";
import { stackReport, type StackReport } from "./report";
import { readProjectName, readStackFile } from "./stackfile";

export { listStacks, readStackFile, UsageError } from "./stackfile";
export { checkResources, POLICIES_DIR } from "./check";
export type { RecordedResource } from "./record";

export const ROOT = path.resolve(__dirname, "..", "..");

export interface PlanResult {
  report: StackReport;
  resources: RecordedResource[];
  outputs: Record<string, unknown>;
  /** In memory only (never written): lets a plan diff see secret changes; see fingerprint.ts. */
  secretFingerprints: Record<string, Record<string, string>>;
  secureFingerprints: Record<string, string>;
}

/** Plan one stack of the project in `root`; write out/<stack>/ when outRoot is given. */
export async function planStack(stack: string, opts: { root?: string; outRoot?: string } = {}): Promise<PlanResult> {
  const root = opts.root ?? ROOT;
  const stackFile = readStackFile(root, stack);
  const run = await recordStack(root, readProjectName(root), stackFile);
  const violations = await checkResources(run.resources, stack, path.join(root, "policies"));
  let outDir: string | undefined;
  if (opts.outRoot) {
    outDir = path.join(opts.outRoot, stack);
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, "resources.json"), JSON.stringify(run.resources, null, 2) + "\n");
    fs.writeFileSync(path.join(outDir, "outputs.json"), JSON.stringify(run.outputs, null, 2) + "\n");
    writeManifests(path.join(outDir, "manifests"), run.resources);
  }
  return {
    report: stackReport(stack, run.resources, violations, outDir),
    resources: run.resources,
    outputs: run.outputs,
    secretFingerprints: run.secretFingerprints,
    secureFingerprints: stackFile.secureFingerprints,
  };
}
