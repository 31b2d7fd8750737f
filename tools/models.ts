// npm run models -- lint DIR [--stack NAME] [--release YY.MM] [--format text|json|markdown | --json]
// A lint for the model publisher's CI: checks a model-repository folder before it is uploaded.
// Layout: <model>/config.pbtxt and numeric <model>/<version>/ folders; the config's name equal to
// its folder; the config parsed with the stack's own parser (components/triton/model-config) and
// checked with the stack's contract rules (components/triton/schema.ts modelContract: preferred
// batch sizes <= max_batch_size, ...). With --stack, each model is also checked against the group(s)
// of that stack file that load it (modelContractProblems: GPU indices below gpu.count, the backend
// in the group's release and its canary's, queue delay within hpa.targetQueueUs, cache and rate
// limiter against the server's flags); --release overrides the release (alone: the backend check).
// A field Triton has but the stack's field table lacks is skipped with a warning (not checked).
// Exit 0: clean (warnings allowed); 1: a rule is broken; 2: unreadable input or a usage error.
import * as fs from "node:fs";
import * as path from "node:path";
import { EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, parseArgs, runCli, type CliIo } from "./planner/cli";
import { readStackFile, ROOT, UsageError } from "./planner";
import { loadConfig } from "../config";
import { checkSettings } from "../lib/schema";
import { show } from "../lib/errors";
import { parseModelConfig, PbtxtError, type PbMessage } from "../components/triton/model-config";
import { modelContract, modelContractProblems, modelNameOf, releaseOfTag, type ModelEntry, type TritonGroupSettings } from "../components/triton/schema";
import { TRITON_MODEL_CONFIG_FIELD_NAMES, TRITON_MODEL_CONFIG_ONEOFS } from "../components/upstream/triton-model-config-names";
import { TRITON_BACKENDS_OF_RELEASE } from "../components/upstream/triton-backends";

const USAGE = "usage: npm run models -- lint DIR [--stack NAME] [--release YY.MM] [--format text|json|markdown | --json]\n";
const FORMATS = ["text", "json", "markdown"] as const;
type Format = (typeof FORMATS)[number];
export const LINT_SCHEMA_VERSION = 1;

export interface LintProblem {
  readonly severity: "error" | "warning";
  /** The file (relative to DIR) or folder the problem is in. */
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  /** The config.pbtxt field (proto names, e.g. dynamic_batching.preferred_batch_size[1]). */
  readonly field?: string;
  readonly message: string;
}
export interface ModelLint {
  readonly model: string;
  /** ok; violations (a rule is broken: exit 1); unreadable (the config cannot be parsed or read: exit 2). */
  readonly status: "ok" | "violations" | "unreadable";
  readonly problems: LintProblem[];
}
export interface LintReport {
  readonly schemaVersion: number;
  readonly dir: string;
  readonly stack?: string;
  readonly release?: string;
  readonly models: ModelLint[];
}

// ---- config.pbtxt: fields Triton has that the table lacks ----------------------------------

/** The offset of line:column (1-based) in text. */
function offsetOf(text: string, line: number, column: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) at = text.indexOf("\n", at) + 1;
  return at + column - 1;
}

/**
 * The end of the field starting at `from` (its name): the name, an optional ":", then one value (a
 * balanced {...}, <...> or [...], adjacent string literals, or a scalar token) and a "," or ";".
 * Undefined when the value does not close.
 */
function fieldEnd(text: string, from: number): number | undefined {
  let i = from;
  const space = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i])) i++;
      if (text[i] !== "#") return;
      while (i < text.length && text[i] !== "\n") i++;
    }
  };
  const str = () => {
    const q = text[i++];
    while (i < text.length && text[i] !== q && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
    if (text[i] !== q) return false;
    i++;
    return true;
  };
  while (i < text.length && /[A-Za-z0-9_]/.test(text[i])) i++;
  space();
  if (text[i] === ":") {
    i++;
    space();
  }
  const c = text[i];
  if (c === "{" || c === "<" || c === "[") {
    const stack: string[] = [];
    while (i < text.length) {
      const d = text[i];
      if (d === '"' || d === "'") {
        if (!str()) return undefined;
        continue;
      }
      if (d === "#") {
        while (i < text.length && text[i] !== "\n") i++;
        continue;
      }
      if (d === "{" || d === "<" || d === "[") stack.push({ "{": "}", "<": ">", "[": "]" }[d]);
      else if (d === "}" || d === ">" || d === "]") {
        if (stack.pop() !== d) return undefined;
        if (stack.length === 0) {
          i++;
          break;
        }
      }
      i++;
    }
    if (stack.length) return undefined;
  } else if (c === '"' || c === "'") {
    while (text[i] === '"' || text[i] === "'") {
      if (!str()) return undefined;
      const save = i;
      space();
      if (text[i] !== '"' && text[i] !== "'") i = save;
    }
  } else {
    const start = i;
    while (i < text.length && /[A-Za-z0-9_.+-]/.test(text[i])) i++;
    if (i === start) return undefined;
  }
  const save = i;
  space();
  if (text[i] === "," || text[i] === ";") return i + 1;
  return save;
}

