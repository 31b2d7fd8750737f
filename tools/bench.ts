// npm run bench: what the offline plan of prod costs beside its floor.
//   plan  = `node -r ./tools/register.cjs tools/plan.ts --stack prod` (what `npm run plan -- --stack prod`
//           runs, without npm's own start-up, which is the same for any script);
//   floor = a node process that only loads the same Pulumi SDK module files the plan loaded, through the same loader;
//   up    = the same program run through `pulumi up`'s entry point (@pulumi/pulumi/cmd/run, spawned
//           as the language host spawns it, Pulumi.yaml's runtime options) against the tests' fake
//           engine (tools/bench/entry-point.ts; its time is cmd/run's, spawn to exit).
// Prints the median wall and CPU time of each over several runs and the ratios.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as yaml from "js-yaml";
import { copyProject, ROOT } from "./planner/project";
import { CONFIGMAP_MAX_BYTES, shippedBootstrapText } from "../components/gateway/builders";

const PROBE = path.join(__dirname, "bench", "probe.cjs");
// 11 by default: on a shared 2-core VM single runs of the same command vary by 20 % and
// more, and with 7 the medians (and so the ratio) still moved by a few hundredths between runs.
const RUNS = Number(process.env.BENCH_RUNS ?? 11);
if (!Number.isInteger(RUNS) || RUNS < 1) {
  console.error(`error: BENCH_RUNS must be an integer >= 1, got ${JSON.stringify(process.env.BENCH_RUNS)}`);
  process.exit(2);
}

interface Probe {
  modules: string[];
  maxRssKiB: number;
  /** CPU time (user + system) of the measured process: on a shared VM steadier than its wall time. */
  cpuMs: number;
}

/** `selfTimed`: the command prints `{ms, probe}` of what it measured (tools/bench/entry-point.ts). */
function timed(args: string[], selfTimed = false): { ms: number; probe?: Probe } {
  const probeFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-")), "probe.json");
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ["--require", PROBE, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, BENCH_PROBE_FILE: probeFile },
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  if (selfTimed) return JSON.parse(r.stdout) as { ms: number; probe?: Probe };
  const probe = fs.existsSync(probeFile) ? (JSON.parse(fs.readFileSync(probeFile, "utf8")) as Probe) : undefined;
  return { ms, probe };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export interface Measured {
  median: number;
  /** Median CPU time, when the probe reported it. */
  cpu?: number;
  probe?: Probe;
}

/**
 * Measure commands in alternation (a, b, a, b, …) after one warm-up each, so that every
 * command sees the same machine: on a shared VM the noise drifts over seconds, and
 * measuring one command's runs after the other's skews their ratio.
 */
export function measureInterleaved(cases: { label: string; args: string[]; selfTimed?: boolean }[], runs = RUNS): Measured[] {
  for (const c of cases) timed(c.args, c.selfTimed); // warm-up: file-system cache and the transpile cache
  const times = cases.map(() => [] as number[]);
  const cpus = cases.map(() => [] as number[]);
  const probes: (Probe | undefined)[] = cases.map(() => undefined);
  for (let i = 0; i < runs; i++) {
    cases.forEach((c, j) => {
      const r = timed(c.args, c.selfTimed);
      times[j].push(r.ms);
      if (r.probe?.cpuMs !== undefined) cpus[j].push(r.probe.cpuMs);
      probes[j] = r.probe;
    });
  }
  return cases.map((c, j) => {
    const m = median(times[j]);
    const cpu = cpus[j].length === times[j].length ? median(cpus[j]) : undefined;
    const mem = probes[j] ? `, peak ${(probes[j].maxRssKiB / 1024).toFixed(0)} MiB` : "";
    const cpuText = cpu === undefined ? "" : `, CPU ${cpu.toFixed(0)} ms`;
    console.log(`${c.label.padEnd(10)} median ${m.toFixed(0).padStart(6)} ms${cpuText}${mem}  (runs: ${times[j].map((x) => x.toFixed(0)).join(", ")})`);
    return { median: m, cpu, probe: probes[j] };
  });
}

/** The command that runs a stack through `pulumi up`'s entry point against the fake engine (update mode). */
export function entryPointArgs(stack: string, extra: string[] = []): string[] {
  return ["--require", path.join(ROOT, "tools", "register.cjs"), path.join(__dirname, "bench", "entry-point.ts"), "--stack", stack, ...extra];
}

/** The command that plans a stack of a project folder (what `npm run plan -- --stack S` runs). */
export function planArgs(root: string, stack: string): string[] {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "bench-out-"));
  return ["--require", path.join(root, "tools", "register.cjs"), path.join(root, "tools", "plan.ts"), "--stack", stack, "--out", out];
}

/**
 * The prod stack with `n` serving groups: copies of its first group under new names (the
 * first keeps its name, which the gateway's defaultGroup names), on `n` times its GPU nodes.
 * With `modelsPerGroup`, each group loads that many models of its own (`<model>_<group>_<j>`,
 * cycling through the template's models, contracts kept), so the gateway routes groups × models names.
 */
