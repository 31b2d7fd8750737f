// The offline planner as a library, its one entry: plan a stack of a project, from its
// Pulumi.<stack>.yaml (planStack) or from a config in memory (planConfig), into the
// resources the engine would see, the stack outputs, the Kubernetes manifests and the
// policy report. The ties to this repository are in project.ts (REPOSITORY, the default
// project); the Pulumi SDK internals the planner needs are listed in sdk.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { loadLevels } from "./check";
import { writeArtifacts } from "./artifacts";
import { kubernetesManifests, writeManifests, type Manifest } from "./manifests";
import { checkPolicyConfig, evaluatePolicies, levelOf, type Violation } from "./policy";
import { projectAt, REPOSITORY, type Project } from "./project";
import { recordStack, type RecordedResource } from "./record";
import { buildSections, REPORT_SECTIONS, stackReport, type StackReport } from "./report";
import { collectWarnings } from "../../lib/warnings";
import { readProjectName, readStackFile, type StackConfig } from "./stackfile";

export { listStacks, readProjectName, readStackFile, stackConfigOf, UsageError, type StackConfig, type StackFile } from "./stackfile";
export { checkResources, loadLevels } from "./check";
export { copyProject, projectAt, REPOSITORY, ROOT, type Project } from "./project";
export type { RecordedResource } from "./record";
export type { Manifest } from "./manifests";
export type { Violation } from "./policy";

/** A stack's enforcement levels, in the format of policies/config/<stack>.json (`--policy-pack-config`). */
export type Levels = Parameters<typeof evaluatePolicies>[2];

export interface PlanResult {
  report: StackReport;
  resources: RecordedResource[];
  outputs: Record<string, unknown>;
  /** The Kubernetes objects among the resources, as manifests (what out/<stack>/manifests/ holds). */
  manifests: Manifest[];
  /** In memory only (never written): lets a plan diff see secret changes; see fingerprint.ts. */
  secretFingerprints: Record<string, Record<string, string>>;
  secureFingerprints: Record<string, string>;
  /** The stack file's values as written (secure: leaves kept), for the config-level diff. In memory only. */
  values: Record<string, unknown>;
  /** The levels the policies ran at (to evaluate a base plan at the same levels). */
  levels: Levels;
}

export interface PlanOptions {
  /** The project whose program is planned; default: this repository. */
  project?: Project;
  /** Shorthand for `project: projectAt(root)` (a copy or a worktree of this repository). */
  root?: string;
  /** Write <outRoot>/<stack>/resources.json, outputs.json and manifests/. */
  outRoot?: string;
  /** Evaluate the policies at these levels instead of the project's policies/config/<stack>.json. */
  levels?: Levels;
}

function projectOf(opts: PlanOptions): Project {
  return opts.project ?? (opts.root ? projectAt(opts.root) : REPOSITORY);
}

/** Plan the stack file Pulumi.<stack>.yaml of the project. */
export async function planStack(stack: string, opts: PlanOptions = {}): Promise<PlanResult> {
  const project = projectOf(opts);
  return planConfig(readStackFile(project.root, stack), { ...opts, project });
}

/**
 * Plan a stack given in memory: its name, the raw config the CLI would hand the program
 * (`namespace:key` → string) and its secret keys; no stack file is read. Its policies are
 * evaluated at `opts.levels`, else at the project's policies/config/<stack>.json.
 */
export async function planConfig(stack: StackConfig, opts: PlanOptions = {}): Promise<PlanResult> {
  const project = projectOf(opts);
  const projectName = readProjectName(project.root);
  // Warnings the program raises (lib/warnings.ts) go into the report instead of the log.
  const { result: run, warnings } = await collectWarnings(() => recordStack(project, projectName, stack));
  project.checkConfig?.(stack);
  const { cfg: levels, file: levelsPath } = opts.levels
    ? { cfg: opts.levels, file: undefined }
    : loadLevels(stack.stack, project.policiesDir, project, stack.config[`${projectName}:environment`]);
  const violations = await evaluateAt(project, run.resources, levels, levelsPath ? `policies/config/${stack.stack}.json` : `levels of stack ${stack.stack}`);
  const rules = project.rules().map((r) => ({ name: r.name, level: levelOf(r, levels) }));
  const levelsFile = levelsPath ? path.relative(project.root, levelsPath) : "(levels given in memory)";
  const manifests = kubernetesManifests(run.resources).map((m) => m.manifest);
  let outDir: string | undefined;
  if (opts.outRoot) {
    outDir = path.join(opts.outRoot, stack.stack);
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, "resources.json"), JSON.stringify(run.resources, null, 2) + "\n");
    fs.writeFileSync(path.join(outDir, "outputs.json"), JSON.stringify(run.outputs, null, 2) + "\n");
    writeManifests(path.join(outDir, "manifests"), manifests);
  }
  const artifacts = outDir ? writeArtifacts(outDir, run.resources) : undefined;
  const capacity = project.capacity?.(stack);
  const sections = buildSections(
    { stack: stack.stack, config: stack.config, secretKeys: stack.secretKeys, resources: run.resources, outputs: run.outputs, violations, rules },
    [...REPORT_SECTIONS, ...(project.sections ?? [])],
  );
  return {
    report: stackReport(
      stack.stack,
      run.resources,
      violations,
      outDir,
      { levelsFile, rules, sections, ...(artifacts ? { artifacts } : {}), ...(capacity ? { capacity } : {}) },
      warnings,
    ),
    resources: run.resources,
    outputs: run.outputs,
    manifests,
    secretFingerprints: run.secretFingerprints,
    secureFingerprints: stack.secureFingerprints ?? {},
    values: stack.values ?? {},
    levels,
  };
}

/** The project's policy pack over `resources` at the given levels (checked against the pack first). */
export async function evaluateAt(project: Project, resources: RecordedResource[], levels: Levels, where: string): Promise<Violation[]> {
  const rules = project.rules();
  checkPolicyConfig(rules, levels, where);
  return evaluatePolicies(rules, resources, levels);
}
