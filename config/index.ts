// Reads every `triton-platform:*` key once, applies defaults once, validates once.
// Errors name the key, the rule and the value, and are all reported together; nothing is
// created when the configuration is invalid because index.ts calls this first.
import { awsRegion, stackConfigSchema, type StackConfig } from "./schema";
import { checkSettings } from "../lib/schema";
import { keyPath, problemLine, SettingsError, show, type SettingProblem } from "../lib/errors";
import { REGION_RULES } from "./cross-section";
import { alertingSecretsSet } from "../components/monitoring/alerting-schema";

export const PROJECT = "triton-platform";
/** The one key that may hold secrets (monitoring.alerting's receiver keys). */
const MONITORING_KEY = `${PROJECT}:monitoring`;
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
export function loadConfig(raw: Record<string, string>, stack: string, secretKeys?: string[]): StackConfig {
  const problems: SettingProblem[] = [];
  // Only the Alertmanager receivers' keys are kept secret (components/monitoring/alerting-schema.ts,
  // they land in a Kubernetes Secret only); any other `secure:` value would be written in
  // plaintext into tags or manifests. Pulumi marks the whole structured key secret.
  for (const key of secretKeys ?? []) {
    if (key.startsWith(PROJECT + ":") && key !== MONITORING_KEY)
      problems.push({ key, rule: "must not be a secret: no setting of triton-platform keeps it secret, so it would be written in plaintext" });
  }
  // No prototype: a key `triton-platform:__proto__` stays a key (and is reported as unknown).
  const input = Object.create(null) as Record<string, unknown>;
  for (const [fullKey, value] of Object.entries(raw)) {
    if (!fullKey.startsWith(PROJECT + ":")) continue;
    input[fullKey.slice(PROJECT.length + 1)] = parseRaw(value);
  }
  // The receivers' keys in clear would be committed with the stack file. Checked when the
  // caller knows the secret keys (a program run always does); the value is never shown.
  if (secretKeys !== undefined && !secretKeys.includes(MONITORING_KEY)) {
    for (const k of alertingSecretsSet(input.monitoring))
      problems.push({
        key: `${MONITORING_KEY}.${k}`,
        rule: `must be a secure: value (pulumi config set --secret --path 'monitoring.${k}' <value>), not clear text`,
      });
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
