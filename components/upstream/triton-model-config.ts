// Triton's model configuration schema, the part the stack writes: message `inference.ModelConfig`
// of triton-inference-server/common `protobuf/model_config.proto`, one table of the fields the
// stack's contracts render to config.pbtxt (components/triton/model-config). The renderer and the
// parser are driven by this table alone, so a field the stack writes is written here once, with
// its proto type, number and enum values; test/triton-model-config-matches-proto.test.ts loads
// every release's proto (../shared/reference/triton-model-config/) with protobufjs and checks
// every field and enum value below against it.
//
// Which proto covers which container release (README of that folder): r25.01-r25.10,
// r25.11-r26.03 (adds ModelEnsembling.max_inflight_requests, which the stack does not write),
// r26.04-r26.07 (comment changes only). 26.08 had no branch of common when read (2026-12-01);
// common's main at 83adf7cf88a2 (2026-07-23, after r26.07 branched) is identical to the
// r26.04-r26.07 file, so 26.08 is checked against that file. What makes this safe beyond that
// reading: the table holds only fields present, identical, in every file, so a release whose
// branch adds fields still accepts every config the stack renders; a release that removed or
// renumbered one would fail the test once its proto is added to the reference folder.

/** Scalar field types of proto3 the table uses. */
export type ProtoScalar = "string" | "bool" | "int32" | "int64" | "uint32" | "uint64";

/** A field: `type` is a scalar, `message:<Name>` or `enum:<Name>` (names relative to package `inference`, nested with '.'). */
export interface ProtoField {
  readonly name: string;
  readonly id: number;
  readonly type: ProtoScalar | `message:${string}` | `enum:${string}`;
  readonly repeated?: true;
  /** A map field: the key's scalar type (`type` is the value's). */
  readonly mapKey?: ProtoScalar;
  /** The oneof the field belongs to. */
  readonly oneof?: string;
}

export const MODEL_CONFIG_PACKAGE = "inference";
export const MODEL_CONFIG_MESSAGE = "ModelConfig";

const f = (name: string, id: number, type: ProtoField["type"], extra: Partial<ProtoField> = {}): ProtoField => ({ name, id, type, ...extra });
const rep = { repeated: true } as const;

