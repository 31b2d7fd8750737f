// The settings of a Triton serving group: each key's type, rule, default and documentation,
// and the rules between its keys. The one place they are written: the stack config composes
// `tritonSection` (config/schema.ts) and a direct `new TritonServer(...)` resolves its
// settings through `tritonGroupSettings` (resolveTritonServer), so both get the same
// default from the same line and the same errors in the same wording.
import * as v from "valibot";
import {
  bool,
  type DeepReadonly,
  doc,
  dnsLabel,
  integer,
  list,
  number,
  oneOf,
  parseSettings,
  pattern,
  quantity,
  refined,
  section,
  str,
  uniqueList,
} from "../../lib/schema";
import { quantityValue } from "../../lib/quantity";
import { keyPath, SettingsError } from "../../lib/errors";
import { TRITON_ADMIN_GRPC_METADATA, TRITON_ADMIN_HEADER, tritonName, type ModelRepositoryBinding, type ServingGroupRef, type Track } from "../contracts";
import { extraArgsErrors, isTritonOptionRelease, TRITON_OPTION_RANGE } from "../upstream/tritonserver";
import { TRITON_IMAGE_REPOSITORY } from "../upstream/triton-releases";
import { ENVOY_PERCENT_RULE, isEnvoyPercent } from "../upstream/envoy";
import { currentStage, rolloutSettings, type RolloutSettings } from "./rollout";
import { TRITON_DATA_TYPES } from "../upstream/triton-model-config";
import { backendNeeded, MODEL_PLATFORMS, TRITON_BACKENDS_OF_RELEASE } from "../upstream/triton-backends";

/**
 * Time Triton needs after its exit timeout: the server's stop (model unload) and the process's exit,
 * beyond the requests' budget (src/main.cc at r26.07: StopEndpoints spends --exit-timeout-secs on the
 * HTTP and gRPC endpoints, then TRITONSERVER_ServerStop gets what is left, then the remaining endpoints stop).
 */
export const TRITON_EXIT_MARGIN_SECONDS = 15;

function graceRule(preStop: number, exit: number, exitFrom = "exitTimeoutSecs"): string {
  return (
    `must be at least preStopSleepSeconds (${preStop}) + ${exitFrom} (${exit}) + ${TRITON_EXIT_MARGIN_SECONDS} s = ${preStop + exit + TRITON_EXIT_MARGIN_SECONDS}, ` +
    "or the kubelet kills Triton mid-drain"
  );
}

/** A serving pod's termination: the preStop sleep, Triton's exit timeout after SIGTERM, and the grace period that covers both. */
export interface TritonShutdown {
  readonly preStopSleepSeconds: number;
  readonly exitTimeoutSecs: number;
  readonly terminationGracePeriodSeconds: number;
}

type ShutdownKeys = Pick<TritonGroupSettings, "preStopSleepSeconds" | "exitTimeoutSecs" | "terminationGracePeriodSeconds">;

/**
 * The one derivation of a serving pod's termination from the longest request the gateway lets
 * through (gateway's longestRequestSeconds): the exit timeout defaults to it, the grace period to
 * preStop + exit timeout + TRITON_EXIT_MARGIN_SECONDS. Sequence: the pod turns terminating, the
 * preStop sleeps while the gateway's DNS refresh drops it; a request accepted up to then runs at
 * most longestRequestSeconds; SIGTERM then gives it the exit timeout; the grace period covers both.
 */
export function tritonShutdown(g: ShutdownKeys, longestRequestSeconds: number): TritonShutdown {
  const exitTimeoutSecs = g.exitTimeoutSecs ?? longestRequestSeconds;
  return {
    preStopSleepSeconds: g.preStopSleepSeconds,
    exitTimeoutSecs,
    terminationGracePeriodSeconds: g.terminationGracePeriodSeconds ?? g.preStopSleepSeconds + exitTimeoutSecs + TRITON_EXIT_MARGIN_SECONDS,
  };
}

/**
 * The longest grace period among the serving pods (every group, primary and canary share one
 * termination): what the GPU nodes' graceful shutdown must give pods (components/gpu/user-data.ts).
 */
export function longestServingGraceSeconds(groups: readonly ShutdownKeys[], longestRequestSeconds: number): number {
  return Math.max(0, ...groups.map((g) => tritonShutdown(g, longestRequestSeconds).terminationGracePeriodSeconds));
}

/** What a group's given termination keys break against the gateway's longest request (the key path is relative to the group). */
export function tritonShutdownProblems(g: ShutdownKeys, longestRequestSeconds: number): { path: string[]; message: string }[] {
  const out: { path: string[]; message: string }[] = [];
  if (g.exitTimeoutSecs !== undefined && g.exitTimeoutSecs < longestRequestSeconds) {
    out.push({
      path: ["exitTimeoutSecs"],
      message:
        `must be at least the longest request the gateway lets through (gateway.inferTimeoutSeconds: ${longestRequestSeconds} s), ` +
        "or a rollout or scale-down cuts requests in flight (leave it out to derive it)",
    });
  }
  if (g.exitTimeoutSecs === undefined && g.terminationGracePeriodSeconds !== undefined) {
    const s = tritonShutdown(g, longestRequestSeconds);
    if (s.terminationGracePeriodSeconds < s.preStopSleepSeconds + s.exitTimeoutSecs + TRITON_EXIT_MARGIN_SECONDS) {
      out.push({
        path: ["terminationGracePeriodSeconds"],
        message: graceRule(s.preStopSleepSeconds, s.exitTimeoutSecs, "the exit timeout derived from gateway.inferTimeoutSeconds"),
      });
    }
  }
  return out;
}

/** Release tags of nvcr.io/nvidia/tritonserver: <yy.mm>-py3 and its variants. Never `latest`. */
export const TRITON_IMAGE_TAG = /^\d{2}\.\d{2}-(py3|py3-min|vllm-python-py3|trtllm-python-py3)$/;

