// Arguments of a Triton serving group, their defaults (applied once, in resolveTritonServer)
// and the cross-field rules shared with the stack config's validation.
import type { ModelRepositoryBinding, Track } from "../contracts";
import { tritonName } from "../contracts";
import { quantityValue } from "../../lib/quantity";
import { extraArgsErrors } from "../upstream/tritonserver";
import { TRITON_IMAGE_REPOSITORY } from "../upstream/triton-releases";

export interface TritonImage {
  /** @default "nvcr.io/nvidia/tritonserver" */
  readonly repository?: string;
  /** Release tag such as 25.01-py3. */
  readonly tag: string;
  /** sha256 digest; pins the bytes, not just the tag. */
  readonly digest?: string;
}

/** Defaults of a serving group; the stack config schema uses the same values. */
export const TRITON_DEFAULTS = {
  imageRepository: TRITON_IMAGE_REPOSITORY,
  modelControlMode: "explicit",
  replicas: 3,
  gpuCount: 1,
  shmSize: "1Gi",
  modelCacheSize: "20Gi",
  modelLoadBudgetSeconds: 600,
  startupProbePeriodSeconds: 10,
  exitTimeoutSecs: 30,
  preStopSleepSeconds: 10,
  terminationGracePeriodSeconds: 60,
  cudaMemoryPoolByteSize: 268_435_456,
  pinnedMemoryPoolByteSize: 268_435_456,
  httpHeaderForwardPattern: "x-request-id",
  logVerbose: 0,
  hpaTargetQueueUs: 10_000,
} as const;

/** Arguments for one Triton serving group (primary StatefulSet and optional canary). */
export interface TritonServerArgs {
  /** Group name: names the StatefulSets and Services (contracts.ts tritonName). */
  readonly name: string;
  /** Namespace the group runs in. */
  readonly namespace: string;
  /** Standard labels of the stack (naming.ts standardLabels). */
  readonly labels: Readonly<Record<string, string>>;
  /** Where the models are and how the pods reach them (model repository component). */
  readonly modelRepository: ModelRepositoryBinding;
  /** PriorityClass of the pods (TritonPriorityClass). */
  readonly priorityClassName: string;
  /** Zones the GPU capacity spans: minDomains of the zone spread. @default 1 */
  readonly zoneCount?: number;
  /** Models loaded at start-up; required with explicit model control. */
  readonly models?: readonly string[];
  /** --model-control-mode. @default "explicit" */
  readonly modelControlMode?: "explicit" | "poll" | "none";
  readonly image: TritonImage;
  /** Primary pods. @default 3 */
  readonly replicas?: number;
  readonly gpu: {
    /** Node label triton-platform/gpu-type value the pods require. */
    readonly type: string;
    /** nvidia.com/gpu per pod. @default 1 */
    readonly count?: number;
  };
  /** CPU request = limit. */
  readonly cpu: string;
  /** Memory request = limit; covers /dev/shm. */
  readonly memory: string;
  /** /dev/shm size. @default "1Gi" */
  readonly shmSize?: string;
  /** Size limit of the S3 model repository's local copy. @default "20Gi" */
  readonly modelCacheSize?: string;
  /** Time loading every model may take; the startupProbe covers it. @default 600 */
  readonly modelLoadBudgetSeconds?: number;
  /** startupProbe periodSeconds. @default 10 */
  readonly startupProbePeriodSeconds?: number;
  /** --exit-timeout-secs. @default 30 */
  readonly exitTimeoutSecs?: number;
  /** preStop sleep before SIGTERM. @default 10 */
  readonly preStopSleepSeconds?: number;
  /** @default 60 */
  readonly terminationGracePeriodSeconds?: number;
  /** @default 268435456 */
  readonly cudaMemoryPoolByteSize?: number;
  /** @default 268435456 */
  readonly pinnedMemoryPoolByteSize?: number;
  /** @default "x-request-id" */
  readonly httpHeaderForwardPattern?: string;
  /** @default 0 */
  readonly logVerbose?: number;
  /** @default {min: replicas, max: 2 × replicas, targetQueueUs: 10000} */
  readonly hpa?: { readonly min?: number; readonly max?: number; readonly targetQueueUs?: number };
  /** Real tritonserver flags beyond the typed ones. @default [] */
  readonly extraArgs?: readonly string[];
  /** A second StatefulSet `<name>-canary`. */
  readonly canary?: { readonly image?: TritonImage; readonly models?: readonly string[]; readonly replicas: number };
}

