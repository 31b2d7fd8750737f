// The field table of Triton's ModelConfig (components/upstream/triton-model-config.ts) against
// Triton's own model_config.proto of every release the stack supports (the shared reference
// folder, loaded with protobufjs): every field the stack can write exists there with the same
// number, type, label (repeated, map key, oneof), and every enum value with the same number.
import { strict as assert } from "node:assert";
import * as protobuf from "protobufjs";
import {
  MODEL_CONFIG_ENUMS,
  MODEL_CONFIG_MESSAGES,
  MODEL_CONFIG_PACKAGE,
  MODEL_CONFIG_PROTO_OF_RELEASE,
  type ProtoField,
} from "../components/upstream/triton-model-config";
import { TRITON_OPTION_RELEASES } from "../components/upstream/tritonserver";
import { loadProto, MODEL_CONFIG_DIR, protoFiles } from "./support/model-config-proto";

/** How `field` of the table differs from the proto's field of that name in `message` (none: []). */
function fieldProblems(root: protobuf.Root, message: string, field: ProtoField): string[] {
  const type = root.lookupType(`${MODEL_CONFIG_PACKAGE}.${message}`);
  const p = type.fields[field.name];
  if (!p) return [`${message}.${field.name}: no such field`];
  p.resolve();
  const out: string[] = [];
  if (p.id !== field.id) out.push(`${message}.${field.name}: number ${p.id}, table ${field.id}`);
  const kind = field.type.startsWith("message:") ? "message" : field.type.startsWith("enum:") ? "enum" : "scalar";
  const expected = kind === "scalar" ? field.type : field.type.slice(field.type.indexOf(":") + 1);
  const actual =
    p.resolvedType instanceof protobuf.Type || p.resolvedType instanceof protobuf.Enum
      ? p.resolvedType.fullName.replace(`.${MODEL_CONFIG_PACKAGE}.`, "")
      : p.type;
  if (actual !== expected) out.push(`${message}.${field.name}: type ${actual}, table ${expected}`);
  if (kind === "message" && !(p.resolvedType instanceof protobuf.Type)) out.push(`${message}.${field.name}: not a message`);
  if (kind === "enum" && !(p.resolvedType instanceof protobuf.Enum)) out.push(`${message}.${field.name}: not an enum`);
  if (Boolean(p.repeated) !== Boolean(field.repeated)) out.push(`${message}.${field.name}: repeated ${p.repeated}, table ${Boolean(field.repeated)}`);
  const mapKey = p instanceof protobuf.MapField ? p.keyType : undefined;
  if (mapKey !== field.mapKey) out.push(`${message}.${field.name}: map key ${mapKey}, table ${field.mapKey}`);
  const oneof = p.partOf && !p.partOf.name.startsWith("_") ? p.partOf.name : undefined;
  if (oneof !== field.oneof) out.push(`${message}.${field.name}: oneof ${oneof}, table ${field.oneof}`);
  return out;
}

function tableProblems(root: protobuf.Root): string[] {
  const out: string[] = [];
  for (const [message, fields] of Object.entries(MODEL_CONFIG_MESSAGES)) {
    if (!root.lookup(`${MODEL_CONFIG_PACKAGE}.${message}`)) {
      out.push(`${message}: no such message`);
      continue;
    }
    for (const field of fields) out.push(...fieldProblems(root, message, field));
  }
  for (const [name, values] of Object.entries(MODEL_CONFIG_ENUMS)) {
    const e = root.lookup(`${MODEL_CONFIG_PACKAGE}.${name}`);
    if (!(e instanceof protobuf.Enum)) {
      out.push(`enum ${name}: no such enum`);
      continue;
    }
    for (const [value, n] of Object.entries(values)) {
      if (e.values[value] !== n) out.push(`enum ${name}.${value}: ${e.values[value] ?? "missing"} in the proto, table ${n}`);
    }
  }
  return out;
}

describe("the ModelConfig field table matches Triton's model_config.proto of every supported release", function () {
  before(function () {
    if (MODEL_CONFIG_DIR === undefined) this.skip(); // no shared/ beside the clone: reported as pending
  });

  it("names a proto file for every release the stack supports, and every file exists", () => {
    const files = new Set(protoFiles());
    for (const release of TRITON_OPTION_RELEASES) {
      const file = MODEL_CONFIG_PROTO_OF_RELEASE[release];
      assert.ok(file, `release ${release} has no model_config.proto in MODEL_CONFIG_PROTO_OF_RELEASE`);
      assert.ok(files.has(file), `release ${release}: ${file} is not in ${MODEL_CONFIG_DIR}`);
    }
  });

  for (const release of TRITON_OPTION_RELEASES) {
    it(`every field and enum value the stack writes exists in ${release}'s proto, same number and type`, () => {
      assert.deepEqual(tableProblems(loadProto(MODEL_CONFIG_PROTO_OF_RELEASE[release])), []);
    });
  }

  it("the comparison can fail: a renumbered field, a wrong type, a missing enum value and a lost oneof are found", () => {
    const root = loadProto(MODEL_CONFIG_PROTO_OF_RELEASE["26.07"]);
    const broken = (message: string, field: ProtoField) => fieldProblems(root, message, field);
    assert.match(broken("ModelConfig", { name: "max_batch_size", id: 5, type: "int32" }).join(), /number 4, table 5/);
    assert.match(broken("ModelConfig", { name: "max_batch_size", id: 4, type: "uint32" }).join(), /type int32, table uint32/);
    assert.match(broken("ModelConfig", { name: "input", id: 5, type: "message:ModelOutput", repeated: true }).join(), /type ModelInput/);
    assert.match(broken("ModelConfig", { name: "dynamic_batching", id: 11, type: "message:ModelDynamicBatching" }).join(), /oneof scheduling_choice/);
    assert.match(broken("ModelConfig", { name: "max_batch", id: 4, type: "int32" }).join(), /no such field/);
    assert.match(broken("ModelConfig", { name: "parameters", id: 14, type: "message:ModelParameter" }).join(), /map key string/);
    const e = root.lookupEnum("inference.ModelInstanceGroup.Kind");
    assert.equal(e.values.KIND_TPU, undefined);
  });
});
