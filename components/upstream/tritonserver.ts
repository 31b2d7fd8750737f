// Everything this repository knows about the `tritonserver` command line, in one place:
// the real flags (server: src/command_line_parser.cc, checked against
// ../shared/reference/upstream-facts.md), their value formats, defaults and deprecations;
// a builder from typed options to an argument list; and the parser that builder checks its
// own output with. A Triton version bump is an edit to FLAGS below and nowhere else.
//
// Anything not in FLAGS is refused with an error naming the flag, so a flag that only
// exists in blog posts can never reach a pod spec.

/** How a flag's value is written. Booleans: tritonserver accepts true/false, on/off, 1/0; we emit true/false. */
export type ValueKind =
  | { readonly kind: "none" }
  | { readonly kind: "bool" }
  | { readonly kind: "int"; readonly min?: number; readonly max?: number }
  | { readonly kind: "number"; readonly min?: number }
  | { readonly kind: "enum"; readonly values: readonly string[] }
  | { readonly kind: "string" }
  | { readonly kind: "format"; readonly re: RegExp; readonly format: string };

export interface FlagSpec {
  /** The flag as typed, with its leading dashes. */
  readonly name: string;
  readonly value: ValueKind;
  /** Upstream default, as tritonserver prints it ("—" when there is none). */
  readonly default: string;
  /** May appear more than once. */
  readonly repeatable?: boolean;
  /** Another spelling of the same flag. */
  readonly aliasOf?: string;
  /** Still parsed upstream but deprecated: what to use instead. */
  readonly deprecated?: { readonly replacement: string };
}

const bool = { kind: "bool" } as const;
const int = (min = 0, max?: number) => ({ kind: "int", min, max }) as const;
const str = { kind: "string" } as const;
const fmt = (re: RegExp, format: string) => ({ kind: "format", re, format }) as const;

/** Settings `--metrics-config` accepts (setting=value). */
export const METRICS_CONFIG_SETTINGS = ["histogram_latencies", "summary_latencies", "summary_quantiles", "counter_latencies"] as const;

/** The real tritonserver flags. */
export const FLAGS: readonly FlagSpec[] = [
  { name: "--model-repository", value: str, default: "required", repeatable: true },
  { name: "--model-store", value: str, default: "required", repeatable: true, aliasOf: "--model-repository" },
  { name: "--model-control-mode", value: { kind: "enum", values: ["none", "poll", "explicit"] }, default: "none" },
  { name: "--load-model", value: fmt(/^[^\s=]+$/, "a model name (or * alone for all)"), default: "—", repeatable: true },
  { name: "--repository-poll-secs", value: int(1), default: "15" },
  { name: "--disable-auto-complete-config", value: { kind: "none" }, default: "off" },
  { name: "--strict-model-config", value: bool, default: "false", deprecated: { replacement: "--disable-auto-complete-config" } },
  { name: "--strict-readiness", value: bool, default: "true" },
  { name: "--exit-on-error", value: bool, default: "true" },
  { name: "--exit-timeout-secs", value: int(0), default: "30" },
  { name: "--http-port", value: int(1, 65535), default: "8000" },
  { name: "--grpc-port", value: int(1, 65535), default: "8001" },
  { name: "--metrics-port", value: int(1, 65535), default: "8002" },
  { name: "--allow-http", value: bool, default: "true" },
  { name: "--allow-grpc", value: bool, default: "true" },
  { name: "--allow-metrics", value: bool, default: "true" },
  { name: "--allow-gpu-metrics", value: bool, default: "true" },
  { name: "--allow-cpu-metrics", value: bool, default: "true" },
  { name: "--metrics-interval-ms", value: { kind: "number", min: 1 }, default: "2000" },
  {
    name: "--metrics-config",
    value: fmt(new RegExp(`^(${METRICS_CONFIG_SETTINGS.join("|")})=\\S+$`), `setting=value with setting one of ${METRICS_CONFIG_SETTINGS.join(", ")}`),
    default: "—",
    repeatable: true,
  },
  { name: "--log-verbose", value: int(0), default: "0" },
  { name: "--log-info", value: bool, default: "true" },
  { name: "--log-warning", value: bool, default: "true" },
  { name: "--log-error", value: bool, default: "true" },
  { name: "--log-format", value: { kind: "enum", values: ["default", "ISO8601"] }, default: "default" },
  { name: "--log-file", value: str, default: "console" },
  { name: "--cuda-memory-pool-byte-size", value: fmt(/^\d+:\d+$/, "<gpu_id>:<bytes>"), default: "64 MiB per GPU", repeatable: true },
  { name: "--pinned-memory-pool-byte-size", value: int(0), default: "268435456" },
  { name: "--cache-config", value: fmt(/^[a-z_]+,[a-z_]+=\S+$/, "<cache>,<setting>=<value> such as local,size=1048576"), default: "off", repeatable: true },
  { name: "--response-cache-byte-size", value: int(0), default: "0", deprecated: { replacement: "--cache-config=local,size=<bytes>" } },
  { name: "--rate-limit", value: { kind: "enum", values: ["off", "execution_count"] }, default: "off" },
  { name: "--rate-limit-resource", value: fmt(/^[^:\s]+:\d+(:\d+)?$/, "<name>:<count>[:<device>]"), default: "—", repeatable: true },
  { name: "--backend-config", value: fmt(/^[^,\s]+,[^=\s]+=\S*$/, "<backend>,<setting>=<value>"), default: "—", repeatable: true },
  { name: "--http-header-forward-pattern", value: str, default: "—" },
  { name: "--grpc-header-forward-pattern", value: str, default: "—" },
  { name: "--model-load-thread-count", value: int(1), default: "4" },
  { name: "--buffer-manager-thread-count", value: int(0), default: "0" },
  { name: "--id", value: str, default: "triton" },
  { name: "--min-supported-compute-capability", value: { kind: "number", min: 0 }, default: "7.5" },
  { name: "--trace-config", value: fmt(/^([a-z]+,)?[a-z_]+=\S+$/, "[mode,]setting=value"), default: "—", repeatable: true },
];

const BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

/** The canonical name of a flag (aliases resolved). */
function canonical(spec: FlagSpec): string {
  return spec.aliasOf ?? spec.name;
}

export class TritonFlagError extends Error {
  constructor(
    readonly flag: string,
    reason: string,
  ) {
    super(`tritonserver flag ${flag}: ${reason}`);
    this.name = "TritonFlagError";
  }
}

/** One flag occurrence of an argument list. */
export interface ParsedFlag {
  /** Canonical flag name (aliases resolved). */
  readonly name: string;
  /** The value as written; undefined for flags without a value. */
  readonly value?: string;
}

function checkValue(spec: FlagSpec, value: string | undefined): string | undefined {
  const v = spec.value;
  if (v.kind === "none") return value === undefined ? undefined : "takes no value";
  if (value === undefined || value === "") return "needs a value (--flag=value)";
  switch (v.kind) {
    case "bool":
      return /^(true|false|on|off|1|0)$/.test(value) ? undefined : `value ${JSON.stringify(value)} must be true or false`;
    case "int": {
      if (!/^\d+$/.test(value)) return `value ${JSON.stringify(value)} must be a non-negative integer`;
      const n = Number(value);
      if (v.min !== undefined && n < v.min) return `value ${value} must be >= ${v.min}`;
      if (v.max !== undefined && n > v.max) return `value ${value} must be <= ${v.max}`;
      return undefined;
    }
    case "number": {
      if (!/^\d+(\.\d+)?$/.test(value)) return `value ${JSON.stringify(value)} must be a number`;
      return v.min !== undefined && Number(value) < v.min ? `value ${value} must be >= ${v.min}` : undefined;
    }
    case "enum":
      return v.values.includes(value) ? undefined : `value ${JSON.stringify(value)} must be one of ${v.values.join(", ")}`;
    case "string":
      return /\s/.test(value) ? `value ${JSON.stringify(value)} must not contain whitespace` : undefined;
    case "format":
      return v.re.test(value) ? undefined : `value ${JSON.stringify(value)} must be ${v.format}`;
  }
}

/** Closest real flag to an unknown one, for the error message (shared prefix of the words). */
function suggestion(flag: string): string {
  const words = flag.replace(/^--/, "").split("-");
  let best: { name: string; score: number } | undefined;
  for (const f of FLAGS) {
    if (f.aliasOf || f.deprecated) continue;
    const fw = f.name.replace(/^--/, "").split("-");
    let score = 0;
    while (score < words.length && score < fw.length && words[score] === fw[score]) score++;
    if (score >= 2 && (!best || score > best.score)) best = { name: f.name, score };
  }
  return best ? ` (did you mean ${best.name}?)` : "";
}

/**
 * Parse one argument (`--flag=value` or `--flag`) against FLAGS. Throws TritonFlagError
 * naming the flag when it is not a real flag, is deprecated (unless allowDeprecated), or its
 * value is malformed.
 */
