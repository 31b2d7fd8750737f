// Protobuf text format (a config.pbtxt) for the part of Triton's ModelConfig the stack writes,
// rendered and parsed by hand from the field table (components/upstream/triton-model-config.ts):
// the plan and `pulumi up` must not need protoc, which only the tests run to prove both sides.
// A message is a plain object keyed by proto field names: scalars as JS values (64-bit integers
// as safe numbers), enums by value name, repeated fields as arrays, map fields as objects by key.
// The parser reports every problem with file:line:column and stops at the first; it is the one a
// lint of a publisher's repository can reuse (parseModelConfig over each <model>/config.pbtxt).
import { MODEL_CONFIG_ENUMS, MODEL_CONFIG_MESSAGE, MODEL_CONFIG_MESSAGES, MODEL_CONFIG_PACKAGE, type ProtoField } from "../../upstream/triton-model-config";

export type PbScalar = string | number | boolean;
export type PbValue = PbScalar | PbMessage | readonly PbValue[] | Readonly<Record<string, PbScalar | PbMessage>>;
export interface PbMessage {
  readonly [field: string]: PbValue;
}

const isMessageType = (f: ProtoField) => f.type.startsWith("message:");
const isEnumType = (f: ProtoField) => f.type.startsWith("enum:");
const typeName = (f: ProtoField) => f.type.slice(f.type.indexOf(":") + 1);

function fieldsOf(message: string): readonly ProtoField[] {
  const fields = MODEL_CONFIG_MESSAGES[message];
  if (!fields) throw new Error(`no message ${message} in the field table`);
  return fields;
}

// ---- rendering ----------------------------------------------------------------------------

/** A string literal of text format: double-quoted, with C escapes (protoc reads UTF-8 as is). */
function quote(s: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
  return `"${s.replace(/[\\"\n\r\t]|[\x00-\x1f\x7f]/g, (c) => {
    switch (c) {
      case "\\":
        return "\\\\";
      case '"':
        return '\\"';
      case "\n":
        return "\\n";
      case "\r":
        return "\\r";
      case "\t":
        return "\\t";
      default:
        return `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`;
    }
  })}"`;
}

function scalarText(f: ProtoField, value: unknown, where: string): string {
  if (isEnumType(f)) {
    if (typeof value !== "string" || MODEL_CONFIG_ENUMS[typeName(f)]?.[value] === undefined)
      throw new Error(`${where}: ${String(value)} is no value of ${typeName(f)}`);
    return value;
  }
  switch (f.type) {
    case "string":
      if (typeof value !== "string") throw new Error(`${where}: a string is needed`);
      return quote(value);
    case "bool":
      if (typeof value !== "boolean") throw new Error(`${where}: a boolean is needed`);
      return String(value);
    default:
      if (typeof value !== "number" || !Number.isSafeInteger(value)) throw new Error(`${where}: an integer is needed`);
      return String(value);
  }
}

function renderFields(message: string, msg: PbMessage, indent: string, out: string[], where: string): void {
  const fields = fieldsOf(message);
  for (const key of Object.keys(msg)) {
    if (msg[key] !== undefined && !fields.some((f) => f.name === key)) throw new Error(`${where}: ${key} is no field of ${message} in the field table`);
  }
  const inner = `${indent}  `;
  for (const f of fields) {
    const value = msg[f.name];
    if (value === undefined) continue;
    const at = `${where}.${f.name}`;
    if (f.mapKey) {
      for (const [k, v] of Object.entries(value as Record<string, PbValue>)) {
        out.push(`${indent}${f.name} {`, `${inner}key: ${quote(k)}`);
        if (isMessageType(f)) {
          out.push(`${inner}value {`);
          renderFields(typeName(f), v as PbMessage, `${inner}  `, out, `${at}[${k}]`);
          out.push(`${inner}}`);
        } else out.push(`${inner}value: ${scalarText(f, v, at)}`);
        out.push(`${indent}}`);
      }
    } else if (f.repeated) {
      const items = value as readonly PbValue[];
      if (items.length === 0) continue;
      if (isMessageType(f)) {
        out.push(`${indent}${f.name} [`);
        items.forEach((item, i) => {
          out.push(`${inner}{`);
          renderFields(typeName(f), item as PbMessage, `${inner}  `, out, `${at}[${i}]`);
          out.push(`${inner}}${i < items.length - 1 ? "," : ""}`);
        });
        out.push(`${indent}]`);
      } else out.push(`${indent}${f.name}: [ ${items.map((x, i) => scalarText(f, x, `${at}[${i}]`)).join(", ")} ]`);
    } else if (isMessageType(f)) {
      out.push(`${indent}${f.name} {`);
      renderFields(typeName(f), value as PbMessage, inner, out, at);
      out.push(`${indent}}`);
    } else out.push(`${indent}${f.name}: ${scalarText(f, value, at)}`);
  }
}

