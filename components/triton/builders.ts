// Pure builders: a resolved serving group in, plain Kubernetes manifests out. No Pulumi
// runtime here, so tests and policies can call them directly. Work per group is constant:
// nothing here looks at other groups.
import type * as k8s from "@pulumi/kubernetes";
import { configsHash } from "./model-config";
import type * as pulumi from "@pulumi/pulumi";
import {
  ROLLOUT_ANNOTATION,
  GPU_RESOURCE,
  GPU_TOLERATION,
  HPA_PENDING_METRIC,
  HPA_QUEUE_METRIC,
  NODE_LABEL_GPU_TYPE,
  TRITON_METRICS_PORT_NAME,
  TRITON_ADMIN_HEADER,
  TRITON_METRICS_SERVICE_LABEL,
  TRITON_GID,
  TRITON_PORTS,
  TRITON_UID,
  tritonHeadlessServiceName,
  tritonMetricsServiceName,
  tritonName,
  tritonSelector,
  tritonServiceName,
  type ModelRepositoryBinding,
  type Track,
} from "../contracts";
import { tritonServerArgs } from "../upstream/tritonserver";
import type { ResolvedTrack, ResolvedTritonServer } from "./schema";
import { restrictedSecurityContext } from "../security-context";

type Manifest<T> = T & { apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, string> } };

/** The binding with its values known (the component unwraps the Inputs before building). */
export type PlainBinding = pulumi.Unwrap<ModelRepositoryBinding>;

/** Local copy of an S3 model repository (TRITON_AWS_MOUNT_DIRECTORY). */
export const MODEL_CACHE_DIR = "/var/lib/triton/model-cache";
export const CONTAINER_NAME = "triton";
/** Label of every object of a group: which part of it this is. */
const COMPONENT = "app.kubernetes.io/component";

function meta(r: ResolvedTritonServer, name: string, track: Track, extra: Record<string, string> = {}) {
  return { name, namespace: r.namespace, labels: { ...r.labels, ...tritonSelector(r.name, track), ...extra } };
}

/** Pod labels of a track: the selector plus the standard labels. */
function podLabels(r: ResolvedTritonServer, track: Track): Record<string, string> {
  return { ...r.labels, ...tritonSelector(r.name, track), [COMPONENT]: "server" };
}

/** Container env var the admin key reaches tritonserver through; the args name it as `$(VAR)`, which the kubelet expands. */
export const ADMIN_KEY_ENV = "TRITON_PLATFORM_ADMIN_KEY";
/** Key of the admin Secret's data. */
export const ADMIN_KEY_SECRET_KEY = "key";
/** Length of the generated admin key ([A-Za-z0-9]: about 285 bits). */
export const ADMIN_KEY_LENGTH = 48;

/** The Secret holding a group's admin key (primary and canary share it). */
export function tritonAdminSecretName(group: string): string {
  return `${group}-triton-admin`;
}

/**
 * The admin key Secret of a group: the value Triton's control APIs (model repository, config,
 * shared memory, logging, trace, statistics) demand in TRITON_ADMIN_HEADER. The value is a
 * generated secret Output; it never appears in clear in a manifest or the plan.
 */
export function tritonAdminSecret(r: ResolvedTritonServer, key: pulumi.Input<string>): Manifest<k8s.types.input.core.v1.Secret> {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(r, tritonAdminSecretName(r.name), "primary", { [COMPONENT]: "admin-key" }),
    type: "Opaque",
    stringData: { [ADMIN_KEY_SECRET_KEY]: key },
  };
}

/** The tritonserver arguments of a track. */
export function trackArgs(r: ResolvedTritonServer, t: ResolvedTrack, repositoryUri: string): string[] {
  return tritonServerArgs({
    release: t.release,
    modelRepository: repositoryUri,
    modelControlMode: r.modelControlMode,
    models: t.models,
    exitTimeoutSecs: r.exitTimeoutSecs,
    gpuCount: r.gpu.count,
    cudaMemoryPoolByteSize: r.cudaMemoryPoolByteSize,
    pinnedMemoryPoolByteSize: r.pinnedMemoryPoolByteSize,
    headerForwardPattern: r.headerForwardPattern,
    admin: { header: TRITON_ADMIN_HEADER, value: `$(${ADMIN_KEY_ENV})` },
    logVerbose: r.logVerbose,
    extraArgs: r.extraArgs,
  });
}