export function parseFlag(arg: string, opts: { allowDeprecated?: boolean } = {}): ParsedFlag {
  if (!arg.startsWith("--")) throw new TritonFlagError(arg, "is not a --flag (write arguments as --flag=value)");
  const eq = arg.indexOf("=");
  const name = eq < 0 ? arg : arg.slice(0, eq);
  const value = eq < 0 ? undefined : arg.slice(eq + 1);
  const spec = BY_NAME.get(name);
  if (!spec) throw new TritonFlagError(name, `is not a tritonserver flag${suggestion(name)}`);
  if (spec.deprecated && !opts.allowDeprecated) throw new TritonFlagError(name, `is deprecated upstream; use ${spec.deprecated.replacement}`);
  const problem = checkValue(spec, value);
  if (problem) throw new TritonFlagError(name, problem);
  return value === undefined ? { name: canonical(spec) } : { name: canonical(spec), value };
}

/** Parse an argument list; non-repeatable flags may appear once. */
export function parseFlags(args: readonly string[]): ParsedFlag[] {
  const seen = new Set<string>();
  return args.map((a) => {
    const f = parseFlag(a);
    const spec = BY_NAME.get(f.name)!;
    if (!spec.repeatable && seen.has(f.name)) throw new TritonFlagError(f.name, "is given more than once");
    seen.add(f.name);
    return f;
  });
}

// ---- typed options → arguments -------------------------------------------------------

/** What a serving group sets on tritonserver. Everything else is fixed production policy. */
export interface TritonServerOptions {
  /** --model-repository: s3://bucket/prefix or a mounted path. */
  readonly modelRepository: string;
  /** none | poll | explicit. @default "explicit" */
  readonly modelControlMode: "none" | "poll" | "explicit";
  /** Models loaded at start-up, one --load-model each (explicit mode only). */
  readonly models: readonly string[];
  /** --exit-timeout-secs: must stay below the pod's terminationGracePeriodSeconds. */
  readonly exitTimeoutSecs: number;
  /** GPUs in the pod; one --cuda-memory-pool-byte-size per GPU id. */
  readonly gpuCount: number;
  /** CUDA memory pool per GPU, bytes. */
  readonly cudaMemoryPoolByteSize: number;
  /** --pinned-memory-pool-byte-size, bytes. */
  readonly pinnedMemoryPoolByteSize: number;
  /** --http-header-forward-pattern: regex of request headers forwarded to backends. */
  readonly httpHeaderForwardPattern: string;
  /** --log-verbose. */
  readonly logVerbose: number;
  /** Further real flags, `--flag=value` each; validated against FLAGS. */
  readonly extraArgs: readonly string[];
}

/** Flags the builder owns: extra args may not set them (they would contradict the typed options or the port contract). */
export const OWNED_FLAGS: readonly string[] = [
  "--model-repository",
  "--model-control-mode",
  "--load-model",
  "--strict-readiness",
  "--exit-on-error",
  "--exit-timeout-secs",
  "--log-verbose",
  "--log-format",
  "--http-port",
  "--grpc-port",
  "--metrics-port",
  "--allow-http",
  "--allow-grpc",
  "--allow-metrics",
  "--allow-gpu-metrics",
  "--cuda-memory-pool-byte-size",
  "--pinned-memory-pool-byte-size",
  "--http-header-forward-pattern",
];
const OWNED = new Set(OWNED_FLAGS);

/**
 * What is wrong with a list of extra arguments: one error per bad argument, each naming the
 * flag as written: unknown, deprecated, malformed, repeated, or owned by the typed options.
 */
export function extraArgsErrors(extraArgs: readonly string[]): { index: number; error: TritonFlagError }[] {
  const errors: { index: number; error: TritonFlagError }[] = [];
  const seen = new Set<string>();
  extraArgs.forEach((arg, index) => {
    try {
      const f = parseFlag(arg);
      const written = arg.split("=")[0];
      if (OWNED.has(f.name)) throw new TritonFlagError(written, "is set from the group's typed settings; change those instead of adding it to extraArgs");
      if (!BY_NAME.get(f.name)!.repeatable && seen.has(f.name)) throw new TritonFlagError(written, "is given more than once");
      seen.add(f.name);
    } catch (e) {
      if (!(e instanceof TritonFlagError)) throw e;
      errors.push({ index, error: e });
    }
  });
  return errors;
}