/** One StatefulSet of the group: primary or canary. */
export interface ResolvedTrack {
  readonly track: Track;
  /** StatefulSet name. */
  readonly name: string;
  /** Image reference repository:tag[@digest]. */
  readonly image: string;
  readonly models: readonly string[];
  readonly replicas: number;
}

export type ResolvedTritonServer = Required<
  Omit<TritonServerArgs, "hpa" | "canary" | "image" | "gpu" | "models" | "extraArgs" | "labels">
> & {
  readonly labels: Readonly<Record<string, string>>;
  readonly gpu: { readonly type: string; readonly count: number };
  readonly extraArgs: readonly string[];
  readonly hpa: { readonly min: number; readonly max: number; readonly targetQueueUs: number };
  /** Primary first, then the canary when configured. */
  readonly tracks: readonly ResolvedTrack[];
};

export function imageRef(i: TritonImage): string {
  return `${i.repository ?? TRITON_DEFAULTS.imageRepository}:${i.tag}${i.digest ? `@${i.digest}` : ""}`;
}

/** The sizing fields the cross-field rules read (the stack config has the same names). */
export interface TritonSizing {
  readonly memory: string;
  readonly shmSize: string;
  readonly modelLoadBudgetSeconds: number;
  readonly startupProbePeriodSeconds: number;
  readonly exitTimeoutSecs: number;
  readonly preStopSleepSeconds: number;
  readonly terminationGracePeriodSeconds: number;
  readonly modelControlMode: string;
  readonly models?: readonly string[];
  readonly replicas: number;
  readonly hpa?: { readonly min?: number; readonly max?: number };
  readonly extraArgs: readonly string[];
  readonly canary?: { readonly models?: readonly string[]; readonly replicas: number };
}

export interface Problem {
  /** Key path inside the group, e.g. ["shmSize"] or ["extraArgs", 2]. */
  readonly path: (string | number)[];
  /** A rule, with the values it compared. */
  readonly message: string;
}

/** Cross-field rules of a group; empty when it is consistent. Used by config validation and resolveTritonServer. */
export function tritonServerProblems(g: TritonSizing): Problem[] {
  const out: Problem[] = [];
  const add = (path: (string | number)[], message: string) => out.push({ path, message });
  if (!(quantityValue(g.shmSize) < quantityValue(g.memory))) {
    add(["shmSize"], `must be smaller than memory (${g.memory}): /dev/shm is memory-backed and counted against the memory limit, so the pod would be OOM-killed`);
  }
  if (g.modelLoadBudgetSeconds < g.startupProbePeriodSeconds) {
    add(["modelLoadBudgetSeconds"], `must be at least one startup probe period (startupProbePeriodSeconds = ${g.startupProbePeriodSeconds})`);
  }
  if (g.preStopSleepSeconds + g.exitTimeoutSecs >= g.terminationGracePeriodSeconds) {
    add(
      ["exitTimeoutSecs"],
      `plus preStopSleepSeconds (${g.preStopSleepSeconds}) must be below terminationGracePeriodSeconds (${g.terminationGracePeriodSeconds}), or the kubelet kills Triton mid-drain`,
    );
  }
  if (g.modelControlMode === "explicit" && !g.models?.length) add(["models"], "must list the models to load: explicit model control loads nothing else");
  if (g.modelControlMode !== "explicit" && g.models?.length) add(["models"], `must be left out with modelControlMode "${g.modelControlMode}" (--load-model only works with explicit)`);
  if (g.modelControlMode !== "explicit" && g.canary?.models?.length) add(["canary", "models"], `must be left out with modelControlMode "${g.modelControlMode}"`);
  if (g.canary && !(g.canary.replicas >= 1)) {
    add(["canary", "replicas"], "must be >= 1: a canary with no pods receives no mirrored traffic (remove `canary` to run without one)");
  }
  const { min, max } = hpaBounds(g.replicas, g.hpa);
  if (min > max) add(["hpa", "min"], `must be <= hpa.max (${max})`);
  else if (g.replicas < min || g.replicas > max) add(["replicas"], `must be between hpa.min (${min}) and hpa.max (${max})`);
  for (const { index, error } of extraArgsErrors(g.extraArgs)) {
    add(["extraArgs", index], `must be a real, current tritonserver flag the group does not already set (${error.message})`);
  }
  return out;
}

