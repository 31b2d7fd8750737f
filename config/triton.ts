// The `triton` section: the namespace and the serving groups. Each group becomes one
// TritonServer (components/triton); the rules here are the ones a person can fix in the
// stack file, each naming the key it is about.
import * as v from "valibot";
import { dnsLabel, integer, list, oneOf, pattern, quantity, refined, section, str, uniqueList, type CheckContext } from "../lib/schema";
import { tritonName } from "../components/contracts";
import { TRITON_DEFAULTS as D, imageRef, tritonServerProblems, type TritonImage } from "../components/triton/args";

/** Release tags of nvcr.io/nvidia/tritonserver: <yy.mm>-py3 and its variants. Never `latest`. */
export const TRITON_IMAGE_TAG = /^\d{2}\.\d{2}-(py3|py3-min|vllm-python-py3|trtllm-python-py3)$/;

const imageTag = pattern(TRITON_IMAGE_TAG, "must be a Triton release tag such as 25.01-py3 (<yy.mm>-py3 or a -py3 variant; never latest)");
const imageDigest = pattern(/^sha256:[a-f0-9]{64}$/, "must be an image digest sha256:<64 hex digits>");
const imageRepository = pattern(/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)+$/, "must be an image repository such as nvcr.io/nvidia/tritonserver (no tag)");
/** Triton model names: folder names in the repository. `*` (all models) is refused: list them. */
const modelName = pattern(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, "must be a model name (the model's folder in the repository; letters, digits, '_', '.', '-')");
const models = uniqueList(modelName, { min: 1, what: "model" }, "must not repeat a model");

// <group>-canary-headless must stay a DNS label (63) and a StatefulSet's name leaves room
// for the controller-revision-hash label: 63 - "-canary-headless".length = 47.
const GROUP_NAME_MAX = 47;

const canary = section({
  /** Image of the canary; repository defaults to the primary's. @default the primary's image */
  image: v.optional(section({ repository: v.optional(imageRepository), tag: imageTag, digest: v.optional(imageDigest) })),
  /** Models of the canary. @default the primary's models */
  models: v.optional(models),
  /** Canary pods; at least one. */
  replicas: v.pipe(
    v.number("must be an integer >= 1"),
    v.integer("must be an integer >= 1"),
    v.minValue(1, "must be >= 1: a canary with no pods receives no mirrored traffic (remove `canary` to run without one)"),
  ),
});

export const tritonGroup = refined(section({
  /** Group name: the StatefulSet `<name>` and `<name>-canary`, and their Services. */
  name: v.pipe(dnsLabel, v.check((n) => n.length <= GROUP_NAME_MAX, `must be at most ${GROUP_NAME_MAX} characters (room for -canary-headless)`)),
  /** Models loaded at start-up (one --load-model each); required with explicit model control, refused otherwise. */
  models: v.optional(models),
  /** --model-control-mode. explicit: only the listed models ever load. @default "explicit" */
  modelControlMode: v.optional(oneOf(["explicit", "poll", "none"]), D.modelControlMode),
  image: section({
    /** @default "nvcr.io/nvidia/tritonserver" */
    repository: v.optional(imageRepository, D.imageRepository),
    /** Release tag, e.g. 25.01-py3. */
    tag: imageTag,
    /** Optional digest: pins the exact bytes, not just the tag. */
    digest: v.optional(imageDigest),
  }),
  /** Primary pods (the HPA's starting point). */
  replicas: integer({ min: 1 }),
  gpu: section({
    /** Value of the node label triton-platform/gpu-type the pods require (e.g. nvidia-l4). */
    type: dnsLabel,
    /** nvidia.com/gpu per pod. @default 1 */
    count: v.optional(integer({ min: 1, max: 8 }), D.gpuCount),
  }),
  /** CPU request = limit (Guaranteed QoS). */
  cpu: quantity,
  /** Memory request = limit; must cover shmSize. */
  memory: quantity,
  /** /dev/shm size (memory-backed emptyDir). @default "1Gi" */
  shmSize: v.optional(quantity, D.shmSize),
  /** Size limit of the local copy of an S3 model repository. @default "20Gi" */
  modelCacheSize: v.optional(quantity, D.modelCacheSize),
  /** Longest time loading every model may take; the startupProbe covers it. @default 600 */
  modelLoadBudgetSeconds: v.optional(integer({ min: 1 }), D.modelLoadBudgetSeconds),
  /** periodSeconds of the startupProbe. @default 10 */
  startupProbePeriodSeconds: v.optional(integer({ min: 1, max: 60 }), D.startupProbePeriodSeconds),
  /** --exit-timeout-secs: in-flight requests get this long after SIGTERM. @default 30 */
  exitTimeoutSecs: v.optional(integer({ min: 1 }), D.exitTimeoutSecs),
  /** preStop sleep so endpoints drop the pod before Triton stops accepting. @default 10 */
  preStopSleepSeconds: v.optional(integer({ min: 0, max: 120 }), D.preStopSleepSeconds),
  /** Pod's grace period; must exceed preStopSleepSeconds + exitTimeoutSecs. @default 60 */
  terminationGracePeriodSeconds: v.optional(integer({ min: 1 }), D.terminationGracePeriodSeconds),
  /** --cuda-memory-pool-byte-size per GPU. @default 268435456 */
  cudaMemoryPoolByteSize: v.optional(integer({ min: 0 }), D.cudaMemoryPoolByteSize),
  /** --pinned-memory-pool-byte-size. @default 268435456 */
  pinnedMemoryPoolByteSize: v.optional(integer({ min: 0 }), D.pinnedMemoryPoolByteSize),
  /** --http-header-forward-pattern. @default "x-request-id" */
  httpHeaderForwardPattern: v.optional(pattern(/^\S+$/, "must be a regular expression without spaces"), D.httpHeaderForwardPattern),
  /** --log-verbose (0 = off). @default 0 */
  logVerbose: v.optional(integer({ min: 0 }), D.logVerbose),
  /** Autoscaling on the per-pod queue time. @default {min: replicas, max: 2 × replicas, targetQueueUs: 10000} */
  hpa: v.optional(section({
    /** @default replicas */
    min: v.optional(integer({ min: 1 })),
    /** @default 2 × replicas */
    max: v.optional(integer({ min: 1 })),
    /** Target average queue time per request, microseconds. @default 10000 */
    targetQueueUs: v.optional(integer({ min: 1 }), D.hpaTargetQueueUs),
  })),
  /** Further tritonserver flags (--flag=value); real, current flags only. @default [] */
  extraArgs: v.optional(list(str()), []),
  /** A second StatefulSet <name>-canary with its own image and/or models. */
  canary: v.optional(canary),
}), (g, ctx) => {
  // The cross-field rules live with the component (one place); here they name the key.
  for (const p of tritonServerProblems(g)) ctx.addIssue({ path: p.path, message: p.message });
});

