// Everything this repository knows about the `tritonserver` command line, in one place: every
// option of every supported release, its value form as the release's parser accepts it, its
// deprecation; a builder from typed options to an argument list; and the parser that builder
// checks its own output with.
//
// Source: triton-inference-server/server, src/command_line_parser.cc (TritonParser::SetupOptions
// for the options, TritonParser::Parse and the Parse* helpers for the values) and
// src/restricted_features.h (the restricted API categories), read with git on every release
// branch r25.01 … r26.08 (2026-12-01). Between those branches the parser only gained options
// (`since` below) and changed help texts; no option was removed or re-parsed.
// test/tritonserver-options-match-upstream.test.ts compares this table with
// ../shared/reference/tritonserver-options/r<yy.mm>.tsv. How to add a release: CONTRIBUTING.md.
//
// Anything not in FLAGS (or not yet in the image's release) is refused with an error naming the
// flag, so a flag that only exists in blog posts, or only in a later release, never reaches a pod.

/** Releases whose parser FLAGS was read from (branch r<yy.mm> = container release <yy.mm>), oldest first. */
export const TRITON_OPTION_RELEASES = [
  "25.01",
  "25.02",
  "25.03",
  "25.04",
  "25.05",
  "25.06",
  "25.07",
  "25.08",
  "25.09",
  "25.10",
  "25.11",
  "25.12",
  "26.01",
  "26.02",
  "26.03",
  "26.04",
  "26.05",
  "26.06",
  "26.07",
  "26.08",
] as const;
const FIRST_RELEASE = TRITON_OPTION_RELEASES[0];
const NEWEST_RELEASE = TRITON_OPTION_RELEASES[TRITON_OPTION_RELEASES.length - 1];
const KNOWN_RELEASES: ReadonlySet<string> = new Set(TRITON_OPTION_RELEASES);

/** True when the option table covers this container release (`yy.mm`). */
export function isTritonOptionRelease(release: string): boolean {
  return KNOWN_RELEASES.has(release);
}

/** How the option table's release range reads in errors. */
export const TRITON_OPTION_RANGE = `${FIRST_RELEASE} to ${NEWEST_RELEASE}`;

/**
 * How a flag's value is written, as the release's parser accepts it. Where the parser accepts
 * a value that cannot mean anything (a negative port, a fraction it silently truncates), the
 * check is stricter and says so.
 */
export type ValueKind =
  | { readonly kind: "none" }
  | { readonly kind: "bool" }
  | { readonly kind: "int"; readonly min: number; readonly max: bigint }
  | { readonly kind: "number"; readonly min?: number }
  | { readonly kind: "enum"; readonly values: readonly string[]; readonly caseInsensitive: boolean }
  | { readonly kind: "string" }
  | { readonly kind: "format"; readonly re: RegExp; readonly format: string }
  | { readonly kind: "parsed"; readonly format: string; readonly check: (value: string) => string | undefined };

/** The argument kind SetupOptions declares (`Option::ArgBool`, …) or its value format string. */
export type UpstreamArg = "ArgNone" | "ArgBool" | "ArgInt" | "ArgFloat" | "ArgStr" | `<${string}`;

export interface FlagSpec {
  /** The flag as typed, with its leading dashes. */
  readonly name: string;
  /** What SetupOptions declares: the argument kind, or the value format for formatted options. */
  readonly arg: UpstreamArg;
  readonly value: ValueKind;
  /** Upstream default, as tritonserver documents it ("—" when there is none). */
  readonly default: string;
  /** First release whose parser has it. @default the table's first release */
  readonly since?: string;
  /** May appear more than once. */
  readonly repeatable?: boolean;
  /** Another spelling of the same flag. */
  readonly aliasOf?: string;
  /** Still parsed upstream but deprecated (its help text says so): what to use instead. */
  readonly deprecated?: { readonly replacement: string };
  /** A real option no serving pod can use, and why (refused everywhere). */
  readonly unusable?: string;
}

const INT32_MAX = 2_147_483_647n;
const INT64_MAX = 9_223_372_036_854_775_807n;
const bool = { kind: "bool" } as const;
/** ParseOption<int> (std::stoi): a 32-bit integer. `min` is ours where a smaller value means nothing. */
const int = (min = 0, max: bigint = INT32_MAX) => ({ kind: "int", min, max }) as const;
/** ParseOption<int64_t> (std::stoll). */
const int64 = (min = 0) => ({ kind: "int", min, max: INT64_MAX }) as const;
const str = { kind: "string" } as const;
const fmt = (re: RegExp, format: string) => ({ kind: "format", re, format }) as const;
const parsed = (format: string, check: (value: string) => string | undefined) => ({ kind: "parsed", format, check }) as const;
/** A value std::transform(::tolower)s before comparing. */
const oneOfCI = (...values: string[]) => ({ kind: "enum", values, caseInsensitive: true }) as const;

