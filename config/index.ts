// Reads every `triton-platform:*` key once, applies defaults once, validates once.
// Errors name the key, the rule and the value, and are all reported together; nothing is
// created when the configuration is invalid because index.ts calls this first.
import { awsRegion, stackConfigSchema, type StackConfig } from "./schema";
import { checkSettings } from "../lib/schema";
import { keyPath, problemLine, SettingsError, show, type SettingProblem } from "../lib/errors";
import { REGION_RULES } from "./cross-section";

export const PROJECT = "triton-platform";
export type { StackConfig } from "./schema";

/** Stack configuration errors are SettingsErrors (one error type for every bad setting). */
export { SettingsError as ConfigError } from "../lib/errors";

/**
 * Pulumi hands config to the program as strings: scalars verbatim, structured values as
 * JSON. Parse structured values back; keep scalars as written.
 */
function parseRaw(value: string): unknown {
  const t = value.trim();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      return JSON.parse(t);
    } catch {
      return value;
    }
  }
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === "true" || t === "false") return t === "true";
  return value;
}

/**
 * Validate a stack's raw configuration (the map Pulumi gives the program: `ns:key` → string).
 * Throws ConfigError listing every problem.
 */
export function loadConfig(raw: Record<string, string>, stack: string, secretKeys: string[] = []): StackConfig {
  const problems: SettingProblem[] = [];
  // No setting of this program keeps its value secret (passwords are generated, never
  // configured), so a `secure:` value would be written in plaintext into tags or manifests.
  for (const key of secretKeys) {
    if (key.startsWith(PROJECT + ":"))
      problems.push({ key, rule: "must not be a secret: no setting of triton-platform keeps it secret, so it would be written in plaintext" });
  }
  // No prototype: a key `triton-platform:__proto__` stays a key (and is reported as unknown).
  const input = Object.create(null) as Record<string, unknown>;
  for (const [fullKey, value] of Object.entries(raw)) {
    if (!fullKey.startsWith(PROJECT + ":")) continue;
    input[fullKey.slice(PROJECT.length + 1)] = parseRaw(value);
  }
  const region = raw["aws:region"];
  const regionCheck = checkSettings(awsRegion, region);
  if (!regionCheck.success) problems.push({ key: "aws:region", rule: regionCheck.problems[0].rule, value: { shown: show(region) } });

  const parsed = checkSettings(stackConfigSchema, input, PROJECT + ":");
  if (!parsed.success) {
    const seen = new Set(problems.map(problemLine));
    for (const p of parsed.problems) if (!seen.has(problemLine(p))) problems.push(p);
  } else {
    // The rules that read aws:region beside the sections (config/cross-section.ts).
    for (const rule of REGION_RULES) {
      rule.check(parsed.output, region, {
        addIssue: ({ path, message }) => {
          let at: unknown = input;
          for (const k of path) at = (at as Record<string | number, unknown> | undefined)?.[k];
          problems.push({ key: keyPath(path, PROJECT + ":"), rule: message, value: { shown: show(at) } });
        },
      });
    }
  }
  if (problems.length > 0 || !parsed.success) throw new SettingsError("invalid stack configuration", problems);
  return { ...parsed.output, stack, region: region };
}

/** Read the running program's configuration (under `pulumi up` or the offline planner). */
export function loadStackConfig(): StackConfig {
  // Imported lazily so tests of loadConfig need not load the Pulumi SDK.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pulumi = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
  // isConfigSecret is internal to the SDK, so read it through require.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { isConfigSecret } = require("@pulumi/pulumi/runtime/config") as { isConfigSecret: (k: string) => boolean };
  const raw = pulumi.runtime.allConfig();
  return loadConfig(
    raw,
    pulumi.getStack(),
    Object.keys(raw).filter((k) => isConfigSecret(k)),
  );
}
