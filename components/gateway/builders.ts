// Pure builders of the gateway's Kubernetes objects: resolved arguments in, plain manifests
// out (no Pulumi runtime), so tests and the policy pack read exactly what is applied.
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import type * as k8s from "@pulumi/kubernetes";
import { GATEWAY_METRICS, GATEWAY_POD_LABELS, GATEWAY_PORTS } from "../contracts";
import { quantityValue } from "../../lib/quantity";
import { ADMIN_DRAIN_PATHS, ADMIN_PATHS, ENVOY_BINARY, ENVOY_IMAGE_REPOSITORY, ENVOY_UID, envoyArgs, toJson } from "../upstream/envoy";
import { nlbAnnotations } from "../upstream/aws-load-balancer-controller";
import { ENVOY_ADMIN, ENVOY_CONFIG_FILE, ENVOY_READY_PORT, envoyBootstrap, type EnvoyConfigInput } from "./envoy-config";
import type { ResolvedEnvoyGatewayArgs } from "./schema";
import { restrictedSecurityContext } from "../security-context";
import { CANARY_STOP_DIR, CANARY_STOP_NAME } from "./canary-stop";

/** The gateway's groups with a canary: the ones the canary stop can stop. */
export function canaryGroupsOf(r: Pick<ResolvedEnvoyGatewayArgs, "servingGroups">): string[] {
  return r.servingGroups.filter((g) => g.canary).map((g) => g.name);
}

/** Does the gateway run the canary stop (its setting on, and a canary to stop)? */
export function runsCanaryStop(r: Pick<ResolvedEnvoyGatewayArgs, "servingGroups" | "canaryStop">): boolean {
  return r.canaryStop && canaryGroupsOf(r).length > 0;
}

const CONFIG_DIR = "/etc/envoy";
/** Where the unpack init container reads a packed bootstrap (the ConfigMap's volume); the bootstrap itself is then in CONFIG_DIR, an emptyDir. */
const PACKED_CONFIG_DIR = "/etc/envoy-packed";
/**
 * Kubernetes' limit on one ConfigMap: its data and binaryData values together, decoded, at most
 * 1 MiB (pkg/apis/core/validation ValidateConfigMap sums len(value) of both against
 * core.MaxSecretSize = 1 MiB). Above it the API server refuses the object and the gateway cannot deploy.
 */
export const CONFIGMAP_MAX_BYTES = 1024 * 1024;
/**
 * The largest bootstrap shipped as readable JSON (data["envoy.json"], indented): half the
 * ConfigMap limit, so a stack that grows a few groups past it is still far from the limit.
 * Larger bootstraps (routes grow with groups × models: about 30 groups of 2 models reach 1 MiB
 * indented) ship packed: compact JSON, gzip-compressed, in binaryData["envoy.json.gz"], and an
 * init container of the same Envoy image inflates it into an emptyDir before Envoy starts.
 */
export const PLAIN_BOOTSTRAP_MAX_BYTES = CONFIGMAP_MAX_BYTES / 2;
/** binaryData key of a packed bootstrap (the policy pack and the planner read both forms). */
export const ENVOY_PACKED_CONFIG_FILE = `${ENVOY_CONFIG_FILE}.gz`;
export const GATEWAY_NAME = "triton-gateway";

/** CPU quantity → whole cores, at least 1 ("500m" → 1, "2" → 2, "2500m" → 3). */
export function workerThreads(cpu: string): number {
  const m = cpu.match(/^(\d+(?:\.\d+)?)(m?)$/);
  if (!m) return 1;
  const cores = Number(m[1]) / (m[2] ? 1000 : 1);
  return Math.max(1, Math.ceil(cores));
}

/** The bootstrap's input from the resolved arguments. */
export function envoyConfigInput(r: ResolvedEnvoyGatewayArgs): EnvoyConfigInput {
  return {
    servingGroups: r.servingGroups,
    tritonNamespace: r.namespace,
    clusterDomain: r.clusterDomain,
    defaultGroup: r.defaultGroup,
    mirrorPercent: r.mirrorPercent,
    inferTimeoutSeconds: r.inferTimeoutSeconds,
    maxRequestsPerPod: r.maxRequestsPerPod,
    gatewayReplicas: r.replicas,
    maxClientConnections: r.maxClientConnections,
    memoryLimitBytes: quantityValue(r.memory),
    canaryStop: runsCanaryStop(r),
  };
}

/**
 * How long a stopping gateway pod stays up after its preStop starts, and its grace period:
 * drain (the listeners discourage requests, then close) plus the longest request still in
 * flight (the inference timeout), then Envoy gets SIGTERM and exits at once. The grace adds a
 * margin over that, so the kubelet's SIGKILL never lands mid-drain. Both are derived from
 * drainSeconds and inferTimeoutSeconds, so no key can make the grace too short. What it
 * cannot cover: a ModelStreamInfer stream (no overall timeout) still open after drain +
 * timeout is cut; its client gets GOAWAY at the drain's start and should reconnect.
 */