/**
 * The admin header name a forward pattern matches (Triton: RE2 PartialMatch, case-insensitive),
 * if any. Read as a JavaScript regular expression, which agrees with RE2 on the patterns a
 * header list needs; one JavaScript cannot compile is taken to match (refused rather than guessed).
 */
function adminHeaderForwarded(pattern: string): string | undefined {
  let re: RegExp;
  try {
    re = new RegExp(pattern, "i");
  } catch {
    return `${TRITON_ADMIN_HEADER} (the pattern could not be checked)`;
  }
  return [TRITON_ADMIN_HEADER, TRITON_ADMIN_GRPC_METADATA].find((h) => re.test(h));
}

/** The container release (`yy.mm`) of a tag TRITON_IMAGE_TAG accepts. */
export function releaseOfTag(tag: string): string {
  return tag.slice(0, 5);
}

const imageTag = pattern(TRITON_IMAGE_TAG, "must be a Triton release tag such as 25.01-py3 (<yy.mm>-py3 or a -py3 variant; never latest)");
const imageDigest = pattern(/^sha256:[a-f0-9]{64}$/, "must be an image digest sha256:<64 hex digits>");
const imageRepository = pattern(/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+$/, "must be an image repository such as nvcr.io/nvidia/tritonserver (no tag)");
/** Triton model names: folder names in the repository. `*` (all models) is refused: list them. */
const modelName = pattern(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "must be a model name (the model's folder in the repository; letters, digits, '_', '.', '-')");

// ---- A model's contract: the keys its config.pbtxt is rendered from ----------------------
// Each key maps to one field of Triton's ModelConfig (components/upstream/triton-model-config.ts,
// checked against model_config.proto per release); a key left out is not written, so Triton's own
// default (or the backend's auto-complete) applies, as for a config the publisher writes.
const tensorName = pattern(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/, "must be a tensor name (letters, digits, '_', '.', ':', '/', '-')");
const dataType = oneOf(TRITON_DATA_TYPES);
/** Dims of a tensor: -1 is a variable-size dimension. */
const dims = list(integer({ min: -1 }), { min: 1, what: "dimension" });
const tensor = <const E extends v.ObjectEntries>(what: string, extra: E) =>
  section({
    name: doc(tensorName, `Name of the ${what} tensor, as the model file names it.`),
    dataType: doc(dataType, "data_type (TYPE_FP32, TYPE_INT64, TYPE_STRING, ...)."),
    dims: doc(dims, "dims without the batch dimension (max_batch_size > 0 adds it); -1 for a variable size."),
    ...extra,
  });
const modelInput = tensor("input", {
  format: doc(v.optional(oneOf(["FORMAT_NONE", "FORMAT_NHWC", "FORMAT_NCHW"])), "format of an image input."),
  optional: doc(v.optional(bool()), "optional: the request may leave this input out."),
});
const modelOutput = tensor("output", {
  labelFilename: doc(v.optional(str()), "label_filename: a file beside config.pbtxt that maps classification indices to labels."),
});
const queuePolicy = section({
  maxQueueSize: doc(v.optional(integer({ min: 0, max: 4_294_967_295 })), "max_queue_size: requests beyond it are rejected at once (0: unbounded)."),
  timeoutAction: doc(v.optional(oneOf(["REJECT", "DELAY"])), "timeout_action: what happens to a request whose queue timeout expires."),
  defaultTimeoutUs: doc(v.optional(integer({ min: 0 })), "default_timeout_microseconds: a request's queue timeout unless it states one (0: none)."),
  allowTimeoutOverride: doc(v.optional(bool()), "allow_timeout_override: a request may set a shorter timeout of its own."),
});
const dynamicBatching = section({
  preferredBatchSizes: doc(
    v.optional(uniqueList(integer({ min: 1 }), { min: 1, what: "batch size" }, "must not repeat a batch size")),
    "preferred_batch_size: batch sizes the scheduler forms when it can; each at most maxBatchSize.",
  ),
  maxQueueDelayUs: doc(
    v.optional(integer({ min: 0 })),
    "max_queue_delay_microseconds: how long a request may wait for a fuller batch; within the group's queue-time budget (hpa.targetQueueUs).",
  ),
  preserveOrdering: doc(v.optional(bool()), "preserve_ordering: responses leave in the order requests came."),
  priorityLevels: doc(v.optional(integer({ min: 0 })), "priority_levels: request priorities 1..N (0: none)."),
  defaultPriorityLevel: doc(v.optional(integer({ min: 0 })), "default_priority_level: the priority of a request that states none; at most priorityLevels."),
  defaultQueuePolicy: doc(v.optional(queuePolicy), "default_queue_policy: the queue's size and timeouts."),
});
const rateLimiter = section({
  resources: doc(
    v.optional(
      list(
        section({
          name: doc(str(), "Resource name (a --rate-limit-resource of the server, or one the limiter counts per device)."),
          count: doc(integer({ min: 1, max: 4_294_967_295 }), "Units one instance holds while it executes."),
          global: doc(v.optional(bool()), "global: the resource is shared by every device rather than per device."),
        }),
        { min: 1, what: "resource" },
      ),
    ),
    "resources an instance needs to execute; only with the server's --rate-limit (extraArgs).",
  ),
  priority: doc(v.optional(integer({ min: 0, max: 4_294_967_295 })), "priority of the instances when resources are contended (lower first; 0 is 1)."),
});
const instanceGroup = section({
  name: doc(v.optional(str()), "name of the instance group.", { default: "Triton's: <model>_<index>" }),
  count: doc(v.optional(integer({ min: 1 })), "count: instances per listed GPU (or in all, without gpus).", { default: "Triton's: 1" }),
  kind: doc(v.optional(oneOf(["KIND_AUTO", "KIND_GPU", "KIND_CPU", "KIND_MODEL"])), "kind: where the instances run; KIND_GPU only in a GPU pod.", {
    default: "Triton's: KIND_AUTO (GPU when the pod has one)",
  }),
  gpus: doc(
    v.optional(uniqueList(integer({ min: 0 }), { min: 1, what: "GPU index" }, "must not repeat a GPU")),
    "gpus: the GPU indices the instances run on; each below the pod's gpu.count.",
    { default: "every GPU of the pod" },
  ),
  rateLimiter: doc(v.optional(rateLimiter), "rate_limiter: resources and priority of these instances."),
});
const versionPolicy = refined(
  section({
    latest: doc(v.optional(integer({ min: 1, max: 4_294_967_295 })), "latest.num_versions: serve the N highest version folders."),
    specific: doc(
      v.optional(uniqueList(integer({ min: 1 }), { min: 1, what: "version" }, "must not repeat a version")),
      "specific.versions: serve exactly these version folders.",
    ),
    all: doc(v.optional(v.literal(true, "must be true")), "all: serve every version folder."),
  }),
  (p, ctx) => {
    const set = (["latest", "specific", "all"] as const).filter((k) => p[k] !== undefined);
    if (set.length !== 1) ctx.addIssue({ path: set.length ? [set[1]] : [], message: "must set exactly one of latest, specific, all (Triton's policy_choice)" });
  },
);
const warmupInput = refined(
  section({
    dataType: doc(dataType, "data_type of the sample."),
    dims: doc(dims, "dims of the sample, without the batch dimension."),
    zeroData: doc(v.optional(v.literal(true, "must be true")), "zero_data: the sample is all zeros."),
    randomData: doc(v.optional(v.literal(true, "must be true")), "random_data: the sample is random."),
    inputDataFile: doc(v.optional(str()), "input_data_file: a file in the model's warmup/ folder holds the sample."),
  }),
  (w, ctx) => {
    const set = (["zeroData", "randomData", "inputDataFile"] as const).filter((k) => w[k] !== undefined);
    if (set.length !== 1)
      ctx.addIssue({ path: set.length ? [set[1]] : [], message: "must set exactly one of zeroData, randomData, inputDataFile (Triton's input_data_type)" });
  },
);
const warmup = section({
  name: doc(str(), "name of the warm-up sample (Triton logs it)."),
  batchSize: doc(v.optional(integer({ min: 1, max: 4_294_967_295 })), "batch_size of the sample; at most maxBatchSize.", { default: "Triton's: 1" }),
  count: doc(v.optional(integer({ min: 1, max: 4_294_967_295 })), "count: times the sample runs at load.", { default: "Triton's: 1" }),
  inputs: doc(v.record(tensorName, warmupInput, "must be a mapping of input name to sample"), "inputs: one sample per input tensor, by name."),
});
const backendName = pattern(/^[a-z][a-z0-9_]*$/, "must be a backend name such as onnxruntime, tensorrt, pytorch, python");