/** Pod-template annotation naming the hash of the model configs the stack renders for the models a track loads. */
export const MODEL_CONFIGS_ANNOTATION = "triton-platform/model-configs";

/**
 * The contracts of the models a track loads, and the annotation that makes a changed one roll the
 * track's pods (none without contracts: a stack of bare names renders the pod template as before).
 * Why a roll: under explicit model control Triton reads config.pbtxt when it loads a model
 * (triton-inference-server/core r26.06 src/model_repository_manager/model_repository_manager.cc,
 * InitializeModelInfo: the config path and timestamps are read on a load request; LoadUnloadModels
 * polls only the models a load request names); a config changed in the repository stays unread until
 * the model is loaded again, which for --load-model models is the server's start.
 */
export function trackContracts(r: Pick<ResolvedTritonServer, "contracts">, t: Pick<ResolvedTrack, "models">): ResolvedTritonServer["contracts"] {
  return r.contracts.filter((c) => t.models.includes(c.name));
}

function trackConfigAnnotations(r: ResolvedTritonServer, t: ResolvedTrack): { annotations?: Record<string, string> } {
  const contracts = trackContracts(r, t);
  return contracts.length ? { annotations: { [MODEL_CONFIGS_ANNOTATION]: configsHash(contracts) } } : {};
}

/** startupProbe failureThreshold so that period × threshold covers the model-load budget. */
export function startupFailureThreshold(r: Pick<ResolvedTritonServer, "modelLoadBudgetSeconds" | "startupProbePeriodSeconds">): number {
  return Math.max(1, Math.ceil(r.modelLoadBudgetSeconds / r.startupProbePeriodSeconds));
}

