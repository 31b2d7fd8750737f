// A fixture stack's raw configuration (the map Pulumi hands the program) with some
// `triton-platform:` sections replaced (`undefined` removes one): config tests built on it
// keep working when another component adds a required section to every stack. Built on the
// fixtures (test/support/stacks.ts), never on the repository's stack files.
import { asShape, fixtureConfig } from "./support/stacks";

export function stackConfigWith(shape: string, sections: Record<string, unknown>): Record<string, string> {
  return fixtureConfig(asShape(shape), sections);
}
