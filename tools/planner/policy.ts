// Evaluates the policy pack's rules over recorded resources, offline, with the same
// per-stack enforcement levels `pulumi preview --policy-pack-config` would apply.
import * as fs from "node:fs";
import * as path from "node:path";
import type { EnforcementLevel, PolicyResource } from "@pulumi/policy";
import type { Finding, Rule } from "../../policies/rules";
import { aliasUrn, type RecordedOptions } from "./options";
import { UsageError } from "./stackfile";

/**
 * What the evaluator reads of a recorded resource (record.ts's RecordedResource has it). Stated
 * here so this module imports nothing of the recorder: the recorder's imports (the project) reach
 * the report, which imports this module's Violation.
 */
export interface EvaluatedResource {
  readonly urn: string;
  readonly type: string;
  readonly name: string;
  readonly props: Record<string, any>;
  readonly parent: string | null;
  readonly provider: string | null;
  readonly dependencies?: readonly string[];
  readonly options?: RecordedOptions;
}

export interface Violation {
  policy: string;
  level: Exclude<EnforcementLevel, "disabled" | "remediate">;
  urn: string;
  /** `<type token> <name>` of the offending resource. */
  resource: string;
  type: string;
  name: string;
  /** Property path of the offending setting in the resource's inputs (the rule's finding). */
  path?: string;
  /** The offending value found at `path` (null when absent). */
  value?: unknown;
  message: string;
  remediation?: string;
}

/** Type token and name of a URN (`urn:pulumi:<stack>::<project>::<parent types>$<type>::<name>`). */
export function urnParts(urn: string): { type: string; name: string } {
  const parts = urn.split("::");
  return { type: parts[2]?.split("$").pop() ?? "", name: parts.slice(3).join("::") };
}

type LevelConfig = Record<string, EnforcementLevel | ({ enforcementLevel?: EnforcementLevel } & Record<string, unknown>)>;

const LEVELS: EnforcementLevel[] = ["advisory", "mandatory", "remediate", "disabled"];

/**
 * Read policies/config/<stack>.json (the --policy-pack-config format). A missing file is an
 * error, not "everything advisory": a stack without its levels (or a typo'd --stack) would
 * otherwise pass every mandatory rule silently. `environment` (the stack file's, when there
 * is one) picks the reference levels file the error suggests copying.
 */
