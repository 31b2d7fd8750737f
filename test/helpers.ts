// Shared test helpers: plan a stack once per test run, copy the project to a temporary
// folder for tests that need to change a stack file, and run the CLIs as users do.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { planStack, ROOT, type RecordedResource } from "../tools/planner";
import { copyProject } from "../tools/planner/project";
import type { PlanResult } from "../tools/planner";
import { evaluatePolicies, type Violation } from "../tools/planner/policy";
import { rules } from "../policies/rules";

export { ROOT };

const plans = new Map<string, Promise<PlanResult & { outRoot: string }>>();

/** Plan a stack of the repository (cached per test process); files go to a temp folder. */
export function plan(stack: string): Promise<PlanResult & { outRoot: string }> {
  let p = plans.get(stack);
  if (!p) {
    const outRoot = fs.mkdtempSync(path.join(os.tmpdir(), `plan-${stack}-`));
    p = planStack(stack, { outRoot }).then((r) => ({ ...r, outRoot }));
    plans.set(stack, p);
  }
  return p;
}

/** One rule of the pack (by name), mandatory, with its settings, over `resources`. */
export async function ruleViolations(policy: string, resources: RecordedResource[], settings: Record<string, unknown> = {}): Promise<Violation[]> {
  const selected = rules.filter((r) => r.name === policy);
  if (selected.length !== 1) throw new Error(`policy ${policy} is not registered (exactly once)`);
  return evaluatePolicies(selected, resources, { all: "mandatory", [policy]: settings } as never);
}

/** Custom resources of a type (e.g. "kubernetes:apps/v1:StatefulSet"). */
export function ofType(resources: RecordedResource[], type: string): RecordedResource[] {
  return resources.filter((r) => r.custom && r.type === type);
}

/** Exactly one custom resource of a type, optionally with a given name. */
export function one(resources: RecordedResource[], type: string, name?: string): RecordedResource {
  const found = ofType(resources, type).filter((r) => name === undefined || r.name === name);
  if (found.length !== 1) throw new Error(`expected one ${type}${name ? ` named ${name}` : ""}, found ${found.length}: ${found.map((r) => r.name).join(", ")}`);
  return found[0];
}

/**
 * A copy of the project in a temporary folder (node_modules linked), with its stack files
 * replaced by `stacks` (name → YAML text). For tests that need their own stack config.
 */
export function tempProject(stacks: Record<string, string>): string {
  return copyProject(ROOT, stacks);
}

/** The text of a repository stack file, for building variants of it. */
export function stackText(stack: string): string {
  return fs.readFileSync(path.join(ROOT, `Pulumi.${stack}.yaml`), "utf8");
}

/** Run `tools/<tool>.ts` of a project folder the way `npm run <tool>` does. */
export function runTool(root: string, tool: "plan" | "policy", args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--require", path.join(root, "tools", "register.cjs"), path.join(root, "tools", `${tool}.ts`), ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Validate a manifest against the Kubernetes OpenAPI schema (kubernetes-models, ESM);
 * prometheus-operator kinds (monitoring.coreos.com) against the operator's CRD schemas.
 */
export async function validateManifest(m: { apiVersion: string; kind: string }): Promise<void> {
  const pkg = m.apiVersion.startsWith("monitoring.coreos.com/") ? "@kubernetes-models/prometheus-operator" : "kubernetes-models";
  const mod = await import(`${pkg}/${m.apiVersion}/${m.kind}`);
  const Model = mod[m.kind] ?? mod.default;
  if (!Model) throw new Error(`${pkg} has no ${m.apiVersion} ${m.kind}`);
  new Model(m).validate();
}
