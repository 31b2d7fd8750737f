// Every tie of the planner to THIS repository, in one module: where the project is, which
// file is its program, which folders a copy of it needs, the policy pack it is checked
// with, and the table of fakes its program's invokes are answered from. The rest of
// tools/planner/ takes a `Project` as a parameter and knows none of these, so the planner
// could become its own package: a second project would export its own `Project`.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Rule } from "../../policies/rules/rule";
import { INVOKES, computedOutputs, fakeId, type Invoke } from "./fakes";
import type { CapacityPlan } from "./capacity";
import type { StackConfig } from "./stackfile";
import type { SectionBuilder } from "./report";

/** What the planner fakes for a project's program: invoke answers and provider-computed outputs. */
export interface Fakes {
  invokes: Readonly<Record<string, Invoke>>;
  computedOutputs(type: string, name: string, inputs: Record<string, any>, region: string): Record<string, any>;
  fakeId(type: string, name: string, inputs: Record<string, any>): string;
}

export interface Project {
  /** The folder holding Pulumi.yaml and the Pulumi.<stack>.yaml files. */
  root: string;
  /** The program the planner runs, relative to root (Pulumi.yaml's `main`). */
  program: string;
  /** The policy pack's folder; its config/<stack>.json holds each stack's levels. */
  policiesDir: string;
  /**
   * Folders under root that hold the planner and the policy pack, not the program: their
   * modules stay loaded between stacks (see record.ts, forgetProgram).
   */
  notProgram: readonly string[];
  /** The files and folders a copy of the project needs to plan (copyProject). */
  copyEntries: readonly string[];
  fakes: Fakes;
  /** The policy pack's rules (loaded on first use: see check.ts). */
  rules(): readonly Rule[];
  /**
   * Checks of the stack's config that only the stack file shows (its `secure:` values one by
   * one, StackConfig.securePaths); throws the project's config error. Called after the program ran.
   */
  checkConfig?(stack: StackConfig): void;
  /** The stack's capacity plan (GPUs needed and available), from its config; called after the program ran. */
  capacity?(stack: StackConfig): CapacityPlan;
  /** Sections printed first in each stack's report (the summary), after the planner's REPORT_SECTIONS; see report.ts. */
  sections?: readonly SectionBuilder[];
  /**
   * The project's own lines for a stack's "What changes" in the comment (a canary's rollout
   * stage moved, say), from the base's and the head's stack config (base undefined: a new
   * stack); each line with the stack-file keys it reads. Called by compareStack.
   */
  changes?(base: StackConfig | undefined, head: StackConfig): readonly ChangeLine[];
}

/** A line of plain words about a change, with the stack-file keys it comes from. */
export interface ChangeLine {
  text: string;
  keys: string[];
}

/** The project at `root`, laid out as this repository is (the repository itself, a base-revision worktree, a temp copy). */
export function projectAt(root: string): Project {
  return {
    root,
    program: "index.ts",
    policiesDir: path.join(root, "policies"),
    notProgram: ["node_modules", "tools", "policies"],
    copyEntries: ["Pulumi.yaml", "index.ts", "lib", "config", "components", "policies", "tools", "package.json", "tsconfig.json"],
    fakes: { invokes: INVOKES, computedOutputs, fakeId },
    // The planner's own copy of the pack, whatever `root` is: a base revision is checked by
    // the current rules, as it is recorded by the current planner (base.ts). Loaded on first
    // use, after the program has run: the rules share pure modules with the components
    // (contracts, upstream tables), which are then compiled once, not twice.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    rules: () => (require("../../policies/rules") as typeof import("../../policies/rules")).rules,
    // The project's own config modules at `root` (still loaded from the program's run): the
    // resolved config and its capacity plan (config/capacity.ts), pure functions of the stack file.
    // The program sees which top-level keys are secret only (as under the engine); a credential in
    // clear beside a secure: value of the same section is refused here, from the stack file's values.
    checkConfig: (stack) => {
      if (stack.securePaths === undefined) return;
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the project's module, by path, as the program loads it
      const { checkCredentials } = require(path.join(root, "config")) as typeof import("../../config");
      checkCredentials(stack.config, stack.secretKeys, stack.securePaths);
    },
    capacity: (stack) => {
      /* eslint-disable @typescript-eslint/no-require-imports -- the project's modules, by path, as the program is loaded */
      const { loadConfig } = require(path.join(root, "config")) as typeof import("../../config");
      const { capacityPlan } = require(path.join(root, "config", "capacity")) as typeof import("../../config/capacity");
      /* eslint-enable @typescript-eslint/no-require-imports */
      return capacityPlan(loadConfig(stack.config, stack.stack, stack.secretKeys));
    },
    // The summary a reviewer reads first: each component's own rows (its descriptor in
    // components/registry.ts, composed by the project's config/summary.ts, loaded by path like
    // the program) and the GPU cost as data, rendered with the planner's policy row by
    // ./summary.ts. Loaded on first use, after the program has run: it shares the modules the program compiled.
    // A moved canary stage: the new stage's exposure and its gates with the resolved numbers
    // (config/rollout-change.ts, loaded by path like the program's config).
    changes: (base, head) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the project's module, by path, as the program loads it
      const { stageChanges } = require(path.join(root, "config", "rollout-change")) as typeof import("../../config/rollout-change");
      return stageChanges(base, head);
    },
    sections: [
      (input) => {
        /* eslint-disable @typescript-eslint/no-require-imports -- the project's modules, by path, as the program loads them */
        const { summarySection } = require("./summary") as typeof import("./summary");
        const { stackSummary } = require(path.join(root, "config", "summary")) as typeof import("../../config/summary");
        /* eslint-enable @typescript-eslint/no-require-imports */
        const { rows, cost } = stackSummary(input.config, input.stack, [...input.secretKeys]);
        return summarySection(input, rows, { cost });
      },
    ],
  };
}

/** This repository: the checkout the planner sits in. */
export const REPOSITORY: Project = projectAt(path.resolve(__dirname, "..", ".."));

/** The project root of this repository. */
export const ROOT = REPOSITORY.root;

/**
 * Copy `project`'s program to a temp folder (node_modules linked) with `stacks` (name → YAML)
 * as its stack files, for planning variants of its stacks (tests, the scale benchmark)
 * without touching the working tree. Returns the copy's root (see projectAt).
 */
export function copyProject(project: Project | string, stacks: Record<string, string>): string {
  const from = typeof project === "string" ? projectAt(project) : project;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "triton-platform-"));
  for (const e of from.copyEntries) {
    fs.cpSync(path.join(from.root, e), path.join(dir, e), { recursive: true, filter: (src) => !src.includes(`${path.sep}node_modules`) });
  }
  fs.symlinkSync(path.join(from.root, "node_modules"), path.join(dir, "node_modules"), "dir");
  for (const [name, text] of Object.entries(stacks)) fs.writeFileSync(path.join(dir, `Pulumi.${name}.yaml`), text);
  return dir;
}