/** A model's contract: what its config.pbtxt says, written by the stack. */
export const modelContract = refined(
  section({
    name: doc(modelName, "The model's name: its folder in the repository and ModelConfig.name."),
    backend: doc(v.optional(backendName), "backend: the backend that serves it; one the group's Triton image ships (and its canary's)."),
    platform: doc(v.optional(oneOf(MODEL_PLATFORMS)), "platform, for the model formats that name one instead of a backend."),
    maxBatchSize: doc(v.optional(integer({ min: 0, max: 2_147_483_647 })), "max_batch_size (0: the model takes no batch dimension).", {
      default: "Triton's (0, or the backend's auto-complete)",
    }),
    inputs: doc(v.optional(list(modelInput, { min: 1, what: "input" })), "input: the input tensors, where the backend cannot auto-complete them.", {
      default: "the backend's auto-complete",
    }),
    outputs: doc(v.optional(list(modelOutput, { min: 1, what: "output" })), "output: the output tensors, where the backend cannot auto-complete them.", {
      default: "the backend's auto-complete",
    }),
    dynamicBatching: doc(v.optional(dynamicBatching), "dynamic_batching: requests combined into batches server-side.", { default: "no dynamic batching" }),
    instanceGroups: doc(v.optional(list(instanceGroup, { min: 1, what: "instance group" })), "instance_group: how many instances run, and where.", {
      default: "Triton's: one instance per GPU",
    }),
    versionPolicy: doc(v.optional(versionPolicy), "version_policy: which version folders are served ({latest: N}, {specific: [..]} or {all: true}).", {
      default: "Triton's: latest 1",
    }),
    warmup: doc(
      v.optional(list(warmup, { min: 1, what: "sample" })),
      "model_warmup: samples run at load, before the model reports ready (no cold first requests).",
    ),
    responseCache: doc(v.optional(bool()), "response_cache.enable: cache responses; only with the server's --cache-config (extraArgs).", {
      default: "Triton's: false",
    }),
    parameters: doc(
      v.optional(v.record(str(), v.string("must be a string"), "must be a mapping of string to string")),
      "parameters: backend parameters (string_value each).",
    ),
    gpuMemoryPerInstance: doc(
      v.optional(quantity),
      "The GPU memory one instance takes, as measured (weights, workspace, activations at maxBatchSize), e.g. 3Gi. Not written to " +
        "config.pbtxt: the plan checks the instances on each GPU × this, plus cudaMemoryPoolByteSize, against the GPU's memory.",
      { default: "not checked" },
    ),
  }),
  (m, ctx) => {
    if ((m.backend === undefined) === (m.platform === undefined))
      ctx.addIssue({ path: m.backend === undefined ? ["backend"] : ["platform"], message: "must set exactly one of backend and platform" });
    const d = m.dynamicBatching;
    if (d?.defaultPriorityLevel !== undefined && d.defaultPriorityLevel > (d.priorityLevels ?? 0))
      ctx.addIssue({ path: ["dynamicBatching", "defaultPriorityLevel"], message: `must be at most dynamicBatching.priorityLevels (${d.priorityLevels ?? 0})` });
    const max = m.maxBatchSize ?? 0;
    (d?.preferredBatchSizes ?? []).forEach((b, i) => {
      if (b > max) ctx.addIssue({ path: ["dynamicBatching", "preferredBatchSizes", i], message: `must be at most maxBatchSize (${max})` });
    });
    if (d && max === 0) ctx.addIssue({ path: ["dynamicBatching"], message: "needs maxBatchSize >= 1: a model without a batch dimension cannot batch" });
    (m.warmup ?? []).forEach((w, i) => {
      if (w.batchSize !== undefined && w.batchSize > Math.max(max, 1))
        ctx.addIssue({ path: ["warmup", i, "batchSize"], message: `must be at most maxBatchSize (${max})` });
    });
  },
);

