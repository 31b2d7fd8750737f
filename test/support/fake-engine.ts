// A fake Pulumi engine for running the program through the real entry point,
// @pulumi/pulumi/cmd/run, as `pulumi preview` and `pulumi up` do: gRPC ResourceMonitor and
// Engine servers built from the stubs @pulumi/pulumi ships (proto/resource_grpc_pb,
// engine_grpc_pb), answering from the planner's fakes table, and cmd/run spawned with the
// command line, working directory and environment the Go language host gives it.
//
// Read at pulumi/pulumi tag v3.248.0:
// - sdk/nodejs/cmd/pulumi-language-nodejs/main.go: parseOptions (runtime options typescript,
//   tsconfig, nodeargs), execRuntime (env PULUMI_CONFIG, PULUMI_CONFIG_SECRET_KEYS,
//   PULUMI_NODEJS_TYPESCRIPT, PULUMI_NODEJS_TSCONFIG_PATH; nodeargs shlex-split before cmd/run),
//   constructArguments (--monitor --engine --sync --organization --project --root-directory
//   --stack --pwd [--dry-run] --parallel, then the entry point), constructConfig (keys as
//   <namespace>:config:<name>, encoding/json), locateModule (cmd/run resolved from the program folder).
// - pkg/resource/deploy/source_eval.go supportsFeatureID: the features the engine supports;
//   deployment.go generateURN: the URN it answers (tools/planner/urn.ts).
// Not simulated: unknown values in preview (a real preview leaves provider-computed outputs
// unknown; here they are the fakes' values in both modes, as the planner's), default providers,
// and the language host's own monitor proxy (it forwards calls unchanged).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as yaml from "js-yaml";
import { deserializeProperties, serializeProperties } from "@pulumi/pulumi/runtime/rpc";
import { maskSecrets, optionsEntry, type RecordedResource } from "../../tools/planner/record";
import type { Fakes } from "../../tools/planner/project";
import { goJson, type StackConfig } from "../../tools/planner/stackfile";
import { engineUrn } from "../../tools/planner/urn";
/* eslint-disable @typescript-eslint/no-require-imports -- the SDK's generated stubs have no ES exports for these */
const resourceGrpc = require("@pulumi/pulumi/proto/resource_grpc_pb");
const resourcePb = require("@pulumi/pulumi/proto/resource_pb");
const engineGrpc = require("@pulumi/pulumi/proto/engine_grpc_pb");
const engineProtoPb = require("@pulumi/pulumi/proto/engine_pb");
const providerPb = require("@pulumi/pulumi/proto/provider_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");
const { Struct } = require("google-protobuf/google/protobuf/struct_pb");
/* eslint-enable @typescript-eslint/no-require-imports */

/** source_eval.go supportsFeatureID at v3.248.0 (DisableResourceReferences/DisableOutputValues unset, as by default). */
const ENGINE_FEATURES = new Set([
  "secrets",
  "resourceReferences",
  "outputValues",
  "aliasSpecs",
  "replacementTrigger",
  "deletedWith",
  "replaceWith",
  "transforms",
  "invokeTransforms",
  "parameterization",
  "resourceHooks",
  "errorHooks",
  "sendsOptionsToHooks",
]);

/** What one run of the program sent the engine. */
export interface EngineRecording {
  resources: RecordedResource[];
  /** The root Stack's outputs (RegisterResourceOutputs), secrets masked. */
  outputs: Record<string, any> | undefined;
  /** Engine.Log messages: `SEVERITY: message`. */
  logs: string[];
  /** Calls the fake does not serve (a method the real engine has but this program should not need). */
  unexpected: string[];
  features: string[];
  rootResource?: string;
}

export interface RunResult extends EngineRecording {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawning cmd/run to its exit. */
  ms: number;
  argv: string[];
}

/** The runtime options of Pulumi.yaml (runtime.options), as the language host reads them. */
export function runtimeOptions(root: string): Record<string, unknown> {
  const doc = yaml.load(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8")) as { runtime?: string | { options?: Record<string, unknown> } };
  return typeof doc.runtime === "object" ? (doc.runtime.options ?? {}) : {};
}

/** github.com/google/shlex Split (what the host splits nodeargs with): whitespace-separated words, quotes and backslashes. */
export function shlexSplit(s: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < s.length) word += s[++i];
      else word += c;
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < s.length) word = (word ?? "") + s[++i];
    else word = (word ?? "") + c;
  }
  if (quote) throw new Error(`nodeargs ${JSON.stringify(s)}: unclosed ${quote}`);
  if (word !== undefined) words.push(word);
  return words;
}

/** PULUMI_CONFIG as constructConfig writes it: `<namespace>:config:<name>` → value, Go's encoding/json (sorted keys). */
export function pulumiConfigEnv(config: Record<string, string>): string {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) {
    const i = k.indexOf(":");
    out[`${k.slice(0, i)}:config:${k.slice(i + 1)}`] = v;
  }
  return goJson(out);
}