export function scaledProdStack(n: number, modelsPerGroup?: number): string {
  const doc = yaml.load(fs.readFileSync(path.join(ROOT, "Pulumi.prod.yaml"), "utf8")) as { config: Record<string, any> };
  const triton = doc.config["triton-platform:triton"];
  const [template] = triton.groups;
  // A model entry is a bare name or a contract (a mapping with its name): copies keep the contract under the new name.
  const entries: (string | { name: string })[] = template.models ?? [];
  const renamed = (e: string | { name: string }, suffix: string) =>
    typeof e === "string" ? `${e}${suffix}` : { ...structuredClone(e), name: `${e.name}${suffix}` };
  triton.groups = Array.from({ length: n }, (_, i) => ({
    ...structuredClone(template),
    name: i === 0 ? template.name : `${template.name}-${String(i).padStart(3, "0")}`,
    ...(modelsPerGroup !== undefined && entries.length > 0
      ? { models: Array.from({ length: modelsPerGroup }, (_, j) => renamed(entries[j % entries.length], `_${i}_${j}`)) }
      : {}),
  }));
  // As many GPU nodes per group as the stack gives its one group, or the capacity plan refuses the stack.
  const scaling = doc.config["triton-platform:gpu"].scaling as Record<string, number>;
  for (const k of Object.keys(scaling)) scaling[k] *= n;
  return yaml.dump(doc, { lineWidth: -1 });
}

/** Models each group of the scaled stacks loads: the gateway's routes grow with groups × models. */
export const SCALE_MODELS_PER_GROUP = 10;

/** The gateway ConfigMap of a plan's out/<stack>/resources.json: its bytes as Kubernetes counts them, and the bootstrap's JSON bytes. */
export function gatewayConfigMapSize(outDir: string, stack: string): { configMapBytes: number; bootstrapBytes: number; packed: boolean } | undefined {
  const resources = JSON.parse(fs.readFileSync(path.join(outDir, stack, "resources.json"), "utf8")) as { type: string; props: Record<string, any> }[];
  for (const r of resources) {
    if (r.type !== "kubernetes:core/v1:ConfigMap") continue;
    const text = shippedBootstrapText(r.props);
    if (text === undefined) continue;
    // ValidateConfigMap counts data values as strings and binaryData values decoded.
    const bytes = (o: Record<string, unknown> | undefined, decode: boolean) =>
      Object.values(o ?? {}).reduce<number>((n, v) => n + (decode ? Buffer.from(String(v), "base64").length : Buffer.byteLength(String(v), "utf8")), 0);
    const configMapBytes = bytes(r.props.data, false) + bytes(r.props.binaryData, true);
    return { configMapBytes, bootstrapBytes: Buffer.byteLength(text, "utf8"), packed: r.props.binaryData !== undefined };
  }
  return undefined;
}

function scale(): void {
  const sizes = [10, 100];
  console.log(
    `\nscale: prod with ${sizes.join(" and ")} serving groups of ${SCALE_MODELS_PER_GROUP} models each (target: ${sizes[1]} cost at most 3x ${sizes[0]})`,
  );
  const cases = sizes.map((n) => ({
    label: `${n} groups`,
    args: planArgs(copyProject(ROOT, { prod: scaledProdStack(n, SCALE_MODELS_PER_GROUP) }), "prod"),
  }));
  const results = measureInterleaved(cases, Math.min(RUNS, 5));
  console.log(`scale ratio ${(results[1].median / results[0].median).toFixed(2)} (time of ${sizes[1]} / time of ${sizes[0]})`);
  cases.forEach((c) => {
    const size = gatewayConfigMapSize(c.args[c.args.length - 1], "prod");
    if (!size) return console.log(`${c.label.padEnd(10)} no gateway ConfigMap`);
    const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
    console.log(
      `${c.label.padEnd(10)} gateway ConfigMap ${kib(size.configMapBytes)} of ${kib(CONFIGMAP_MAX_BYTES)} (${((100 * size.configMapBytes) / CONFIGMAP_MAX_BYTES).toFixed(1)} %), ` +
        `bootstrap ${kib(size.bootstrapBytes)} ${size.packed ? "packed (gzip, binaryData)" : "plain (data)"}`,
    );
  });
}

function main(): void {
  console.log(`offline plan of prod vs floor, ${RUNS} runs each, alternating (node ${process.version}, ${os.cpus().length} cores)`);
  // One plan first, to learn which SDK module files it loads: the floor loads exactly those.
  const probe = timed(planArgs(ROOT, "prod")).probe;
  const modules = probe?.modules ?? [];
  if (modules.length === 0) throw new Error("the probe saw no Pulumi SDK modules in the plan process");
  const listFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-")), "modules.json");
  fs.writeFileSync(listFile, JSON.stringify(modules));
  const [plan, floor, up] = measureInterleaved([
    { label: "plan", args: planArgs(ROOT, "prod") },
    // Through the plan's loader too: tools/register.cjs defers two of the SDK's requires (TypeScript and
    // arborist, for function serialization only), so the plan does not load them and neither may its floor.
    {
      label: "floor",
      args: ["--require", path.join(ROOT, "tools", "register.cjs"), "-e", `for (const m of require(${JSON.stringify(listFile)})) require(m);`],
    },
    { label: "up", args: entryPointArgs("prod"), selfTimed: true },
  ]);
  console.log(`floor loads the ${modules.length} Pulumi SDK module files the plan loaded`);
  const floorCpu = floor.cpu !== undefined && plan.cpu !== undefined ? `, CPU ${(plan.cpu / floor.cpu).toFixed(2)}` : "";
  console.log(`ratio      ${(plan.median / floor.median).toFixed(2)}${floorCpu} (plan / floor; target <= 1.5)`);
  const cpuRatio = up.cpu !== undefined && plan.cpu !== undefined ? `, CPU ${(up.cpu / plan.cpu).toFixed(2)}` : "";
  console.log(`up ratio   ${(up.median / plan.median).toFixed(2)}${cpuRatio} (cmd/run through the fake engine / plan; target <= 1.5)`);
}

if (require.main === module) {
  main();
  if (!process.argv.includes("--no-scale")) scale();
}