/** The messages the stack writes, each with the fields it may set. */
export const MODEL_CONFIG_MESSAGES: Readonly<Record<string, readonly ProtoField[]>> = {
  ModelConfig: [
    f("name", 1, "string"),
    f("platform", 2, "string"),
    f("backend", 17, "string"),
    f("version_policy", 3, "message:ModelVersionPolicy"),
    f("max_batch_size", 4, "int32"),
    f("input", 5, "message:ModelInput", rep),
    f("output", 6, "message:ModelOutput", rep),
    f("dynamic_batching", 11, "message:ModelDynamicBatching", { oneof: "scheduling_choice" }),
    f("instance_group", 7, "message:ModelInstanceGroup", rep),
    f("parameters", 14, "message:ModelParameter", { mapKey: "string" }),
    f("model_warmup", 16, "message:ModelWarmup", rep),
    f("response_cache", 24, "message:ModelResponseCache"),
  ],
  ModelVersionPolicy: [
    f("latest", 1, "message:ModelVersionPolicy.Latest", { oneof: "policy_choice" }),
    f("all", 2, "message:ModelVersionPolicy.All", { oneof: "policy_choice" }),
    f("specific", 3, "message:ModelVersionPolicy.Specific", { oneof: "policy_choice" }),
  ],
  "ModelVersionPolicy.Latest": [f("num_versions", 1, "uint32")],
  "ModelVersionPolicy.All": [],
  "ModelVersionPolicy.Specific": [f("versions", 1, "int64", rep)],
  ModelInput: [
    f("name", 1, "string"),
    f("data_type", 2, "enum:DataType"),
    f("format", 3, "enum:ModelInput.Format"),
    f("dims", 4, "int64", rep),
    f("optional", 8, "bool"),
  ],
  ModelOutput: [f("name", 1, "string"), f("data_type", 2, "enum:DataType"), f("dims", 3, "int64", rep), f("label_filename", 4, "string")],
  ModelDynamicBatching: [
    f("preferred_batch_size", 1, "int32", rep),
    f("max_queue_delay_microseconds", 2, "uint64"),
    f("preserve_ordering", 3, "bool"),
    f("priority_levels", 4, "uint64"),
    f("default_priority_level", 5, "uint64"),
    f("default_queue_policy", 6, "message:ModelQueuePolicy"),
  ],
  ModelQueuePolicy: [
    f("timeout_action", 1, "enum:ModelQueuePolicy.TimeoutAction"),
    f("default_timeout_microseconds", 2, "uint64"),
    f("allow_timeout_override", 3, "bool"),
    f("max_queue_size", 4, "uint32"),
  ],
  ModelInstanceGroup: [
    f("name", 1, "string"),
    f("kind", 4, "enum:ModelInstanceGroup.Kind"),
    f("count", 2, "int32"),
    f("rate_limiter", 6, "message:ModelRateLimiter"),
    f("gpus", 3, "int32", rep),
  ],
  ModelRateLimiter: [f("resources", 1, "message:ModelRateLimiter.Resource", rep), f("priority", 2, "uint32")],
  "ModelRateLimiter.Resource": [f("name", 1, "string"), f("global", 2, "bool"), f("count", 3, "uint32")],
  ModelParameter: [f("string_value", 1, "string")],
  ModelWarmup: [
    f("name", 1, "string"),
    f("batch_size", 2, "uint32"),
    f("inputs", 3, "message:ModelWarmup.Input", { mapKey: "string" }),
    f("count", 4, "uint32"),
  ],
  "ModelWarmup.Input": [
    f("data_type", 1, "enum:DataType"),
    f("dims", 2, "int64", rep),
    f("zero_data", 3, "bool", { oneof: "input_data_type" }),
    f("random_data", 4, "bool", { oneof: "input_data_type" }),
    f("input_data_file", 5, "string", { oneof: "input_data_type" }),
  ],
  ModelResponseCache: [f("enable", 1, "bool")],
};

/** The enums those fields use, every value with its number. */
export const MODEL_CONFIG_ENUMS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  DataType: {
    TYPE_INVALID: 0,
    TYPE_BOOL: 1,
    TYPE_UINT8: 2,
    TYPE_UINT16: 3,
    TYPE_UINT32: 4,
    TYPE_UINT64: 5,
    TYPE_INT8: 6,
    TYPE_INT16: 7,
    TYPE_INT32: 8,
    TYPE_INT64: 9,
    TYPE_FP16: 10,
    TYPE_FP32: 11,
    TYPE_FP64: 12,
    TYPE_STRING: 13,
    TYPE_BF16: 14,
  },
  "ModelInput.Format": { FORMAT_NONE: 0, FORMAT_NHWC: 1, FORMAT_NCHW: 2 },
  "ModelQueuePolicy.TimeoutAction": { REJECT: 0, DELAY: 1 },
  "ModelInstanceGroup.Kind": { KIND_AUTO: 0, KIND_GPU: 1, KIND_CPU: 2, KIND_MODEL: 3 },
};

/** The data types a contract's tensor may name (TYPE_INVALID is no type). */
export const TRITON_DATA_TYPES = Object.keys(MODEL_CONFIG_ENUMS.DataType).filter((t) => t !== "TYPE_INVALID") as [string, ...string[]];

/** Proto file (in ../shared/reference/triton-model-config/) that covers each container release, and why. */
export const MODEL_CONFIG_PROTO_OF_RELEASE: Readonly<Record<string, string>> = Object.fromEntries([
  ...["25.01", "25.02", "25.03", "25.04", "25.05", "25.06", "25.07", "25.08", "25.09", "25.10"].map((r) => [r, "model_config.r25.01-r25.10.proto"]),
  ...["25.11", "25.12", "26.01", "26.02", "26.03"].map((r) => [r, "model_config.r25.11-r26.03.proto"]),
  ...["26.04", "26.05", "26.06", "26.07"].map((r) => [r, "model_config.r26.04-r26.07.proto"]),
  // No r26.08 branch of common was read; main after r26.07 is identical to this file (see the header).
  ["26.08", "model_config.r26.04-r26.07.proto"],
]);