const INT_RE = /^[+-]?\d+$/;
function intProblem(value: string, min: number, max: bigint): string | undefined {
  if (!INT_RE.test(value)) return `value ${JSON.stringify(value)} must be an integer`;
  // BigInt: 64-bit bounds compare exactly.
  const n = BigInt(value);
  if (n < BigInt(min)) return `value ${value} must be >= ${min}`;
  if (n > max) return `value ${value} must be <= ${max}`;
  return undefined;
}

/** ParseOption<bool>: true/on/1 or false/off/0, any case. */
const BOOL_RE = /^(true|on|1|false|off|0)$/i;

/**
 * ParseGenericConfigOption(arg, first, second): `<name><first><setting><second><value>`, split
 * at the first `first` and the first `second` after it; none of the three may be empty.
 */
function genericConfig(arg: string, first: string, second: string): [string, string, string] | undefined {
  const dn = arg.indexOf(first);
  const ds = dn < 0 ? -1 : arg.indexOf(second, dn + 1);
  if (dn < 0 || ds < 0) return undefined;
  const parts: [string, string, string] = [arg.slice(0, dn), arg.slice(dn + 1, ds), arg.slice(ds + 1)];
  return parts.every((p) => p !== "") ? parts : undefined;
}

/**
 * ParseBackendConfigOption / ParseTraceConfigOption: `[<name>,]<setting>=<value>`. The name ends
 * at the first comma (a comma at 0 is refused); the setting at the first `=` after it; setting
 * and value must not be empty. So a global setting's value cannot hold a comma.
 */
function optionalNameConfig(arg: string): { name?: string; setting: string; value: string } | undefined {
  const dn = arg.indexOf(",");
  if (dn === 0) return undefined;
  const ds = arg.indexOf("=", dn + 1);
  if (ds < 0) return undefined;
  const setting = arg.slice(dn + 1, ds);
  const value = arg.slice(ds + 1);
  if (setting === "" || value === "") return undefined;
  return dn > 0 ? { name: arg.slice(0, dn), setting, value } : { setting, value };
}

/** The API categories --http-restricted-api / --grpc-restricted-protocol accept (src/restricted_features.h). */
export const RESTRICTED_CATEGORIES = [
  "health",
  "metadata",
  "inference",
  "shared-memory",
  "model-config",
  "model-repository",
  "statistics",
  "trace",
  "logging",
] as const;
export type RestrictedCategory = (typeof RESTRICTED_CATEGORIES)[number];

/** The categories of one `<apis>:<key>=<value>`, or the parser's complaint. */
function restrictedCategories(value: string): { categories: string[]; key: string; secret: string } | string {
  const parts = genericConfig(value, ":", "=");
  if (!parts) return `value ${JSON.stringify(value)} must be <api>[,<api>…]:<header>=<value>, none of them empty`;
  const categories = parts[0].split(",");
  for (const [i, c] of categories.entries()) {
    if (!(RESTRICTED_CATEGORIES as readonly string[]).includes(c)) return `unknown restricted api ${JSON.stringify(c)} (${RESTRICTED_CATEGORIES.join(", ")})`;
    if (categories.indexOf(c) !== i) return `restricted api ${JSON.stringify(c)} is listed twice`;
  }
  return { categories, key: parts[1], secret: parts[2] };
}
const restricted = parsed("<api>[,<api>…]:<header>=<value>", (v) => {
  const r = restrictedCategories(v);
  return typeof r === "string" ? r : undefined;
});

/** ParseTraceLevelOption. */
const TRACE_LEVEL_RE = /^(false|off|true|on|min|max|timestamps|tensors)$/i;
const TRACE_MODE_RE = /^(triton|opentelemetry)$/i;
const UINT32_MAX = 4_294_967_295n;

/**
 * --trace-config as Parse and PostProcessTraceArgs read it. Global settings rate, level, mode and
 * count, and triton's file and log-frequency, are the only ones read; any other is ignored by
 * the parser, so it is refused here (it would silently do nothing). opentelemetry settings are
 * passed to the tracer as they are; its bsp_* settings must be 32-bit unsigned integers.
 */
