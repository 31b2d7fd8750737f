// Pure builders of the gateway's Kubernetes objects: resolved arguments in, plain manifests
// out (no Pulumi runtime), so tests and the policy pack read exactly what is applied.
import { createHash } from "node:crypto";
import type * as k8s from "@pulumi/kubernetes";
import { GATEWAY_METRICS, GATEWAY_POD_LABELS, GATEWAY_PORTS } from "../contracts";
import { quantityValue } from "../../lib/quantity";
import { ADMIN_DRAIN_PATHS, ADMIN_PATHS, ENVOY_BINARY, ENVOY_IMAGE_REPOSITORY, ENVOY_UID, envoyArgs, toJson } from "../upstream/envoy";
import { nlbAnnotations } from "../upstream/aws-load-balancer-controller";
import { ENVOY_ADMIN, ENVOY_CONFIG_FILE, ENVOY_READY_PORT, envoyBootstrap, type EnvoyConfigInput } from "./envoy-config";
import type { ResolvedEnvoyGatewayArgs } from "./schema";
import { restrictedSecurityContext } from "../security-context";

const CONFIG_DIR = "/etc/envoy";
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

const bootstrapJsonOf = new WeakMap<ResolvedEnvoyGatewayArgs, string>();

/** Pure: the bootstrap JSON (built once per resolved arguments: the ConfigMap and the Deployment both need it). */
export function gatewayBootstrapJson(r: ResolvedEnvoyGatewayArgs): string {
  const known = bootstrapJsonOf.get(r);
  if (known !== undefined) return known;
  const text = toJson(envoyBootstrap(envoyConfigInput(r)));
  bootstrapJsonOf.set(r, text);
  return text;
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
  const text = gatewayBootstrapJson(r);
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(r, gatewayConfigMapName(text)),
    // Immutable: the running pods' config can only change by a rollout (and the kubelet stops watching it).
    immutable: true,
    data: { [ENVOY_CONFIG_FILE]: text },
  };
}

export function gatewayDeployment(r: ResolvedEnvoyGatewayArgs): k8s.types.input.apps.v1.Deployment {
  const configText = gatewayBootstrapJson(r);
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
                { name: "config", mountPath: CONFIG_DIR, readOnly: true },
                { name: "tmp", mountPath: "/tmp" },
              ],
            },
          ],
          volumes: [
            { name: "config", configMap: { name: gatewayConfigMapName(configText) } },
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
