// The gateway's Envoy bootstrap, built as typed data from the serving groups: per group a
// route to the primary and (when the group has a canary) a fractional request mirror to
// the canary. Pure: no Pulumi, no I/O; the component serialises it with envoy.toJson.
import { GATEWAY_GROUP_HEADER, GATEWAY_METRICS, GATEWAY_PORTS, TRITON_PORTS, tritonHeadlessServiceName, type ServingGroupRef, type Track } from "../contracts";
import {
  ADMIN_PATHS,
  listener,
  mirrorPolicy,
  previousHostsPredicate,
  routerFilter,
  seconds,
  singleAddressAssignment,
  socketAddress,
  stdoutJsonAccessLog,
  upstreamProtocolOptions,
  type Bootstrap,
  type Cluster,
  type HeaderMatcher,
  type HttpConnectionManager,
  type Route,
  type RouteAction,
} from "../upstream/envoy";

/** File name of the bootstrap inside the gateway's ConfigMap (the policy pack finds Envoy configs by it). */
export const ENVOY_CONFIG_FILE = "envoy.json";
/** Envoy's admin interface: loopback only (it can drain listeners, change runtime and dump config). */
export const ENVOY_ADMIN = { address: "127.0.0.1", port: 9901 } as const;
/** Listener serving only GET /ready (kubelet probes, NLB health checks). */
export const ENVOY_READY_PORT = 9903;
/** Static cluster that proxies the two admin paths we expose. */
export const ADMIN_CLUSTER = "envoy-admin";
/** Runtime key prefix for mirror fractions: `<prefix>.<group>` can be overridden via the admin runtime layer. */
export const MIRROR_RUNTIME_PREFIX = "triton_gateway.mirror";

/**
 * Triton's gRPC methods that only read (inference.GRPCInferenceService, grpc_service.proto):
 * the only calls it is safe to retry. Inference and model load/unload are not idempotent
 * in effect (a retried inference can double-charge a GPU queue or a sequence's state).
 */
export const TRITON_READ_ONLY_GRPC_METHODS = [
  "ServerLive",
  "ServerReady",
  "ModelReady",
  "ServerMetadata",
  "ModelMetadata",
  "ModelConfig",
  "ModelStatistics",
  "RepositoryIndex",
] as const;
export const TRITON_GRPC_SERVICE = "inference.GRPCInferenceService";
export const TRITON_READY_PATH = "/v2/health/ready";

export type Protocol = "http" | "grpc";

export interface EnvoyConfigInput {
  readonly servingGroups: readonly ServingGroupRef[];
  /** Namespace of the Triton Services. */
  readonly tritonNamespace: string;
  readonly clusterDomain: string;
  /** Group that serves requests without the group header. */
  readonly defaultGroup: string;
  /** 0–100; 0 disables mirroring. */
  readonly mirrorPercent: number;
  readonly inferTimeoutSeconds: number;
  readonly maxRequests: number;
}

export function upstreamClusterName(group: string, track: Track, protocol: Protocol): string {
  return `${group}-${track}-${protocol}`;
}

/**
 * The headless Service of a group's track, so Envoy sees every pod as an endpoint: active
 * health checks, outlier ejection and least-request balancing act per pod. Through the
 * ClusterIP Service Envoy would see one address, eject "the group" on a single bad pod,
 * and pin each HTTP/2 (gRPC) connection to whichever pod kube-proxy picked.
 */
export function upstreamAddress(input: Pick<EnvoyConfigInput, "tritonNamespace" | "clusterDomain">, group: string, track: Track): string {
  return `${tritonHeadlessServiceName(group, track)}.${input.tritonNamespace}.svc.${input.clusterDomain}`;
}

function upstreamCluster(input: EnvoyConfigInput, group: string, track: Track, protocol: Protocol): Cluster {
  const name = upstreamClusterName(group, track, protocol);
  const n = input.maxRequests;
  return {
    name,
    // STRICT_DNS on a headless Service: every ready pod's A record becomes an endpoint.
    type: "STRICT_DNS",
    connect_timeout: seconds(2),
    lb_policy: "LEAST_REQUEST",
    dns_refresh_rate: seconds(5),
    // A pod that left DNS (scaled in, rolled) is dropped at once instead of lingering until health checks fail.
    ignore_health_on_host_removal: true,
    load_assignment: singleAddressAssignment(name, upstreamAddress(input, group, track), protocol === "grpc" ? TRITON_PORTS.grpc : TRITON_PORTS.http),
    // gRPC needs HTTP/2 upstream; declared per cluster (Cluster.http2_protocol_options is deprecated).
    typed_extension_protocol_options: upstreamProtocolOptions(protocol === "grpc" ? "http2" : "http1", seconds(300)),
    health_checks: [
      {
        timeout: seconds(2),
        interval: seconds(5),
        // Triton answers 400 while a model loads; non-200 marks the pod unhealthy at once, so
        // no request reaches a server that would reject it, and 2 passes bring it back.
        unhealthy_threshold: 2,
        healthy_threshold: 2,
        no_traffic_interval: seconds(15),
        ...(protocol === "grpc" ? { grpc_health_check: {} } : { http_health_check: { path: TRITON_READY_PATH } }),
      },
    ],
    outlier_detection: {
      consecutive_5xx: 5,
      consecutive_gateway_failure: 3,
      // Gateway-failure ejection is off by default (0 %); a pod that keeps timing out or resetting must leave rotation.
      enforcing_consecutive_gateway_failure: 100,
      interval: seconds(10),
      base_ejection_time: seconds(30),
      // Never eject more than half a group: ejecting all would turn one bad model push into a full outage.
      max_ejection_percent: 50,
    },
    circuit_breakers: {
      thresholds: [
        // Bounded queues: beyond these Envoy answers 503 at once instead of holding requests
        // (and memory) while GPUs are saturated.
        { priority: "DEFAULT", max_connections: n, max_pending_requests: n, max_requests: n, max_retries: 3, track_remaining: true },
      ],
    },
  };
}

