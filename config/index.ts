// Reads every `triton-platform:*` key once, applies defaults once, validates once.
// Errors name the key, the rule and the value, and are all reported together; nothing is
// created when the configuration is invalid because index.ts calls this first.
import * as v from "valibot";
import { awsRegion, stackConfigSchema, type StackConfig } from "./schema";
import { UNKNOWN_KEY } from "./rules";

export const PROJECT = "triton-platform";
export type { StackConfig } from "./schema";

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid stack configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

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

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function keyName(path: PropertyKey[]): string {
  let out = PROJECT + ":";
  path.forEach((p, i) => {
    if (typeof p === "number") out += `[${p}]`;
    else out += (i === 0 ? "" : ".") + String(p);
  });
  return out;
}

function show(value: unknown): string {
  if (value === undefined) return "nothing";
  // JSON would print Infinity (a 400-digit config value) as null.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value);
}

function describe(issue: v.BaseIssue<unknown>, input: unknown): string {
  const items = issue.path ?? [];
  const path = items.map((p) => p.key as PropertyKey);
  // An unknown key: the rule is the message; its value is beside the point.
  if (issue.message === UNKNOWN_KEY) return `${keyName(path)} ${UNKNOWN_KEY}`;
  // A bad key of a mapping (e.g. a tag key): show the key, not its value.
  const last = items[items.length - 1];
  const shown = last?.origin === "key" && last.value !== undefined ? last.key : valueAt(input, path);
  return `${keyName(path)} ${issue.message}, got ${show(shown)}`;
}

/**
 * Validate a stack's raw configuration (the map Pulumi gives the program: `ns:key` → string).
 * Throws ConfigError listing every problem.
 */
export function loadConfig(raw: Record<string, string>, stack: string, secretKeys: string[] = []): StackConfig {
  const problems: string[] = [];
  // No setting of this program keeps its value secret (passwords are generated, never
  // configured), so a `secure:` value would be written in plaintext into tags or manifests.
  for (const key of secretKeys) {
    if (key.startsWith(PROJECT + ":")) problems.push(`${key} must not be a secret: no setting of triton-platform keeps it secret, so it would be written in plaintext`);
  }
  // No prototype: a key `triton-platform:__proto__` stays a key (and is reported as unknown).
  const input: Record<string, unknown> = Object.create(null);
  for (const [fullKey, value] of Object.entries(raw)) {
    if (!fullKey.startsWith(PROJECT + ":")) continue;
    input[fullKey.slice(PROJECT.length + 1)] = parseRaw(value);
  }
  const region = raw["aws:region"];
  const regionCheck = v.safeParse(awsRegion, region);
  if (!regionCheck.success) problems.push(`aws:region ${regionCheck.issues[0].message}, got ${show(region)}`);

  const parsed = v.safeParse(stackConfigSchema, input);
  if (!parsed.success) {
    // A value can break two checks of one rule (Infinity: finite and the bound); say it once.
    for (const issue of parsed.issues) {
      const problem = describe(issue, input);
      if (!problems.includes(problem)) problems.push(problem);
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return { ...parsed.output, stack, region: region as string };
}

/** Read the running program's configuration (under `pulumi up` or the offline planner). */
export function loadStackConfig(): StackConfig {
  // Imported lazily so tests of loadConfig need not load the Pulumi SDK.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pulumi = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
  // isConfigSecret is internal to the SDK, so read it through require.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { isConfigSecret } = require("@pulumi/pulumi/runtime/config") as { isConfigSecret(k: string): boolean };
  const raw = pulumi.runtime.allConfig();
  return loadConfig(raw, pulumi.getStack(), Object.keys(raw).filter((k) => isConfigSecret(k)));
}
