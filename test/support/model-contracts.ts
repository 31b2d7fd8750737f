// Model contracts for tests: one that sets every key the schema has, a minimal one, and a
// fast-check arbitrary of valid contracts (built key by key, then kept only where the schema accepts).
import fc from "fast-check";
import * as v from "valibot";
import { modelContract, type ModelContract } from "../../components/triton/schema";
import { TRITON_DATA_TYPES } from "../../components/upstream/triton-model-config";

/** Every key of a contract set (values a GPU pod with 2 GPUs and hpa.targetQueueUs >= 2000 accepts). */
export const FULL_CONTRACT = {
  name: "resnet50",
  backend: "onnxruntime",
  maxBatchSize: 32,
  inputs: [{ name: "input__0", dataType: "TYPE_FP32", dims: [3, 224, 224], format: "FORMAT_NCHW", optional: false }],
  outputs: [{ name: "output__0", dataType: "TYPE_FP32", dims: [1000], labelFilename: "labels.txt" }],
  dynamicBatching: {
    preferredBatchSizes: [8, 16, 32],
    maxQueueDelayUs: 2000,
    preserveOrdering: true,
    priorityLevels: 2,
    defaultPriorityLevel: 1,
    defaultQueuePolicy: { maxQueueSize: 256, timeoutAction: "REJECT", defaultTimeoutUs: 100000, allowTimeoutOverride: true },
  },
  instanceGroups: [
    { name: "gpu0", kind: "KIND_GPU", count: 2, gpus: [0], rateLimiter: { resources: [{ name: "R1", count: 2, global: true }], priority: 1 } },
    { kind: "KIND_GPU", count: 1, gpus: [1] },
  ],
  versionPolicy: { latest: 2 },
  warmup: [{ name: "zeros", batchSize: 8, count: 2, inputs: { input__0: { dataType: "TYPE_FP32", dims: [3, 224, 224], zeroData: true } } }],
  responseCache: true,
  parameters: { intra_op_thread_count: "4", 'quoted "value"': "a\\b\nc é" },
} as const satisfies v.InferInput<typeof modelContract>;

export const MINIMAL_CONTRACT = { name: "bert", platform: "tensorrt_plan" } as const satisfies v.InferInput<typeof modelContract>;

const ident = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,11}$/);
const text = fc.string({ unit: "binary", maxLength: 12 }).filter((s) => !s.includes("\0"));
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const dims = fc.array(fc.integer({ min: -1, max: 4096 }), { minLength: 1, maxLength: 4 });
const dataType = fc.constantFrom(...TRITON_DATA_TYPES);

/** Valid contracts: every key optional where the schema makes it so; what the schema refuses is dropped. */
export const contractArb: fc.Arbitrary<ModelContract> = fc
  .record({
    name: ident,
    which: fc.constantFrom("backend", "platform"),
    backend: fc.constantFrom("onnxruntime", "tensorrt", "pytorch", "python", "openvino"),
    platform: fc.constantFrom("tensorrt_plan", "onnxruntime_onnx", "pytorch_libtorch", "ensemble"),
    maxBatchSize: opt(fc.integer({ min: 0, max: 2_147_483_647 })),
    inputs: opt(
      fc.array(
        fc.record({ name: ident, dataType, dims, format: opt(fc.constantFrom("FORMAT_NONE", "FORMAT_NHWC", "FORMAT_NCHW")), optional: opt(fc.boolean()) }),
        { minLength: 1, maxLength: 3 },
      ),
    ),
    outputs: opt(fc.array(fc.record({ name: ident, dataType, dims, labelFilename: opt(ident) }), { minLength: 1, maxLength: 3 })),
    dynamicBatching: opt(
      fc.record({
        preferredBatchSizes: opt(fc.uniqueArray(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 })),
        maxQueueDelayUs: opt(fc.integer({ min: 0, max: 10_000 })),
        preserveOrdering: opt(fc.boolean()),
        priorityLevels: opt(fc.integer({ min: 0, max: 10 })),
        defaultQueuePolicy: opt(
          fc.record({
            maxQueueSize: opt(fc.integer({ min: 0, max: 4_294_967_295 })),
            timeoutAction: opt(fc.constantFrom("REJECT", "DELAY")),
            defaultTimeoutUs: opt(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
            allowTimeoutOverride: opt(fc.boolean()),
          }),
        ),
      }),
    ),
    instanceGroups: opt(
      fc.array(
        fc.record({
          name: opt(ident),
          count: opt(fc.integer({ min: 1, max: 8 })),
          kind: opt(fc.constantFrom("KIND_AUTO", "KIND_GPU", "KIND_CPU", "KIND_MODEL")),
          gpus: opt(fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 3 })),
          rateLimiter: opt(
            fc.record({
              resources: opt(
                fc.array(fc.record({ name: ident, count: fc.integer({ min: 1, max: 100 }), global: opt(fc.boolean()) }), { minLength: 1, maxLength: 2 }),
              ),
              priority: opt(fc.integer({ min: 0, max: 10 })),
            }),
          ),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    ),
    versionPolicy: opt(
      fc.oneof(
        fc.record({ latest: fc.integer({ min: 1, max: 5 }) }),
        fc.record({ specific: fc.uniqueArray(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 3 }) }),
        fc.constant({ all: true as const }),
      ),
    ),
    warmup: opt(
      fc.array(
        fc.record({
          name: ident,
          batchSize: opt(fc.integer({ min: 1, max: 1 })),
          count: opt(fc.integer({ min: 1, max: 5 })),
          inputs: fc.dictionary(
            ident,
            fc.oneof(
              fc.record({ dataType, dims, zeroData: fc.constant(true as const) }),
              fc.record({ dataType, dims, randomData: fc.constant(true as const) }),
              fc.record({ dataType, dims, inputDataFile: ident }),
            ),
            { maxKeys: 2 },
          ),
        }),
        { minLength: 1, maxLength: 2 },
      ),
    ),
    responseCache: opt(fc.boolean()),
    parameters: opt(
      fc.dictionary(
        text.filter((s) => s.length > 0),
        text,
        { maxKeys: 3 },
      ),
    ),
  })
  .map(({ which, backend, platform, ...rest }) => {
    const m: Record<string, unknown> = { ...rest, ...(which === "backend" ? { backend } : { platform }) };
    // Batching needs a batch dimension: give the contract one large enough for its preferred sizes.
    const d = rest.dynamicBatching;
    if (d) m.maxBatchSize = Math.max(rest.maxBatchSize ?? 0, ...(d.preferredBatchSizes ?? [1]));
    return JSON.parse(JSON.stringify(m)) as unknown;
  })
  .map((m) => v.safeParse(modelContract, m))
  .filter((r) => r.success)
  .map((r) => r.output);
