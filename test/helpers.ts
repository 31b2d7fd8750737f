// Shared test helpers: plan each fixture stack once per test run, copy the project to a
// temporary folder for tests that need a stack file, and run the CLIs as users do.
// Stacks come from the fixtures (test/support/stacks.ts), never from the repository's
// Pulumi.<stack>.yaml files, which users edit (test/stack-files.test.ts checks those).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { copyProject, evaluateAt, planConfig, REPOSITORY, ROOT, type PlanResult, type RecordedResource } from "../tools/planner";
import { evaluatePolicies, type Violation } from "../tools/planner/policy";
import { rules } from "../policies/rules";
import { asShape, fixtureLevels, fixtureStack, SHAPES, type FixtureStack } from "./support/stacks";

export { ROOT };
export { fixtureConfig, fixtureLevels, fixtureStack, fixtureYaml, SHAPES, type Shape } from "./support/stacks";

const plans = new Map<string, Promise<PlanResult & { outRoot: string }>>();

/** Plan the fixture stack of a shape, at the shape's fixture levels: `planFixture(fixtureStack(shape))`, shared the same way. */
export function plan(shape: string): Promise<PlanResult & { outRoot: string }> {
  return planFixture(fixtureStack(asShape(shape)));
}

/**
 * Plan a fixture stack at its levels; files go to a temp folder (<outRoot>/<name>/). Planned
 * once per test process for each distinct stack (name, config, secret keys, levels): every
 * test file that plans the same fixture shares the result, so treat it as read-only (copy
 * what you change, as test/policy-mutations.test.ts does). `shared: false` plans afresh, unshared.
 */
export function planFixture(stack: FixtureStack, opts: { shared?: boolean } = {}): Promise<PlanResult & { outRoot: string }> {
  const run = async () => {
    const outRoot = fs.mkdtempSync(path.join(os.tmpdir(), `plan-${stack.stack}-`));
    const r = await planConfig(stack, { levels: stack.levels, outRoot });
    return { ...r, outRoot };
  };
  // Not shared: a test that changes what the planner does (a registered report section) plans on its own.
  if (opts.shared === false) return run();
  const key = JSON.stringify(stack);
  let p = plans.get(key);
  if (!p) {
    p = run();
    plans.set(key, p);
  }
  return p;
}

/** The whole pack over `resources` at a shape's fixture levels (what a plan of that stack reports). */
export function checkAtLevels(resources: RecordedResource[], shape: string): Promise<Violation[]> {
  return evaluateAt(REPOSITORY, resources, fixtureLevels(asShape(shape)), `fixture levels of ${shape}`);
}

/** One rule of the pack (by name), mandatory, with its settings, over `resources`. */
export async function ruleViolations(policy: string, resources: RecordedResource[], settings: Record<string, unknown> = {}): Promise<Violation[]> {
  const selected = rules.filter((r) => r.name === policy);
  if (selected.length !== 1) throw new Error(`policy ${policy} is not registered (exactly once)`);
  return evaluatePolicies(selected, resources, { all: "mandatory", [policy]: settings } as never);
}

/** A custom resource as the planner records it, for rules and diffs over crafted resources. */
export function recorded(type: string, name: string, props: Record<string, any>, stack = "test"): RecordedResource {
  return { urn: `urn:pulumi:${stack}::triton-platform::${type}::${name}`, type, name, custom: true, parent: null, provider: null, dependencies: [], props };
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
 * replaced by `stacks` (name → YAML text). For tests that need their own stack files. The
 * copy's levels files (policies/config/) are the fixture levels of those stacks whose name
 * is a shape, never the repository's (which users edit); other stacks get none.
 */
export function tempProject(stacks: Record<string, string>): string {
  const dir = copyProject(ROOT, stacks);
  const levelsDir = path.join(dir, "policies", "config");
  fs.rmSync(levelsDir, { recursive: true, force: true });
  fs.mkdirSync(levelsDir, { recursive: true });
  for (const name of Object.keys(stacks)) {
    if (!(SHAPES as readonly string[]).includes(name)) continue;
    fs.writeFileSync(path.join(levelsDir, `${name}.json`), JSON.stringify(fixtureLevels(name), null, 2) + "\n");
  }
  return dir;
}

export interface ToolRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npm run <tool> -- <args>` on a project folder, in this process: the command's `main`
 * (tools/<tool>.ts) with `root` as the project and the working directory, its output
 * captured, its exit code as the process would have it (runMain maps errors to 2 and 3).
 * What only a real process shows (the exit status, a closed pipe) is `spawnTool`'s.
 */
export async function runTool(root: string, tool: "plan" | "policy", args: string[]): Promise<ToolRun> {
  let stdout = "";
  let stderr = "";
  const io = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: root, root };
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use: a test file that runs no command does not pay for the planner's CLI */
  const { main } = (tool === "plan" ? require("../tools/plan") : require("../tools/policy")) as typeof import("../tools/plan");
  const { runMain } = require("../tools/planner/cli") as typeof import("../tools/planner/cli");
  /* eslint-enable @typescript-eslint/no-require-imports */
  const status = await runMain(main, args, io);
  return { status, stdout, stderr };
}

/**
 * Run `tools/<tool>.ts` of a project folder as its own process, the way `npm run <tool>` does:
 * for the end-to-end runs (one per command-line behaviour) that only a process shows.
 */
export function spawnTool(root: string, tool: "plan" | "policy", args: string[]): ToolRun {
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

/** git in a test's temporary repository, as a throwaway identity with signing off; its stdout. */
export function git(dir: string, ...args: string[]): string {
  const r = spawnSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd: dir,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}