/** A model entry of a group: a bare name (the publisher owns its config.pbtxt) or a contract (the stack renders it). */
// Chosen by the value's shape, so a broken contract reports its own keys (a union would only say "neither").
const modelEntry = v.lazy((input): v.GenericSchema<unknown, ModelEntry> =>
  typeof input === "string" ? modelName : input !== null && typeof input === "object" && !Array.isArray(input) ? modelContract : modelEntryShape,
);
const modelEntryShape = v.custom<never>(() => false, "must be a model name or a model contract (a mapping with name and backend or platform)");
const models = refined(list(modelEntry, { min: 1, what: "model" }), (ms, ctx) => {
  const seen = new Map<string, number>();
  ms.forEach((m, i) => {
    const n = modelNameOf(m);
    const prev = seen.get(n);
    if (prev !== undefined) ctx.addIssue({ path: [i], message: `must not repeat a model: ${n} is also models[${prev}]` });
    else seen.set(n, i);
  });
});

/** A model contract with its defaults applied. */
export type ModelContract = v.InferOutput<typeof modelContract>;
/** A model entry: a bare name or a contract. */
export type ModelEntry = string | ModelContract;
/** The name of a model entry. */
export function modelNameOf(m: DeepReadonly<ModelEntry>): string {
  return typeof m === "string" ? m : m.name;
}

// <group>-canary-headless must stay a DNS label (63) and a StatefulSet's name leaves room
// for the controller-revision-hash label: 63 - "-canary-headless".length = 47.
const GROUP_NAME_MAX = 47;

const TAG_DOC = "Triton release tag, e.g. 25.01-py3 (the image's CUDA version must suit the GPU nodes' driver branch).";
const DIGEST_DOC = "Image digest: pins the exact bytes, not just the tag.";

const canary = section({
  image: doc(
    v.optional(
      section({
        repository: doc(v.optional(imageRepository), "Image repository of the canary (no tag).", { default: "the primary's image.repository" }),
        tag: doc(imageTag, TAG_DOC),
        digest: doc(v.optional(imageDigest), DIGEST_DOC),
      }),
    ),
    "Image of the canary: {repository?, tag, digest?}.",
    { default: "the primary's image" },
  ),
  models: doc(
    v.optional(models),
    "Models the canary loads at start-up, as `models` (a contract here must equal the primary's for the same model: one config.pbtxt per model).",
    {
      default: "the primary's models",
    },
  ),
  replicas: doc(
    v.pipe(
      v.number("must be an integer >= 1"),
      v.integer("must be an integer >= 1"),
      v.minValue(1, "must be >= 1: a canary with no pods receives no mirrored traffic (remove `canary` to run without one)"),
    ),
    "Canary pods; at least one (they receive the traffic the gateway mirrors).",
  ),
  trafficPercent: doc(
    v.optional(v.pipe(number({ min: 0, max: 100 }), v.check(isEnvoyPercent, ENVOY_PERCENT_RULE)), 0),
    "Share (0–100, at most 4 decimal places) of the group's real inference traffic the gateway sends to the canary instead of the primary, " +
      "after shadowing; those requests are not mirrored. Capped per environment by policy gateway-canary-traffic-within-max. " +
      "With `rollout`, it must equal the current stage's trafficPercent.",
  ),
  rollout: doc(
    v.optional(rolloutSettings),
    "The canary's rollout as declared stages (mirror, split, promote), each with a minimum duration and gates; `stage` names the current one " +
      "(npm run gate reads its gates from Prometheus). Left out: one stage at today's gateway.mirrorPercent and trafficPercent, default gates.",
  ),
});

/**
 * The HPA's bounds: min defaults to the replicas, max to twice them (and at least min).
 * A derived default, so it is computed here rather than written in the schema.
 */
export function hpaBounds(replicas: number, hpa?: { readonly min?: number; readonly max?: number }): { min: number; max: number } {
  const min = hpa?.min ?? replicas;
  return { min, max: hpa?.max ?? Math.max(2 * replicas, min) };
}

/**
 * What routing and scraping need to know of a serving group (contracts.ts), from its resolved
 * settings: the derived defaults of `models` (none listed: none at start-up) and of the
 * canary's models (the primary's) are the ones resolveTritonServer applies.
 */
export function servingGroupRef(g: TritonGroupSettings): ServingGroupRef {
  const models = (g.models ?? []).map(modelNameOf);
  return {
    name: g.name,
    canary: g.canary !== undefined,
    models,
    canaryModels: g.canary ? (g.canary.models?.map(modelNameOf) ?? models) : [],
    canaryTrafficPercent: g.canary ? g.canary.trafficPercent : 0,
    maxPods: { primary: hpaBounds(g.replicas, g.hpa).max, canary: g.canary ? g.canary.replicas : 0 },
  };
}

