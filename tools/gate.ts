// npm run gate -- --stack NAME --prometheus URL [--at TIME] [--group NAME] [--json]
// Evaluates the current rollout stage's gates of every canary in the stack (or one group's)
// through the Prometheus HTTP API (GET /api/v1/query, one instant query per gate at TIME over
// the stage's window) and prints each gate with its numbers and verdict. The expressions are
// the ones the PrometheusRule records (components/monitoring/gates.ts), so the command and the
// alerts agree. Exit 0: every gate passes; 1: a gate fails; 3: too little data to judge (fewer
// canary requests than the stage's minRequests, or a gate without samples); 2: a configuration,
// usage or connection error (a clear message, no stack trace).
import { parseArgs, runCli, type CliIo } from "./planner/cli";
import { readStackFile, ROOT, UsageError } from "./planner";
import { loadConfig } from "../config";
import { isSettingsError } from "../lib/errors";
import { canaryStageRef, effectiveRollout } from "../components/triton/rollout";
import { canaryGates, gateVerdict, stageVerdict, type CanaryGates, type Gate, type Verdict } from "../components/monitoring/gates";

const USAGE = "usage: npm run gate -- --stack NAME --prometheus URL [--at TIME] [--group NAME] [--json]\n";

export const GATE_EXIT = { pass: 0, fail: 1, error: 2, insufficient: 3 } as const;

/** The canaries' gates of a stack file's current stages. */
export function stackGates(root: string, stack: string, group?: string): CanaryGates[] {
  const s = readStackFile(root, stack);
  const cfg = loadConfig(s.config, stack, s.secretKeys, s.securePaths);
  const out: CanaryGates[] = [];
  for (const g of cfg.triton.groups) {
    if (!g.canary || (group !== undefined && g.name !== group)) continue;
    const canaryStage = canaryStageRef(effectiveRollout(g.canary.rollout, cfg.gateway.mirrorPercent, g.canary.trafficPercent));
    const c = canaryGates(cfg.triton.namespace, { name: g.name, canary: true, canaryStage }, cfg.monitoring.thresholds);
    if (c) out.push(c);
  }
  if (group !== undefined && out.length === 0) {
    const canaries = cfg.triton.groups.filter((g) => g.canary).map((g) => g.name);
    throw new UsageError(`--group ${group}: no serving group of stack ${stack} by that name has a canary (canaries: ${canaries.join(", ") || "none"})`);
  }
  if (out.length === 0) throw new UsageError(`stack ${stack} has no canary: there is no rollout stage to gate`);
  return out;
}

/** A connection or protocol failure talking to Prometheus (exit 2). */
export class PrometheusError extends Error {
  override name = "PrometheusError";
}

