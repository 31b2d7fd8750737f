// Pure builders of the gateway's Kubernetes objects: resolved arguments in, plain manifests
// out (no Pulumi runtime), so tests and the policy pack read exactly what is applied.
import { createHash } from "node:crypto";
import type * as k8s from "@pulumi/kubernetes";
import { GATEWAY_METRICS, GATEWAY_POD_LABELS, GATEWAY_PORTS } from "../contracts";
import { ADMIN_PATHS, ENVOY_BINARY, ENVOY_IMAGE_REPOSITORY, ENVOY_UID, envoyArgs, toJson } from "../upstream/envoy";
import { nlbAnnotations } from "../upstream/aws-load-balancer-controller";
import { ENVOY_CONFIG_FILE, ENVOY_READY_PORT, envoyBootstrap } from "./envoy-config";
import type { ResolvedEnvoyGatewayArgs } from "./schema";

const CONFIG_DIR = "/etc/envoy";
export const GATEWAY_NAME = "triton-gateway";

/** CPU quantity → whole cores, at least 1 ("500m" → 1, "2" → 2, "2500m" → 3). */
export function workerThreads(cpu: string): number {
  const m = cpu.match(/^(\d+(?:\.\d+)?)(m?)$/);
  if (!m) return 1;
  const cores = Number(m[1]) / (m[2] ? 1000 : 1);
  return Math.max(1, Math.ceil(cores));
}

const bootstrapJsonOf = new WeakMap<ResolvedEnvoyGatewayArgs, string>();

/** Pure: the bootstrap JSON (built once per resolved arguments: the ConfigMap and the Deployment both need it). */
export function gatewayBootstrapJson(r: ResolvedEnvoyGatewayArgs): string {
  const known = bootstrapJsonOf.get(r);
  if (known !== undefined) return known;
  const text = toJson(
    envoyBootstrap({
      servingGroups: r.servingGroups,
      tritonNamespace: r.namespace,
      clusterDomain: r.clusterDomain,
      defaultGroup: r.defaultGroup,
      mirrorPercent: r.mirrorPercent,
      inferTimeoutSeconds: r.inferTimeoutSeconds,
      maxRequests: r.maxRequests,
    }),
  );
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
  const podLabels = { ...r.labels, ...GATEWAY_POD_LABELS };
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
          // drain-time-s plus headroom: in-flight inferences finish before SIGKILL.
          terminationGracePeriodSeconds: 45,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: ENVOY_UID,
            runAsGroup: ENVOY_UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
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
              args: envoyArgs({ configPath: `${CONFIG_DIR}/${ENVOY_CONFIG_FILE}`, concurrency: workerThreads(r.cpu), drainSeconds: 30 }),
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
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
              },
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