/**
 * Parse a config.pbtxt with the stack's parser, skipping each field Triton's proto has but the
 * field table lacks (blanked out in place, so later positions stay right); the message and the
 * skipped fields. Throws PbtxtError for anything else the parser refuses.
 */
export function parseForLint(text: string, file: string): { message: PbMessage; skipped: { field: string; line: number; column: number }[] } {
  const skipped: { field: string; line: number; column: number }[] = [];
  let src = text;
  for (;;) {
    try {
      const message = parseModelConfig(src, file);
      // A skipped field of ModelConfig against the other members of its oneof (protoc refuses both set).
      for (const [oneof, members] of Object.entries(TRITON_MODEL_CONFIG_ONEOFS)) {
        const set = [
          ...members.filter((f) => message[f] !== undefined),
          ...skipped.filter((s) => s.field.startsWith("ModelConfig.") && members.includes(s.field.slice(12))).map((s) => s.field.slice(12)),
        ];
        const last = [...skipped].reverse().find((s) => set.includes(s.field.slice(12)) && s.field.startsWith("ModelConfig."));
        if (set.length > 1 && last) throw new PbtxtError(file, last.line, last.column, `${set.join(" and ")} are both set: they are one of ${oneof}, set one`);
      }
      return { message, skipped };
    } catch (e) {
      if (!(e instanceof PbtxtError)) throw e;
      const m = /^unknown field "([A-Za-z0-9_]+)" of inference\.([A-Za-z.]+) /.exec(e.reason);
      if (!m || !TRITON_MODEL_CONFIG_FIELD_NAMES[m[2]]?.includes(m[1])) throw e;
      const start = offsetOf(src, e.line, e.column);
      const end = fieldEnd(src, start);
      if (end === undefined) throw e;
      skipped.push({ field: `${m[2]}.${m[1]}`, line: e.line, column: e.column });
      src = src.slice(0, start) + src.slice(start, end).replace(/[^\n]/g, " ") + src.slice(end);
    }
  }
}

// ---- config.pbtxt → the stack's contract keys ----------------------------------------------

type Msg = Record<string, unknown> | undefined;
const list = (x: unknown) => x as Record<string, unknown>[] | undefined;
const obj = (x: unknown) => x as Msg;
function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined));
}
const mapValues = (x: unknown, f: (v: Record<string, unknown>) => unknown) =>
  x === undefined ? undefined : Object.fromEntries(Object.entries(x as Record<string, Record<string, unknown>>).map(([k, v]) => [k, f(v)]));

/** A parsed ModelConfig as the stack file's contract keys (the inverse of modelConfigMessage). */
export function contractInput(msg: PbMessage, folder: string): Record<string, unknown> {
  const vp = obj(msg.version_policy);
  const d = obj(msg.dynamic_batching);
  const q = obj(d?.default_queue_policy);
  return defined({
    name: msg.name ?? folder,
    backend: msg.backend,
    platform: msg.platform,
    maxBatchSize: msg.max_batch_size,
    inputs: list(msg.input)?.map((t) => defined({ name: t.name, dataType: t.data_type, format: t.format, dims: t.dims ?? [], optional: t.optional })),
    outputs: list(msg.output)?.map((t) => defined({ name: t.name, dataType: t.data_type, dims: t.dims ?? [], labelFilename: t.label_filename })),
    dynamicBatching: d
      ? defined({
          preferredBatchSizes: d.preferred_batch_size,
          maxQueueDelayUs: d.max_queue_delay_microseconds,
          preserveOrdering: d.preserve_ordering,
          priorityLevels: d.priority_levels,
          defaultPriorityLevel: d.default_priority_level,
          defaultQueuePolicy: q
            ? defined({
                maxQueueSize: q.max_queue_size,
                timeoutAction: q.timeout_action,
                defaultTimeoutUs: q.default_timeout_microseconds,
                allowTimeoutOverride: q.allow_timeout_override,
              })
            : undefined,
        })
      : undefined,
    instanceGroups: list(msg.instance_group)?.map((g) => {
      const r = obj(g.rate_limiter);
      return defined({
        name: g.name,
        count: g.count,
        kind: g.kind,
        gpus: g.gpus,
        rateLimiter: r
          ? defined({ resources: list(r.resources)?.map((x) => defined({ name: x.name, count: x.count, global: x.global })), priority: r.priority })
          : undefined,
      });
    }),
    versionPolicy: vp
      ? defined({
          latest: obj(vp.latest) ? (obj(vp.latest)!.num_versions ?? 0) : undefined,
          specific: obj(vp.specific) ? (obj(vp.specific)!.versions ?? []) : undefined,
          all: vp.all ? true : undefined,
        })
      : undefined,
    warmup: list(msg.model_warmup)?.map((w) =>
      defined({
        name: w.name,
        batchSize: w.batch_size,
        count: w.count,
        inputs:
          mapValues(w.inputs, (i) =>
            defined({ dataType: i.data_type, dims: i.dims ?? [], zeroData: i.zero_data, randomData: i.random_data, inputDataFile: i.input_data_file }),
          ) ?? {},
      }),
    ),
    responseCache: obj(msg.response_cache) ? (obj(msg.response_cache)!.enable ?? false) : undefined,
    parameters: mapValues(msg.parameters, (p) => p.string_value ?? ""),
  });
}