/** One instant query: the value of its single sample, undefined when the result is empty. */
export async function instantQuery(base: URL, expr: string, at: string | undefined): Promise<number | undefined> {
  const url = new URL("api/v1/query", base.href.endsWith("/") ? base : new URL(`${base.href}/`));
  url.searchParams.set("query", expr);
  if (at !== undefined) url.searchParams.set("time", at);
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new PrometheusError(`cannot reach Prometheus at ${base.href}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  const text = await res.text();
  let body: { status?: string; error?: string; data?: { resultType?: string; result?: unknown } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new PrometheusError(
      `${url.origin}${url.pathname} answered HTTP ${res.status} with no Prometheus API response (is ${base.href} a Prometheus server?)`,
    );
  }
  if (body.status !== "success") throw new PrometheusError(`Prometheus rejected the query (HTTP ${res.status}): ${body.error ?? "no error message"}`);
  const { resultType, result } = body.data ?? {};
  if (resultType === "scalar") return Number((result as [number, string])[1]);
  if (resultType !== "vector" || !Array.isArray(result)) throw new PrometheusError(`unexpected result type ${String(resultType)} from Prometheus`);
  if (result.length === 0) return undefined;
  if (result.length > 1) throw new PrometheusError(`the gate query returned ${result.length} series, expected one: ${expr}`);
  return Number((result[0] as { value: [number, string] }).value[1]);
}

/** --at as Prometheus takes it: RFC 3339 or Unix seconds. */
function parseAt(at: string | boolean | undefined): string | undefined {
  if (at === undefined) return undefined;
  if (typeof at !== "string") throw new UsageError("--at needs a value: an RFC 3339 time (2026-12-01T12:00:00Z) or Unix seconds");
  if (/^\d+(\.\d+)?$/.test(at)) return at;
  const ms = Date.parse(at);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(at) || Number.isNaN(ms))
    throw new UsageError(`--at must be an RFC 3339 time (2026-12-01T12:00:00Z) or Unix seconds, got ${JSON.stringify(at)}`);
  return String(ms / 1000);
}

function parseUrl(u: string | boolean | undefined): URL {
  if (typeof u !== "string") throw new UsageError("--prometheus URL is required (e.g. http://127.0.0.1:9090)");
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    throw new UsageError(`--prometheus must be an http(s) URL such as http://127.0.0.1:9090, got ${JSON.stringify(u)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--prometheus must be an http(s) URL, got ${JSON.stringify(u)}`);
  return url;
}

export interface GateResult {
  readonly name: string;
  readonly what: string;
  readonly value: number | null;
  readonly compare: Gate["compare"];
  readonly threshold: number;
  readonly unit: string;
  readonly verdict: Verdict;
}

export interface CanaryResult {
  readonly group: string;
  readonly stage: string;
  readonly position: string;
  readonly window: string;
  readonly requests: GateResult;
  readonly gates: readonly GateResult[];
  readonly verdict: Verdict;
}

/** Evaluate one canary's gates against Prometheus. */
export async function evaluateCanary(c: CanaryGates, base: URL, at: string | undefined): Promise<CanaryResult> {
  const judge = async (g: Gate): Promise<GateResult> => {
    const v = await instantQuery(base, g.expr, at);
    const value = v === undefined || Number.isNaN(v) ? null : v;
    return { name: g.name, what: g.what, value, compare: g.compare, threshold: g.threshold, unit: g.unit, verdict: gateVerdict(g, v) };
  };
  const r = await judge(c.requests);
  // No request at all counts 0; below the minimum the count is "insufficient", not a failure.
  const count = r.value ?? 0;
  const requests: GateResult = { ...r, value: count, verdict: gateVerdict(c.requests, count) === "pass" ? "pass" : "insufficient" };
  const judged = await Promise.all(c.gates.map(judge));
  // Too few requests: every gate's number is shown, none is a verdict.
  const gates = requests.verdict === "pass" ? judged : judged.map((g) => ({ ...g, verdict: "insufficient" as const }));
  return {
    group: c.group,
    stage: c.stage.stage,
    position: `${c.stage.index + 1} of ${c.stage.count}`,
    window: c.window,
    requests,
    gates,
    verdict: stageVerdict(
      requests.verdict,
      gates.map((g) => g.verdict),
    ),
  };
}

const shown = (v: number | null, unit: string) => (v === null ? "no data" : `${Number(v.toPrecision(4))}${unit === "ratio" || unit === "×" ? "" : ` ${unit}`}`);

/** The report a person reads: each canary, its stage, each gate with its number, limit and verdict. */
export function formatGates(results: readonly CanaryResult[], verdict: Verdict): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`canary ${r.group} · stage ${r.stage} (${r.position}) · window ${r.window}: ${r.verdict.toUpperCase()}`);
    const row = (g: GateResult, note = "") =>
      `  ${g.verdict.padEnd(12)} ${g.name.padEnd(15)} ${shown(g.value, g.unit)} (limit ${g.compare} ${g.threshold}${g.unit === "ratio" || g.unit === "×" ? "" : ` ${g.unit}`})${note} — ${g.what}`;
    lines.push(row(r.requests, r.requests.verdict === "pass" ? "" : ": too few to judge any gate"));
    for (const g of r.gates) lines.push(row(g));
  }
  lines.push(`verdict: ${verdict}`);
  return lines.join("\n") + "\n";
}

/** `npm run gate -- <argv>` on the project at `io.root`; its exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  try {
    const args = parseArgs(argv, { values: ["stack", "prometheus", "at", "group"], switches: ["json", "help"] });
    if (args.help) {
      io.stdout.write(USAGE);
      return GATE_EXIT.error;
    }
    if (typeof args.stack !== "string") throw new UsageError("--stack NAME is required (a Pulumi.<stack>.yaml of the project)");
    const base = parseUrl(args.prometheus);
    const at = parseAt(args.at);
    const canaries = stackGates(io.root, args.stack, typeof args.group === "string" ? args.group : undefined);
    const results: CanaryResult[] = [];
    for (const c of canaries) results.push(await evaluateCanary(c, base, at));
    const verdicts = results.map((r) => r.verdict);
    const verdict: Verdict = verdicts.includes("fail") ? "fail" : verdicts.includes("insufficient") ? "insufficient" : "pass";
    io.stdout.write(args.json === true ? JSON.stringify({ stack: args.stack, verdict, canaries: results }, null, 2) + "\n" : formatGates(results, verdict));
    return GATE_EXIT[verdict];
  } catch (e) {
    // Configuration, usage and connection errors: the message alone (exit 2), never a stack trace.
    const err = e as Error;
    if (err instanceof PrometheusError || err?.name === UsageError.name || isSettingsError(err)) {
      io.stderr.write(`error: ${err.message}\n`);
      return GATE_EXIT.error;
    }
    throw e;
  }
}

if (require.main === module) runCli(main, ROOT);