/** gRPC servers speaking the ResourceMonitor and Engine services for one run of a stack. */
async function startEngine(project: string, stack: StackConfig, fakes: Fakes): Promise<{ address: string; recording: EngineRecording; stop: () => void }> {
  const region = stack.config["aws:region"] ?? "us-east-1";
  const recording: EngineRecording = { resources: [], outputs: undefined, logs: [], unexpected: [], features: [] };
  const fail = (call: string, e: unknown, cb: grpc.sendUnaryData<any>) => {
    recording.unexpected.push(`${call}: ${(e as Error).message ?? e}`);
    cb({ code: grpc.status.INTERNAL, details: String((e as Error).message ?? e) });
  };
  // Every method of both services answers; one this fake does not serve is recorded and refused.
  const unserved = (service: Record<string, unknown>, name: string) =>
    Object.fromEntries(
      Object.keys(service).map((m) => [
        m,
        (call: any, cb?: grpc.sendUnaryData<any>) => {
          recording.unexpected.push(`${name}.${m}`);
          const err = { code: grpc.status.UNIMPLEMENTED, details: `the fake engine does not serve ${name}.${m}` };
          if (cb) cb(err);
          else call.destroy?.(err);
        },
      ]),
    );
  const monitor = {
    ...unserved(resourceGrpc.ResourceMonitorService, "ResourceMonitor"),
    supportsFeature(call: any, cb: grpc.sendUnaryData<any>) {
      const id = call.request.getId() as string;
      recording.features.push(id);
      const resp = new resourcePb.SupportsFeatureResponse();
      resp.setHassupport(ENGINE_FEATURES.has(id));
      cb(null, resp);
    },
    registerResource(call: any, cb: grpc.sendUnaryData<any>) {
      try {
        const req = call.request;
        const type = req.getType() as string;
        const name = req.getName() as string;
        const parent = (req.getParent() as string) || null;
        const urn = engineUrn(stack.stack, project, parent, type, name);
        const wire = req.getObject()?.toJavaScript() ?? {};
        const inputs = deserializeProperties(req.getObject());
        const custom = req.getCustom() as boolean;
        recording.resources.push({
          urn,
          type,
          name,
          custom,
          parent,
          provider: (req.getProvider() as string) || null,
          dependencies: [...new Set<string>(req.getDependenciesList())],
          props: maskSecrets(inputs),
          ...optionsEntry(req, parent), // the same normalisation as the planner's (an alias's own parent left out)
        });
        // A provider's Create echoes the inputs and adds what the cloud computes; the fakes table says what.
        const computed = custom ? fakes.computedOutputs(type, name, inputs, region) : {};
        const resp = new resourcePb.RegisterResourceResponse();
        resp.setUrn(urn);
        if (custom) resp.setId(fakes.fakeId(type, name, inputs));
        serializeProperties(`fake-engine ${urn}`, computed).then(
          (out) => {
            resp.setObject(Struct.fromJavaScript({ ...wire, ...out }));
            cb(null, resp);
          },
          (e) => fail(`RegisterResource ${urn}`, e, cb),
        );
      } catch (e) {
        fail("RegisterResource", e, cb);
      }
    },
    registerResourceOutputs(call: any, cb: grpc.sendUnaryData<any>) {
      const urn = call.request.getUrn() as string;
      if (urn === recording.rootResource) recording.outputs = maskSecrets(deserializeProperties(call.request.getOutputs()));
      cb(null, new Empty());
    },
    invoke(call: any, cb: grpc.sendUnaryData<any>) {
      const tok = call.request.getTok() as string;
      const answer = fakes.invokes[tok];
      if (!answer) return fail(`Invoke ${tok}`, new Error(`no fake for invoke ${tok} in tools/planner/fakes.ts`), cb);
      serializeProperties(`fake-engine ${tok}`, answer(deserializeProperties(call.request.getArgs()), region)).then(
        (out) => {
          const resp = new providerPb.InvokeResponse();
          resp.setReturn(Struct.fromJavaScript(out));
          cb(null, resp);
        },
        (e) => fail(`Invoke ${tok}`, e, cb),
      );
    },
    signalAndWaitForShutdown(_call: any, cb: grpc.sendUnaryData<any>) {
      cb(null, new Empty());
    },
  };
  const engine = {
    ...unserved(engineGrpc.EngineService, "Engine"),
    log(call: any, cb: grpc.sendUnaryData<any>) {
      const severity = ["DEBUG", "INFO", "WARNING", "ERROR"][call.request.getSeverity() as number] ?? "?";
      recording.logs.push(`${severity}: ${call.request.getMessage()}`);
      cb(null, new Empty());
    },
    getRootResource(_call: any, cb: grpc.sendUnaryData<any>) {
      const resp = new engineProtoPb.GetRootResourceResponse();
      resp.setUrn(recording.rootResource ?? "");
      cb(null, resp);
    },
    setRootResource(call: any, cb: grpc.sendUnaryData<any>) {
      recording.rootResource = call.request.getUrn();
      cb(null, new engineProtoPb.SetRootResourceResponse());
    },
  };
  const server = new grpc.Server();
  server.addService(resourceGrpc.ResourceMonitorService, monitor);
  server.addService(engineGrpc.EngineService, engine);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, recording, stop: () => server.forceShutdown() };
}

