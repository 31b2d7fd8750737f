// A repository stack's raw configuration (the map Pulumi hands the program) with some
// `triton-platform:` sections replaced: config tests built on it keep working when another
// component adds a required section to every stack.
import { readStackFile } from "../tools/planner";
import { ROOT } from "./helpers";

export function stackConfigWith(stack: string, sections: Record<string, unknown>): Record<string, string> {
  const out = { ...readStackFile(ROOT, stack).config };
  for (const [key, value] of Object.entries(sections)) {
    if (value === undefined) delete out[`triton-platform:${key}`];
    else out[`triton-platform:${key}`] = JSON.stringify(value);
  }
  return out;
}
