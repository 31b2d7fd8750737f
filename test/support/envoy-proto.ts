// Envoy's own schema as the oracle for the bootstraps the gateway renders: the data-plane-api
// protos that @grpc/grpc-js-xds ships in its deps/ folder (envoy-api, xds/udpa, googleapis,
// protoc-gen-validate; their API level is ENVOY_PROTO_API in components/upstream/envoy.ts),
// loaded with protobufjs, and a strict walk of the proto3 JSON a bootstrap is:
//   - every key is a field of its message, by its proto name or its proto3 JSON (lowerCamel) name;
//   - enum values are names of the enum (or numbers it defines);
//   - google.protobuf.Any is resolved by its @type (the extension's folder is loaded on demand)
//     and walked as that message; an unknown type URL is an error;
//   - at most one field of a oneof is set; a oneof marked (validate.required) has one set;
//   - PGV rules: (validate.rules).<kind>.required, string.min_len / bytes.min_len,
//     repeated.min_items, numeric gt/gte/lt/lte, duration gt/gte/lt/lte;
//   - well-known types in their JSON forms (Duration "1.5s", wrappers as scalars, Struct free-form);
//   - fields and enum values marked deprecated are warnings, not errors.
// Not modelled: the other PGV rules (string patterns, `in` lists, map key rules), and
// extension-specific checks Envoy runs in C++ after parsing.
import * as fs from "node:fs";
import * as path from "node:path";
import protobuf from "protobufjs";

const XDS_DEPS = path.join(path.dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
/** Import roots, in the order protoc would be given them (the package's own generate-types script uses the same four). */
const INCLUDE_DIRS = [
  path.join(XDS_DEPS, "envoy-api"),
  path.join(XDS_DEPS, "xds"),
  path.join(XDS_DEPS, "googleapis"),
  path.join(XDS_DEPS, "protoc-gen-validate"),
  // google/protobuf/descriptor.proto (for the annotations' `extend`); the well-known types are built into protobufjs.
  path.dirname(require.resolve("protobufjs/package.json")),
];

export interface ProtoCheck {
  /** Each a path into the document and what is wrong. */
  readonly errors: string[];
  /** Deprecated fields and enum values in use. */
  readonly warnings: string[];
}

const TYPE_URL_PREFIX = "type.googleapis.com/";

let shared: EnvoyProtoSchema | undefined;
/** One loaded schema per process (loading the bootstrap's closure takes ~0.2 s). */
export function envoySchema(): EnvoyProtoSchema {
  return (shared ??= new EnvoyProtoSchema());
}

export class EnvoyProtoSchema {
  readonly root = new protobuf.Root();
  private readonly loadedDirs = new Set<string>();

  constructor() {
    this.root.resolvePath = (origin, target) => {
      for (const dir of INCLUDE_DIRS) {
        const p = path.join(dir, target);
        if (fs.existsSync(p)) return p;
      }
      return protobuf.util.path.resolve(origin, target);
    };
    this.load(["envoy/config/bootstrap/v3/bootstrap.proto"]);
  }

  private load(files: string[]): void {
    this.root.loadSync(files, { keepCase: true });
    this.root.resolveAll();
  }

  /** A message type by full name, loading the protos of its package folder on first use (an Any's @type). */
  messageType(fullName: string): protobuf.Type | undefined {
    const found = this.lookupType(fullName);
    if (found) return found;
    const dir = fullName.split(".").slice(0, -1).join("/");
    if (this.loadedDirs.has(dir)) return undefined;
    this.loadedDirs.add(dir);
    for (const include of INCLUDE_DIRS.slice(0, 4)) {
      const abs = path.join(include, dir);
      if (!fs.existsSync(abs)) continue;
      const files = fs.readdirSync(abs).filter((f) => f.endsWith(".proto"));
      // A folder whose imports are not shipped (old v2 APIs) holds no type we can resolve.
      try {
        if (files.length) this.load(files.map((f) => path.join(dir, f)));
      } catch {
        return undefined;
      }
    }
    return this.lookupType(fullName);
  }

  private lookupType(fullName: string): protobuf.Type | undefined {
    try {
      return this.root.lookupType(fullName);
    } catch {
      return undefined;
    }
  }

  /** Walk a proto3 JSON document as the message `typeName` (default: the Envoy bootstrap). */
  check(doc: unknown, typeName = "envoy.config.bootstrap.v3.Bootstrap"): ProtoCheck {
    const type = this.messageType(typeName);
    if (!type) throw new Error(`unknown message type ${typeName}`);
    const out = { errors: [] as string[], warnings: [] as string[] };
    new Walker(this, out).message(doc, type, "$");
    return out;
  }
}

/** proto3 JSON name of a field: protoc's ToJsonName (drop each '_', upper-case the next letter). */
export function jsonName(protoName: string): string {
  return protoName.replace(/_+([a-zA-Z0-9])?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""));
}