/** One serving group's settings (primary StatefulSet and optional canary). */
export const tritonGroupSettings = refined(
  section({
    name: doc(
      v.pipe(
        dnsLabel,
        v.check((n) => n.length <= GROUP_NAME_MAX, `must be at most ${GROUP_NAME_MAX} characters (room for -canary-headless)`),
      ),
      "Group name: names the StatefulSets `<name>` and `<name>-canary` and their Services (components/contracts.ts tritonName).",
    ),
    models: doc(
      v.optional(models),
      "Models loaded at start-up (one --load-model each); required with explicit model control, refused otherwise. Each a bare name (the publisher " +
        "owns its config.pbtxt) or a contract `{name, backend|platform, ...}` whose config.pbtxt the stack renders into the repository.",
    ),
    modelControlMode: doc(
      v.optional(oneOf(["explicit", "poll", "none"]), "explicit"),
      "--model-control-mode. explicit: only the listed models ever load (nothing appears in production because a folder was copied).",
    ),
    image: doc(
      section({
        repository: doc(v.optional(imageRepository, TRITON_IMAGE_REPOSITORY), "Image repository, no tag."),
        tag: doc(imageTag, TAG_DOC),
        digest: doc(v.optional(imageDigest), DIGEST_DOC),
      }),
      "Triton server image: repository:tag[@digest].",
    ),
    // Required, in the stack file and for a direct caller alike: GPU pods must fit the GPU
    // node group, which a serving group cannot see; a default of 3 would leave pods Pending
    // on a one-node dev group. The prod floor of three is a policy (triton-min-replicas).
    replicas: doc(integer({ min: 1 }), "Primary pods: the HPA's starting point, between hpa.min and hpa.max."),
    gpu: doc(
      section({
        type: doc(dnsLabel, "Value of the node label triton-platform/gpu-type the pods require (e.g. nvidia-l4); must be the GPU node group's."),
        count: doc(v.optional(integer({ min: 1, max: 8 }), 1), "nvidia.com/gpu per pod (requests = limits); one CUDA memory pool each."),
      }),
      "The GPUs of each pod.",
    ),
    cpu: doc(quantity, "CPU request = limit (Guaranteed QoS: last to be evicted under node pressure)."),
    memory: doc(quantity, "Memory request = limit (Guaranteed QoS); must cover shmSize, which is counted against it."),
    shmSize: doc(
      v.optional(quantity, "1Gi"),
      "/dev/shm size (memory-backed emptyDir); below memory. The default 64 MiB of a container breaks the python backend and large batches.",
    ),
    modelCacheSize: doc(v.optional(quantity, "20Gi"), "Size limit of the local copy of an S3 model repository (TRITON_AWS_MOUNT_DIRECTORY)."),
    modelLoadBudgetSeconds: doc(
      v.optional(integer({ min: 1 }), 600),
      "Longest time loading every model may take; the startupProbe covers it (failureThreshold = ceil(budget / period)); at least one probe period.",
    ),
    startupProbePeriodSeconds: doc(v.optional(integer({ min: 1, max: 60 }), 10), "periodSeconds of the startupProbe."),
    exitTimeoutSecs: doc(
      v.optional(integer({ min: 1 })),
      "--exit-timeout-secs: after SIGTERM Triton refuses new connections and gives in-flight requests this long (one budget for HTTP, gRPC " +
        "and the server's stop); at least the longest request the gateway lets through, or a rollout or scale-down cuts requests in flight.",
      { default: "the gateway's longest route timeout (gateway.inferTimeoutSeconds)" },
    ),
    preStopSleepSeconds: doc(
      v.optional(integer({ min: 0, max: 120 }), 10),
      "preStop sleep, so that the gateway drops the pod (DNS refresh of the headless Service, 5 s) before Triton stops accepting (no refused requests on rollout).",
    ),
    terminationGracePeriodSeconds: doc(
      v.optional(integer({ min: 1 })),
      "The pod's grace period; must be at least preStopSleepSeconds + the exit timeout + 15 s (Triton's own exit), or the kubelet kills Triton mid-drain.",
      { default: "preStopSleepSeconds + the exit timeout + 15 s" },
    ),
    cudaMemoryPoolByteSize: doc(v.optional(integer({ min: 0 }), 268_435_456), "--cuda-memory-pool-byte-size per GPU, bytes."),
    pinnedMemoryPoolByteSize: doc(v.optional(integer({ min: 0 }), 268_435_456), "--pinned-memory-pool-byte-size, bytes."),
    headerForwardPattern: doc(
      v.optional(pattern(/^\S+$/, "must be a regular expression without spaces"), "x-request-id"),
      "--http-header-forward-pattern and --grpc-header-forward-pattern: request headers (gRPC: metadata) Triton copies into each inference " +
        "request as parameters, matched case-insensitively (a regular expression); backends and traces see them, e.g. the gateway's x-request-id.",
    ),
    logVerbose: doc(v.optional(integer({ min: 0 }), 0), "--log-verbose (0 = off)."),
    // An absent hpa parses as {}: targetQueueUs gets its default here, once.
    hpa: doc(
      v.optional(
        section({
          min: doc(v.optional(integer({ min: 1 })), "minReplicas of the HPA; at most hpa.max.", { default: "replicas" }),
          max: doc(v.optional(integer({ min: 1 })), "maxReplicas of the HPA.", { default: "2 × replicas (at least hpa.min)" }),
          targetQueueUs: doc(
            v.optional(integer({ min: 1 }), 10_000),
            "Target average queue time per request, microseconds (AverageValue of the Pods metric triton_queue_duration_us_per_request).",
          ),
        }),
        {},
      ),
      "Autoscaling of the primary StatefulSet on the per-pod queue time.",
    ),
    extraArgs: doc(v.optional(list(str()), []), "Further tritonserver flags (--flag=value): real, current flags the typed settings do not already set."),
    canary: doc(v.optional(canary), "A second StatefulSet `<name>-canary` with its own image and/or models; the gateway mirrors traffic to it."),
  }),
  // Rules between the keys; each names the key a person changes to fix it.
  (g, ctx) => {
    const add = (path: (string | number)[], message: string) => ctx.addIssue({ path, message });
    if (!(quantityValue(g.shmSize) < quantityValue(g.memory))) {
      const why = "/dev/shm is memory-backed and counted against the memory limit, so the pod would be OOM-killed";
      add(["shmSize"], `must be smaller than memory (${g.memory}): ${why}`);
    }
    if (g.modelLoadBudgetSeconds < g.startupProbePeriodSeconds) {
      add(["modelLoadBudgetSeconds"], `must be at least one startup probe period (startupProbePeriodSeconds = ${g.startupProbePeriodSeconds})`);
    }
    // With both given, the grace period is checked here; with the exit timeout derived, against the gateway (tritonShutdownProblems).
    if (g.exitTimeoutSecs !== undefined && g.terminationGracePeriodSeconds !== undefined) {
      const min = g.preStopSleepSeconds + g.exitTimeoutSecs + TRITON_EXIT_MARGIN_SECONDS;
      if (g.terminationGracePeriodSeconds < min) add(["terminationGracePeriodSeconds"], graceRule(g.preStopSleepSeconds, g.exitTimeoutSecs));
    }
    const mode = g.modelControlMode;
    if (mode === "explicit" && !g.models?.length) add(["models"], "must list the models to load: explicit model control loads nothing else");
    if (mode !== "explicit" && g.models?.length) add(["models"], `must be left out with modelControlMode "${mode}" (--load-model only works with explicit)`);
    if (mode !== "explicit" && g.canary?.models?.length) add(["canary", "models"], `must be left out with modelControlMode "${mode}"`);
    if (g.canary?.rollout) {
      const { stage } = currentStage(g.canary.rollout);
      if (stage.name === g.canary.rollout.stage && stage.trafficPercent !== g.canary.trafficPercent)
        add(
          ["canary", "trafficPercent"],
          `must equal the current stage's trafficPercent (canary.rollout.stage ${stage.name}: ${stage.trafficPercent}): the stage declares the exposure the gateway runs`,
        );
    }
    const { min, max } = hpaBounds(g.replicas, g.hpa);
    if (min > max) add(["hpa", "min"], `must be <= hpa.max (${max})`);
    else if (g.replicas < min || g.replicas > max) add(["replicas"], `must be between hpa.min (${min}) and hpa.max (${max})`);
    // Each image's release must be one the option table covers: its flags are checked against that release's parser.
    const releases: string[] = [];
    for (const [path, tag] of [
      [["image", "tag"], g.image.tag],
      [["canary", "image", "tag"], g.canary?.image?.tag],
    ] as const) {
      if (tag === undefined) continue;
      const release = releaseOfTag(tag);
      if (isTritonOptionRelease(release)) releases.push(release);
      else
        add(
          [...path],
          `must be a release the tritonserver option table covers (${TRITON_OPTION_RANGE}; components/upstream/tritonserver.ts), so its flags can be checked: ` +
            "add the release there first (CONTRIBUTING.md)",
        );
    }
    // Forwarded headers become request parameters model code reads: never the admin key.
    const forwards = adminHeaderForwarded(g.headerForwardPattern);
    if (forwards)
      add(
        ["headerForwardPattern"],
        `must not match ${forwards}: Triton would copy the admin key into every inference request's parameters, where model code reads it`,
      );
    for (const { index, error } of extraArgsErrors(g.extraArgs, releases.length ? releases : [undefined])) {
      add(["extraArgs", index], `must be a real, current tritonserver flag the group does not already set (${error.message})`);
    }
    modelContractProblems(g, releases).forEach((p) => add(p.path, p.message));
  },
);