/**
 * The tritonserver argument list for a group. Pure. Throws TritonFlagError for a bad extra
 * argument, and checks everything it emits with parseFlags, so nothing unknown is emitted.
 */
export function tritonServerArgs(o: TritonServerOptions): string[] {
  const errors = extraArgsErrors(o.extraArgs).map((x) => x.error);
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new Error(`invalid tritonserver extra arguments:\n  - ${errors.map((e) => e.message).join("\n  - ")}`);
  if (o.modelControlMode === "explicit" && o.models.length === 0) throw new TritonFlagError("--load-model", "explicit model control needs at least one model");
  if (o.modelControlMode !== "explicit" && o.models.length > 0)
    throw new TritonFlagError("--load-model", `only works with --model-control-mode=explicit, not ${o.modelControlMode}`);
  const args = [
    `--model-repository=${o.modelRepository}`,
    // explicit: only the listed models load, so a stray folder in the bucket never goes live.
    `--model-control-mode=${o.modelControlMode}`,
    ...o.models.map((m) => `--load-model=${m}`),
    // ready only when every loaded model is ready: no traffic to a half-loaded server.
    "--strict-readiness=true",
    // a model that fails to load kills the server, so the rollout stops instead of serving a subset.
    "--exit-on-error=true",
    // drain in-flight requests on SIGTERM, but finish before the kubelet's SIGKILL.
    `--exit-timeout-secs=${o.exitTimeoutSecs}`,
    // per-request logging at scale fills the node's disk and costs latency.
    `--log-verbose=${o.logVerbose}`,
    // timestamps a log pipeline can parse and order across pods.
    "--log-format=ISO8601",
    // ports are a contract with the Services, the gateway and the scrape config.
    "--http-port=8000",
    "--grpc-port=8001",
    "--allow-metrics=true",
    "--allow-gpu-metrics=false", // dcgm-exporter runs on every GPU node: no second, embedded DCGM per pod (server#7851)
    "--metrics-port=8002",
    // quantile summaries: tail latency for alerts (no histograms exist by default).
    "--metrics-config=summary_latencies=true",
    // pre-allocated pools: no cudaMalloc / pinned allocation on the request path.
    ...Array.from({ length: o.gpuCount }, (_, gpu) => `--cuda-memory-pool-byte-size=${gpu}:${o.cudaMemoryPoolByteSize}`),
    `--pinned-memory-pool-byte-size=${o.pinnedMemoryPoolByteSize}`,
    // the request id reaches backends, so a slow request can be traced end to end.
    `--http-header-forward-pattern=${o.httpHeaderForwardPattern}`,
    ...o.extraArgs,
  ];
  parseFlags(args);
  return args;
}

/**
 * The inverse of tritonServerArgs: typed options from an argument list it emitted.
 * Throws TritonFlagError for anything it could not have emitted.
 */
export function parseTritonServerArgs(args: readonly string[]): TritonServerOptions {
  const flags = parseFlags(args);
  const single = (name: string): string | undefined => flags.find((f) => f.name === name)?.value;
  const need = (name: string): string => {
    const v = single(name);
    if (v === undefined) throw new TritonFlagError(name, "is missing");
    return v;
  };
  const pools = flags.filter((f) => f.name === "--cuda-memory-pool-byte-size").map((f) => f.value!.split(":").map(Number));
  pools.forEach(([gpu], i) => {
    if (gpu !== i) throw new TritonFlagError("--cuda-memory-pool-byte-size", `expected GPU ${i}, got ${gpu}`);
  });
  if (new Set(pools.map(([, bytes]) => bytes)).size > 1) throw new TritonFlagError("--cuda-memory-pool-byte-size", "differs between GPUs");
  // The builder emits --http-header-forward-pattern last of its own flags; extra args follow.
  const lastOwned = flags.findIndex((f) => f.name === "--http-header-forward-pattern");
  return {
    modelRepository: need("--model-repository"),
    modelControlMode: need("--model-control-mode") as TritonServerOptions["modelControlMode"],
    models: flags.filter((f) => f.name === "--load-model").map((f) => f.value!),
    exitTimeoutSecs: Number(need("--exit-timeout-secs")),
    gpuCount: pools.length,
    cudaMemoryPoolByteSize: pools.length ? pools[0][1] : 0,
    pinnedMemoryPoolByteSize: Number(need("--pinned-memory-pool-byte-size")),
    httpHeaderForwardPattern: need("--http-header-forward-pattern"),
    logVerbose: Number(need("--log-verbose")),
    extraArgs: args.slice(lastOwned + 1),
  };
}
