// Plans the stacks as they were at a git revision (the pull request's target branch), so a
// plan can be compared with it.
//
// The base tree is checked out as a temporary detached worktree that shares the installed
// node_modules (a symlink: no second install, and the SDK instance that records is the one
// the base program registers with). The base's PROGRAM (index.ts, config/, components/,
// its stack files) is planned by the CURRENT planner, never by the base's tools/: what a
// pull request changes is the program, while the recording format, the fakes and the
// secret handling are the planner's own and must be identical on both sides to compare.
// An older base planner might not even record what the diff needs (e.g. fingerprints).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { projectAt, type Project } from "./project";
import { recordStack, type RecordedResource } from "./record";
import { readProjectName, readStackFile, UsageError } from "./stackfile";
import type { SecretFingerprints } from "./diff";
import { isSettingsError } from "../../lib/errors";

export interface RecordedPlan {
  resources: RecordedResource[];
  secretFingerprints: SecretFingerprints;
  secureFingerprints: Record<string, string>;
  /** The stack file's `config:` values as written (secure: leaves kept), for the config-level diff. */
  values: Record<string, unknown>;
}

/** A base stack whose configuration did not plan (a SettingsError or UsageError): its message. */
export interface BaseError {
  error: string;
}

function git(cwd: string, args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.error) throw new UsageError(`--base needs git: ${r.error.message}`);
  return { ok: r.status === 0, out: (r.stdout ?? "").trim(), err: (r.stderr ?? "").trim() };
}

/** The commit a ref names, or a UsageError that says what to do. */
export function resolveCommit(root: string, ref: string): string {
  if (!git(root, ["rev-parse", "--is-inside-work-tree"]).ok) throw new UsageError(`--base ${ref}: ${root} is not inside a git repository`);
  // `--end-of-options` so a ref like "--output=x" is never read as an option.
  const r = git(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
  if (!r.ok || !r.out) {
    throw new UsageError(`--base ${ref}: no such commit in this repository (for a branch of the remote, fetch it first: git fetch origin <branch>)`);
  }
  return r.out;
}

/**
 * Check out `ref` into a temporary worktree, run `fn` on the project root inside it, and
 * remove the worktree afterwards, also when `fn` fails.
 */
export async function withBaseTree<T>(root: string, ref: string, fn: (baseRoot: string, commit: string) => Promise<T>): Promise<T> {
  const commit = resolveCommit(root, ref);
  const top = git(root, ["rev-parse", "--show-toplevel"]).out;
  // The project may sit in a subfolder of its repository.
  const rel = path.relative(fs.realpathSync(top), fs.realpathSync(root));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "triton-plan-base-"));
  const tree = path.join(tmp, "tree");
  try {
    const add = git(root, ["worktree", "add", "--detach", "--quiet", tree, commit]);
    if (!add.ok) throw new Error(`git worktree add ${ref} failed: ${add.err}`);
    const baseRoot = path.join(tree, rel);
    if (fs.existsSync(baseRoot) && !fs.existsSync(path.join(baseRoot, "node_modules"))) {
      fs.symlinkSync(path.join(root, "node_modules"), path.join(baseRoot, "node_modules"), "dir");
    }
    return await fn(baseRoot, commit);
  } finally {
    git(root, ["worktree", "remove", "--force", tree]);
    fs.rmSync(tmp, { recursive: true, force: true });
    git(root, ["worktree", "prune"]);
  }
}

/**
 * Record one stack of the project at `baseRoot` (laid out as `layout` says: the program, the
 * fakes); null when the stack (or project) did not exist there.
 */
export async function recordBaseStack(baseRoot: string, stack: string, layout: (root: string) => Project = projectAt): Promise<RecordedPlan | null> {
  if (!fs.existsSync(path.join(baseRoot, "Pulumi.yaml")) || !["yaml", "yml"].some((e) => fs.existsSync(path.join(baseRoot, `Pulumi.${stack}.${e}`))))
    return null;
  const stackFile = readStackFile(baseRoot, stack);
  const run = await recordStack(layout(baseRoot), readProjectName(baseRoot), stackFile);
  return {
    resources: run.resources,
    secretFingerprints: run.secretFingerprints,
    secureFingerprints: stackFile.secureFingerprints,
    values: stackFile.values ?? {},
  };
}

/**
 * Record several stacks at a git ref (one worktree for all of them). A stack whose config does
 * not plan there (a SettingsError or UsageError) is kept as its error and the others are still
 * recorded; any other error stops, naming the stack.
 */
export async function recordAtRef(
  root: string,
  ref: string,
  stacks: readonly string[],
  layout: (root: string) => Project = projectAt,
): Promise<Map<string, RecordedPlan | BaseError | null>> {
  return withBaseTree(root, ref, async (baseRoot) => {
    const plans = new Map<string, RecordedPlan | BaseError | null>();
    for (const stack of stacks) {
      try {
        plans.set(stack, await recordBaseStack(baseRoot, stack, layout));
      } catch (e) {
        if (isSettingsError(e) || (e instanceof Error && e.name === UsageError.name)) {
          plans.set(stack, { error: e.message });
          continue;
        }
        (e as Error).message = `--base ${ref}: stack ${stack} does not plan at that revision: ${(e as Error).message}`;
        throw e;
      }
    }
    return plans;
  });
}

export function isBaseError(p: RecordedPlan | BaseError | null | undefined): p is BaseError {
  return p !== null && p !== undefined && "error" in p;
}