/** Does the group's command line carry `flag` (as `--flag` or `--flag=...`) through extraArgs? */
function hasFlag(extraArgs: readonly string[], flag: string): boolean {
  return extraArgs.some((a) => a === flag || a.startsWith(`${flag}=`));
}

/**
 * The rules between a group's model contracts and the rest of the group: GPU indices against the
 * pod's GPUs, the queue delay against the queue-time budget the HPA scales on, the backend against
 * the releases the group (and its canary) run, the cache and rate limiter against the server's flags,
 * and one contract per model between the primary's and the canary's lists. Each names every key involved.
 */
export function modelContractProblems(g: TritonGroupSettings, releases: readonly string[]): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  const lists: [(string | number)[], readonly ModelEntry[], readonly string[]][] = [
    [["models"], g.models ?? [], [releaseOfTag(g.image.tag)]],
    [["canary", "models"], g.canary?.models ?? [], g.canary ? [releaseOfTag(g.canary.image?.tag ?? g.image.tag)] : []],
  ];
  // The canary loading the primary's list runs its contracts on the canary's release too.
  if (g.canary && !g.canary.models) lists[0][2] = [...new Set([releaseOfTag(g.image.tag), releaseOfTag(g.canary.image?.tag ?? g.image.tag)])];
  const known = new Set(releases);
  const seen = new Map<string, { at: string; contract: ModelContract }>();
  for (const [base, entries, trackReleases] of lists) {
    entries.forEach((m, i) => {
      if (typeof m === "string") return;
      const at = [...base, i];
      const key = keyPath(at);
      const prev = seen.get(m.name);
      if (prev && !sameContract(prev.contract, m))
        out.push({ path: at, message: `must equal the contract of ${m.name} at ${prev.at}: both render the one config.pbtxt of ${m.name} in the repository` });
      else if (!prev) seen.set(m.name, { at: key, contract: m });
      (m.instanceGroups ?? []).forEach((ig, j) => {
        (ig.gpus ?? []).forEach((gpu, k) => {
          if (gpu >= g.gpu.count)
            out.push({
              path: [...at, "instanceGroups", j, "gpus", k],
              message: `must be below gpu.count (${g.gpu.count}): the pod sees GPUs 0..${g.gpu.count - 1}`,
            });
        });
        if (ig.rateLimiter?.resources?.length && !hasFlag(g.extraArgs, "--rate-limit"))
          out.push({
            path: [...at, "instanceGroups", j, "rateLimiter", "resources"],
            message: "needs the server's rate limiter (--rate-limit=execution_count in extraArgs): without it Triton ignores the resources",
          });
      });
      const delay = m.dynamicBatching?.maxQueueDelayUs;
      if (delay !== undefined && delay > g.hpa.targetQueueUs)
        out.push({
          path: [...at, "dynamicBatching", "maxQueueDelayUs"],
          message: `must be at most hpa.targetQueueUs (${g.hpa.targetQueueUs}): a batching delay above the queue-time budget keeps the HPA scaling out`,
        });
      if (m.responseCache === true && !hasFlag(g.extraArgs, "--cache-config"))
        out.push({
          path: [...at, "responseCache"],
          message: "needs the server's cache (--cache-config=local,size=<bytes> in extraArgs): without it Triton refuses to load the model",
        });
      const backend = backendNeeded(m);
      for (const release of trackReleases) {
        if (backend === undefined || !known.has(release)) continue;
        if (!TRITON_BACKENDS_OF_RELEASE[release]?.includes(backend)) {
          const which = m.backend !== undefined ? "backend" : "platform";
          const tagKey = base[0] === "canary" || release !== releaseOfTag(g.image.tag) ? "canary.image.tag" : "image.tag";
          out.push({
            path: [...at, which],
            message: `must be a backend the ${tagKey} release ${release} ships (${TRITON_BACKENDS_OF_RELEASE[release]?.join(", ")}; components/upstream/triton-backends.ts)`,
          });
        }
      }
    });
  }
  return out;
}

