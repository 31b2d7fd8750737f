// Model contracts in the stack file (triton.groups[].models entries that are mappings): the schema's
// rules and the plan-time cross-checks with the rest of the group and the other groups. Each check
// fires on several breaks, naming the stack-file key path, the rule and the value, and stays silent
// on reasonable variants. Bare names stay what they were.
import { strict as assert } from "node:assert";
import { loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";
import { prodWith, problems } from "./support/config-problems";
import { gpuInstanceType } from "../components/upstream/ec2-gpu-instances";
import { renderContract } from "../components/triton/model-config";

const KEY = "triton-platform:triton";
const AT = "triton-platform:triton.groups[0]";

/** A contract the prod fixture's group accepts (one L4 per pod, 25.01 primary, 25.02 canary, queue budget 10 ms). */
const good = () => ({
  name: "resnet50",
  backend: "onnxruntime",
  maxBatchSize: 16,
  dynamicBatching: { preferredBatchSizes: [4, 8, 16], maxQueueDelayUs: 2000, defaultQueuePolicy: { maxQueueSize: 128, timeoutAction: "REJECT" } },
  instanceGroups: [{ kind: "KIND_GPU", count: 2, gpus: [0] }],
  versionPolicy: { latest: 2 },
  warmup: [{ name: "zeros", batchSize: 1, inputs: { input__0: { dataType: "TYPE_FP32", dims: [3, 224, 224], zeroData: true } } }],
});

function fires(edit: (g: Record<string, any>, triton: Record<string, any>) => void, ...expected: RegExp[]) {
  const ps = problems(prodWith(edit));
  for (const re of expected)
    assert.ok(
      ps.some((p) => re.test(p)),
      `expected ${re} among:\n${ps.join("\n") || "(no problems)"}`,
    );
}

function silent(edit: (g: Record<string, any>, triton: Record<string, any>) => void) {
  assert.deepEqual(problems(prodWith(edit)), []);
}

const withContract =
  (change: (m: Record<string, any>) => void = () => {}) =>
  (g: Record<string, any>) => {
    const m = good();
    change(m);
    g.models = [m, "efficientnet_b0"];
  };

describe("model contracts in the stack file", () => {
  it("a bare name stays a bare name: the resolved models are the names as before", () => {
    const cfg = loadConfig(fixtureConfig("prod"), "prod");
    assert.deepEqual(cfg.triton.groups[0].models, JSON.parse(fixtureConfig("prod")[KEY]).groups[0].models);
  });

  it("accepts a contract beside a bare name, and reasonable variants of it", () => {
    silent(withContract());
    silent(withContract((m) => ((m.platform = "onnxruntime_onnx"), delete m.backend)));
    silent(withContract((m) => (m.versionPolicy = { specific: [3, 4] })));
    silent(withContract((m) => (m.dynamicBatching.maxQueueDelayUs = 10_000))); // equal to hpa.targetQueueUs
    silent(withContract((m) => (m.instanceGroups = [{ kind: "KIND_CPU", count: 4 }])));
    silent(withContract((m) => (m.backend = "tensorflow"))); // 25.01 and 25.02 ship it
  });

  it("errors name the stack-file key path, the rule and the value", () => {
    fires(
      withContract((m) => (m.maxBatchSize = -1)),
      new RegExp(`^${AT.replace(/[.[\]]/g, "\\$&")}\\.models\\[0\\]\\.maxBatchSize must be an integer from 0 to 2147483647, got -1$`),
    );
    fires(
      withContract((m) => (m.instanceGroups[0].kind = "GPU")),
      /models\[0\]\.instanceGroups\[0\]\.kind must be one of "KIND_AUTO", .*got "GPU"/,
    );
    fires(
      withContract((m) => (m.batching = {})),
      /models\[0\]\.batching is not a known key/,
    );
    fires(
      withContract((m) => delete m.backend),
      /models\[0\]\.backend must set exactly one of backend and platform/,
    );
    fires(
      withContract((m) => (m.platform = "tensorrt_plan")),
      /models\[0\]\.platform must set exactly one of backend and platform/,
    );
    fires(
      withContract((m) => (m.versionPolicy = { latest: 1, all: true })),
      /models\[0\]\.versionPolicy\.all must set exactly one of latest, specific, all/,
    );
    fires(
      withContract((m) => (m.warmup[0].inputs.input__0.randomData = true)),
      /warmup\[0\]\.inputs\.input__0\.randomData must set exactly one of zeroData, randomData, inputDataFile/,
    );
    fires((g) => (g.models = [["resnet50"]]), /models\[0\] must be a model name or a model contract/);
    fires((g) => (g.models = [good(), "resnet50"]), /models\[1\] must not repeat a model: resnet50 is also models\[0\]/);
  });

  it("preferred batch sizes at most maxBatchSize: fires on each size above it and on batching without a batch dimension", () => {
    fires(
      withContract((m) => (m.maxBatchSize = 8)),
      /models\[0\]\.dynamicBatching\.preferredBatchSizes\[2\] must be at most maxBatchSize \(8\), got 16/,
    );
    fires(
      withContract((m) => (m.dynamicBatching.preferredBatchSizes = [32, 64])),
      /preferredBatchSizes\[0\] must be at most maxBatchSize \(16\), got 32/,
      /preferredBatchSizes\[1\] .*got 64/,
    );
    fires(
      withContract((m) => delete m.maxBatchSize),
      /models\[0\]\.dynamicBatching needs maxBatchSize >= 1/,
    );
    fires(
      withContract((m) => (m.warmup[0].batchSize = 17)),
      /models\[0\]\.warmup\[0\]\.batchSize must be at most maxBatchSize \(16\)/,
    );
  });

  it("max queue delay within the group's queue-time budget (hpa.targetQueueUs)", () => {
    fires(
      withContract((m) => (m.dynamicBatching.maxQueueDelayUs = 10_001)),
      /models\[0\]\.dynamicBatching\.maxQueueDelayUs must be at most hpa\.targetQueueUs \(10000\).*got 10001/,
    );
    fires((g) => (withContract()(g), (g.hpa.targetQueueUs = 1000)), /maxQueueDelayUs must be at most hpa\.targetQueueUs \(1000\).*got 2000/);
    silent((g) => (withContract((m) => (m.dynamicBatching.maxQueueDelayUs = 20_000))(g), (g.hpa.targetQueueUs = 20_000)));
  });

  it("GPU indices below the pod's gpu.count", () => {
    fires(
      withContract((m) => (m.instanceGroups[0].gpus = [1])),
      /instanceGroups\[0\]\.gpus\[0\] must be below gpu\.count \(1\).*got 1/,
    );
    fires(
      withContract((m) => (m.instanceGroups = [{ gpus: [0] }, { gpus: [0, 3] }])),
      /instanceGroups\[1\]\.gpus\[1\] must be below gpu\.count \(1\).*got 3/,
    );
    // Two GPUs per pod (the prod fixture's node type has one: only the node-fit rule may speak).
    const ps = problems(prodWith((g) => (withContract((m) => (m.instanceGroups[0].gpus = [0, 1]))(g), (g.gpu.count = 2))));
    assert.deepEqual(
      ps.filter((p) => /gpus/.test(p)),
      [],
      ps.join("\n"),
    );
  });

  it("the backend is one the group's release ships, and the canary's", () => {
    fires(
      (g) => (withContract((m) => (m.backend = "tensorflow"))(g), (g.canary.image.tag = "25.03-py3")),
      /models\[0\]\.backend must be a backend the canary\.image\.tag release 25\.03 ships.*got "tensorflow"/,
    );
    fires(
      (g) => (withContract((m) => (m.backend = "tensorflow"))(g), (g.image.tag = "25.03-py3"), delete g.canary),
      /models\[0\]\.backend must be a backend the image\.tag release 25\.03 ships/,
    );
    fires(
      (g) => (
        withContract((m) => ((m.platform = "tensorflow_savedmodel"), delete m.backend))(g),
        (g.image.tag = "25.04-py3"),
        (g.canary.image.tag = "25.04-py3")
      ),
      /models\[0\]\.platform must be a backend the image\.tag release 25\.04 ships/,
    );
    fires(
      withContract((m) => (m.backend = "fil")),
      /models\[0\]\.backend must be a backend the image\.tag release 25\.01 ships/,
    );
    silent((g) => (withContract((m) => (m.backend = "python"))(g), (g.canary.image.tag = "26.08-py3")));
  });

  it("response cache only with --cache-config, rate-limiter resources only with --rate-limit", () => {
    fires(
      withContract((m) => (m.responseCache = true)),
      /models\[0\]\.responseCache needs the server's cache \(--cache-config/,
    );
    silent(withContract((m) => (m.responseCache = false)));
    silent((g) => (withContract((m) => (m.responseCache = true))(g), g.extraArgs.push("--cache-config=local,size=1048576")));
    const limited = (m: Record<string, any>) => (m.instanceGroups[0].rateLimiter = { resources: [{ name: "R1", count: 1 }], priority: 2 });
    fires(withContract(limited), /instanceGroups\[0\]\.rateLimiter\.resources needs the server's rate limiter \(--rate-limit/);
    silent((g) => (withContract(limited)(g), g.extraArgs.push("--rate-limit=execution_count")));
    silent(withContract((m) => (m.instanceGroups[0].rateLimiter = { priority: 2 }))); // a priority alone needs no resources
  });

  it("one contract per model: the canary's and another group's contract of the same model must be the same", () => {
    fires(
      (g) => (withContract()(g), (g.canary.models = [{ ...good(), maxBatchSize: 32 }])),
      /canary\.models\[0\] must equal the contract of resnet50 at models\[0\]/,
    );
    silent((g) => (withContract()(g), (g.canary.models = [good()])));
    silent((g) => (withContract()(g), (g.canary.models = ["resnet50"]))); // a bare name loads the one config
    const second = (contract: Record<string, unknown>) => (g: Record<string, any>, t: Record<string, any>) => {
      withContract()(g);
      t.groups.push({ ...structuredClone(g), name: "text", models: [contract], canary: undefined });
    };
    fires(second({ ...good(), versionPolicy: { latest: 3 } }), /groups\[1\]\.models\[0\] must equal the contract of resnet50 in groups\[0\] \(models\[0\]\)/);
    silent(second(good()));
  });
  // The L4's memory as EC2 reports it (22888 MiB), from the instance facts the check reads.
  const L4 = `${Math.round((gpuInstanceType("g6.4xlarge")!.gpuMemoryMiB / 1024) * 100) / 100}Gi`;

  it("instances × gpuMemoryPerInstance, plus the CUDA memory pool, fit the GPU's memory (the instance facts' L4)", () => {
    const gpuFull = new RegExp(
      String.raw`groups\[0\]\.models\[0\]\.gpuMemoryPerInstance with the other instances on GPU 0 of a primary pod must fit its ${L4} \(nvidia-l4, g6\.4xlarge\): resnet50 2 × 12Gi \+ cudaMemoryPoolByteSize 0\.25Gi = 24\.25Gi`,
    );
    fires(
      withContract((m) => (m.gpuMemoryPerInstance = "12Gi")),
      gpuFull,
    );
    // Two models on one GPU: reported at the last one that states its memory, naming both.
    fires((g) => {
      g.models = [
        { ...good(), instanceGroups: [{ kind: "KIND_GPU", count: 1 }], gpuMemoryPerInstance: "16Gi" },
        { ...good(), name: "efficientnet_b0", instanceGroups: [{ count: 1 }], gpuMemoryPerInstance: "8Gi" },
      ];
    }, /models\[1\]\.gpuMemoryPerInstance .*resnet50 1 × 16Gi, efficientnet_b0 1 × 8Gi \+ cudaMemoryPoolByteSize 0\.25Gi = 24\.25Gi/);
    // A canary with its own list is checked as its own pod.
    fires((g) => {
      g.canary.models = [{ ...good(), gpuMemoryPerInstance: "13Gi" }];
    }, /groups\[0\]\.canary\.models\[0\]\.gpuMemoryPerInstance .*GPU 0 of a canary pod/);
    // Variants that fit: two 10Gi instances, instances on the CPU, a smaller pool, no stated memory.
    silent(withContract((m) => (m.gpuMemoryPerInstance = "10Gi")));
    silent(withContract((m) => ((m.gpuMemoryPerInstance = "100Gi"), (m.instanceGroups = [{ kind: "KIND_CPU", count: 4 }]))));
    // The pool counts: 2 × 11366Mi fits the L4 alone, not with the default 256 MiB pool.
    fires(
      withContract((m) => (m.gpuMemoryPerInstance = "11366Mi")),
      /gpuMemoryPerInstance .*cudaMemoryPoolByteSize 0\.25Gi/,
    );
    silent((g) => {
      withContract((m) => (m.gpuMemoryPerInstance = "11366Mi"))(g);
      g.cudaMemoryPoolByteSize = 0;
    });
    silent(withContract());
  });

  it("gpuMemoryPerInstance is the stack's own key: the rendered config.pbtxt does not carry it", () => {
    const cfg = loadConfig(prodWith(withContract((m) => (m.gpuMemoryPerInstance = "10Gi"))), "prod");
    const m = cfg.triton.groups[0].models?.[0];
    assert.ok(m !== undefined && typeof m !== "string", "the first model is a contract");
    const text = renderContract(m);
    assert.match(text, /name: "resnet50"/);
    assert.doesNotMatch(text, /memory/i);
  });
});