/** Contract key segments as the config.pbtxt fields they render to. */
const PROTO_KEY: Record<string, string> = {
  maxBatchSize: "max_batch_size",
  inputs: "input",
  outputs: "output",
  dataType: "data_type",
  labelFilename: "label_filename",
  dynamicBatching: "dynamic_batching",
  preferredBatchSizes: "preferred_batch_size",
  maxQueueDelayUs: "max_queue_delay_microseconds",
  preserveOrdering: "preserve_ordering",
  priorityLevels: "priority_levels",
  defaultPriorityLevel: "default_priority_level",
  defaultQueuePolicy: "default_queue_policy",
  maxQueueSize: "max_queue_size",
  timeoutAction: "timeout_action",
  defaultTimeoutUs: "default_timeout_microseconds",
  allowTimeoutOverride: "allow_timeout_override",
  instanceGroups: "instance_group",
  rateLimiter: "rate_limiter",
  versionPolicy: "version_policy",
  latest: "latest.num_versions",
  specific: "specific.versions",
  warmup: "model_warmup",
  batchSize: "batch_size",
  zeroData: "zero_data",
  randomData: "random_data",
  inputDataFile: "input_data_file",
  responseCache: "response_cache.enable",
};

/** A contract key path (`dynamicBatching.preferredBatchSizes[1]`) as the config.pbtxt field. */
export function protoField(key: string): string {
  return key.replace(/[A-Za-z_][A-Za-z0-9_]*/g, (s) => (Object.hasOwn(PROTO_KEY, s) ? PROTO_KEY[s] : s));
}

// ---- the repository folder -----------------------------------------------------------------

type Group = TritonGroupSettings;

/** The groups of the stack that load `model` (primary or canary list), with only that model in their lists. */
function groupsLoading(groups: readonly Group[], model: string, contract: ModelEntry): Group[] {
  const has = (l: readonly ModelEntry[] | undefined) => (l ?? []).some((m) => modelNameOf(m) === model);
  return groups
    .filter((g) => has(g.models) || has(g.canary?.models))
    .map((g) => ({
      ...g,
      models: has(g.models) ? [contract] : [],
      canary: g.canary ? { ...g.canary, models: g.canary.models === undefined ? undefined : has(g.canary.models) ? [contract] : [] } : undefined,
    }));
}

function withRelease(g: Group, release: string): Group {
  const tag = `${release}-py3`;
  return { ...g, image: { ...g.image, tag }, canary: g.canary ? { ...g.canary, image: { ...(g.canary.image ?? g.image), tag } } : undefined };
}

/** A group that only checks the release: every other cross-check is satisfied by construction. */
function releaseOnlyGroup(release: string, contract: ModelEntry): Group {
  return {
    name: "release",
    image: { repository: "nvcr.io/nvidia/tritonserver", tag: `${release}-py3` },
    gpu: { count: Number.MAX_SAFE_INTEGER },
    hpa: { targetQueueUs: Number.MAX_SAFE_INTEGER },
    extraArgs: ["--rate-limit=execution_count", "--cache-config=local,size=1"],
    models: [contract],
  } as unknown as Group;
}