function traceConfigProblem(v: string): string | undefined {
  const c = optionalNameConfig(v);
  if (!c) return `value ${JSON.stringify(v)} must be [<mode>,]<setting>=<value> (mode triton or opentelemetry), setting and value not empty`;
  const bad = (what: string) => `value ${JSON.stringify(v)}: ${what}`;
  if (c.name !== undefined && !TRACE_MODE_RE.test(c.name)) return bad(`trace mode ${JSON.stringify(c.name)} must be triton or opentelemetry`);
  const mode = c.name?.toLowerCase();
  if (mode === undefined) {
    if (c.setting === "rate") return intProblem(c.value, 0, INT32_MAX) && bad("rate must be an integer >= 0");
    if (c.setting === "count") return intProblem(c.value, -1, INT32_MAX) && bad("count must be an integer >= -1 (-1: no limit)");
    if (c.setting === "level") return TRACE_LEVEL_RE.test(c.value) ? undefined : bad("level must be OFF, TIMESTAMPS or TENSORS");
    if (c.setting === "mode") return TRACE_MODE_RE.test(c.value) ? undefined : bad("mode must be triton or opentelemetry");
    return bad(`global setting ${JSON.stringify(c.setting)} is not one the parser reads (rate, level, mode, count)`);
  }
  if (mode === "triton") {
    if (c.setting === "file") return undefined;
    if (c.setting === "log-frequency") return intProblem(c.value, 0, INT32_MAX) && bad("log-frequency must be an integer >= 0");
    return bad(`triton setting ${JSON.stringify(c.setting)} is not one the parser reads (file, log-frequency)`);
  }
  if (/^bsp_(max_queue_size|schedule_delay|max_export_batch_size)$/.test(c.setting)) {
    return intProblem(c.value, 0, UINT32_MAX) && bad(`${c.setting} must be an integer from 0 to ${UINT32_MAX}`);
  }
  return undefined;
}

/** Settings `--metrics-config` accepts (setting=value). */
export const METRICS_CONFIG_SETTINGS = ["histogram_latencies", "summary_latencies", "summary_quantiles", "counter_latencies"] as const;