/** A ModelConfig message as config.pbtxt text (fields in the proto's order; `header` lines as # comments first). */
export function renderModelConfig(msg: PbMessage, header: readonly string[] = []): string {
  const out = header.map((h) => `# ${h}`);
  renderFields(MODEL_CONFIG_MESSAGE, msg, "", out, MODEL_CONFIG_MESSAGE);
  return `${out.join("\n")}\n`;
}

// ---- parsing ------------------------------------------------------------------------------

/** A config.pbtxt the parser refuses: where (file:line:column) and why. */
export class PbtxtError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}:${column}: ${reason}`);
    this.name = "PbtxtError";
  }
}

interface Token {
  readonly kind: "ident" | "number" | "string" | "punct" | "end";
  readonly text: string;
  /** A string token's decoded value. */
  readonly value?: string;
  readonly line: number;
  readonly column: number;
}

function tokenize(text: string, file: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const fail = (at: number, reason: string): never => {
    throw new PbtxtError(file, line, at - lineStart + 1, reason);
  };
  while (i < text.length) {
    const c = text[i];
    if (c === "\n") {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v") {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    const start = i;
    const column = i - lineStart + 1;
    if (/[A-Za-z_]/.test(c)) {
      while (i < text.length && /[A-Za-z0-9_]/.test(text[i])) i++;
      out.push({ kind: "ident", text: text.slice(start, i), line, column });
    } else if (/[-0-9]/.test(c)) {
      i++;
      while (i < text.length && /[A-Za-z0-9_.+-]/.test(text[i]) && !(text[i] === "-" && !/[eE]/.test(text[i - 1]))) i++;
      out.push({ kind: "number", text: text.slice(start, i), line, column });
    } else if (c === '"' || c === "'") {
      i++;
      const bytes: number[] = [];
      const enc = new TextEncoder();
      while (i < text.length && text[i] !== c) {
        if (text[i] === "\n") fail(start, "string not closed before the end of the line");
        if (text[i] === "\\") {
          const e = text[i + 1];
          const simple: Record<string, number> = { n: 10, t: 9, r: 13, "\\": 92, "'": 39, '"': 34, a: 7, b: 8, f: 12, v: 11, "?": 63 };
          if (e in simple) {
            bytes.push(simple[e]);
            i += 2;
          } else if (/[0-7]/.test(e)) {
            const m = /^[0-7]{1,3}/.exec(text.slice(i + 1))![0];
            bytes.push(parseInt(m, 8) & 0xff);
            i += 1 + m.length;
          } else if (e === "x" && /[0-9a-fA-F]/.test(text[i + 2] ?? "")) {
            const m = /^[0-9a-fA-F]{1,2}/.exec(text.slice(i + 2))![0];
            bytes.push(parseInt(m, 16));
            i += 2 + m.length;
          } else fail(i, `unknown escape \\${e ?? ""} in a string`);
        } else {
          const cp = text.codePointAt(i)!;
          const ch = String.fromCodePoint(cp);
          bytes.push(...enc.encode(ch));
          i += ch.length;
        }
      }
      if (i >= text.length) fail(start, "string not closed");
      i++;
      let value: string;
      try {
        value = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes));
      } catch {
        return fail(start, "string is not valid UTF-8");
      }
      const prev = out[out.length - 1];
      // Adjacent string literals are one string, as in C.
      if (prev?.kind === "string") out[out.length - 1] = { ...prev, value: prev.value! + value };
      else out.push({ kind: "string", text: text.slice(start, i), value, line, column });
    } else if ("{}[]<>:,;".includes(c)) {
      i++;
      out.push({ kind: "punct", text: c, line, column });
    } else fail(i, `unexpected character ${JSON.stringify(c)}`);
  }
  out.push({ kind: "end", text: "end of file", line, column: i - lineStart + 1 });
  return out;
}

const INT_RANGE: Record<string, [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly file: string,
  ) {}

  private peek(): Token {
    return this.tokens[this.pos];
  }
  private next(): Token {
    return this.tokens[this.pos++];
  }
  private fail(t: Token, reason: string): never {
    throw new PbtxtError(this.file, t.line, t.column, reason);
  }
  private is(text: string): boolean {
    const t = this.peek();
    return t.kind === "punct" && t.text === text;
  }
  private expect(text: string): Token {
    const t = this.next();
    if (t.kind !== "punct" || t.text !== text) this.fail(t, `expected "${text}", found ${t.kind === "end" ? "the end of the file" : JSON.stringify(t.text)}`);
    return t;
  }

  /** The fields of `message` up to `close` ("}" or ">", or "" for the end of the file). */
  message(message: string, close: string): PbMessage {
    const fields = fieldsOf(message);
    const out: Record<string, PbValue> = {};
    const firstAt = new Map<string, Token>();
    const oneofAt = new Map<string, string>();
    const qualified = `${MODEL_CONFIG_PACKAGE}.${message}`;
    for (;;) {
      const t = this.peek();
      if (close === "" ? t.kind === "end" : t.kind === "punct" && t.text === close) {
        this.next();
        return out;
      }
      if (t.kind === "end") this.fail(t, `expected "${close}" to close ${qualified}, found the end of the file`);
      const nameTok = this.next();
      if (nameTok.kind !== "ident") this.fail(nameTok, `expected a field name of ${qualified}, found ${JSON.stringify(nameTok.text)}`);
      const f = fields.find((x) => x.name === nameTok.text);
      if (!f)
        this.fail(nameTok, `unknown field "${nameTok.text}" of ${qualified} (not a field the stack's table holds: components/upstream/triton-model-config.ts)`);
      if (f.oneof) {
        const other = oneofAt.get(f.oneof);
        if (other !== undefined && other !== f.name) this.fail(nameTok, `${f.name} and ${other} are both set: they are one of ${f.oneof}, set one`);
        oneofAt.set(f.oneof, f.name);
      }
      const prev = firstAt.get(f.name);
      if (prev && !f.repeated && !f.mapKey) this.fail(nameTok, `field "${f.name}" of ${qualified} is set twice (first at ${prev.line}:${prev.column})`);
      if (!prev) firstAt.set(f.name, nameTok);
      const values = this.fieldValues(f, message);
      if (f.mapKey) {
        const map = (out[f.name] ?? {}) as Record<string, PbScalar | PbMessage>;
        for (const [k, v, at] of values as [string, PbScalar | PbMessage, Token][]) {
          if (Object.hasOwn(map, k)) this.fail(at, `key ${JSON.stringify(k)} of map ${f.name} is set twice`);
          map[k] = v;
        }
        out[f.name] = map;
      } else if (f.repeated) out[f.name] = [...((out[f.name] as PbValue[] | undefined) ?? []), ...(values as PbValue[])];
      else out[f.name] = (values as PbValue[])[0];
      if (this.is(",") || this.is(";")) this.next();
    }
  }

  /** A field's value(s) after its name: `: scalar`, `: [a, b]`, `{...}`, `[{...}, {...}]`. */
  private fieldValues(f: ProtoField, message: string): PbValue[] | [string, PbScalar | PbMessage, Token][] {
    const composite = isMessageType(f) || f.mapKey !== undefined;
    if (this.is(":")) this.next();
    else if (!composite) this.fail(this.peek(), `expected ":" after ${f.name}`);
    const one = () => (f.mapKey ? this.mapEntry(f) : composite ? this.block(typeName(f)) : this.scalar(f));
    if (this.is("[")) {
      const open = this.next();
      if (!f.repeated && !f.mapKey) this.fail(open, `field "${f.name}" of ${MODEL_CONFIG_PACKAGE}.${message} is not repeated: no list`);
      const items: unknown[] = [];
      while (!this.is("]")) {
        items.push(one());
        if (this.is(",")) this.next();
        else if (!this.is("]")) this.fail(this.peek(), `expected "," or "]" in the list of ${f.name}`);
      }
      this.next();
      return items as PbValue[];
    }
    return [one()] as PbValue[];
  }

  private block(message: string): PbMessage {
    const open = this.next();
    if (open.kind !== "punct" || (open.text !== "{" && open.text !== "<")) this.fail(open, `expected "{" to open ${MODEL_CONFIG_PACKAGE}.${message}`);
    return this.message(message, open.text === "{" ? "}" : ">");
  }

  private mapEntry(f: ProtoField): [string, PbScalar | PbMessage, Token] {
    const open = this.next();
    if (open.kind !== "punct" || (open.text !== "{" && open.text !== "<")) this.fail(open, `expected "{" to open an entry of map ${f.name}`);
    const close = open.text === "{" ? "}" : ">";
    let key: string | undefined;
    let value: PbScalar | PbMessage | undefined;
    while (!this.is(close)) {
      const t = this.next();
      if (t.kind === "ident" && (t.text === "key" || t.text === "value")) {
        if ((t.text === "key" ? key : value) !== undefined) this.fail(t, `${t.text} of a ${f.name} entry is set twice`);
        if (t.text === "key") {
          this.expect(":");
          key = this.scalar({ name: "key", id: 1, type: f.mapKey! }) as string;
        } else if (isMessageType(f)) {
          if (this.is(":")) this.next();
          value = this.block(typeName(f));
        } else {
          this.expect(":");
          value = this.scalar(f);
        }
        if (this.is(",") || this.is(";")) this.next();
      } else if (t.kind === "end") this.fail(t, `expected "${close}" to close an entry of map ${f.name}`);
      else this.fail(t, `expected key or value in an entry of map ${f.name}, found ${JSON.stringify(t.text)}`);
    }
    this.next();
    if (key === undefined) this.fail(open, `an entry of map ${f.name} has no key`);
    return [key, value ?? (isMessageType(f) ? {} : ""), open];
  }

  private scalar(f: ProtoField): PbScalar {
    const t = this.next();
    if (isEnumType(f)) {
      const values = MODEL_CONFIG_ENUMS[typeName(f)];
      if (t.kind === "ident" && values[t.text] !== undefined) return t.text;
      if (t.kind === "number") {
        const name = Object.keys(values).find((k) => String(values[k]) === t.text);
        if (name) return name;
      }
      return this.fail(
        t,
        `${f.name} must be one of ${Object.keys(values).join(", ")} (enum ${MODEL_CONFIG_PACKAGE}.${typeName(f)}), found ${JSON.stringify(t.text)}`,
      );
    }
    switch (f.type) {
      case "string":
        if (t.kind !== "string") this.fail(t, `${f.name} must be a quoted string, found ${JSON.stringify(t.text)}`);
        return t.value!;
      case "bool":
        if (t.kind === "ident" && ["true", "True", "t"].includes(t.text)) return true;
        if (t.kind === "ident" && ["false", "False", "f"].includes(t.text)) return false;
        if (t.kind === "number" && (t.text === "1" || t.text === "0")) return t.text === "1";
        return this.fail(t, `${f.name} must be true or false, found ${JSON.stringify(t.text)}`);
      default: {
        if (t.kind !== "number" || !/^-?(0|[1-9][0-9]*|0[xX][0-9a-fA-F]+|0[0-7]+)$/.test(t.text))
          this.fail(t, `${f.name} must be an integer (${f.type}), found ${JSON.stringify(t.text)}`);
        const neg = t.text.startsWith("-");
        const digits = neg ? t.text.slice(1) : t.text;
        const big = (neg ? -1n : 1n) * BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits);
        const [lo, hi] = INT_RANGE[f.type];
        if (big < lo || big > hi) this.fail(t, `${f.name} must be a ${f.type} (${lo} to ${hi}), found ${t.text}`);
        if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(Number.MIN_SAFE_INTEGER))
          this.fail(t, `${f.name} beyond ±2^53 is not supported by the stack's parser, found ${t.text}`);
        return Number(big);
      }
    }
  }
}

/** Parse a config.pbtxt into a ModelConfig message (the field table's part); throws PbtxtError with file:line:column. */
export function parseModelConfig(text: string, file = "config.pbtxt"): PbMessage {
  return new Parser(tokenize(text, file), file).message(MODEL_CONFIG_MESSAGE, "");
}