function lintModel(dir: string, model: string, opts: { stack?: string; groups?: readonly Group[]; release?: string }): ModelLint {
  const problems: LintProblem[] = [];
  const folder = path.join(dir, model);
  const file = `${model}/config.pbtxt`;
  const err = (p: Omit<LintProblem, "severity">) => problems.push({ severity: "error", ...p });
  const warn = (p: Omit<LintProblem, "severity">) => problems.push({ severity: "warning", ...p });
  const done = (unreadable = false): ModelLint => ({
    model,
    status: unreadable ? "unreadable" : problems.some((p) => p.severity === "error") ? "violations" : "ok",
    problems,
  });

  const entries = fs.readdirSync(folder, { withFileTypes: true });
  const versions = entries.filter((e) => e.isDirectory());
  for (const v of versions)
    if (!/^[0-9]+$/.test(v.name) || BigInt(v.name) < 1n || BigInt(v.name) > 2n ** 63n - 1n)
      err({
        file: `${model}/${v.name}/`,
        message: `version folder ${JSON.stringify(v.name)} must be a positive integer (Triton loads only numeric version folders)`,
      });
  if (!versions.some((v) => /^[0-9]+$/.test(v.name)))
    err({ file: `${model}/`, message: "has no version folder (<model>/<version>/, e.g. 1/): Triton has nothing to load" });
  if (!entries.some((e) => e.isFile() && e.name === "config.pbtxt")) {
    err({ file, message: "is missing: every model folder needs its config.pbtxt (<model>/config.pbtxt)" });
    return done();
  }

  let parsed: ReturnType<typeof parseForLint>;
  try {
    parsed = parseForLint(fs.readFileSync(path.join(folder, "config.pbtxt"), "utf8"), file);
  } catch (e) {
    if (e instanceof PbtxtError) {
      err({ file, line: e.line, column: e.column, message: e.reason });
      return done(true);
    }
    err({ file, message: `cannot read: ${(e as Error).message}` });
    return done(true);
  }
  for (const s of parsed.skipped)
    warn({
      file,
      line: s.line,
      column: s.column,
      field: s.field,
      message: `not checked by this lint (field ${s.field} is not in the stack's ModelConfig table, components/upstream/triton-model-config.ts)`,
    });

  const msg = parsed.message;
  if (msg.name !== undefined && msg.name !== model)
    err({ file, field: "name", message: `must be the model's folder name ${JSON.stringify(model)}, got ${JSON.stringify(msg.name)}` });

  const input = contractInput(msg, model);
  const checked = checkSettings(modelContract, input);
  if (!checked.success) {
    for (const p of checked.problems)
      err({ file, field: protoField(p.key), message: `${p.rule}${p.value ? `, got ${p.value.shown}` : ""} (stack key ${p.key || "(the contract)"})` });
    return done();
  }
  const contract = checked.output;

  const groups = opts.groups ? groupsLoading(opts.groups, model, contract) : [];
  if (opts.stack !== undefined && groups.length === 0)
    warn({ file, message: `no serving group of stack ${opts.stack} loads ${model}: the group checks (GPUs, queue budget, server flags) were not run` });
  const targets: [string, Group][] = groups.map((g) => [`stack ${opts.stack} group ${g.name}`, opts.release ? withRelease(g, opts.release) : g]);
  if (!targets.length && opts.release) targets.push([`release ${opts.release}`, releaseOnlyGroup(opts.release, contract)]);
  for (const [where, g] of targets) {
    const releases = [...new Set([g.image.tag, g.canary?.image?.tag ?? g.image.tag].map(releaseOfTag))];
    for (const p of modelContractProblems(g, releases)) {
      const at = p.path[0] === "canary" ? 3 : 2;
      const key = p.path.slice(at).reduce<string>((s, x) => (typeof x === "number" ? `${s}[${x}]` : s ? `${s}.${x}` : String(x)), "");
      const value = p.path.slice(at).reduce<unknown>((o, x) => (o as Record<string | number, unknown> | undefined)?.[x], contract);
      err({ file, field: protoField(key), message: `${p.message}, got ${show(value)} (${where}, stack key ${key})` });
    }
  }
  return done();
}