/** The real tritonserver options, in SetupOptions' order (r26.08). */
export const FLAGS: readonly FlagSpec[] = [
  { name: "--help", arg: "ArgNone", value: { kind: "none" }, default: "—", unusable: "prints the usage and exits: the server never starts" },
  { name: "--id", arg: "ArgStr", value: str, default: "triton" },
  { name: "--exit-timeout-secs", arg: "ArgInt", value: int(0), default: "30" },
  { name: "--model-store", arg: "ArgStr", value: str, default: "required", repeatable: true, aliasOf: "--model-repository" },
  { name: "--model-repository", arg: "ArgStr", value: str, default: "required", repeatable: true },
  { name: "--exit-on-error", arg: "ArgBool", value: bool, default: "true" },
  { name: "--disable-auto-complete-config", arg: "ArgNone", value: { kind: "none" }, default: "off" },
  { name: "--strict-readiness", arg: "ArgBool", value: bool, default: "true" },
  { name: "--model-control-mode", arg: "ArgStr", value: oneOfCI("none", "poll", "explicit"), default: "none" },
  { name: "--repository-poll-secs", arg: "ArgInt", value: int(1), default: "15" },
  { name: "--load-model", arg: "ArgStr", value: fmt(/^[^\s=]+$/, "a model name (or * alone for all)"), default: "—", repeatable: true },
  { name: "--model-config-name", arg: "ArgStr", value: str, default: "— (config.pbtxt)" },
  { name: "--model-load-thread-count", arg: "ArgInt", value: int(1), default: "4" },
  { name: "--model-load-retry-count", arg: "ArgInt", value: int(0), default: "0" },
  { name: "--model-namespacing", arg: "ArgBool", value: bool, default: "false" },
  { name: "--enable-peer-access", arg: "ArgBool", value: bool, default: "true" },
  { name: "--allow-http", arg: "ArgBool", value: bool, default: "true" },
  { name: "--http-address", arg: "ArgStr", value: str, default: "0.0.0.0" },
  { name: "--http-port", arg: "ArgInt", value: int(1, 65535n), default: "8000" },
  { name: "--reuse-http-port", arg: "ArgBool", value: bool, default: "false" },
  // The parser prefixes (?i): header names match case-insensitively.
  { name: "--http-header-forward-pattern", arg: "ArgStr", value: str, default: "—" },
  { name: "--http-thread-count", arg: "ArgInt", value: int(1), default: "8" },
  // Parsed as int64 and refused unless > 0.
  { name: "--http-max-input-size", arg: "ArgInt", value: int64(1), default: "67108864", since: "25.06" },
  { name: "--http-restricted-api", arg: "<string>:<string>=<string>", value: restricted, default: "—", repeatable: true },
  { name: "--allow-grpc", arg: "ArgBool", value: bool, default: "true" },
  { name: "--grpc-address", arg: "ArgStr", value: str, default: "0.0.0.0" },
  { name: "--grpc-port", arg: "ArgInt", value: int(1, 65535n), default: "8001" },
  { name: "--reuse-grpc-port", arg: "ArgBool", value: bool, default: "false" },
  { name: "--grpc-header-forward-pattern", arg: "ArgStr", value: str, default: "—" },
  // Refused outside 2..128.
  { name: "--grpc-infer-thread-count", arg: "ArgInt", value: int(2, 128n), default: "2", since: "25.04" },
  { name: "--grpc-infer-allocation-pool-size", arg: "ArgInt", value: int(0), default: "8" },
  // Refused unless > 0.
  { name: "--grpc-max-response-pool-size", arg: "ArgInt", value: int(1), default: "2147483647", since: "25.03" },
  { name: "--grpc-use-ssl", arg: "ArgBool", value: bool, default: "false" },
  { name: "--grpc-use-ssl-mutual", arg: "ArgBool", value: bool, default: "false" },
  { name: "--grpc-server-cert", arg: "ArgStr", value: str, default: "—" },
  { name: "--grpc-server-key", arg: "ArgStr", value: str, default: "—" },
  { name: "--grpc-root-cert", arg: "ArgStr", value: str, default: "—" },
  { name: "--grpc-infer-response-compression-level", arg: "ArgStr", value: oneOfCI("none", "low", "medium", "high"), default: "none" },
  { name: "--grpc-keepalive-time", arg: "ArgInt", value: int(0), default: "7200000" },
  { name: "--grpc-keepalive-timeout", arg: "ArgInt", value: int(0), default: "20000" },
  { name: "--grpc-keepalive-permit-without-calls", arg: "ArgBool", value: bool, default: "false" },
  { name: "--grpc-http2-max-pings-without-data", arg: "ArgInt", value: int(0), default: "2" },
  { name: "--grpc-http2-min-recv-ping-interval-without-data", arg: "ArgInt", value: int(0), default: "300000" },
  { name: "--grpc-http2-max-ping-strikes", arg: "ArgInt", value: int(0), default: "2" },
  { name: "--grpc-max-connection-age", arg: "ArgInt", value: int(0), default: "—" },
  { name: "--grpc-max-connection-age-grace", arg: "ArgInt", value: int(0), default: "—" },
  // The gRPC key is matched as metadata `triton-grpc-protocol-<key>` (kRestrictedProtocolHeaderTemplate).
  { name: "--grpc-restricted-protocol", arg: "<string>:<string>=<string>", value: restricted, default: "—", repeatable: true },
  // ParseIntBoolOption: true/false (any case) or an integer.
  {
    name: "--log-verbose",
    arg: "ArgInt",
    value: parsed("an integer >= 0 (or true/false)", (v) => (/^(true|false)$/i.test(v) ? undefined : intProblem(v, 0, INT32_MAX))),
    default: "0",
  },
  { name: "--log-info", arg: "ArgBool", value: bool, default: "true" },
  { name: "--log-warning", arg: "ArgBool", value: bool, default: "true" },
  { name: "--log-error", arg: "ArgBool", value: bool, default: "true" },
  // Compared as written (no case folding).
  { name: "--log-format", arg: "ArgStr", value: { kind: "enum", values: ["default", "ISO8601"], caseInsensitive: false }, default: "default" },
  { name: "--log-file", arg: "ArgStr", value: str, default: "console" },
  { name: "--allow-sagemaker", arg: "ArgBool", value: bool, default: "false" },
  { name: "--sagemaker-port", arg: "ArgInt", value: int(1, 65535n), default: "8080" },
  { name: "--sagemaker-safe-port-range", arg: "<integer>-<integer>", value: fmt(/^\d+-\d+$/, "<port>-<port>"), default: "—" },
  { name: "--sagemaker-thread-count", arg: "ArgInt", value: int(1), default: "8" },
  { name: "--allow-vertex-ai", arg: "ArgBool", value: bool, default: "false" },
  { name: "--vertex-ai-port", arg: "ArgInt", value: int(1, 65535n), default: "8080" },
  { name: "--vertex-ai-thread-count", arg: "ArgInt", value: int(1), default: "8" },
  { name: "--vertex-ai-default-model", arg: "ArgStr", value: str, default: "—" },
  { name: "--allow-metrics", arg: "ArgBool", value: bool, default: "true" },
  { name: "--allow-gpu-metrics", arg: "ArgBool", value: bool, default: "true" },
  { name: "--allow-cpu-metrics", arg: "ArgBool", value: bool, default: "true" },
  { name: "--metrics-address", arg: "ArgStr", value: str, default: "the --http-address" },
  { name: "--metrics-port", arg: "ArgInt", value: int(1, 65535n), default: "8002" },
  // Declared ArgFloat but parsed with ParseOption<int> (std::stoi): a fraction would be cut off silently, so it is refused.
  { name: "--metrics-interval-ms", arg: "ArgFloat", value: int(1), default: "2000" },
  // ParseMetricsConfigOption: <setting>=<value>, no comma before the `=`.
  {
    name: "--metrics-config",
    arg: "<string>=<string>",
    value: fmt(new RegExp(`^(${METRICS_CONFIG_SETTINGS.join("|")})=.+$`), `setting=value with setting one of ${METRICS_CONFIG_SETTINGS.join(", ")}`),
    default: "—",
    repeatable: true,
  },
  {
    name: "--trace-config",
    arg: "<string>,<string>=<string>",
    value: parsed("[<mode>,]<setting>=<value>", traceConfigProblem),
    default: "—",
    repeatable: true,
  },
  // ParseCacheConfigOption: the cache name is required (no global cache settings).
  {
    name: "--cache-config",
    arg: "<string>,<string>=<string>",
    value: parsed("<cache>,<setting>=<value> such as local,size=1048576", (v) => {
      const c = optionalNameConfig(v);
      return c?.name !== undefined ? undefined : `value ${JSON.stringify(v)} must be <cache>,<setting>=<value>, none of them empty`;
    }),
    default: "off",
    repeatable: true,
  },
  { name: "--cache-directory", arg: "ArgStr", value: str, default: "/opt/tritonserver/caches" },
  { name: "--rate-limit", arg: "ArgStr", value: oneOfCI("off", "execution_count"), default: "off" },
  {
    name: "--rate-limit-resource",
    arg: "<string>:<integer>:<integer>",
    value: fmt(/^[^:\s]+:[+-]?\d+(:[+-]?\d+)?$/, "<name>:<count>[:<device>]"),
    default: "—",
    repeatable: true,
  },
  { name: "--pinned-memory-pool-byte-size", arg: "ArgInt", value: int64(0), default: "268435456" },
  {
    name: "--cuda-memory-pool-byte-size",
    arg: "<integer>:<integer>",
    value: fmt(/^\d+:\d+$/, "<gpu_id>:<bytes>"),
    default: "64 MiB per GPU",
    repeatable: true,
  },
  { name: "--cuda-virtual-address-size", arg: "<integer>:<integer>", value: fmt(/^\d+:\d+$/, "<gpu_id>:<bytes>"), default: "1 GiB per GPU", repeatable: true },
  { name: "--min-supported-compute-capability", arg: "ArgFloat", value: { kind: "number", min: 0 }, default: "7.5" },
  { name: "--buffer-manager-thread-count", arg: "ArgInt", value: int(0), default: "0" },
  {
    name: "--host-policy",
    arg: "<string>,<string>=<string>",
    value: parsed("<policy>,<setting>=<value>", (v) =>
      genericConfig(v, ",", "=") ? undefined : `value ${JSON.stringify(v)} must be <policy>,<setting>=<value>, none of them empty`,
    ),
    default: "—",
    repeatable: true,
  },
  {
    name: "--model-load-gpu-limit",
    arg: "<device_id>:<fraction>",
    value: fmt(/^\d+:(0|1|0?\.\d+|1\.0*)$/, "<gpu_id>:<fraction 0..1>"),
    default: "—",
    repeatable: true,
  },
  // Default false: clients cannot register shared memory unless this is set (26.04 on).
  { name: "--allow-client-shm", arg: "ArgBool", value: bool, default: "false", since: "26.04" },
  { name: "--backend-directory", arg: "ArgStr", value: str, default: "/opt/tritonserver/backends" },
  // ParseBackendConfigOption: <backend>,<setting>=<value>, or a global <setting>=<value>; setting and value not empty.
  {
    name: "--backend-config",
    arg: "<string>,<string>=<string>",
    value: parsed("[<backend>,]<setting>=<value>", (v) =>
      optionalNameConfig(v) ? undefined : `value ${JSON.stringify(v)} must be <backend>,<setting>=<value> or <setting>=<value>, setting and value not empty`,
    ),
    default: "—",
    repeatable: true,
  },
  { name: "--repoagent-directory", arg: "ArgStr", value: str, default: "/opt/tritonserver/repoagents" },
  { name: "--strict-model-config", arg: "ArgBool", value: bool, default: "false", deprecated: { replacement: "--disable-auto-complete-config" } },
  { name: "--response-cache-byte-size", arg: "ArgInt", value: int64(0), default: "0", deprecated: { replacement: "--cache-config=local,size=<bytes>" } },
  { name: "--trace-file", arg: "ArgStr", value: str, default: "—", deprecated: { replacement: "--trace-config=triton,file=<path>" } },
  {
    name: "--trace-level",
    arg: "ArgStr",
    value: fmt(TRACE_LEVEL_RE, "OFF, TIMESTAMPS or TENSORS"),
    default: "OFF",
    repeatable: true,
    deprecated: { replacement: "--trace-config=level=<OFF|TIMESTAMPS|TENSORS>" },
  },
  { name: "--trace-rate", arg: "ArgInt", value: int(0), default: "1000", deprecated: { replacement: "--trace-config=rate=<n>" } },
  { name: "--trace-count", arg: "ArgInt", value: int(-1), default: "-1", deprecated: { replacement: "--trace-config=count=<n>" } },
  { name: "--trace-log-frequency", arg: "ArgInt", value: int(0), default: "0", deprecated: { replacement: "--trace-config=triton,log-frequency=<n>" } },
];

const BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

/** The first release that has a flag. */
export function flagSince(spec: FlagSpec): string {
  return spec.since ?? FIRST_RELEASE;
}

/** The flags (aliases included) release `release` accepts. */
export function releaseFlags(release: string): FlagSpec[] {
  return FLAGS.filter((f) => flagSince(f) <= release);
}

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
      return BOOL_RE.test(value) ? undefined : `value ${JSON.stringify(value)} must be true or false (or on/off, 1/0)`;
    case "int":
      return intProblem(value, v.min, v.max);
    case "number": {
      if (!/^\d+(\.\d+)?$/.test(value)) return `value ${JSON.stringify(value)} must be a number`;
      return v.min !== undefined && Number(value) < v.min ? `value ${value} must be >= ${v.min}` : undefined;
    }
    case "enum": {
      const ok = v.caseInsensitive ? v.values.includes(value.toLowerCase()) : v.values.includes(value);
      return ok ? undefined : `value ${JSON.stringify(value)} must be one of ${v.values.join(", ")}`;
    }
    case "string":
      return /\s/.test(value) ? `value ${JSON.stringify(value)} must not contain whitespace` : undefined;
    case "format":
      return v.re.test(value) ? undefined : `value ${JSON.stringify(value)} must be ${v.format}`;
    case "parsed":
      return v.check(value);
  }
}