/** Two contracts render the same config.pbtxt. */
export function sameContract(a: DeepReadonly<ModelContract>, b: DeepReadonly<ModelContract>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function canonicalJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonicalJson).join(",")}]`;
  if (x && typeof x === "object")
    return `{${Object.keys(x)
      .filter((k) => (x as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((x as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(x);
}

/** A group's settings with every default applied (what the stack config holds per group). */
export type TritonGroupSettings = v.InferOutput<typeof tritonGroupSettings>;
/** A group's settings as written: optional keys may be left out. */
export type TritonGroupSettingsInput = v.InferInput<typeof tritonGroupSettings>;

/** The `triton` section of the stack config: the namespace and the serving groups. */
export const tritonSection = doc(
  section({
    namespace: doc(v.optional(dnsLabel, "triton"), "Namespace the Triton serving groups run in (Pod Security restricted)."),
    groups: doc(
      refined(list(tritonGroupSettings, { min: 1, what: "serving group" }), (groups, ctx) => {
        // One Set pass: no per-pair comparison, so 100 groups cost 10× what 10 do.
        const names = new Map<string, number>();
        const contracts = new Map<string, { at: (string | number)[]; contract: ModelContract }>();
        groups.forEach((g, i) => {
          for (const [base, entries] of [
            [["models"], g.models ?? []],
            [["canary", "models"], g.canary?.models ?? []],
          ] as const) {
            entries.forEach((m, j) => {
              if (typeof m === "string") return;
              const prev = contracts.get(m.name);
              if (!prev) contracts.set(m.name, { at: [i, ...base, j], contract: m });
              else if (prev.at[0] !== i && !sameContract(prev.contract, m))
                ctx.addIssue({
                  path: [i, ...base, j],
                  message: `must equal the contract of ${m.name} in groups[${prev.at[0]}] (${keyPath(prev.at.slice(1))}): both groups read the one config.pbtxt of ${m.name}`,
                });
            });
          }
          for (const n of g.canary ? [tritonName(g.name, "primary"), tritonName(g.name, "canary")] : [tritonName(g.name, "primary")]) {
            const prev = names.get(n);
            if (prev !== undefined) ctx.addIssue({ path: [i, "name"], message: `must be unique: ${n} is also used by groups[${prev}]` });
            else names.set(n, i);
          }
        });
      }),
      "Serving groups, one TritonServer each; their names (and `<name>-canary`) are unique.",
    ),
  }),
  "The Kubernetes side of serving: the namespace and the Triton serving groups (primary and optional canary StatefulSets each).",
);

// ---- Arguments of the component ---------------------------------------------------------

/** What the stack wires into a serving group: not settings, so not in the schema. */
export interface TritonServerRefs {
  /** Namespace the group runs in (the stack's serving namespace). */
  readonly namespace: string;
  /** Standard labels of the stack (naming.ts standardLabels). */
  readonly labels: Readonly<Record<string, string>>;
  /** Where the models are and how the pods reach them (model repository component). */
  readonly modelRepository: ModelRepositoryBinding;
  /** PriorityClass of the pods (TritonPriorityClass). */
  readonly priorityClassName: string;
  /**
   * Zones the GPU capacity spans: minDomains of the zone spread. Required: it is a fact of
   * the cluster (cluster.zones), which the group cannot guess.
   */
  readonly zoneCount: number;
  /**
   * The longest request the gateway lets through to the group, in seconds (gateway's
   * longestRequestSeconds): the exit timeout and grace period are derived from it (tritonShutdown).
   */
  readonly longestRequestSeconds: number;
}

/** Arguments for one Triton serving group: its settings (see tritonGroupSettings) and what the stack wires in. */
export type TritonServerArgs = DeepReadonly<TritonGroupSettingsInput> & TritonServerRefs;

/** One StatefulSet of the group: primary or canary. */
export interface ResolvedTrack {
  readonly track: Track;
  /** StatefulSet name. */
  readonly name: string;
  /** Image reference repository:tag[@digest]. */
  readonly image: string;
  /** The image's container release (`yy.mm`): its flags are checked against that release's parser. */
  readonly release: string;
  readonly models: readonly string[];
  readonly replicas: number;
  /** The canary's declared rollout (canary.rollout), recorded on its StatefulSet for the policies. */
  readonly rollout?: DeepReadonly<RolloutSettings>;
}

/** A group with every default applied and every rule checked: what the builders take. */
export type ResolvedTritonServer = DeepReadonly<
  Omit<TritonGroupSettings, "hpa" | "canary" | "image" | "models" | "exitTimeoutSecs" | "terminationGracePeriodSeconds">
> &
  TritonServerRefs &
  TritonShutdown & {
    readonly hpa: { readonly min: number; readonly max: number; readonly targetQueueUs: number };
    /** Primary first, then the canary when configured. */
    readonly tracks: readonly ResolvedTrack[];
    /** The model contracts of the group's tracks, one per model (the canary's after the primary's): the config.pbtxt files the stack renders. */
    readonly contracts: readonly DeepReadonly<ModelContract>[];
  };

/** An image reference repository:tag[@digest]. */
export function imageRef(i: { readonly repository: string; readonly tag: string; readonly digest?: string }): string {
  return `${i.repository}:${i.tag}${i.digest ? `@${i.digest}` : ""}`;
}

/** The canary's own image reference, when it has one: its repository defaults to the primary's. */
export function canaryImageRef(g: Pick<TritonGroupSettings, "image" | "canary">): string | undefined {
  return g.canary?.image && imageRef({ repository: g.image.repository, ...g.canary.image });
}

/**
 * Resolve a serving group's arguments: the settings through tritonGroupSettings (defaults
 * once, every rule checked; throws SettingsError listing every problem, before anything is
 * created), then the stack's references passed through and the tracks derived.
 */
export function resolveTritonServer(args: TritonServerArgs): ResolvedTritonServer {
  const { namespace, labels, modelRepository, priorityClassName, zoneCount, longestRequestSeconds, ...settings } = args;
  const subject = `invalid arguments of TritonServer "${args.name}"`;
  const s = parseSettings(tritonGroupSettings, settings, subject);
  const shutdownProblems = tritonShutdownProblems(s, longestRequestSeconds);
  if (shutdownProblems.length)
    throw new SettingsError(
      subject,
      shutdownProblems.map((p) => ({ key: keyPath(p.path), rule: p.message, value: { shown: String(s[p.path[0] as keyof ShutdownKeys]) } })),
    );
  const { hpa, canary, image, models: primaryModels, ...rest } = s;
  // No models listed (poll or none model control): the pods load none at start-up.
  const entries = primaryModels ?? [];
  const models = entries.map(modelNameOf);
  const contracts = new Map<string, ModelContract>();
  for (const m of [...entries, ...(canary?.models ?? [])]) if (typeof m !== "string" && !contracts.has(m.name)) contracts.set(m.name, m);
  return {
    contracts: [...contracts.values()],
    ...rest,
    namespace,
    labels,
    modelRepository,
    priorityClassName,
    zoneCount,
    longestRequestSeconds,
    ...tritonShutdown(s, longestRequestSeconds),
    hpa: { ...hpaBounds(s.replicas, hpa), targetQueueUs: hpa.targetQueueUs },
    tracks: [
      { track: "primary", name: tritonName(s.name, "primary"), image: imageRef(image), release: releaseOfTag(image.tag), models, replicas: s.replicas },
      ...(canary
        ? [
            {
              track: "canary",
              name: tritonName(s.name, "canary"),
              // Its own image when given, else the primary's.
              image: canaryImageRef(s) ?? imageRef(image),
              release: releaseOfTag(canary.image?.tag ?? image.tag),
              models: canary.models?.map(modelNameOf) ?? models,
              replicas: canary.replicas,
              ...(canary.rollout ? { rollout: canary.rollout } : {}),
            } as const,
          ]
        : []),
    ],
  };
}

/**
 * What a group's settings allow but a person should see (the stack plans; each is reported as a
 * warning): a canary on an older release than its primary is a rollback under test, or a
 * forgotten canary whose promotion would downgrade Triton.
 */
export function tritonGroupWarnings(r: Pick<ResolvedTritonServer, "name" | "tracks">): string[] {
  const [primary, canary] = r.tracks;
  if (!canary || !(canary.release < primary.release)) return [];
  return [
    `serving group ${r.name}: the canary runs Triton ${canary.release} (${canary.image}), older than the primary's ${primary.release} ` +
      `(${primary.image}): promoting it would downgrade Triton and may drop security fixes (canary.image.tag)`,
  ];
}

/** The GPU memory a pod's contracted instances take, per GPU index (MiB), and who takes it: for the capacity check. */
export interface GpuMemoryDemand {
  readonly gpu: number;
  readonly mib: number;
  /** Each contributing model: its key path (relative to the group), instances on this GPU, MiB each. */
  readonly models: readonly { readonly path: (string | number)[]; readonly name: string; readonly instances: number; readonly mibEach: number }[];
}

const MIB = 1024 * 1024;

/**
 * Per GPU of one pod of a track, the memory its contracted models' instances take where they state
 * gpuMemoryPerInstance, plus the CUDA memory pool Triton reserves on every GPU. Instances follow
 * Triton's placement: an instance group without `gpus` puts `count` instances on every GPU of the
 * pod, one with `gpus` on each listed GPU; KIND_CPU and KIND_MODEL take none; no instance group is
 * one instance per GPU.
 */
export function gpuMemoryDemand(g: TritonGroupSettings, track: "primary" | "canary"): GpuMemoryDemand[] {
  const base: (string | number)[] = track === "canary" && g.canary?.models ? ["canary", "models"] : ["models"];
  const entries = (track === "canary" ? (g.canary?.models ?? g.models) : g.models) ?? [];
  const gpus = Array.from({ length: g.gpu.count }, (_, i) => ({
    gpu: i,
    mib: g.cudaMemoryPoolByteSize / MIB,
    models: [] as GpuMemoryDemand["models"][number][],
  }));
  entries.forEach((m, i) => {
    if (typeof m === "string" || m.gpuMemoryPerInstance === undefined) return;
    const mibEach = quantityValue(m.gpuMemoryPerInstance) / MIB;
    const perGpu = new Map<number, number>();
    for (const ig of m.instanceGroups ?? [{}]) {
      const kind = (ig as { kind?: string }).kind;
      if (kind === "KIND_CPU" || kind === "KIND_MODEL") continue;
      const on = (ig as { gpus?: readonly number[] }).gpus ?? gpus.map((x) => x.gpu);
      for (const k of on) perGpu.set(k, (perGpu.get(k) ?? 0) + ((ig as { count?: number }).count ?? 1));
    }
    for (const [k, n] of perGpu) {
      const slot = gpus[k];
      if (!slot) continue; // an index past gpu.count: the GPU-index rule reports it
      slot.mib += n * mibEach;
      slot.models.push({ path: [...base, i, "gpuMemoryPerInstance"], name: m.name, instances: n, mibEach });
    }
  });
  return gpus.filter((x) => x.models.length > 0);
}
