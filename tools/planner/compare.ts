// One stack's plan against its base: what `npm run plan -- --base REF` prints and the comment
// shows (diff.ts does the resources and keys; this joins them with the policy delta and the cost).
// In-process, so the CLI and the tests compute a diff the same way.
import { costDelta, costInputOfValues, formatCostDelta, stackCost } from "../../config/cost";
import { countChanges, diffConfig, diffResources, policyDelta, type StackDiff } from "./diff";
import { evaluateAt, REPOSITORY, type PlanResult } from "./index";
import type { Project } from "./project";
import type { RecordedPlan } from "./base";
import { stackConfigOf } from "./stackfile";

/** The base side of a comparison: a recorded plan (its stack file's values with it), or null for a new stack. */
export type BaseSide = Pick<RecordedPlan, "resources" | "secretFingerprints" | "values"> | null;

/** The diff of a planned stack against its base (null: the stack is new), as the CLI's --base computes it. */
export async function compareStack(
  stack: string,
  base: string,
  old: BaseSide,
  head: PlanResult,
  projectName: string,
  project: Project = REPOSITORY,
): Promise<StackDiff> {
  const resources = diffResources(old?.resources ?? [], head.resources, { base: old?.secretFingerprints, head: head.secretFingerprints });
  // The base's violations under the head's rules and levels: what this change adds or fixes.
  const baseViolations = old ? await evaluateAt(project, old.resources, head.levels, `levels of stack ${stack}`) : [];
  // Both sides priced by the current table from their stack files as written (the keys read
  // have no defaults), so the delta is what the change to the stack costs, whatever the base's modules are.
  const costOf = (values: Record<string, unknown> | undefined) => {
    const input = values && costInputOfValues(values, projectName);
    return input && stackCost(input);
  };
  const cost = costDelta(costOf(old?.values), costOf(head.values));
  const notes = project.changes?.(old ? stackConfigOf(projectName, stack, old.values) : undefined, stackConfigOf(projectName, stack, head.values)) ?? [];
  return {
    stack,
    base,
    ...(old ? {} : { newStack: true as const }),
    counts: countChanges(resources),
    resources,
    config: diffConfig(old?.values ?? {}, head.values, projectName),
    policy: policyDelta(baseViolations, head.report.violations),
    cost: { ...cost, text: formatCostDelta(cost, { newStack: !old }) },
    ...(notes.length ? { notes: [...notes] } : {}),
  };
}