/** The StatefulSet of one track. */
export function tritonStatefulSet(r: ResolvedTritonServer, t: ResolvedTrack, repo: PlainBinding): Manifest<k8s.types.input.apps.v1.StatefulSet> {
  const labels = podLabels(r, t.track);
  const security = restrictedSecurityContext({ uid: TRITON_UID, gid: TRITON_GID, fsGroup: TRITON_GID, alsoOnContainer: true });
  const s3 = repo.volume === undefined;
  const gpus = String(r.gpu.count);
  const resources = {
    // GPU limits = requests (the device plugin only honours limits); CPU and memory
    // requests = limits: Guaranteed QoS, last to be evicted under node pressure.
    requests: { cpu: r.cpu, memory: r.memory, [GPU_RESOURCE]: gpus },
    limits: { cpu: r.cpu, memory: r.memory, [GPU_RESOURCE]: gpus },
  };
  const http = { path: "/v2/health/ready", port: "http" };
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      ...meta(r, t.name, t.track, { [COMPONENT]: "server" }),
      // The declared stages and the current one, where the policies read them (triton-canary-rollout-in-order).
      // An annotation of the StatefulSet, not of its pods: moving a stage restarts nothing.
      ...(t.rollout ? { annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify(t.rollout) } } : {}),
    },
    spec: {
      serviceName: tritonHeadlessServiceName(r.name, t.track),
      replicas: t.replicas,
      selector: { matchLabels: tritonSelector(r.name, t.track) },
      // Parallel: pods load models concurrently; OrderedReady would multiply the
      // start-up time by the replica count on every scale-up.
      podManagementPolicy: "Parallel",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0 } },
      template: {
        // A changed contract rolls the pods: explicit model control reads a model's config.pbtxt only when it loads the model
        // (at start-up here), so the annotation carries a hash of the configs this track loads (trackConfigAnnotations).
        metadata: { labels, ...trackConfigAnnotations(r, t) },
        spec: {
          serviceAccountName: repo.serviceAccountName,
          // Triton never calls the Kubernetes API; IRSA mounts its own web-identity token.
          automountServiceAccountToken: false,
          priorityClassName: r.priorityClassName,
          // Longer than preStop + --exit-timeout-secs: in-flight requests finish before SIGKILL.
          terminationGracePeriodSeconds: r.terminationGracePeriodSeconds,
          securityContext: security.pod,
          // GPU nodes are tainted; only pods that tolerate it land there.
          tolerations: [{ ...GPU_TOLERATION }],
          affinity: {
            nodeAffinity: {
              // The group's models are built for this accelerator (TensorRT plans are per GPU type).
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_LABEL_GPU_TYPE, operator: "In", values: [r.gpu.type] }] }],
              },
            },
          },
          topologySpreadConstraints: [
            {
              // A zone outage takes at most its share of the replicas; minDomains keeps
              // pods pending (so the autoscaler adds a node) rather than stacking zones.
              topologyKey: "topology.kubernetes.io/zone",
              maxSkew: 1,
              whenUnsatisfiable: "DoNotSchedule",
              minDomains: r.zoneCount,
              labelSelector: { matchLabels: tritonSelector(r.name, t.track) },
            },
            {
              // One node's failure or drain takes at most one replica more than any other.
              topologyKey: "kubernetes.io/hostname",
              maxSkew: 1,
              whenUnsatisfiable: "DoNotSchedule",
              labelSelector: { matchLabels: tritonSelector(r.name, t.track) },
            },
          ],
          containers: [
            {
              name: CONTAINER_NAME,
              image: t.image,
              imagePullPolicy: "IfNotPresent",
              command: ["tritonserver"],
              args: trackArgs(r, t, repo.uri),
              env: [
                // The admin key, for the restriction flags' $(VAR) (defined here, or the kubelet would pass the literal text).
                { name: ADMIN_KEY_ENV, valueFrom: { secretKeyRef: { name: tritonAdminSecretName(r.name), key: ADMIN_KEY_SECRET_KEY } } },
                ...repo.env.map((e) => ({ name: e.name, value: e.value })),
                ...(s3 ? [{ name: "TRITON_AWS_MOUNT_DIRECTORY", value: MODEL_CACHE_DIR }] : []),
              ],
              ports: [
                { name: "http", containerPort: TRITON_PORTS.http, protocol: "TCP" },
                { name: "grpc", containerPort: TRITON_PORTS.grpc, protocol: "TCP" },
                { name: TRITON_METRICS_PORT_NAME, containerPort: TRITON_PORTS.metrics, protocol: "TCP" },
              ],
              resources,
              // Model loads take minutes: liveness must not kill a loading server.
              startupProbe: {
                httpGet: http,
                periodSeconds: r.startupProbePeriodSeconds,
                failureThreshold: startupFailureThreshold(r),
                timeoutSeconds: 5,
              },
              livenessProbe: { httpGet: { path: "/v2/health/live", port: "http" }, periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 5 },
              readinessProbe: { httpGet: http, periodSeconds: 5, failureThreshold: 3, timeoutSeconds: 5 },
              lifecycle: {
                // Endpoints drop the pod before Triton stops accepting: no refused requests on rollout.
                preStop: { sleep: { seconds: r.preStopSleepSeconds } },
              },
              securityContext: security.container,
              volumeMounts: [
                { name: "dshm", mountPath: "/dev/shm" },
                { name: "tmp", mountPath: "/tmp" },
                ...(s3
                  ? [{ name: "model-cache", mountPath: MODEL_CACHE_DIR }]
                  : [{ name: "model-repository", mountPath: repo.volume.mountPath, readOnly: true }]),
              ],
            },
          ],
          volumes: [
            // The default 64 MiB /dev/shm breaks the python backend and large batches.
            { name: "dshm", emptyDir: { medium: "Memory", sizeLimit: r.shmSize } },
            // Writable scratch so the root filesystem can stay read-only.
            { name: "tmp", emptyDir: { sizeLimit: "1Gi" } },
            ...(s3
              ? [{ name: "model-cache", emptyDir: { sizeLimit: r.modelCacheSize } }]
              : [{ name: "model-repository", persistentVolumeClaim: { claimName: repo.volume.claimName, readOnly: true } }]),
          ],
        },
      },
    },
  };
}

const SERVING_PORTS = [
  { name: "http", port: TRITON_PORTS.http, targetPort: "http", protocol: "TCP", appProtocol: "http" },
  // h2c: cleartext HTTP/2, which is what gRPC speaks; meshes and gateways pick HTTP/2 from it.
  { name: "grpc", port: TRITON_PORTS.grpc, targetPort: "grpc", protocol: "TCP", appProtocol: "kubernetes.io/h2c" },
];

/** Headless Service: the StatefulSet's stable pod DNS names; the gateway resolves it to route and health-check per pod. */
export function tritonHeadlessService(r: ResolvedTritonServer, track: Track): Manifest<k8s.types.input.core.v1.Service> {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(r, tritonHeadlessServiceName(r.name, track), track, { [COMPONENT]: "server" }),
    spec: { clusterIP: "None", selector: tritonSelector(r.name, track), ports: SERVING_PORTS },
  };
}