/** Closest real flag to an unknown one, for the error message (shared prefix of the words). */
function suggestion(flag: string): string {
  const words = flag.replace(/^--/, "").split("-");
  let best: { name: string; score: number } | undefined;
  for (const f of FLAGS) {
    if (f.aliasOf || f.deprecated || f.unusable) continue;
    const fw = f.name.replace(/^--/, "").split("-");
    let score = 0;
    while (score < words.length && score < fw.length && words[score] === fw[score]) score++;
    if (score >= 2 && (!best || score > best.score)) best = { name: f.name, score };
  }
  return best ? ` (did you mean ${best.name}?)` : "";
}

export interface ParseFlagOptions {
  /** The container release (`yy.mm`) the flag is for; without it, any release of the table. */
  readonly release?: string;
  readonly allowDeprecated?: boolean;
}

/**
 * Parse one argument (`--flag=value` or `--flag`) against FLAGS. Throws TritonFlagError naming
 * the flag when it is not a real flag (of the release, when given), is deprecated (unless
 * allowDeprecated) or unusable, or its value is malformed.
 */
export function parseFlag(arg: string, opts: ParseFlagOptions = {}): ParsedFlag {
  if (!arg.startsWith("--")) throw new TritonFlagError(arg, "is not a --flag (write arguments as --flag=value)");
  const eq = arg.indexOf("=");
  const name = eq < 0 ? arg : arg.slice(0, eq);
  const value = eq < 0 ? undefined : arg.slice(eq + 1);
  const spec = BY_NAME.get(name);
  if (!spec) throw new TritonFlagError(name, `is not a tritonserver flag (releases ${TRITON_OPTION_RANGE})${suggestion(name)}`);
  if (opts.release !== undefined) {
    if (!KNOWN_RELEASES.has(opts.release))
      throw new TritonFlagError(name, `cannot be checked: release ${opts.release} is not in the option table (${TRITON_OPTION_RANGE})`);
    if (flagSince(spec) > opts.release)
      throw new TritonFlagError(name, `is not a flag of tritonserver ${opts.release}: its parser has it from ${flagSince(spec)} on`);
  }
  if (spec.unusable) throw new TritonFlagError(name, `cannot be used: it ${spec.unusable}`);
  if (spec.deprecated && !opts.allowDeprecated) throw new TritonFlagError(name, `is deprecated upstream; use ${spec.deprecated.replacement}`);
  const problem = checkValue(spec, value);
  if (problem) throw new TritonFlagError(name, problem);
  return value === undefined ? { name: canonical(spec) } : { name: canonical(spec), value };
}