function header(name: string, exact: string): HeaderMatcher {
  return { name, string_match: { exact } };
}

/** Header matchers selecting a group: by the group header, or its absence for the default group. */
function groupSelectors(input: EnvoyConfigInput, group: string): { tag: string; headers: HeaderMatcher[] }[] {
  const out = [{ tag: group, headers: [header(GATEWAY_GROUP_HEADER, group)] }];
  if (group === input.defaultGroup) out.push({ tag: `default-${group}`, headers: [{ name: GATEWAY_GROUP_HEADER, present_match: false }] });
  return out;
}

function mirrors(input: EnvoyConfigInput, group: ServingGroupRef, protocol: Protocol): Pick<RouteAction, "request_mirror_policies"> {
  if (!group.canary || input.mirrorPercent <= 0) return {};
  return {
    request_mirror_policies: [mirrorPolicy(upstreamClusterName(group.name, "canary", protocol), input.mirrorPercent, `${MIRROR_RUNTIME_PREFIX}.${group.name}`)],
  };
}

function readRetryPolicy(retryOn: string): RouteAction["retry_policy"] {
  return {
    retry_on: retryOn,
    num_retries: 2,
    per_try_timeout: seconds(5),
    retry_host_predicate: [previousHostsPredicate()],
    host_selection_retry_max_attempts: 3,
  };
}

function httpRoutes(input: EnvoyConfigInput, group: ServingGroupRef): Route[] {
  const cluster = upstreamClusterName(group.name, "primary", "http");
  return groupSelectors(input, group.name).flatMap(({ tag, headers }) => [
    {
      // GETs (health, metadata, statistics) are idempotent: retried on another pod.
      name: `${tag}-http-read`,
      match: { prefix: "/", headers: [...headers, header(":method", "GET")] },
      route: { cluster, timeout: seconds(15), retry_policy: readRetryPolicy("connect-failure,refused-stream,reset,5xx"), ...mirrors(input, group, "http") },
    },
    {
      // Inference (POST) and repository calls: never retried; bounded by the inference timeout.
      name: `${tag}-http`,
      match: { prefix: "/", headers },
      route: { cluster, timeout: seconds(input.inferTimeoutSeconds), ...mirrors(input, group, "http") },
    },
  ]);
}

/** The read-only gRPC methods (health, metadata, inference), as one RE2 path pattern. */
const GRPC_READ_ONLY = `^/${TRITON_GRPC_SERVICE.replace(/\./g, "\\.")}/(${TRITON_READ_ONLY_GRPC_METHODS.join("|")})$`;

function grpcRoutes(input: EnvoyConfigInput, group: ServingGroupRef): Route[] {
  const cluster = upstreamClusterName(group.name, "primary", "grpc");
  return groupSelectors(input, group.name).flatMap(({ tag, headers }) => [
    {
      name: `${tag}-grpc-read`,
      match: { safe_regex: { regex: GRPC_READ_ONLY }, headers, grpc: {} },
      route: {
        cluster,
        timeout: seconds(15),
        retry_policy: readRetryPolicy("connect-failure,refused-stream,reset,unavailable,cancelled"),
        ...mirrors(input, group, "grpc"),
      },
    },
    {
      // Bidirectional streams live as long as the client wants: no overall timeout (0s),
      // an idle bound instead, and no mirror (a shadow stream would be buffered in Envoy).
      name: `${tag}-grpc-stream`,
      match: { path: `/${TRITON_GRPC_SERVICE}/ModelStreamInfer`, headers, grpc: {} },
      route: { cluster, timeout: seconds(0), idle_timeout: seconds(300) },
    },
    {
      name: `${tag}-grpc`,
      match: { prefix: "/", headers, grpc: {} },
      route: { cluster, timeout: seconds(input.inferTimeoutSeconds), ...mirrors(input, group, "grpc") },
    },
  ]);
}