/** Lint a model-repository folder. */
export function lintRepository(dir: string, opts: { stack?: string; groups?: readonly Group[]; release?: string } = {}): LintReport {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    throw new UsageError(`cannot read the model repository ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const models: ModelLint[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name.startsWith(".")) continue;
    if (!e.isDirectory()) {
      models.push({
        model: e.name,
        status: "ok",
        problems: [{ severity: "warning", file: e.name, message: "is not a model folder (Triton ignores files at the top of the repository)" }],
      });
      continue;
    }
    models.push(lintModel(dir, e.name, opts));
  }
  return { schemaVersion: LINT_SCHEMA_VERSION, dir, ...(opts.stack ? { stack: opts.stack } : {}), ...(opts.release ? { release: opts.release } : {}), models };
}

export function lintExitCode(r: LintReport): number {
  if (r.models.some((m) => m.status === "unreadable")) return EXIT_USAGE;
  return r.models.some((m) => m.status === "violations") ? EXIT_VIOLATION : EXIT_OK;
}

function where(p: LintProblem): string {
  return `${p.file}${p.line !== undefined ? `:${p.line}:${p.column}` : ""}${p.field ? ` ${p.field}` : ""}`;
}

function summary(r: LintReport): string {
  const n = (s: ModelLint["status"]) => r.models.filter((m) => m.status === s).length;
  const warnings = r.models.reduce((k, m) => k + m.problems.filter((p) => p.severity === "warning").length, 0);
  return `${r.models.length} checked: ${n("ok")} ok, ${n("violations")} with violations, ${n("unreadable")} unreadable; warnings: ${warnings}`;
}

function heading(r: LintReport): string {
  const ctx = [r.stack ? `stack ${r.stack}` : "", r.release ? `release ${r.release}` : ""].filter(Boolean).join(", ");
  return `model repository ${r.dir}${ctx ? ` (${ctx})` : " (no --stack or --release: the group and release checks were not run)"}`;
}

export function formatLintText(r: LintReport): string {
  const out = [heading(r)];
  for (const m of r.models) {
    out.push(`  ${m.model}: ${m.status}`);
    for (const p of m.problems) out.push(`    ${p.severity}: ${where(p)}: ${p.message}`);
  }
  out.push(summary(r));
  return `${out.join("\n")}\n`;
}

export function formatLintMarkdown(r: LintReport): string {
  const mark = { ok: "✅", violations: "❌", unreadable: "⛔" } as const;
  const out = [`### ${heading(r).replace(r.dir, `\`${r.dir}\``)}`, "", summary(r), ""];
  for (const m of r.models) {
    out.push(`- ${mark[m.status]} **${m.model}**: ${m.status}`);
    for (const p of m.problems) out.push(`  - ${p.severity}: \`${where(p)}\`: ${p.message}`);
  }
  return `${out.join("\n")}\n`;
}

/** `npm run models -- <argv>`: its exit code (usage errors are thrown: see runMain). */
export function main(argv: string[], io: CliIo): Promise<number> {
  // Synchronous inside: a thrown usage error becomes the promise's rejection (runMain reports it).
  return new Promise((resolve) => resolve(run(argv, io)));
}

function run(argv: string[], io: CliIo): number {
  const [command, dirArg, ...rest] = argv;
  if (command === "--help" || command === undefined) {
    io.stdout.write(USAGE);
    return EXIT_USAGE;
  }
  if (command !== "lint") throw new UsageError(`unknown command ${JSON.stringify(command)} (commands: lint)\n${USAGE.trimEnd()}`);
  if (dirArg === undefined || dirArg.startsWith("--")) throw new UsageError(`lint needs the model repository folder\n${USAGE.trimEnd()}`);
  const args = parseArgs(rest, { values: ["stack", "release", "format"], switches: ["json"] });
  const format = (args.json === true ? "json" : (args.format ?? "text")) as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, got ${JSON.stringify(args.format)}`);
  const release = typeof args.release === "string" ? args.release : undefined;
  if (release !== undefined && !Object.hasOwn(TRITON_BACKENDS_OF_RELEASE, release))
    throw new UsageError(
      `--release must be a Triton release the stack supports (${Object.keys(TRITON_BACKENDS_OF_RELEASE).join(", ")}), got ${JSON.stringify(release)}`,
    );
  const stack = typeof args.stack === "string" ? args.stack : undefined;
  let groups: readonly Group[] | undefined;
  if (stack !== undefined) {
    const s = readStackFile(io.root, stack);
    groups = loadConfig(s.config, stack, s.secretKeys, s.securePaths).triton.groups;
  }
  const dir = path.resolve(io.cwd, dirArg);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`${dirArg}: no such model repository folder`);
  const report = lintRepository(dir, { stack, groups, release });
  io.stdout.write(format === "json" ? `${JSON.stringify(report, null, 2)}\n` : format === "markdown" ? formatLintMarkdown(report) : formatLintText(report));
  const code = lintExitCode(report);
  if (code === EXIT_USAGE) io.stderr.write("error: a config.pbtxt cannot be read (see above: file:line:column)\n");
  return code;
}

if (require.main === module) runCli(main, ROOT);