/** The restricted-API flags: a category may be restricted once across all their occurrences (the parser refuses a second). */
const RESTRICTION_FLAGS: ReadonlySet<string> = new Set(["--http-restricted-api", "--grpc-restricted-protocol"]);

/** Tracks what the parser refuses across occurrences: non-repeatable flags twice, a restricted category twice. */
function occurrenceChecker(): (f: ParsedFlag, written: string) => void {
  const seen = new Set<string>();
  const restrictedSeen = new Map<string, Set<string>>();
  return (f, written) => {
    if (!BY_NAME.get(f.name)!.repeatable && seen.has(f.name)) throw new TritonFlagError(written, "is given more than once");
    seen.add(f.name);
    if (RESTRICTION_FLAGS.has(f.name)) {
      const r = restrictedCategories(f.value!);
      const done = restrictedSeen.get(f.name) ?? restrictedSeen.set(f.name, new Set()).get(f.name)!;
      for (const c of typeof r === "string" ? [] : r.categories) {
        if (done.has(c)) throw new TritonFlagError(written, `restricts ${c} a second time (the parser allows each api in one group only)`);
        done.add(c);
      }
    }
  };
}

/** Parse an argument list for a release; non-repeatable flags may appear once. */
export function parseFlags(args: readonly string[], release?: string): ParsedFlag[] {
  const check = occurrenceChecker();
  return args.map((a) => {
    const f = parseFlag(a, { release });
    check(f, f.name);
    return f;
  });
}

// ---- typed options → arguments -------------------------------------------------------

/** The APIs only callers holding the admin key reach; health, metadata and inference stay open. */
export const ADMIN_ONLY_APIS: readonly RestrictedCategory[] = ["shared-memory", "model-config", "model-repository", "statistics", "trace", "logging"];

/** gRPC metadata keys of a restriction are prefixed (server src/grpc/grpc_server.h kRestrictedProtocolHeaderTemplate). */
export const GRPC_RESTRICTED_KEY_PREFIX = "triton-grpc-protocol-";

/** What a serving group sets on tritonserver. Everything else is fixed production policy. */
export interface TritonServerOptions {
  /** The container release (`yy.mm`) the arguments are for: flags are checked against its parser. */
  readonly release: string;
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
  /** --http-header-forward-pattern and --grpc-header-forward-pattern: regex of request headers forwarded to backends. */
  readonly headerForwardPattern: string;
  /**
   * The header (HTTP) / metadata key (gRPC, prefixed by Triton with GRPC_RESTRICTED_KEY_PREFIX)
   * and value that ADMIN_ONLY_APIS demand. The value is a `$(VAR)` reference Kubernetes expands
   * from the container's env, never the secret itself.
   */
  readonly admin: { readonly header: string; readonly value: string };
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
  "--grpc-header-forward-pattern",
  "--http-restricted-api",
  "--grpc-restricted-protocol",
];
const OWNED = new Set(OWNED_FLAGS);

/** Real flags extra args may not add, and why. */
export const REFUSED_EXTRA_FLAGS: Readonly<Record<string, string>> = {
  "--allow-sagemaker": "opens a SageMaker endpoint (with its own model load API) that no Service, NetworkPolicy or gateway route covers",
  "--allow-vertex-ai": "opens a Vertex AI endpoint that no Service, NetworkPolicy or gateway route covers",
};