export interface RunOptions {
  /** The project folder (Pulumi.yaml; the language host's working directory and program directory). */
  root: string;
  project: string;
  stack: StackConfig;
  fakes: Fakes;
  dryRun: boolean;
  /** Runtime options to use instead of Pulumi.yaml's (e.g. the old `typescript: true`, for the bench). */
  options?: Record<string, unknown>;
  /** Added to the environment (the bench's probe through NODE_OPTIONS). */
  env?: NodeJS.ProcessEnv;
}

/** The node command line, environment and working directory the Go language host runs cmd/run with. */
export function hostCommand(o: RunOptions, monitor: string, engine: string, syncDir: string): { argv: string[]; env: NodeJS.ProcessEnv; cwd: string } {
  const opts = o.options ?? runtimeOptions(o.root);
  const runPath = require.resolve("@pulumi/pulumi/cmd/run", { paths: [o.root] }); // locateModule, from the program folder
  const env: NodeJS.ProcessEnv = {};
  // The CLI's own environment, without what a run of the test process's might leak into this one.
  for (const [k, v] of Object.entries(process.env)) if (!/^PULUMI_(NODEJS_|CONFIG)/.test(k)) env[k] = v;
  env.PULUMI_CONFIG = pulumiConfigEnv(o.stack.config);
  env.PULUMI_CONFIG_SECRET_KEYS = JSON.stringify([...o.stack.secretKeys].sort());
  if (opts.typescript ?? true) env.PULUMI_NODEJS_TYPESCRIPT = "true"; // parseOptions: typescript defaults to true
  if (typeof opts.tsconfig === "string") env.PULUMI_NODEJS_TSCONFIG_PATH = opts.tsconfig;
  const args = [
    ...shlexSplit(typeof opts.nodeargs === "string" ? opts.nodeargs : ""),
    runPath,
    ...["--monitor", monitor, "--engine", engine, "--sync", syncDir, "--organization", "organization", "--project", o.project],
    ...["--root-directory", o.root, "--stack", o.stack.stack, "--pwd", o.root],
    ...(o.dryRun ? ["--dry-run"] : []),
    ...["--parallel", String(os.availableParallelism() * 4)], // up.go defaultParallel: GOMAXPROCS × 4
    ".", // the entry point when Pulumi.yaml sets no main
  ];
  return { argv: args, env, cwd: o.root };
}

/** Run the program of `o.stack` through cmd/run against a fake engine; resolves when node exits. */
export async function runThroughEntryPoint(o: RunOptions): Promise<RunResult> {
  const { address, recording, stop } = await startEngine(o.project, o.stack, o.fakes);
  // The host's pipes for synchronous invokes live here; the SDK opens them only for a sync invoke (none expected).
  const syncDir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-engine-sync-"));
  const { argv, env, cwd } = hostCommand(o, address, address, syncDir);
  Object.assign(env, o.env);
  const t0 = process.hrtime.bigint();
  try {
    const child = spawn(process.execPath, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    });
    return { ...recording, code, stdout, stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6, argv: [process.execPath, ...argv] };
  } finally {
    stop();
    fs.rmSync(syncDir, { recursive: true, force: true });
  }
}

/** Differences between the planner's and the engine's registrations, one readable line each (empty: none). */
export function compareRegistrations(planned: RecordedResource[], registered: RecordedResource[]): string[] {
  const problems: string[] = [];
  const byUrn = (rs: RecordedResource[], side: string) => {
    const m = new Map<string, RecordedResource>();
    for (const r of rs) {
      if (m.has(r.urn)) problems.push(`${side} registered ${r.urn} twice`);
      m.set(r.urn, r);
    }
    return m;
  };
  const a = byUrn(planned, "the planner");
  const b = byUrn(registered, "cmd/run");
  for (const urn of a.keys()) if (!b.has(urn)) problems.push(`missing through cmd/run: ${urn}`);
  for (const urn of b.keys()) if (!a.has(urn)) problems.push(`not in the plan: ${urn}`);
  const norm = (r: RecordedResource) => ({ ...r, dependencies: [...r.dependencies].sort() });
  for (const [urn, p] of a) {
    const r = b.get(urn);
    if (!r) continue;
    const x = norm(p);
    const y = norm(r);
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)]) as Set<keyof RecordedResource>) {
      const l = canonical(x[k]);
      const rr = canonical(y[k]);
      if (l !== rr) problems.push(`${urn} ${k}: planner ${clip(l)} ≠ cmd/run ${clip(rr)}`);
    }
  }
  return problems;
}

/** JSON with object keys sorted: a protobuf Struct is a map, its key order is not part of the registration. */
function canonical(v: unknown): string | undefined {
  return JSON.stringify(v, (_k, x) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, x[k]]),
        )
      : x,
  );
}

function clip(s: string | undefined, n = 300): string {
  return s === undefined ? "(absent)" : s.length > n ? `${s.slice(0, n)}…` : s;
}