export function gatewayShutdown(r: Pick<ResolvedEnvoyGatewayArgs, "drainSeconds" | "inferTimeoutSeconds">): {
  preStopSeconds: number;
  terminationGracePeriodSeconds: number;
} {
  const preStopSeconds = r.drainSeconds + r.inferTimeoutSeconds;
  return { preStopSeconds, terminationGracePeriodSeconds: preStopSeconds + SHUTDOWN_MARGIN_SECONDS };
}
/** Time for the preStop's admin calls and Envoy's exit after SIGTERM. */
const SHUTDOWN_MARGIN_SECONDS = 15;

/**
 * The preStop hook: POST /healthcheck/fail, then /drain_listeners?graceful on the loopback
 * admin, then wait out the drain and the longest request. The image (Ubuntu based) has bash
 * and no curl, so the two POSTs go over bash's /dev/tcp. A failed call does not stop the wait.
 */
export function gatewayPreStop(preStopSeconds: number): string[] {
  const post = (path: string) =>
    `{ exec 3<>/dev/tcp/${ENVOY_ADMIN.address}/${ENVOY_ADMIN.port} && printf 'POST ${path} HTTP/1.1\\r\\nHost: localhost\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n' >&3 && timeout 5 cat <&3 >/dev/null; exec 3>&-; } || true`;
  return ["/bin/bash", "-c", [post(ADMIN_DRAIN_PATHS.healthcheckFail), post(ADMIN_DRAIN_PATHS.drainListenersGraceful), `sleep ${preStopSeconds}`].join("; ")];
}

/** The bootstrap as the gateway ships it: its JSON (indented when plain), and, when too large for that, its gzip-compressed compact JSON. */
export interface GatewayBootstrap {
  /** The bootstrap's JSON: what Envoy reads (indented when plain; compact when packed). */
  readonly text: string;
  /** Gzip of `text`, base64 (a ConfigMap's binaryData form), when the indented JSON is above PLAIN_BOOTSTRAP_MAX_BYTES. */
  readonly packed?: string;
  /** Bytes the ConfigMap's data and binaryData hold (what CONFIGMAP_MAX_BYTES limits). */
  readonly configMapBytes: number;
}

const bootstrapOf = new WeakMap<ResolvedEnvoyGatewayArgs, GatewayBootstrap>();

/** Pure: how a bootstrap is shipped (plain below PLAIN_BOOTSTRAP_MAX_BYTES, packed above). */
export function packBootstrap(bootstrap: ReturnType<typeof envoyBootstrap>): GatewayBootstrap {
  const text = JSON.stringify(bootstrap);
  // The indented form is never shorter than the compact one: a compact text over the bound needs no indenting to know it packs.
  if (Buffer.byteLength(text, "utf8") <= PLAIN_BOOTSTRAP_MAX_BYTES) {
    const pretty = toJson(bootstrap);
    const prettyBytes = Buffer.byteLength(pretty, "utf8");
    if (prettyBytes <= PLAIN_BOOTSTRAP_MAX_BYTES) return { text: pretty, configMapBytes: prettyBytes };
  }
  // Level 9: the bootstrap is written once per plan and read once per pod start; size is what counts.
  const gz = gzipSync(Buffer.from(text, "utf8"), { level: 9 });
  return { text, packed: gz.toString("base64"), configMapBytes: gz.length };
}

/** Pure: the bootstrap as shipped (built once per resolved arguments: the ConfigMap and the Deployment both need it). */
export function gatewayBootstrap(r: ResolvedEnvoyGatewayArgs): GatewayBootstrap {
  const known = bootstrapOf.get(r);
  if (known !== undefined) return known;
  const shipped = packBootstrap(envoyBootstrap(envoyConfigInput(r)));
  bootstrapOf.set(r, shipped);
  return shipped;
}

/**
 * The bootstrap JSON a ConfigMap ships, in either form (data["envoy.json"], or gzip in
 * binaryData["envoy.json.gz"], base64 as the API carries it); undefined when it ships none.
 * The policy pack and the planner read gateways through it.
 */
export function shippedBootstrapText(cm: { data?: Record<string, unknown>; binaryData?: Record<string, unknown> } | undefined): string | undefined {
  const plain = cm?.data?.[ENVOY_CONFIG_FILE];
  if (typeof plain === "string") return plain;
  const packed = cm?.binaryData?.[ENVOY_PACKED_CONFIG_FILE];
  if (typeof packed !== "string") return undefined;
  // Several rules read the same ConfigMap: inflate each packed value once (keyed by the small packed text).
  let text = unpacked.get(packed);
  if (text === undefined) {
    text = gunzipSync(Buffer.from(packed, "base64")).toString("utf8");
    if (unpacked.size >= 4) unpacked.clear();
    unpacked.set(packed, text);
  }
  return text;
}
const unpacked = new Map<string, string>();

