// The stack's config.pbtxt renderer and parser (components/triton/model-config), proven with
// Triton's own schema through Debian's protoc: every config rendered from a contract is accepted by
// `protoc --encode=inference.ModelConfig` at every supported release's model_config.proto; decoding
// the binary back (protoc's own text) and parsing it gives the message the contract rendered (round
// trip); fast-check runs that over generated contracts; broken files are refused by both protoc and
// the parser, the parser naming file:line:column.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import * as v from "valibot";
import { modelContract } from "../components/triton/schema";
import { modelConfigMessage, parseModelConfig, PbtxtError, renderContract, type PbMessage, type PbValue } from "../components/triton/model-config";
import { MODEL_CONFIG_ENUMS, MODEL_CONFIG_MESSAGES, MODEL_CONFIG_PROTO_OF_RELEASE } from "../components/upstream/triton-model-config";
import { contractArb, FULL_CONTRACT, MINIMAL_CONTRACT } from "./support/model-contracts";
import { HAVE_PROTOC, MODEL_CONFIG_DIR, protocDecode, protocEncode } from "./support/model-config-proto";

const PROTO_FILES = [...new Set(Object.values(MODEL_CONFIG_PROTO_OF_RELEASE))];
const NEWEST = MODEL_CONFIG_PROTO_OF_RELEASE["26.08"];

/**
 * The message as protoc's binary keeps it: proto3 drops a scalar at its default (0, false, "", the
 * enum's 0 value) and an empty repeated field, except a oneof member (it has presence).
 */
function withoutDefaults(message: string, msg: PbMessage): PbMessage {
  const out: Record<string, PbValue> = {};
  for (const f of MODEL_CONFIG_MESSAGES[message]) {
    const x = msg[f.name];
    if (x === undefined) continue;
    const sub = f.type.startsWith("message:") ? f.type.slice(8) : undefined;
    if (f.mapKey) {
      const entries = Object.entries(x as Record<string, PbValue>).map(([k, e]) => [k, sub ? withoutDefaults(sub, e as PbMessage) : e]);
      if (entries.length) out[f.name] = Object.fromEntries(entries);
    } else if (f.repeated) {
      const items = (x as PbValue[]).map((e) => (sub ? withoutDefaults(sub, e as PbMessage) : e));
      if (items.length) out[f.name] = items;
    } else if (sub) out[f.name] = withoutDefaults(sub, x as PbMessage);
    else {
      const isDefault = f.type.startsWith("enum:") ? MODEL_CONFIG_ENUMS[f.type.slice(5)][x as string] === 0 : x === 0 || x === false || x === "";
      if (!isDefault || f.oneof) out[f.name] = x;
    }
  }
  return out;
}

function roundTrip(text: string, file: string): PbMessage {
  const encoded = protocEncode(file, text);
  assert.ok(encoded.ok, `protoc refused the rendered config at ${file}:\n${encoded.ok ? "" : encoded.error}\n${text}`);
  return parseModelConfig(protocDecode(file, encoded.bytes), "protoc-decoded");
}

