// Evaluates the policy pack's rules over recorded resources, offline, with the same
// per-stack enforcement levels `pulumi preview --policy-pack-config` would apply.
import * as fs from "node:fs";
import * as path from "node:path";
import type { EnforcementLevel, Policies, PolicyResource, ResourceValidationArgs } from "@pulumi/policy";
import { currentFinding } from "../../policies/rules/util";
import type { RecordedResource } from "./record";
import { UsageError } from "./stackfile";

export interface Violation {
  policy: string;
  level: Exclude<EnforcementLevel, "disabled" | "remediate">;
  urn: string;
  /** `<type token> <name>` of the offending resource. */
  resource: string;
  type: string;
  name: string;
  /** Property path of the offending setting in the resource's inputs (rules report it through reportAt). */
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

/** Read policies/config/<stack>.json (the --policy-pack-config format); a missing file means the pack defaults. */
export function readPolicyConfig(policiesDir: string, stack: string): LevelConfig {
  const file = path.join(policiesDir, "config", `${stack}.json`);
  if (!fs.existsSync(file)) return {};
  let cfg: unknown;
  try {
    cfg = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new UsageError(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (!cfg || typeof cfg !== "object" || Array.isArray(cfg)) throw new UsageError(`${file} must be a JSON object of policy name → level or settings`);
  return cfg as LevelConfig;
}

/** Check a policy config file against the pack: known policy names, known levels, schema'd settings. */
export function checkPolicyConfig(policies: Policies, cfg: LevelConfig, where: string): void {
  const names = new Set(policies.map((p) => p.name));
  const problems: string[] = [];
  for (const [name, v] of Object.entries(cfg)) {
    if (name !== "all" && !names.has(name)) problems.push(`${where}: "${name}" is not a policy of the pack`);
    const level = typeof v === "string" ? v : v?.enforcementLevel;
    if (level !== undefined && !LEVELS.includes(level)) problems.push(`${where}: "${name}" has enforcement level ${JSON.stringify(level)}, expected one of ${LEVELS.join(", ")}`);
    if (typeof v === "object" && v !== null && name !== "all") {
      const schema = policies.find((p) => p.name === name)?.configSchema?.properties ?? {};
      for (const key of Object.keys(v)) {
        if (key !== "enforcementLevel" && !(key in schema)) problems.push(`${where}: "${name}.${key}" is not in the policy's configSchema`);
      }
    }
  }
  if (problems.length) throw new UsageError(problems.join("\n"));
}

/** A policy's level under a stack's config: its own entry, else `all`, else the pack default. */
export function levelOf(policy: Policies[number], cfg: LevelConfig): EnforcementLevel {
  const own = cfg[policy.name];
  const ownLevel = typeof own === "string" ? own : own?.enforcementLevel;
  const all = cfg.all;
  const allLevel = typeof all === "string" ? all : all?.enforcementLevel;
  return ownLevel ?? allLevel ?? policy.enforcementLevel ?? "advisory";
}

/** A policy's settings: configSchema defaults overlaid with the stack's file. */
function settingsOf(policy: Policies[number], cfg: LevelConfig): Record<string, unknown> {
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

class NotApplicable extends Error {}

const noOpts = { protect: false, ignoreChanges: [], aliases: [], customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 }, additionalSecretOutputs: [] };

function typeOf(cls: { new (...rest: any[]): unknown }): string | undefined {
  return (cls as unknown as { __pulumiType?: string }).__pulumiType;
}

/** PolicyResource views of recorded resources, linked by parent, provider and dependencies. */
export function policyResources(resources: RecordedResource[]): PolicyResource[] {
  const byUrn = new Map<string, PolicyResource>();
  for (const r of resources) {
    byUrn.set(r.urn, {
      type: r.type,
      props: r.props,
      urn: r.urn,
      name: r.name,
      opts: { ...noOpts, parent: r.parent ?? undefined },
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

/** Evaluate every enabled policy; violations sorted mandatory first. */
export async function evaluatePolicies(policies: Policies, resources: RecordedResource[], cfg: LevelConfig): Promise<Violation[]> {
  const views = policyResources(resources);
  const violations: Violation[] = [];
  const stackTags = new Map<string, string>();
  const notApplicableAll = (reason?: string): never => {
    throw new NotApplicable(reason);
  };
  // One args object per resource, shared by the resource rules (each gets its getConfig).
  const resourceArgs: ResourceValidationArgs[] = views.map((r) => ({
    ...r,
    stackTags,
    getConfig: <T extends object>() => ({}) as T,
    notApplicable: notApplicableAll,
    asType: ((cls: any) => r.asType(cls)) as ResourceValidationArgs["asType"],
  }));
  for (const policy of policies) {
    const level = levelOf(policy, cfg);
    if (level === "disabled") continue;
    const settings = settingsOf(policy, cfg);
    const report = (urn: string) => (message: string, target?: string) => {
      const u = target || urn;
      const { type, name } = urnParts(u);
      const at = currentFinding();
      violations.push({
        policy: policy.name,
        level: level === "mandatory" || level === "remediate" ? "mandatory" : "advisory",
        urn: u,
        resource: `${type} ${name}`.trim(),
        type,
        name,
        ...(at ? { path: at.path, value: at.value } : {}),
        message,
        remediation: policy.remediationSteps,
      });
    };
    const notApplicable = (reason?: string): never => {
      throw new NotApplicable(reason);
    };
    const getConfig = <T extends object>() => settings as T;
    try {
      if ("validateStack" in policy) {
        await policy.validateStack({ resources: views, stackTags, getConfig, notApplicable }, report(""));
        continue;
      }
      const checks = policy.validateResource;
      const fns = checks === undefined ? [] : Array.isArray(checks) ? checks : [checks];
      if (fns.length === 0) continue;
      for (const args of resourceArgs) {
        args.getConfig = getConfig;
        const reportHere = report(args.urn);
        for (const fn of fns) {
          try {
            // Await only what is a promise: most rules are synchronous, and an await per
            // rule per resource is measurable on large plans.
            const pending = fn(args, reportHere);
            if (pending && typeof pending.then === "function") await pending;
          } catch (e) {
            if (!(e instanceof NotApplicable)) throw e;
          }
        }
      }
    } catch (e) {
      if (!(e instanceof NotApplicable)) throw new Error(`policy ${policy.name} crashed: ${(e as Error).stack ?? String(e)}`, { cause: e });
    }
  }
  return violations.sort((a, b) => (a.level === b.level ? 0 : a.level === "mandatory" ? -1 : 1));
}