/** Pure: the bootstrap JSON Envoy reads. */
export function gatewayBootstrapJson(r: ResolvedEnvoyGatewayArgs): string {
  return gatewayBootstrap(r).text;
}

function meta(r: ResolvedEnvoyGatewayArgs, name: string) {
  return { name, namespace: r.namespace, labels: { ...r.labels, ...GATEWAY_POD_LABELS, "app.kubernetes.io/component": "gateway" } };
}

/**
 * Name of the ConfigMap holding a bootstrap: content-addressed. A changed bootstrap is a new
 * ConfigMap (created before the old one is deleted, since the names differ), and the
 * Deployment's changed volume rolls the pods onto it. With a fixed name the provider would
 * delete the old ConfigMap first (its data is immutable), leaving new pods without config.
 */
export function gatewayConfigMapName(configText: string): string {
  return `${GATEWAY_NAME}-config-${createHash("sha256").update(configText).digest("hex").slice(0, 10)}`;
}

export function gatewayConfigMap(r: ResolvedEnvoyGatewayArgs): k8s.types.input.core.v1.ConfigMap {
  const { text, packed } = gatewayBootstrap(r);
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(r, gatewayConfigMapName(text)),
    // Immutable: the running pods' config can only change by a rollout (and the kubelet stops watching it).
    immutable: true,
    ...(packed === undefined ? { data: { [ENVOY_CONFIG_FILE]: text } } : { binaryData: { [ENVOY_PACKED_CONFIG_FILE]: packed } }),
  };
}

/**
 * The init container that inflates a packed bootstrap into the emptyDir Envoy reads: the same
 * Envoy image (Ubuntu based: bash and gzip, an Essential package of the base image), restricted
 * like Envoy. Only a packed bootstrap needs it.
 */
function unpackContainer(r: ResolvedEnvoyGatewayArgs, security: ReturnType<typeof restrictedSecurityContext>): k8s.types.input.core.v1.Container {
  return {
    name: "unpack-config",
    image: `${ENVOY_IMAGE_REPOSITORY}:${r.imageTag}`,
    command: ["/bin/bash", "-c", `set -euo pipefail; gzip -dc ${PACKED_CONFIG_DIR}/${ENVOY_PACKED_CONFIG_FILE} > ${CONFIG_DIR}/${ENVOY_CONFIG_FILE}`],
    resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { memory: "64Mi" } },
    securityContext: security.container,
    volumeMounts: [
      { name: "config", mountPath: PACKED_CONFIG_DIR, readOnly: true },
      { name: "bootstrap", mountPath: CONFIG_DIR },
    ],
  };
}