/** ClusterIP Service for in-cluster clients (http 8000, grpc 8001). */
export function tritonService(r: ResolvedTritonServer, track: Track): Manifest<k8s.types.input.core.v1.Service> {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(r, tritonServiceName(r.name, track), track, { [COMPONENT]: "server" }),
    spec: { type: "ClusterIP", selector: tritonSelector(r.name, track), ports: SERVING_PORTS },
  };
}

/** Metrics Service (8002) that the ServiceMonitor selects by TRITON_METRICS_SERVICE_LABEL. */
export function tritonMetricsService(r: ResolvedTritonServer, track: Track): Manifest<k8s.types.input.core.v1.Service> {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(r, tritonMetricsServiceName(r.name, track), track, { ...TRITON_METRICS_SERVICE_LABEL }),
    spec: {
      type: "ClusterIP",
      selector: tritonSelector(r.name, track),
      ports: [{ name: TRITON_METRICS_PORT_NAME, port: TRITON_PORTS.metrics, targetPort: TRITON_METRICS_PORT_NAME, protocol: "TCP", appProtocol: "http" }],
    },
  };
}

/** At most one pod of a track down for voluntary disruptions (node drains, upgrades). */
export function tritonPodDisruptionBudget(r: ResolvedTritonServer, track: Track): Manifest<k8s.types.input.policy.v1.PodDisruptionBudget> {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta(r, tritonName(r.name, track), track, { [COMPONENT]: "server" }),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: tritonSelector(r.name, track) },
      // A crash-looping pod must not block node drains forever.
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    },
  };
}

/**
 * Average requests per pod held without completing (HPA_PENDING_METRIC) above which the HPA adds
 * pods: a few dynamic batches of a healthy pod stay well below it, a wedged pod (whose queue-time
 * metric reads 0, since that grows only on success) passes it within seconds of traffic.
 */
export const HPA_PENDING_REQUESTS_PER_POD = 32;

/**
 * Autoscaler of the primary StatefulSet on the per-pod queue time (prometheus-adapter's
 * HPA_QUEUE_METRIC) and the pending requests (HPA_PENDING_METRIC); the HPA follows whichever
 * asks for more pods.
 */
export function tritonHorizontalPodAutoscaler(r: ResolvedTritonServer): Manifest<k8s.types.input.autoscaling.v2.HorizontalPodAutoscaler> {
  const primary = r.tracks[0];
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: meta(r, primary.name, "primary", { [COMPONENT]: "server" }),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "StatefulSet", name: primary.name },
      minReplicas: r.hpa.min,
      maxReplicas: r.hpa.max,
      metrics: [
        {
          type: "Pods",
          pods: { metric: { name: HPA_QUEUE_METRIC }, target: { type: "AverageValue", averageValue: String(r.hpa.targetQueueUs) } },
        },
        {
          type: "Pods",
          pods: { metric: { name: HPA_PENDING_METRIC }, target: { type: "AverageValue", averageValue: String(HPA_PENDING_REQUESTS_PER_POD) } },
        },
      ],
      behavior: {
        // A GPU pod takes minutes to become ready: scale up promptly, scale down slowly,
        // one pod at a time, so a short lull does not throw away loaded capacity.
        scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: "Pods", value: 2, periodSeconds: 60 }] },
        scaleDown: { stabilizationWindowSeconds: 600, policies: [{ type: "Pods", value: 1, periodSeconds: 300 }] },
      },
    },
  };
}

/** Value of the serving PriorityClass: above ordinary workloads, below system-* (2e9). */
export const TRITON_PRIORITY_VALUE = 1_000_000;

/** The serving PriorityClass (cluster-scoped, one per stack). */
export function tritonPriorityClass(name: string, labels: Record<string, string>): Manifest<k8s.types.input.scheduling.v1.PriorityClass> {
  return {
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    metadata: { name, labels: { ...labels } },
    value: TRITON_PRIORITY_VALUE,
    globalDefault: false,
    preemptionPolicy: "PreemptLowerPriority",
    description: "Triton serving pods: scheduled (and kept) ahead of batch and tooling workloads on shared nodes.",
  };
}
