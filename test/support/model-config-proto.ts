// Triton's model_config.proto per release, as the tests read it: the shared reference folder
// (../shared/reference/triton-model-config/, found beside the clone or its git common dir),
// loaded with protobufjs, and Debian's protoc run on it for encode/decode.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as protobuf from "protobufjs";
import { ROOT } from "../helpers";

/** The shared folder of model_config.proto files, or undefined without shared/ beside the clone. */
export const MODEL_CONFIG_DIR = ((): string | undefined => {
  const common = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: ROOT, encoding: "utf8" });
  const beside = [ROOT, ...(common.status === 0 ? [path.dirname(common.stdout.trim())] : [])];
  return beside.map((d) => path.join(d, "..", "shared", "reference", "triton-model-config")).find((d) => fs.existsSync(d));
})();

/** The proto files of the shared folder. */
export function protoFiles(): string[] {
  return MODEL_CONFIG_DIR ? fs.readdirSync(MODEL_CONFIG_DIR).filter((f) => /^model_config\..*\.proto$/.test(f)) : [];
}

const roots = new Map<string, protobuf.Root>();
/** One proto file loaded with protobufjs (keepCase: the field names as written). */
export function loadProto(file: string): protobuf.Root {
  let r = roots.get(file);
  if (!r) {
    r = protobuf.parse(fs.readFileSync(path.join(MODEL_CONFIG_DIR!, file), "utf8"), { keepCase: true }).root;
    roots.set(file, r);
  }
  return r;
}

/** Is Debian's protoc on PATH? */
export const HAVE_PROTOC = spawnSync("protoc", ["--version"], { encoding: "utf8" }).status === 0;

/** protoc --encode=inference.ModelConfig of a text-format config: the binary, or protoc's error. */
export function protocEncode(file: string, text: string): { ok: true; bytes: Buffer } | { ok: false; error: string } {
  const r = spawnSync("protoc", [`--encode=inference.ModelConfig`, `-I`, MODEL_CONFIG_DIR!, file], { input: text });
  return r.status === 0 ? { ok: true, bytes: r.stdout } : { ok: false, error: r.stderr.toString() };
}

/** protoc --decode=inference.ModelConfig of a binary: protoc's own text format. */
export function protocDecode(file: string, bytes: Buffer): string {
  const r = spawnSync("protoc", [`--decode=inference.ModelConfig`, `-I`, MODEL_CONFIG_DIR!, file], { input: bytes });
  if (r.status !== 0) throw new Error(`protoc --decode failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}