export function readPolicyConfig(policiesDir: string, stack: string, environment?: string): LevelConfig {
  const file = path.join(policiesDir, "config", `${stack}.json`);
  if (!fs.existsSync(file)) throw new UsageError(missingLevelsFile(policiesDir, stack, file, environment));
  let cfg: unknown;
  try {
    cfg = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new UsageError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (!cfg || typeof cfg !== "object" || Array.isArray(cfg)) throw new UsageError(`${file} must be a JSON object of policy name → level or settings`);
  return cfg as LevelConfig;
}

/** The levels files there are (their stack names), sorted. */
export function listLevelsFiles(policiesDir: string): string[] {
  const dir = path.join(policiesDir, "config");
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

/** Edit distance of two names (to name the levels file a typo'd stack meant). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

function missingLevelsFile(policiesDir: string, stack: string, file: string, environment: string | undefined): string {
  const known = listLevelsFiles(policiesDir);
  const dir = "policies/config";
  const head = `no policy levels file ${file} for stack ${stack}`;
  if (known.length === 0) return `${head}: create ${dir}/${stack}.json, e.g. {"all": "mandatory"}`;
  const nearest = [...known].sort((x, y) => distance(stack, x) - distance(stack, y) || x.localeCompare(y))[0];
  // A new stack starts from the reference levels of its environment; without a stack file, from the nearest name.
  const closest = environment !== undefined && known.includes(environment) ? environment : nearest;
  return (
    `${head} (levels files: ${known.join(", ")}). A new stack needs its own: cp ${dir}/${closest}.json ${dir}/${stack}.json, then adjust its levels` +
    (environment === undefined ? `; or did you mean --stack ${nearest}?` : ` (${closest}.json: the reference levels of environment ${environment}).`)
  );
}

/** Check a policy config file against the pack: known policy names, known levels, schema'd settings. */
export function checkPolicyConfig(policies: readonly Rule[], cfg: LevelConfig, where: string): void {
  const names = new Set(policies.map((p) => p.name));
  const problems: string[] = [];
  for (const [name, v] of Object.entries(cfg)) {
    if (name !== "all" && !names.has(name)) problems.push(`${where}: "${name}" is not a policy of the pack`);
    const level = typeof v === "string" ? v : v?.enforcementLevel;
    if (level !== undefined && !LEVELS.includes(level))
      problems.push(`${where}: "${name}" has enforcement level ${JSON.stringify(level)}, expected one of ${LEVELS.join(", ")}`);
    if (typeof v === "object" && v !== null && name !== "all") {
      const schema: object = policies.find((p) => p.name === name)?.configSchema?.properties ?? {};
      for (const key of Object.keys(v)) {
        if (key !== "enforcementLevel" && !(key in schema)) problems.push(`${where}: "${name}.${key}" is not in the policy's configSchema`);
      }
    }
  }
  if (problems.length) throw new UsageError(problems.join("\n"));
}

/** A policy's level under a stack's config: its own entry, else `all`, else the pack default. */
export function levelOf(policy: Pick<Rule, "name" | "enforcementLevel">, cfg: LevelConfig): EnforcementLevel {
  const own = cfg[policy.name];
  const ownLevel = typeof own === "string" ? own : own?.enforcementLevel;
  const all = cfg.all;
  const allLevel = typeof all === "string" ? all : all?.enforcementLevel;
  return ownLevel ?? allLevel ?? policy.enforcementLevel ?? "advisory";
}

/** A policy's settings: configSchema defaults overlaid with the stack's file. */
function settingsOf(policy: Rule, cfg: LevelConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(policy.configSchema?.properties ?? {})) {
    if ((s as { default?: unknown }).default !== undefined) out[k] = (s as { default?: unknown }).default;
  }
  const own = cfg[policy.name];
  if (own && typeof own === "object") {
    for (const [k, v] of Object.entries(own)) if (k !== "enforcementLevel") out[k] = v;
  }
  return out;
}

const noOpts = {
  protect: false,
  ignoreChanges: [],
  aliases: [],
  customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
  additionalSecretOutputs: [],
};

function typeOf(cls: { new (...rest: any[]): unknown }): string | undefined {
  return (cls as unknown as { __pulumiType?: string }).__pulumiType;
}

/** PolicyResource views of recorded resources, linked by parent, provider and dependencies. */
export function policyResources(resources: readonly EvaluatedResource[]): PolicyResource[] {
  const byUrn = new Map<string, PolicyResource>();
  for (const r of resources) {
    byUrn.set(r.urn, {
      type: r.type,
      props: r.props,
      urn: r.urn,
      name: r.name,
      // The options the engine passes an analyzer (PolicyResourceOptions), from the recorded ones.
      opts: {
        ...noOpts,
        parent: r.parent ?? undefined,
        protect: r.options?.protect ?? false,
        ignoreChanges: r.options?.ignoreChanges ?? [],
        ...(r.options?.deleteBeforeReplace !== undefined ? { deleteBeforeReplace: r.options.deleteBeforeReplace } : {}),
        aliases: (r.options?.aliases ?? []).map((a) => aliasUrn(r, a)),
      },
      dependencies: [],
      propertyDependencies: {},
      isType: (cls) => typeOf(cls) === r.type,
      asType: ((cls: { new (...rest: any[]): unknown }) => (typeOf(cls) === r.type ? r.props : undefined)) as PolicyResource["asType"],
    });
  }
  for (const r of resources) {
    const pr = byUrn.get(r.urn)!;
    if (r.parent) pr.parent = byUrn.get(r.parent);
    pr.dependencies = (r.dependencies ?? []).map((d) => byUrn.get(d)).filter((d): d is PolicyResource => d !== undefined);
    if (r.provider) {
      const p = byUrn.get(r.provider.split("::").slice(0, -1).join("::") || r.provider);
      if (p) pr.provider = { type: p.type, props: p.props, urn: p.urn, name: p.name };
    }
  }
  return resources.map((r) => byUrn.get(r.urn)!);
}

/**
 * Evaluate every enabled rule by calling its check (the same function the pack's adapter
 * calls for the engine): findings are return values, so nothing is shared with the pack.
 * Violations sorted mandatory first. Synchronous today (every check returns its findings);
 * a Promise, as the engine's analyzer answers, so a rule may become asynchronous.
 */
export function evaluatePolicies(policies: readonly Rule[], resources: readonly EvaluatedResource[], cfg: LevelConfig): Promise<Violation[]> {
  const views = policyResources(resources);
  const violations: Violation[] = [];
  for (const policy of policies) {
    const level = levelOf(policy, cfg);
    if (level === "disabled") continue;
    const settings = settingsOf(policy, cfg);
    const record = (f: Finding, at: string) => {
      const urn = f.urn || at;
      const { type, name } = urnParts(urn);
      violations.push({
        policy: policy.name,
        level: level === "mandatory" || level === "remediate" ? "mandatory" : "advisory",
        urn,
        resource: `${type} ${name}`.trim(),
        type,
        name,
        path: f.path,
        value: f.value === undefined ? null : f.value,
        message: f.message,
        remediation: policy.remediationSteps,
      });
    };
    try {
      if (policy.kind === "stack") {
        for (const f of policy.check(views, settings)) record(f, "");
      } else {
        for (const r of views) for (const f of policy.check(r, settings)) record(f, r.urn);
      }
    } catch (e) {
      throw new Error(`policy ${policy.name} crashed: ${(e as Error).stack ?? String(e)}`, { cause: e });
    }
  }
  return Promise.resolve(violations.sort((a, b) => (a.level === b.level ? 0 : a.level === "mandatory" ? -1 : 1)));
}
