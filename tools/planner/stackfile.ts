// Reads Pulumi.<stack>.yaml the way the Pulumi CLI hands it to a program: every value a
// string (structured values as JSON), `secure:` values replaced by a placeholder and their
// keys marked secret.
import * as fs from "node:fs";
import * as path from "node:path";
import * as yaml from "js-yaml";
import { SECRET_PLACEHOLDER } from "./fakes";
import { fingerprint } from "./fingerprint";

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A stack's configuration as the Pulumi CLI hands it to a program: what the planner plans. */
export interface StackConfig {
  stack: string;
  /** `namespace:key` → the string the program sees. */
  config: Record<string, string>;
  /** Keys whose values are (or contain) secrets. */
  secretKeys: string[];
  /**
   * Secret key → fingerprint of its `secure:` ciphertext(s). The program only ever sees the
   * placeholder, so this is how a plan diff notices a secret was set anew (fingerprint.ts).
   * Optional for a stack given in memory.
   */
  secureFingerprints?: Record<string, string>;
  /**
   * The full key path of every `secure:` value (`ns:key.sub[0].leaf`, as `pulumi config set
   * --path` names it). The engine tells a program only which top-level keys hold a secret
   * (PULUMI_CONFIG_SECRET_KEYS); the planner reads the stack file, so it can check each value.
   * Optional for a stack given in memory.
   */
  securePaths?: string[];
  /**
   * The stack file's `config:` mapping as written (structured values, `{ secure: … }` leaves
   * kept): what a plan diff compares key by key. In memory only; optional for a stack given in memory.
   */
  values?: Record<string, unknown>;
}

/** A stack read from its Pulumi.<stack>.yaml. */
export interface StackFile extends StackConfig {
  file: string;
  secureFingerprints: Record<string, string>;
}

/** Stack names that have a Pulumi.<stack>.yaml in `root`, sorted. */
export function listStacks(root: string): string[] {
  return fs
    .readdirSync(root)
    .map((f) => /^Pulumi\.([^.]+)\.ya?ml$/.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .sort();
}

function isSecure(v: unknown): boolean {
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 1 && "secure" in v;
}

/** The key paths below `v` (`.a.b[0]`, after its key) of its `secure:` leaves. */
function securePathsOf(v: unknown, at: string, out: string[] = []): string[] {
  if (isSecure(v)) out.push(at);
  else if (Array.isArray(v)) v.forEach((x, i) => securePathsOf(x, `${at}[${i}]`, out));
  else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) securePathsOf(x, `${at}.${k}`, out);
  return out;
}

/** Replace `secure:` leaves by the placeholder; report whether any were found. */
function unsecure(v: unknown): { value: unknown; secret: boolean } {
  if (isSecure(v)) return { value: SECRET_PLACEHOLDER, secret: true };
  if (Array.isArray(v)) {
    const parts = v.map(unsecure);
    return { value: parts.map((p) => p.value), secret: parts.some((p) => p.secret) };
  }
  if (v !== null && typeof v === "object") {
    let secret = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const p = unsecure(x);
      out[k] = p.value;
      secret ||= p.secret;
    }
    return { value: out, secret };
  }
  return { value: v, secret: false };
}

export function readStackFile(root: string, stack: string): StackFile {
  const file = ["yaml", "yml"].map((e) => path.join(root, `Pulumi.${stack}.${e}`)).find((f) => fs.existsSync(f));
  if (!file) {
    const known = listStacks(root);
    throw new UsageError(`no stack file Pulumi.${stack}.yaml in ${root} (stacks: ${known.join(", ") || "none"})`);
  }
  let doc: any;
  try {
    doc = yaml.load(fs.readFileSync(file, "utf8")) ?? {};
  } catch (e) {
    throw new UsageError(`${path.basename(file)} is not valid YAML: ${(e as Error).message}`);
  }
  const raw = doc.config ?? {};
  if (typeof raw !== "object" || Array.isArray(raw)) throw new UsageError(`${path.basename(file)}: 'config' must be a mapping`);
  return { ...stackConfigOf(readProjectName(root), stack, raw), file };
}

/**
 * A stack's config from its values as a stack file's `config:` mapping holds them (structured
 * values, `{ secure: … }` leaves): each value a string (structured values as JSON), a key
 * without a namespace in the project's, `secure:` leaves replaced by the placeholder and
 * their keys marked secret.
 */
export function stackConfigOf(projectName: string, stack: string, values: Record<string, unknown>): Required<StackConfig> {
  const config: Record<string, string> = {};
  const secretKeys: string[] = [];
  const secureFingerprints: Record<string, string> = {};
  const securePaths: string[] = [];
  for (const [key0, v0] of Object.entries(values)) {
    // As the CLI does, a key without a namespace belongs to the project.
    const key = key0.includes(":") ? key0 : `${projectName}:${key0}`;
    const { value, secret } = unsecure(v0);
    config[key] = typeof value === "string" ? value : goJson(value);
    if (secret) {
      secretKeys.push(key);
      secureFingerprints[key] = fingerprint(v0);
      securePaths.push(...securePathsOf(v0, key));
    }
  }
  return { stack, config, secretKeys, secureFingerprints, securePaths, values };
}

/**
 * A structured config value as the CLI hands it to the program: Go's encoding/json Marshal of
 * the decrypted value (sdk/go/common/resource/config/plaintext.go marshalText at v3.248.0), so
 * object keys sorted (encoding/json sorts map keys by their bytes) and `<`, `>`, `&`, U+2028,
 * U+2029 escaped as \u003c etc. (json.Marshal's HTML escaping). Numbers and the other escapes
 * read the same as JSON.stringify's once parsed.
 */
export function goJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => goJson(x ?? null)).join(",")}]`;
  if (v !== null && typeof v === "object" && !(v instanceof Date)) {
    // As JSON.stringify: a key whose value is undefined (a fixture's "remove this") is left out.
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return `{${keys.map((k) => `${goString(k)}:${goJson(o[k])}`).join(",")}}`;
  }
  return typeof v === "string" ? goString(v) : JSON.stringify(v);
}

const GO_HTML_ESCAPES: Record<string, string> = { "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029" };

function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => GO_HTML_ESCAPES[c]);
}

export function readProjectName(root: string): string {
  const doc = yaml.load(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8")) as { name?: string };
  if (!doc?.name) throw new UsageError("Pulumi.yaml has no project name");
  return doc.name;
}