/** The HPA's bounds: min defaults to the replicas, max to twice them (and at least min). */
export function hpaBounds(replicas: number, hpa?: { readonly min?: number; readonly max?: number }): { min: number; max: number } {
  const min = hpa?.min ?? replicas;
  return { min, max: hpa?.max ?? Math.max(2 * replicas, min) };
}

export class TritonArgsError extends Error {
  constructor(
    readonly group: string,
    readonly problems: Problem[],
  ) {
    super(`serving group ${group}:\n  - ${problems.map((p) => `${p.path.join(".")} ${p.message}`).join("\n  - ")}`);
    this.name = "TritonArgsError";
  }
}

/** Apply every default once and check the cross-field rules; throws TritonArgsError listing all problems. */
export function resolveTritonServer(a: TritonServerArgs): ResolvedTritonServer {
  const d = TRITON_DEFAULTS;
  const replicas = a.replicas ?? d.replicas;
  const modelControlMode = a.modelControlMode ?? d.modelControlMode;
  const models = a.models ?? [];
  const r = {
    name: a.name,
    namespace: a.namespace,
    labels: a.labels,
    modelRepository: a.modelRepository,
    priorityClassName: a.priorityClassName,
    zoneCount: a.zoneCount ?? 1,
    modelControlMode,
    replicas,
    gpu: { type: a.gpu.type, count: a.gpu.count ?? d.gpuCount },
    cpu: a.cpu,
    memory: a.memory,
    shmSize: a.shmSize ?? d.shmSize,
    modelCacheSize: a.modelCacheSize ?? d.modelCacheSize,
    modelLoadBudgetSeconds: a.modelLoadBudgetSeconds ?? d.modelLoadBudgetSeconds,
    startupProbePeriodSeconds: a.startupProbePeriodSeconds ?? d.startupProbePeriodSeconds,
    exitTimeoutSecs: a.exitTimeoutSecs ?? d.exitTimeoutSecs,
    preStopSleepSeconds: a.preStopSleepSeconds ?? d.preStopSleepSeconds,
    terminationGracePeriodSeconds: a.terminationGracePeriodSeconds ?? d.terminationGracePeriodSeconds,
    cudaMemoryPoolByteSize: a.cudaMemoryPoolByteSize ?? d.cudaMemoryPoolByteSize,
    pinnedMemoryPoolByteSize: a.pinnedMemoryPoolByteSize ?? d.pinnedMemoryPoolByteSize,
    httpHeaderForwardPattern: a.httpHeaderForwardPattern ?? d.httpHeaderForwardPattern,
    logVerbose: a.logVerbose ?? d.logVerbose,
    extraArgs: a.extraArgs ?? [],
    hpa: { ...hpaBounds(replicas, a.hpa), targetQueueUs: a.hpa?.targetQueueUs ?? d.hpaTargetQueueUs },
    tracks: [
      { track: "primary", name: tritonName(a.name, "primary"), image: imageRef(a.image), models, replicas },
      ...(a.canary
        ? [
            {
              track: "canary",
              name: tritonName(a.name, "canary"),
              // Its own image when given (repository defaults to the primary's), else the primary's.
              image: a.canary.image ? imageRef({ repository: a.image.repository, ...a.canary.image }) : imageRef(a.image),
              models: a.canary.models ?? models,
              replicas: a.canary.replicas,
            } as const,
          ]
        : []),
    ],
  } satisfies ResolvedTritonServer;
  const problems = tritonServerProblems({ ...r, models: a.models, canary: a.canary, hpa: a.hpa });
  if (problems.length) throw new TritonArgsError(a.name, problems);
  return r;
}
