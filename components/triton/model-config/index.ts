// A model contract (the stack file's keys, components/triton/schema.ts) as Triton's ModelConfig
// message, and as the config.pbtxt the stack writes beside the model's version folders.
import { createHash } from "node:crypto";
import type { DeepReadonly } from "../../../lib/schema";
import type { ModelContract } from "../schema";
import { parseModelConfig, PbtxtError, renderModelConfig, type PbMessage, type PbValue } from "./pbtxt";

export { parseModelConfig, PbtxtError, renderModelConfig, type PbMessage, type PbValue };

/** The object without its undefined keys (a key left out of the contract is not written). */
function defined(o: Record<string, PbValue | undefined>): PbMessage {
  return Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as PbMessage;
}

/** A map field's entries, or nothing for none (an empty map writes no text and reads back as unset). */
function entries<T>(o: Readonly<Record<string, T>> | undefined, value: (x: T) => PbValue): Record<string, PbValue> | undefined {
  const keys = Object.keys(o ?? {});
  return keys.length ? Object.fromEntries(keys.map((k) => [k, value(o![k])])) : undefined;
}

/** A contract as the ModelConfig message it renders to (proto field names). */
export function modelConfigMessage(m: DeepReadonly<ModelContract>): PbMessage {
  const vp = m.versionPolicy;
  const d = m.dynamicBatching;
  const q = d?.defaultQueuePolicy;
  return defined({
    name: m.name,
    platform: m.platform,
    backend: m.backend,
    version_policy: vp
      ? vp.latest !== undefined
        ? { latest: { num_versions: vp.latest } }
        : vp.specific !== undefined
          ? { specific: { versions: [...vp.specific] } }
          : { all: {} }
      : undefined,
    max_batch_size: m.maxBatchSize,
    input: m.inputs?.map((t) => defined({ name: t.name, data_type: t.dataType, format: t.format, dims: [...t.dims], optional: t.optional })),
    output: m.outputs?.map((t) => defined({ name: t.name, data_type: t.dataType, dims: [...t.dims], label_filename: t.labelFilename })),
    dynamic_batching: d
      ? defined({
          preferred_batch_size: d.preferredBatchSizes ? [...d.preferredBatchSizes] : undefined,
          max_queue_delay_microseconds: d.maxQueueDelayUs,
          preserve_ordering: d.preserveOrdering,
          priority_levels: d.priorityLevels,
          default_priority_level: d.defaultPriorityLevel,
          default_queue_policy: q
            ? defined({
                timeout_action: q.timeoutAction,
                default_timeout_microseconds: q.defaultTimeoutUs,
                allow_timeout_override: q.allowTimeoutOverride,
                max_queue_size: q.maxQueueSize,
              })
            : undefined,
        })
      : undefined,
    instance_group: m.instanceGroups?.map((g) =>
      defined({
        name: g.name,
        kind: g.kind,
        count: g.count,
        rate_limiter: g.rateLimiter
          ? defined({
              resources: g.rateLimiter.resources?.map((r) => defined({ name: r.name, global: r.global, count: r.count })),
              priority: g.rateLimiter.priority,
            })
          : undefined,
        gpus: g.gpus ? [...g.gpus] : undefined,
      }),
    ),
    parameters: entries(m.parameters, (x) => ({ string_value: x })),
    model_warmup: m.warmup?.map((w) =>
      defined({
        name: w.name,
        batch_size: w.batchSize,
        inputs: entries(w.inputs, (i) =>
          defined({ data_type: i.dataType, dims: [...i.dims], zero_data: i.zeroData, random_data: i.randomData, input_data_file: i.inputDataFile }),
        ),
        count: w.count,
      }),
    ),
    response_cache: m.responseCache !== undefined ? { enable: m.responseCache } : undefined,
  });
}

/** The first lines of every config.pbtxt the stack writes: who owns it. */
export const RENDERED_HEADER = [
  "Written by triton-platform from the model's contract in the stack file (triton.groups[].models);",
  "the publisher cannot overwrite it: change the contract and run pulumi up.",
];

/** The config.pbtxt of a contract. */
export function renderContract(m: DeepReadonly<ModelContract>): string {
  return renderModelConfig(modelConfigMessage(m), RENDERED_HEADER);
}

/** A short hash of the configs a pod loads (model name order): a pod-template annotation, so a changed config rolls the pods. */
export function configsHash(contracts: readonly DeepReadonly<ModelContract>[]): string {
  const h = createHash("sha256");
  for (const m of [...contracts].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) h.update(`${m.name}\0${renderContract(m)}\0`);
  return h.digest("hex").slice(0, 16);
}