export function gatewayDeployment(r: ResolvedEnvoyGatewayArgs): k8s.types.input.apps.v1.Deployment {
  const { text: configText, packed } = gatewayBootstrap(r);
  const shutdown = gatewayShutdown(r);
  const podLabels = { ...r.labels, ...GATEWAY_POD_LABELS };
  const security = restrictedSecurityContext({ uid: ENVOY_UID, gid: ENVOY_UID });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(r, GATEWAY_NAME),
    spec: {
      replicas: r.replicas,
      selector: { matchLabels: { ...GATEWAY_POD_LABELS } },
      // Surge, never dip: a rollout must not reduce gateway capacity.
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      // The bootstrap is read once at start; its content-addressed ConfigMap name (below)
      // changes with it, so a config change rolls the pods.
      template: {
        metadata: { labels: podLabels },
        spec: {
          // Static config: Envoy never talks to the Kubernetes API, so it gets no token to leak.
          automountServiceAccountToken: false,
          // Drain plus the longest request plus a margin (gatewayShutdown): in-flight inferences finish before SIGKILL.
          terminationGracePeriodSeconds: shutdown.terminationGracePeriodSeconds,
          securityContext: security.pod,
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: "topology.kubernetes.io/zone",
              whenUnsatisfiable: r.zoneSpread === "required" ? "DoNotSchedule" : "ScheduleAnyway",
              labelSelector: { matchLabels: { ...GATEWAY_POD_LABELS } },
            },
            // Two replicas on one node die together with it.
            {
              maxSkew: 1,
              topologyKey: "kubernetes.io/hostname",
              whenUnsatisfiable: "ScheduleAnyway",
              labelSelector: { matchLabels: { ...GATEWAY_POD_LABELS } },
            },
          ],
          ...(packed === undefined ? {} : { initContainers: [unpackContainer(r, security)] }),
          containers: [
            {
              name: "envoy",
              image: `${ENVOY_IMAGE_REPOSITORY}:${r.imageTag}`,
              command: [ENVOY_BINARY],
              args: envoyArgs({ configPath: `${CONFIG_DIR}/${ENVOY_CONFIG_FILE}`, concurrency: workerThreads(r.cpu), drainSeconds: r.drainSeconds }),
              // Envoy exits on SIGTERM without draining: fail the health check and drain first.
              lifecycle: { preStop: { exec: { command: gatewayPreStop(shutdown.preStopSeconds) } } },
              ports: [
                { name: "http", containerPort: GATEWAY_PORTS.http, protocol: "TCP" },
                { name: "grpc", containerPort: GATEWAY_PORTS.grpc, protocol: "TCP" },
                { name: GATEWAY_METRICS.portName, containerPort: GATEWAY_METRICS.port, protocol: "TCP" },
                { name: "ready", containerPort: ENVOY_READY_PORT, protocol: "TCP" },
                // The admin port (loopback) is deliberately not declared.
              ],
              // /ready is 503 until clusters are initialised (DNS resolved, first health checks).
              startupProbe: { httpGet: { path: ADMIN_PATHS.ready, port: ENVOY_READY_PORT }, periodSeconds: 2, failureThreshold: 30 },
              readinessProbe: { httpGet: { path: ADMIN_PATHS.ready, port: ENVOY_READY_PORT }, periodSeconds: 5, failureThreshold: 2 },
              // Liveness on the socket, not /ready: a draining Envoy reports not-ready and must not be killed for it.
              livenessProbe: { tcpSocket: { port: ENVOY_READY_PORT }, periodSeconds: 10, failureThreshold: 3 },
              resources: {
                requests: { cpu: r.cpu, memory: r.memory },
                // Memory limit = request: a proxy that grows past it is leaking; no CPU limit (throttling adds tail latency).
                limits: { memory: r.memory },
              },
              securityContext: security.container,
              volumeMounts: [
                { name: packed === undefined ? "config" : "bootstrap", mountPath: CONFIG_DIR, readOnly: true },
                // The canary stop's runtime layer: the whole volume (a subPath mount would never see an update).
                ...(runsCanaryStop(r) ? [{ name: "canary-stop", mountPath: CANARY_STOP_DIR, readOnly: true }] : []),
                { name: "tmp", mountPath: "/tmp" },
              ],
            },
          ],
          volumes: [
            { name: "config", configMap: { name: gatewayConfigMapName(configText) } },
            // A packed bootstrap's inflated JSON (compact: 3.2 MB at 100 groups of 10 models with canaries).
            ...(packed === undefined ? [] : [{ name: "bootstrap", emptyDir: { sizeLimit: "64Mi" } }]),
            ...(runsCanaryStop(r) ? [{ name: "canary-stop", configMap: { name: CANARY_STOP_NAME } }] : []),
            { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
          ],
        },
      },
    },
  };
}

export function gatewayService(r: ResolvedEnvoyGatewayArgs): k8s.types.input.core.v1.Service {
  // An NLB only for client networks; without them the gateway serves in-cluster callers only.
  const lb = r.clientCidrs.length > 0;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      ...meta(r, GATEWAY_NAME),
      ...(lb
        ? {
            annotations: nlbAnnotations({
              scheme: r.loadBalancerScheme,
              // resolveEnvoyGatewayArgs requires it whenever clientCidrs is set.
              securityGroupId: r.loadBalancerSecurityGroupId!,
              healthCheck: { port: ENVOY_READY_PORT, path: ADMIN_PATHS.ready },
            }),
          }
        : {}),
    },
    spec: {
      type: lb ? "LoadBalancer" : "ClusterIP",
      selector: { ...GATEWAY_POD_LABELS },
      // Only the serving listeners: metrics, ready and admin are never behind the Service.
      ports: [
        { name: "http", port: GATEWAY_PORTS.http, targetPort: GATEWAY_PORTS.http, protocol: "TCP" },
        { name: "grpc", port: GATEWAY_PORTS.grpc, targetPort: GATEWAY_PORTS.grpc, protocol: "TCP", appProtocol: "kubernetes.io/h2c" },
      ],
      ...(lb ? { loadBalancerSourceRanges: [...r.clientCidrs] } : {}),
    },
  };
}

export function gatewayPodDisruptionBudget(r: ResolvedEnvoyGatewayArgs): k8s.types.input.policy.v1.PodDisruptionBudget {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta(r, GATEWAY_NAME),
    // maxUnavailable 1 rather than minAvailable: with one replica a drain still proceeds, with many only one goes at a time.
    spec: { maxUnavailable: 1, selector: { matchLabels: { ...GATEWAY_POD_LABELS } } },
  };
}
