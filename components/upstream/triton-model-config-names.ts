// Every field name Triton's model_config.proto gives the messages the stack's field table holds
// (components/upstream/triton-model-config.ts), the union over the releases the stack supports
// (../shared/reference/triton-model-config/, one file per range of releases). The table holds only
// the fields the stack writes; a publisher's config.pbtxt may set others Triton has (optimization,
// sequence_batching, ...). The model lint (tools/models.ts) skips those with a warning that it does
// not check them, instead of failing a valid file; a name in neither list is a parse error.
// test/models-lint.test.ts compares these lists with every proto file's messages (protobufjs).

/** Proto field names per message (names relative to package `inference`, nested with '.'). */
export const TRITON_MODEL_CONFIG_FIELD_NAMES: Readonly<Record<string, readonly string[]>> = {
  ModelConfig: [
    "name",
    "platform",
    "backend",
    "runtime",
    "version_policy",
    "max_batch_size",
    "input",
    "output",
    "batch_input",
    "batch_output",
    "optimization",
    "dynamic_batching",
    "sequence_batching",
    "ensemble_scheduling",
    "instance_group",
    "default_model_filename",
    "cc_model_filenames",
    "metric_tags",
    "parameters",
    "model_warmup",
    "model_operations",
    "model_transaction_policy",
    "model_repository_agents",
    "response_cache",
    "model_metrics",
  ],
  ModelInstanceGroup: ["name", "kind", "count", "rate_limiter", "gpus", "secondary_devices", "profile", "passive", "host_policy"],
  ModelDynamicBatching: [
    "preferred_batch_size",
    "max_queue_delay_microseconds",
    "preserve_ordering",
    "priority_levels",
    "default_priority_level",
    "default_queue_policy",
    "priority_queue_policy",
  ],
  ModelInput: ["name", "data_type", "format", "dims", "reshape", "is_shape_tensor", "allow_ragged_batch", "optional", "is_non_linear_format_io"],
  ModelOutput: ["name", "data_type", "dims", "reshape", "label_filename", "is_shape_tensor", "is_non_linear_format_io"],
  ModelWarmup: ["name", "batch_size", "inputs", "count"],
  ModelVersionPolicy: ["latest", "all", "specific"],
  ModelQueuePolicy: ["timeout_action", "default_timeout_microseconds", "allow_timeout_override", "max_queue_size"],
  ModelRateLimiter: ["resources", "priority"],
  "ModelWarmup.Input": ["data_type", "dims", "zero_data", "random_data", "input_data_file"],
  "ModelRateLimiter.Resource": ["name", "global", "count"],
  ModelParameter: ["string_value"],
  ModelResponseCache: ["enable"],
  "ModelVersionPolicy.Latest": ["num_versions"],
  "ModelVersionPolicy.Specific": ["versions"],
  "ModelVersionPolicy.All": [],
};

/**
 * The oneofs of ModelConfig, every member (the proto's `oneof`): the lint's parser checks the
 * table's members, but a skipped field (sequence_batching, ensemble_scheduling) can collide with
 * dynamic_batching, which protoc refuses. The other messages' oneofs hold table fields only.
 */
export const TRITON_MODEL_CONFIG_ONEOFS: Readonly<Record<string, readonly string[]>> = {
  scheduling_choice: ["dynamic_batching", "sequence_batching", "ensemble_scheduling"],
};