/**
 * What is wrong with a list of extra arguments for the given releases (the primary's and the
 * canary's): one error per bad argument, each naming the flag as written: unknown or not yet in
 * a release, deprecated, malformed, repeated, or owned by the typed options.
 */
export function extraArgsErrors(
  extraArgs: readonly string[],
  releases: readonly (string | undefined)[] = [undefined],
): { index: number; error: TritonFlagError }[] {
  const errors: { index: number; error: TritonFlagError }[] = [];
  const check = occurrenceChecker();
  extraArgs.forEach((arg, index) => {
    try {
      let f: ParsedFlag | undefined;
      for (const release of new Set(releases)) f = parseFlag(arg, { release });
      const written = arg.split("=")[0];
      if (OWNED.has(f!.name)) throw new TritonFlagError(written, "is set from the group's typed settings; change those instead of adding it to extraArgs");
      const refused = REFUSED_EXTRA_FLAGS[f!.name];
      if (refused) throw new TritonFlagError(written, `is refused: it ${refused}`);
      check(f!, written);
    } catch (e) {
      if (!(e instanceof TritonFlagError)) throw e;
      errors.push({ index, error: e });
    }
  });
  return errors;
}

/** The value of a restriction flag: `<apis>:<key>=<value>`. */
function restriction(header: string, value: string): string {
  return `${ADMIN_ONLY_APIS.join(",")}:${header}=${value}`;
}

/**
 * The tritonserver argument list for a group. Pure. Throws TritonFlagError for a bad extra
 * argument, and checks everything it emits with parseFlags, so nothing unknown is emitted.
 */
export function tritonServerArgs(o: TritonServerOptions): string[] {
  const errors = extraArgsErrors(o.extraArgs, [o.release]).map((x) => x.error);
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
    `--http-header-forward-pattern=${o.headerForwardPattern}`,
    // ... over gRPC as well (the same pattern, as metadata of the request).
    `--grpc-header-forward-pattern=${o.headerForwardPattern}`,
    // explicit model control enables the repository API, whose load accepts client-supplied
    // files (python models: code in the pod): it, and every other control API, needs the admin
    // key; health, metadata and inference stay open.
    `--http-restricted-api=${restriction(o.admin.header, o.admin.value)}`,
    `--grpc-restricted-protocol=${restriction(o.admin.header, o.admin.value)}`,
    ...o.extraArgs,
  ];
  parseFlags(args, o.release);
  return args;
}

/**
 * The inverse of tritonServerArgs: typed options from an argument list it emitted for
 * `release`. Throws TritonFlagError for anything it could not have emitted.
 */
export function parseTritonServerArgs(args: readonly string[], release: string = NEWEST_RELEASE): TritonServerOptions {
  const flags = parseFlags(args, release);
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
  const pattern = need("--http-header-forward-pattern");
  if (need("--grpc-header-forward-pattern") !== pattern)
    throw new TritonFlagError("--grpc-header-forward-pattern", "differs from --http-header-forward-pattern");
  const http = restrictedCategories(need("--http-restricted-api"));
  const grpc = need("--grpc-restricted-protocol");
  if (typeof http === "string" || http.categories.join(",") !== ADMIN_ONLY_APIS.join(",")) {
    throw new TritonFlagError("--http-restricted-api", `must restrict exactly ${ADMIN_ONLY_APIS.join(",")}`);
  }
  if (grpc !== restriction(http.key, http.secret)) throw new TritonFlagError("--grpc-restricted-protocol", "differs from --http-restricted-api");
  // The builder emits --grpc-restricted-protocol last of its own flags; extra args follow.
  const lastOwned = flags.findIndex((f) => f.name === "--grpc-restricted-protocol");
  return {
    release,
    modelRepository: need("--model-repository"),
    modelControlMode: need("--model-control-mode") as TritonServerOptions["modelControlMode"],
    models: flags.filter((f) => f.name === "--load-model").map((f) => f.value!),
    exitTimeoutSecs: Number(need("--exit-timeout-secs")),
    gpuCount: pools.length,
    cudaMemoryPoolByteSize: pools.length ? pools[0][1] : 0,
    pinnedMemoryPoolByteSize: Number(need("--pinned-memory-pool-byte-size")),
    headerForwardPattern: pattern,
    admin: { header: http.key, value: http.secret },
    logVerbose: Number(need("--log-verbose")),
    extraArgs: args.slice(lastOwned + 1),
  };
}