export type TritonGroupConfig = v.InferOutput<typeof tritonGroup>;

export const tritonSection = section({
  /** Namespace the Triton serving groups run in. @default "triton" */
  namespace: v.optional(dnsLabel, "triton"),
  /** Serving groups: one TritonServer each. */
  groups: refined(list(tritonGroup, { min: 1, what: "serving group" }), (groups, ctx) => {
    // One Set pass: no per-pair comparison, so 100 groups cost 10× what 10 do.
    const names = new Map<string, number>();
    groups.forEach((g, i) => {
      for (const n of g.canary ? [tritonName(g.name, "primary"), tritonName(g.name, "canary")] : [tritonName(g.name, "primary")]) {
        const prev = names.get(n);
        if (prev !== undefined) ctx.addIssue({ path: [i, "name"], message: `must be unique: ${n} is also used by groups[${prev}]` });
        else names.set(n, i);
      }
    });
  }),
});

/** Image references of every serving group (primary and canary), with the key each comes from. */
export function tritonImageRefs(triton: unknown): { path: (string | number)[]; image: string }[] {
  const groups = (triton as { groups?: unknown } | undefined)?.groups;
  if (!Array.isArray(groups)) return [];
  const out: { path: (string | number)[]; image: string }[] = [];
  groups.forEach((g: { image?: TritonImage; canary?: { image?: TritonImage } } | null, i) => {
    if (g?.image?.tag) out.push({ path: ["triton", "groups", i, "image"], image: imageRef(g.image) });
    if (g?.image && g.canary?.image?.tag) {
      out.push({ path: ["triton", "groups", i, "canary", "image"], image: imageRef({ repository: g.image.repository, ...g.canary.image }) });
    }
  });
  return out;
}

/** Rules between the serving groups and other sections; each names the group's key. */
export function tritonCrossChecks(cfg: { triton?: { groups?: { gpu?: { type?: string } }[] }; gpu?: { gpuType?: string } }, ctx: CheckContext): void {
  const nodeGpu = cfg.gpu?.gpuType;
  if (!nodeGpu) return;
  cfg.triton?.groups?.forEach((g, i) => {
    if (g.gpu?.type !== undefined && g.gpu.type !== nodeGpu) {
      ctx.addIssue({
        path: ["triton", "groups", i, "gpu", "type"],
        message: `must be the GPU node group's gpu-type (${nodeGpu}): no node carries that label, so the pods would stay Pending`,
      });
    }
  });
}
