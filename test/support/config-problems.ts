// A prod-shaped fixture's raw config with its first serving group edited, and the problems
// loadConfig reports for a raw config: the pair the Triton config tests build their cases on.
import { ConfigError, loadConfig } from "../../config";
import { fixtureConfig } from "./stacks";

const TRITON_KEY = "triton-platform:triton";

/** prod's raw config with the first group changed by `edit` (the whole triton section is passed too). */
export function prodWith(edit: (g: Record<string, any>, triton: Record<string, any>) => void): Record<string, string> {
  const raw = { ...fixtureConfig("prod") };
  const triton = JSON.parse(raw[TRITON_KEY]);
  edit(triton.groups[0], triton);
  raw[TRITON_KEY] = JSON.stringify(triton);
  return raw;
}

/** The problems loadConfig reports for `raw` as a prod stack (none when it loads). */
export function problems(raw: Record<string, string>): string[] {
  try {
    loadConfig(raw, "prod");
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}