const INT32 = new Set(["int32", "uint32", "sint32", "fixed32", "sfixed32"]);
const INT64 = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);
const WRAPPERS: Record<string, string> = {
  "google.protobuf.DoubleValue": "double",
  "google.protobuf.FloatValue": "float",
  "google.protobuf.Int64Value": "int64",
  "google.protobuf.UInt64Value": "uint64",
  "google.protobuf.Int32Value": "int32",
  "google.protobuf.UInt32Value": "uint32",
  "google.protobuf.BoolValue": "bool",
  "google.protobuf.StringValue": "string",
  "google.protobuf.BytesValue": "bytes",
};
const DURATION = /^-?\d+(\.\d{1,9})?s$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/;

type Options = Record<string, unknown>;

function fullNameOf(t: protobuf.ReflectionObject): string {
  return t.fullName.replace(/^\./, "");
}

function durationSeconds(s: string): number {
  return Number(s.slice(0, -1));
}

class Walker {
  constructor(
    private readonly schema: EnvoyProtoSchema,
    private readonly out: { errors: string[]; warnings: string[] },
  ) {}

  private error(at: string, message: string): void {
    this.out.errors.push(`${at}: ${message}`);
  }

  message(v: unknown, type: protobuf.Type, at: string): void {
    const name = fullNameOf(type);
    // Well-known types have their own JSON forms.
    if (name === "google.protobuf.Any") return this.any(v, at);
    if (name === "google.protobuf.Duration") {
      if (typeof v !== "string" || !DURATION.test(v)) this.error(at, `expected a Duration such as "5s" or "0.250s", got ${JSON.stringify(v)}`);
      return;
    }
    if (name === "google.protobuf.Timestamp") {
      if (typeof v !== "string" || !TIMESTAMP.test(v)) this.error(at, `expected an RFC 3339 Timestamp, got ${JSON.stringify(v)}`);
      return;
    }
    if (name === "google.protobuf.Struct") {
      if (v === null || typeof v !== "object" || Array.isArray(v)) this.error(at, `expected a Struct (JSON object), got ${JSON.stringify(v)}`);
      return;
    }
    if (name === "google.protobuf.Value") return;
    if (name === "google.protobuf.ListValue") {
      if (!Array.isArray(v)) this.error(at, `expected a ListValue (JSON array), got ${JSON.stringify(v)}`);
      return;
    }
    if (name === "google.protobuf.FieldMask") {
      if (typeof v !== "string") this.error(at, `expected a FieldMask string, got ${JSON.stringify(v)}`);
      return;
    }
    if (name in WRAPPERS) return this.scalar(v, WRAPPERS[name], at, undefined);
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      this.error(at, `expected a ${type.name} object, got ${JSON.stringify(v)}`);
      return;
    }
    this.fields(v as Record<string, unknown>, type, at, new Set());
  }

  /** The fields of an object as `type`; `skip` holds keys already consumed (an Any's @type). */
  private fields(o: Record<string, unknown>, type: protobuf.Type, at: string, skip: Set<string>): void {
    const byName = new Map<string, protobuf.Field>();
    for (const f of type.fieldsArray) {
      byName.set(f.name, f);
      byName.set(jsonName(f.name), f);
    }
    const set = new Map<string, string>(); // proto field name -> key as written
    for (const [key, value] of Object.entries(o)) {
      if (skip.has(key)) continue;
      const f = byName.get(key);
      const where = `${at}.${key}`;
      if (!f) {
        this.error(where, `${type.name} has no field "${key}"`);
        continue;
      }
      if (set.has(f.name)) {
        this.error(where, `${type.name}.${f.name} is set twice (as "${set.get(f.name)}" and "${key}")`);
        continue;
      }
      set.set(f.name, key);
      if (f.options?.deprecated === true) this.out.warnings.push(`${where}: ${type.name}.${f.name} is deprecated`);
      this.field(value, f, where);
    }
    for (const oneof of type.oneofsArray) {
      const members = oneof.fieldsArray.filter((f) => set.has(f.name));
      if (members.length > 1) {
        this.error(at, `${type.name} oneof ${oneof.name} has more than one field set: ${members.map((f) => set.get(f.name)).join(", ")}`);
      }
      if (members.length === 0 && oneof.options?.["(validate.required)"] === true) {
        this.error(at, `${type.name} oneof ${oneof.name} is required: set one of ${oneof.fieldsArray.map((f) => f.name).join(", ")}`);
      }
    }
    for (const f of type.fieldsArray) {
      // An unset oneof member is not validated (PGV skips it): the oneof's own rule applies.
      if (set.has(f.name) || f.partOf) continue;
      const rule = requiredRule(f);
      if (rule) this.error(`${at}.${f.name}`, `${type.name}.${f.name} is required (${rule})`);
    }
  }

  private field(v: unknown, f: protobuf.Field, at: string): void {
    const opts = f.options ?? {};
    if (f instanceof protobuf.MapField) {
      if (v === null || typeof v !== "object" || Array.isArray(v)) {
        this.error(at, `expected a map (JSON object), got ${JSON.stringify(v)}`);
        return;
      }
      for (const [k, x] of Object.entries(v)) this.single(x, f, `${at}[${JSON.stringify(k)}]`, opts);
      return;
    }
    if (f.repeated) {
      if (!Array.isArray(v)) {
        this.error(at, `expected a list, got ${JSON.stringify(v)}`);
        return;
      }
      const min = opts["(validate.rules).repeated.min_items"];
      if (typeof min === "number" && v.length < min) this.error(at, `${f.name} needs at least ${min} item(s), got ${v.length}`);
      v.forEach((x, i) => this.single(x, f, `${at}[${i}]`, opts));
      return;
    }
    this.single(v, f, at, opts);
  }

  private single(v: unknown, f: protobuf.Field, at: string, opts: Options): void {
    const resolved = f.resolvedType;
    if (resolved instanceof protobuf.Type) {
      this.message(v, resolved, at);
      if (fullNameOf(resolved) === "google.protobuf.Duration" && typeof v === "string" && DURATION.test(v)) this.durationRules(durationSeconds(v), opts, at);
      if (fullNameOf(resolved) in WRAPPERS && typeof v === "number") this.numberRules(v, WRAPPERS[fullNameOf(resolved)], opts, at);
      return;
    }
    if (resolved instanceof protobuf.Enum) return this.enumValue(v, resolved, at);
    this.scalar(v, f.type, at, opts);
  }

  private enumValue(v: unknown, e: protobuf.Enum, at: string): void {
    if (typeof v === "number" && Object.values(e.values).includes(v)) return;
    if (typeof v !== "string" || !(v in e.values)) {
      this.error(at, `${JSON.stringify(v)} is not one of ${e.name} (${Object.keys(e.values).join(", ")})`);
      return;
    }
    const valueOpts = e.valuesOptions?.[v] ?? {};
    if (valueOpts.deprecated === true) this.out.warnings.push(`${at}: ${e.name}.${v} is deprecated`);
  }

  private scalar(v: unknown, type: string, at: string, opts: Options | undefined): void {
    const bad = (what: string) => this.error(at, `expected ${what} (${type}), got ${JSON.stringify(v)}`);
    if (type === "bool") {
      if (typeof v !== "boolean") bad("true or false");
      return;
    }
    if (type === "string") {
      if (typeof v !== "string") return bad("a string");
      const min = opts?.["(validate.rules).string.min_len"] ?? opts?.["(validate.rules).string.min_bytes"];
      if (typeof min === "number" && Buffer.byteLength(v) < min) this.error(at, `needs at least ${min} character(s), got ${JSON.stringify(v)}`);
      return;
    }
    if (type === "bytes") {
      if (typeof v !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v)) bad("base64 bytes");
      return;
    }
    if (INT32.has(type) || INT64.has(type)) {
      const n = typeof v === "string" && INT64.has(type) && /^-?\d+$/.test(v) ? Number(v) : v;
      if (typeof n !== "number" || !Number.isInteger(n)) return bad("an integer");
      if (type.startsWith("u") || type.startsWith("fixed")) {
        if (n < 0) return bad("a non-negative integer");
      }
      if (opts) this.numberRules(n, type, opts, at);
      return;
    }
    if (type === "double" || type === "float") {
      if (typeof v !== "number") return bad("a number");
      if (opts) this.numberRules(v, type, opts, at);
      return;
    }
    bad("a known scalar");
  }

  private numberRules(n: number, type: string, opts: Options, at: string): void {
    const rule = (k: string) => opts[`(validate.rules).${type}.${k}`];
    const fail = (what: string, bound: unknown) => this.error(at, `must be ${what} ${String(bound)} (validate.rules), got ${n}`);
    const gt = rule("gt"),
      gte = rule("gte"),
      lt = rule("lt"),
      lte = rule("lte");
    if (typeof gt === "number" && !(n > gt)) fail(">", gt);
    if (typeof gte === "number" && !(n >= gte)) fail(">=", gte);
    if (typeof lt === "number" && !(n < lt)) fail("<", lt);
    if (typeof lte === "number" && !(n <= lte)) fail("<=", lte);
  }

  private durationRules(s: number, opts: Options, at: string): void {
    const bound = (k: string): number | undefined => {
      const sec = opts[`(validate.rules).duration.${k}.seconds`];
      const nanos = opts[`(validate.rules).duration.${k}.nanos`];
      if (sec === undefined && nanos === undefined) return undefined;
      return Number(sec ?? 0) + Number(nanos ?? 0) / 1e9;
    };
    const fail = (what: string, b: number) => this.error(at, `must be ${what} ${b}s (validate.rules), got ${s}s`);
    const gt = bound("gt"),
      gte = bound("gte"),
      lt = bound("lt"),
      lte = bound("lte");
    if (gt !== undefined && !(s > gt)) fail(">", gt);
    if (gte !== undefined && !(s >= gte)) fail(">=", gte);
    if (lt !== undefined && !(s < lt)) fail("<", lt);
    if (lte !== undefined && !(s <= lte)) fail("<=", lte);
  }

  private any(v: unknown, at: string): void {
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      this.error(at, `expected an Any object with "@type", got ${JSON.stringify(v)}`);
      return;
    }
    const o = v as Record<string, unknown>;
    const url = o["@type"];
    if (typeof url !== "string" || !url.startsWith(TYPE_URL_PREFIX)) {
      this.error(at, `an Any needs "@type": "${TYPE_URL_PREFIX}<message>", got ${JSON.stringify(url)}`);
      return;
    }
    const type = this.schema.messageType(url.slice(TYPE_URL_PREFIX.length));
    if (!type) {
      this.error(`${at}["@type"]`, `unknown type URL ${url} (no such message in the data-plane-api protos)`);
      return;
    }
    // Well-known types inside an Any carry their JSON form under "value".
    const wkt = fullNameOf(type);
    if (wkt === "google.protobuf.Duration" || wkt === "google.protobuf.Struct" || wkt in WRAPPERS) {
      this.message(o.value, type, `${at}.value`);
      return;
    }
    this.fields(o, type, at, new Set(["@type"]));
  }
}

/** Why a field must be present, or undefined: the PGV rules that an absent (default) value fails. */
function requiredRule(f: protobuf.Field): string | undefined {
  const opts = f.options ?? {};
  for (const [k, v] of Object.entries(opts)) {
    if (/^\(validate\.rules\)\.\w+\.required$/.test(k) && v === true) return k;
    if (/^\(validate\.rules\)\.(string|bytes)\.min_(len|bytes)$/.test(k) && typeof v === "number" && v > 0) return `${k} = ${v}`;
    if (k === "(validate.rules).repeated.min_items" && typeof v === "number" && v > 0) return `${k} = ${v}`;
  }
  return undefined;
}