describe("config.pbtxt as the stack renders and parses it, checked by protoc against model_config.proto", function () {
  this.timeout(120_000);
  before(function () {
    if (MODEL_CONFIG_DIR === undefined || !HAVE_PROTOC) this.skip(); // no shared/ or no protoc (apt-get install protobuf-compiler): pending
  });

  for (const [what, input] of [
    ["a contract that sets every key", FULL_CONTRACT],
    ["a minimal contract (platform only)", MINIMAL_CONTRACT],
  ] as const) {
    it(`${what}: protoc accepts it at every release's proto, and the decoded config parses back to the same message`, () => {
      const contract = v.parse(modelContract, input);
      const text = renderContract(contract);
      const message = modelConfigMessage(contract);
      assert.deepEqual(parseModelConfig(text), message, "the parser reads back what the renderer wrote");
      for (const file of PROTO_FILES) assert.deepEqual(roundTrip(text, file), withoutDefaults("ModelConfig", message), file);
    });
  }

  it("the full contract's config says what its keys say (spot checks of the text)", () => {
    const text = renderContract(v.parse(modelContract, FULL_CONTRACT));
    assert.match(text, /^# Written by triton-platform/);
    assert.match(text, /^max_batch_size: 32$/m);
    assert.match(text, /^ {2}preferred_batch_size: \[ 8, 16, 32 \]$/m);
    assert.match(text, /^ {2}max_queue_delay_microseconds: 2000$/m);
    assert.match(text, /^ {4}kind: KIND_GPU$/m);
    assert.match(text, /^ {4}num_versions: 2$/m);
    assert.match(text, /key: "quoted \\"value\\""/);
  });

  it("property: for generated contracts, render → parse is the message, and protoc accepts and decodes it to the same message", () => {
    fc.assert(
      fc.property(contractArb, (contract) => {
        const text = renderContract(contract);
        const message = modelConfigMessage(contract);
        assert.deepEqual(parseModelConfig(text), message);
        assert.deepEqual(roundTrip(text, NEWEST), withoutDefaults("ModelConfig", message));
      }),
      { numRuns: 60 },
    );
  });

  it("property: the parser alone reads back every generated contract's config (many runs, no protoc)", () => {
    fc.assert(
      fc.property(contractArb, (contract) => {
        assert.deepEqual(parseModelConfig(renderContract(contract)), modelConfigMessage(contract));
      }),
      { numRuns: 500 },
    );
  });

  // Broken files: protoc refuses each, and so does the parser, at the line and column named.
  const BROKEN: [string, string, RegExp, [number, number]][] = [
    ["an unknown field", 'name: "m"\nbackend: "python"\nmax_batch: 4\n', /unknown field "max_batch"/, [3, 1]],
    ["a wrong enum value", 'name: "m"\ninstance_group [ { kind: KIND_TPU } ]\n', /kind must be one of KIND_AUTO/, [2, 26]],
    ["a string where an integer goes", 'max_batch_size: "8"\n', /must be an integer \(int32\)/, [1, 17]],
    ["an int32 out of range", "max_batch_size: 2147483648\n", /must be a int32/, [1, 17]],
    ["a negative uint64", "dynamic_batching { max_queue_delay_microseconds: -1 }\n", /must be a uint64/, [1, 50]],
    ["a field set twice", 'name: "a"\nname: "b"\n', /set twice \(first at 1:1\)/, [2, 1]],
    ["two members of a oneof", "version_policy { latest { num_versions: 1 } all { } }\n", /one of policy_choice/, [1, 45]],
    ["an unclosed message", 'name: "m"\ndynamic_batching {\n  preferred_batch_size: 4\n', /to close inference.ModelDynamicBatching/, [4, 1]],
    ["a list for a single field", "max_batch_size: [1, 2]\n", /not repeated/, [1, 17]],
    ["an unclosed string", 'name: "m\n', /string not closed/, [1, 7]],
  ];
  for (const [what, text, reason, [line, column]] of BROKEN) {
    it(`refuses ${what}: protoc does too, the parser names file:line:column`, () => {
      assert.equal(protocEncode(NEWEST, text).ok, false, `protoc accepted ${JSON.stringify(text)}`);
      assert.throws(
        () => parseModelConfig(text, "models/m/config.pbtxt"),
        (e: unknown) => {
          assert.ok(e instanceof PbtxtError, String(e));
          assert.match(e.message, reason);
          assert.equal(e.message.split(": ")[0], `models/m/config.pbtxt:${line}:${column}`, e.message);
          return true;
        },
      );
    });
  }

  it("reads the forms protoc writes and people write: repeated entries, <> blocks, ; and , separators, comments, octal escapes", () => {
    const text = [
      "# a comment",
      'name: "m" ; backend: \'py\' "thon"',
      'input { name: "a" data_type: TYPE_FP32 dims: 1 dims: 2 }',
      'input < name: "b", data_type: 11, dims: [ 3 ] >',
      'parameters { key: "k" value { string_value: "\\303\\251" } }',
      "response_cache { enable: True }",
    ].join("\n");
    assert.ok(protocEncode(NEWEST, text).ok, "protoc accepts the sample");
    assert.deepEqual(parseModelConfig(text), {
      name: "m",
      backend: "python",
      input: [
        { name: "a", data_type: "TYPE_FP32", dims: [1, 2] },
        { name: "b", data_type: "TYPE_FP32", dims: [3] },
      ],
      parameters: { k: { string_value: "é" } },
      response_cache: { enable: true },
    });
  });
});