const ACCESS_LOG_FIELDS = {
  start_time: "%START_TIME%",
  method: "%REQ(:METHOD)%",
  path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
  protocol: "%PROTOCOL%",
  response_code: "%RESPONSE_CODE%",
  grpc_status: "%GRPC_STATUS%",
  response_flags: "%RESPONSE_FLAGS%",
  duration_ms: "%DURATION%",
  upstream_cluster: "%UPSTREAM_CLUSTER%",
  upstream_host: "%UPSTREAM_HOST%",
  request_id: "%REQ(X-REQUEST-ID)%",
  group: `%REQ(${GATEWAY_GROUP_HEADER.toUpperCase()})%`,
  client: "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%",
};

function servingHcm(statPrefix: Protocol, routes: Route[]): HttpConnectionManager {
  return {
    stat_prefix: statPrefix,
    // AUTO: HTTP/1.1, or HTTP/2 with prior knowledge (gRPC clients over plaintext).
    codec_type: "AUTO",
    route_config: { name: `triton-${statPrefix}`, virtual_hosts: [{ name: "triton", domains: ["*"], routes }] },
    http_filters: [routerFilter()],
    access_log: [stdoutJsonAccessLog(ACCESS_LOG_FIELDS)],
    // x-request-id: keep the client's (an edge Envoy otherwise replaces it), create one when
    // absent, and return it, so one id follows a request through primary, mirror and logs.
    generate_request_id: true,
    preserve_external_request_id: true,
    always_set_request_id_in_response: true,
    use_remote_address: true,
    normalize_path: true,
    merge_slashes: true,
    stream_idle_timeout: seconds(300),
    // Slow-header clients must not hold connections open indefinitely.
    request_headers_timeout: seconds(10),
    common_http_protocol_options: { idle_timeout: seconds(3600), headers_with_underscores_action: "REJECT_REQUEST" },
    ...(statPrefix === "grpc" ? { http2_protocol_options: { max_concurrent_streams: 100 } } : {}),
  };
}

/** A listener that forwards exactly one admin path (GET) to the loopback admin and 404s everything else. */
function adminPathHcm(statPrefix: string, path: string): HttpConnectionManager {
  return {
    stat_prefix: statPrefix,
    codec_type: "AUTO",
    route_config: {
      name: statPrefix,
      virtual_hosts: [
        {
          name: statPrefix,
          domains: ["*"],
          routes: [
            { name: `${statPrefix}-allowed`, match: { path, headers: [header(":method", "GET")] }, route: { cluster: ADMIN_CLUSTER, timeout: seconds(5) } },
            { name: `${statPrefix}-denied`, match: { prefix: "/" }, direct_response: { status: 404 } },
          ],
        },
      ],
    },
    http_filters: [routerFilter()],
  };
}

/** The complete Envoy bootstrap for the gateway. */
export function envoyBootstrap(input: EnvoyConfigInput): Bootstrap {
  const groups = input.servingGroups;
  const clusters: Cluster[] = [];
  for (const g of groups) {
    for (const track of g.canary ? (["primary", "canary"] as const) : (["primary"] as const)) {
      for (const protocol of ["http", "grpc"] as const) clusters.push(upstreamCluster(input, g.name, track, protocol));
    }
  }
  clusters.push({
    name: ADMIN_CLUSTER,
    type: "STATIC",
    connect_timeout: seconds(1),
    lb_policy: "ROUND_ROBIN",
    load_assignment: singleAddressAssignment(ADMIN_CLUSTER, ENVOY_ADMIN.address, ENVOY_ADMIN.port),
  });
  return {
    node: { id: "triton-gateway", cluster: "triton-gateway" },
    admin: { address: socketAddress(ENVOY_ADMIN.address, ENVOY_ADMIN.port) },
    // A static layer (empty: defaults come from the config) under an admin layer, so an
    // operator can change a mirror fraction during an incident with POST /runtime_modify.
    layered_runtime: {
      layers: [
        { name: "static", static_layer: {} },
        { name: "admin", admin_layer: {} },
      ],
    },
    static_resources: {
      listeners: [
        listener(
          "http",
          socketAddress("0.0.0.0", GATEWAY_PORTS.http),
          servingHcm(
            "http",
            groups.flatMap((g) => httpRoutes(input, g)),
          ),
        ),
        listener(
          "grpc",
          socketAddress("0.0.0.0", GATEWAY_PORTS.grpc),
          servingHcm(
            "grpc",
            groups.flatMap((g) => grpcRoutes(input, g)),
          ),
        ),
        listener("metrics", socketAddress("0.0.0.0", GATEWAY_METRICS.port), adminPathHcm("metrics", ADMIN_PATHS.prometheusStats)),
        listener("ready", socketAddress("0.0.0.0", ENVOY_READY_PORT), adminPathHcm("ready", ADMIN_PATHS.ready)),
      ],
      clusters,
    },
  };
}
