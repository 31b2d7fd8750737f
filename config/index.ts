// Reads every `triton-platform:*` key once, applies defaults once, validates once.
// Errors name the key, the rule and the value, and are all reported together; nothing is
// created when the configuration is invalid because index.ts calls this first.
import { awsRegion, stackConfigSchema, type StackConfig } from "./schema";
import { checkSettings, secretKeyPaths, setAt } from "../lib/schema";
import { keyPath, problemLine, SettingsError, show, type SettingProblem } from "../lib/errors";
import { REGION_RULES } from "./cross-section";
import { sections } from "./schema";

export const PROJECT = "triton-platform";

/**
 * Every credential of the stack file (each key a component's schema marks with secret(),
 * lib/schema.ts), as key paths: section → the paths below it ("[]" for a list item).
 */
export const SECRET_KEY_PATHS: Readonly<Record<string, readonly (readonly string[])[]>> = Object.fromEntries(
  Object.entries(sections)
    .map(([k, schema]) => [k, secretKeyPaths(schema)] as const)
    .filter(([, paths]) => paths.length > 0),
);

/** The rule of a credential written in clear, with the command that sets it right (its value never shown). */
export function plainSecretRule(path: readonly (string | number)[]): string {
  const key = keyPath(path);
  return `is a credential and must be a secure: value, not clear text in the stack file (pulumi config set --secret --path '${PROJECT}:${key}' <value>)`;
}
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

/** The `triton-platform:*` keys of a raw config as section → parsed value (no prototype: a key `__proto__` stays a key, reported as unknown). */
function sectionInputs(raw: Record<string, string>): Record<string, unknown> {
  const input = Object.create(null) as Record<string, unknown>;
  for (const [fullKey, value] of Object.entries(raw)) {
    if (!fullKey.startsWith(PROJECT + ":")) continue;
    input[fullKey.slice(PROJECT.length + 1)] = parseRaw(value);
  }
  return input;
}

/** Every credential (SECRET_KEY_PATHS) set in clear: its section not secret, or (with securePaths) its own value not `secure:`. */
function credentialsInClear(input: Record<string, unknown>, secretKeys: readonly string[], securePaths?: readonly string[]): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const [sectionKey, paths] of Object.entries(SECRET_KEY_PATHS)) {
    const full = `${PROJECT}:${sectionKey}`;
    for (const below of setAt(input[sectionKey], paths)) {
      const path = [sectionKey, ...below];
      const at = keyPath(path, PROJECT + ":");
      if (!secretKeys.includes(full) || (securePaths !== undefined && !securePaths.includes(at))) problems.push({ key: at, rule: plainSecretRule(path) });
    }
  }
  return problems;
}

/**
 * The offline planner's check of a stack file the program has already accepted: a credential in
 * clear beside a `secure:` value of the same section, which the engine's top-level secret keys
 * cannot show (see loadConfig's `securePaths`). Throws the ConfigError loadConfig would.
 */
export function checkCredentials(raw: Record<string, string>, secretKeys: readonly string[], securePaths: readonly string[]): void {
  const problems = credentialsInClear(sectionInputs(raw), secretKeys, securePaths);
  if (problems.length > 0) throw new SettingsError("invalid stack configuration", problems);
}

/**
 * Validate a stack's raw configuration (the map Pulumi gives the program: `ns:key` → string).
 * Throws ConfigError listing every problem.
 *
 * `secretKeys`: the top-level keys Pulumi marks secret (PULUMI_CONFIG_SECRET_KEYS: a structured
 * key is marked when any value inside it is `secure:`). `securePaths`, when the caller read the
 * stack file itself (the offline planner): the full key path of every `secure:` value
 * (`triton-platform:monitoring.alerting.pagerduty.routingKey`), so a credential in clear beside
 * a secure one in the same section is refused too; the engine gives a program no such detail.
 */
export function loadConfig(raw: Record<string, string>, stack: string, secretKeys?: string[], securePaths?: readonly string[]): StackConfig {
  const problems: SettingProblem[] = [];
  // Only the sections holding credentials keep them secret (each lands in a Kubernetes Secret
  // only); any other `secure:` value would be written in plaintext into tags or manifests.
  for (const key of secretKeys ?? []) {
    if (key.startsWith(PROJECT + ":") && !(key.slice(PROJECT.length + 1) in SECRET_KEY_PATHS))
      problems.push({ key, rule: "must not be a secret: no setting of triton-platform keeps it secret, so it would be written in plaintext" });
  }
  const input = sectionInputs(raw);
  // A credential in clear would be committed with the stack file. Checked when the caller
  // knows the secret keys (a program run always does); the value is never shown.
  if (secretKeys !== undefined) problems.push(...credentialsInClear(input, secretKeys, securePaths));
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
