// The gateway's Envoy bootstrap, built as typed data from the serving groups. Routes are an
// allow-list: only inference (POST .../infer, gRPC ModelInfer/ModelStreamInfer), model and
// server metadata and readiness reach Triton; every other path or method is answered by the
// gateway (403 for Triton's control APIs, 404 for the rest) and never mirrored. Requests are
// routed by model name (each group's models are known) and by the x-triton-group header; the
// admin header is stripped from every client request. No route uses a regex: exact paths,
// prefixes and header matchers only, so Envoy's regex program-size limit cannot be reached.
// Pure: no Pulumi, no I/O; the component serialises it with envoy.toJson.
import { GATEWAY_GROUP_HEADER, GATEWAY_METRICS, GATEWAY_PORTS, TRITON_ADMIN_HEADER, TRITON_PORTS, tritonHeadlessServiceName, type Track } from "../contracts";
import {
  ADMIN_PATHS,
  DOWNSTREAM_CONNECTIONS_MONITOR,
  FIXED_HEAP_MONITOR,
  OVERLOAD_ACTIONS,
  TYPE_URL,
  fractionalPercent,
  listener,
  mirrorPolicy,
  previousHostsPredicate,
  routerFilter,
  seconds,
  singleAddressAssignment,
  socketAddress,
  stdoutJsonAccessLog,
  typed,
  upstreamProtocolOptions,
  type Bootstrap,
  type Cluster,
  type HeaderMatcher,
  type HttpConnectionManager,
  type OverloadManager,
  type RetryPolicy,
  type Route,
  type RouteAction,
  type RouteMatch,
} from "../upstream/envoy";
import {
  TRITON_GRPC_ALLOWED,
  TRITON_GRPC_SERVICE,
  TRITON_HTTP_CONTROL_PREFIXES,
  TRITON_HTTP_MODEL_CONTROL_SUFFIXES,
  TRITON_HTTP_SERVER_READS,
  TRITON_READY_PATH,
  grpcPath,
  modelPath,
} from "./triton-api";
import { CANARY_TRAFFIC_RUNTIME_PREFIX, MIRROR_RUNTIME_PREFIX, canaryStopRuntimeLayer } from "./canary-stop";

export { CANARY_TRAFFIC_RUNTIME_PREFIX, MIRROR_RUNTIME_PREFIX } from "./canary-stop";

export { TRITON_GRPC_SERVICE, TRITON_READY_PATH } from "./triton-api";

/** File name of the bootstrap inside the gateway's ConfigMap (the policy pack finds Envoy configs by it). */
export const ENVOY_CONFIG_FILE = "envoy.json";
/** Envoy's admin interface: loopback only (it can drain listeners, change runtime and dump config). */
export const ENVOY_ADMIN = { address: "127.0.0.1", port: 9901 } as const;
/** Listener serving only GET /ready (kubelet probes, NLB health checks). */
export const ENVOY_READY_PORT = 9903;
/** Static cluster that proxies the two admin paths we expose. */
export const ADMIN_CLUSTER = "envoy-admin";
/** Timeout of metadata and readiness calls: they answer from memory. */
const READ_TIMEOUT_SECONDS = 15;
/**
 * The longest request a route lets through to a Triton cluster, in seconds: the largest bounded
 * route timeout (inference, metadata reads). Serving pods derive their exit timeout from it
 * (components/triton/schema.ts tritonShutdown). ModelStreamInfer streams have no overall timeout
 * (0s, below): no exit timeout can cover them; a stopping Triton ends them (GOAWAY) and clients reconnect.
 */
export function longestRequestSeconds(input: Pick<EnvoyConfigInput, "inferTimeoutSeconds">): number {
  return Math.max(input.inferTimeoutSeconds, READ_TIMEOUT_SECONDS);
}
/** Idle bound of a ModelStreamInfer stream (it has no overall timeout). */
export const STREAM_IDLE_SECONDS = 300;
/**
 * Share of the memory limit the heap may use before Envoy sheds load: shrink the heap at 90 %
 * of it, refuse new requests (503) at 95 %, so the kernel's OOM kill (every connection lost)
 * is not the first reaction to a traffic spike. The rest of the limit covers non-heap memory.
 */
const HEAP_SHARE_OF_MEMORY = 0.9;
/**
 * Retries only where the request never reached Triton: the connection failed or the
 * HTTP/2 stream was refused. An inference that may have run is never repeated (it can
 * double a GPU queue or a sequence's state), whatever its status.
 */
export const RETRY_ON = "connect-failure,refused-stream";

export type Protocol = "http" | "grpc";

/** What the gateway knows of a serving group (the contracts' ServingGroupRef with its defaults applied). */
export interface GatewayGroup {
  readonly name: string;
  readonly canary: boolean;
  /** Models the primary loads; empty: the group is reached by its header only. */
  readonly models: readonly string[];
  /** Models the canary loads (mirror and split go only to those). */
  readonly canaryModels: readonly string[];
  /** Share (0–100) of the group's real inference traffic the canary serves. */
  readonly canaryTrafficPercent: number;
  /** Most pods each track runs: sizes the circuit breakers. */
  readonly maxPods: { readonly primary: number; readonly canary: number };
}

export interface EnvoyConfigInput {
  readonly servingGroups: readonly GatewayGroup[];
  /** Namespace of the Triton Services. */
  readonly tritonNamespace: string;
  readonly clusterDomain: string;
  /** Group that serves requests without the group header (and models listed by several groups). */
  readonly defaultGroup: string;
  /** 0–100; 0 disables mirroring. */
  readonly mirrorPercent: number;
  readonly inferTimeoutSeconds: number;
  /** Requests one Triton pod is given at once by the whole gateway fleet. */
  readonly maxRequestsPerPod: number;
  /** Gateway replicas: each sizes its circuit breakers for its share of the fleet. */
  readonly gatewayReplicas: number;
  /** Downstream connections one gateway replica accepts (overload manager). */
  readonly maxClientConnections: number;
  /** The gateway container's memory limit, in bytes (the heap limit is a share of it). */
  readonly memoryLimitBytes: number;
  /** Read the canary stop's runtime layer (./canary-stop.ts) from the mounted stop ConfigMap. */
  readonly canaryStop?: boolean;
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

/**
 * Concurrent requests one gateway replica lets a track's cluster hold: the track's most pods
 * × requests per pod, shared by the replicas, less one (so the loss of a replica, a zone
 * or a rollout's old pod does not cut the fleet below the serving capacity). Beyond it Envoy
 * answers 503 at once (response flag UO) instead of queueing requests in memory.
 */
export function circuitBreakerLimit(input: Pick<EnvoyConfigInput, "maxRequestsPerPod" | "gatewayReplicas">, pods: number): number {
  const sharing = Math.max(1, input.gatewayReplicas - 1);
  return Math.max(1, Math.ceil((pods * input.maxRequestsPerPod) / sharing));
}

function upstreamCluster(input: EnvoyConfigInput, group: GatewayGroup, track: Track, protocol: Protocol): Cluster {
  const name = upstreamClusterName(group.name, track, protocol);
  const n = circuitBreakerLimit(input, track === "primary" ? group.maxPods.primary : group.maxPods.canary);
  return {
    name,
    // STRICT_DNS on a headless Service: every ready pod's A record becomes an endpoint (refreshed
    // at Envoy's default 5 s; Cluster.dns_refresh_rate is deprecated at the pinned Envoy).
    type: "STRICT_DNS",
    connect_timeout: seconds(2),
    lb_policy: "LEAST_REQUEST",
    // A pod that left DNS (scaled in, rolled) is dropped at once instead of lingering until health checks fail.
    ignore_health_on_host_removal: true,
    load_assignment: singleAddressAssignment(name, upstreamAddress(input, group.name, track), protocol === "grpc" ? TRITON_PORTS.grpc : TRITON_PORTS.http),
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
    // Ejection on gateway errors only. split_external_local_origin_errors: timeouts, resets and
    // connect failures count as local-origin errors (not enforced: a slow inference is no
    // reason to eject a pod, and dead pods fail their health checks), and consecutive 502/503/504
    // answered by the pod are gateway failures. 500s (a model's own error) eject nothing.
    // Trade-off: Triton answers 503 when a model's queue is full (max_queue_size), so a pod
    // answering five queue-full 503s in a row leaves rotation for 30 s; at most half a group.
    outlier_detection: {
      split_external_local_origin_errors: true,
      consecutive_gateway_failure: 5,
      enforcing_consecutive_gateway_failure: 100,
      enforcing_consecutive_5xx: 0,
      enforcing_success_rate: 0,
      enforcing_consecutive_local_origin_failure: 0,
      enforcing_local_origin_success_rate: 0,
      interval: seconds(10),
      base_ejection_time: seconds(30),
      // Never eject more than half a group: ejecting all would turn one bad model push into a full outage.
      max_ejection_percent: 50,
    },
    circuit_breakers: {
      thresholds: [
        {
          priority: "DEFAULT",
          max_connections: n,
          max_pending_requests: n,
          max_requests: n,
          // Retries are only on connection failures; a tenth of the requests bounds a retry storm.
          max_retries: Math.max(3, Math.ceil(n / 10)),
          track_remaining: true,
        },
      ],
    },
  };
}

function header(name: string, exact: string): HeaderMatcher {
  return { name, string_match: { exact } };
}
const method = (m: "GET" | "POST") => header(":method", m);
const pathSuffix = (suffix: string, invert = false): HeaderMatcher => ({ name: ":path", string_match: { suffix }, ...(invert ? { invert_match: true } : {}) });
/** `:path` carries the query string: a `?` would let a suffix check see the query, not the path. */
const NO_QUERY: HeaderMatcher = { name: ":path", string_match: { contains: "?" }, invert_match: true };
const NO_GROUP_HEADER: HeaderMatcher = { name: GATEWAY_GROUP_HEADER, present_match: false };

/** The model's home group for requests without the group header: the default group if it serves the model, else the first that does. */
export function homeGroupOf(input: Pick<EnvoyConfigInput, "servingGroups" | "defaultGroup">, model: string): string | undefined {
  const serving = input.servingGroups.filter((g) => g.models.includes(model));
  return (serving.find((g) => g.name === input.defaultGroup) ?? serving[0])?.name;
}

type Kind = "infer" | "read" | "stream";

/** One allowed operation before it is bound to a group: how it is matched. */
interface Endpoint {
  readonly id: string;
  readonly kind: Kind;
  readonly match: RouteMatch;
  /** The model it concerns (mirror and canary split only for models the canary serves); undefined: any. */
  readonly model?: string;
  /** gRPC: the model is in the message body, unseen by routing; the canary takes its share of every model. */
  readonly modelInBody?: boolean;
}

/**
 * The HTTP endpoints of one model (or of any model: `model` undefined, for groups without a
 * model list): two routes, no regex. `/v2/models/<m>` as a segment-bounded prefix covers the
 * unversioned and the `/versions/<v>` forms; the operation is the path's last segment, read
 * from `:path` (which carries the query string, so a query is refused: it would hide the path's
 * real end). Triton's own regex then accepts only `[0-9]+` versions and known operations.
 *   inference: POST, `:path` ends in /infer;
 *   metadata and readiness: GET, `:path` does not end in /config, /stats or /setting (that
 *   also excludes /v2/models/stats, the all-models statistics); GET of .../infer is 405 in Triton.
 */
function httpModelEndpoints(model: string | undefined): Endpoint[] {
  const tag = model ?? "*";
  const scope: RouteMatch = model === undefined ? { prefix: "/v2/models/" } : { path_separated_prefix: modelPath(model) };
  return [
    { id: `${tag}-infer`, kind: "infer", model, match: { ...scope, headers: [method("POST"), pathSuffix("/infer"), NO_QUERY] } },
    {
      id: `${tag}-read`,
      kind: "read",
      model,
      match: { ...scope, headers: [method("GET"), ...TRITON_HTTP_MODEL_CONTROL_SUFFIXES.map((sfx) => pathSuffix(sfx, true)), NO_QUERY] },
    },
  ];
}

function grpcEndpoints(): Endpoint[] {
  return [
    ...TRITON_GRPC_ALLOWED.inference.map((m) => ({ id: m, kind: "infer" as const, modelInBody: true, match: { path: grpcPath(m), grpc: {} } })),
    ...TRITON_GRPC_ALLOWED.stream.map((m) => ({ id: m, kind: "stream" as const, match: { path: grpcPath(m), grpc: {} } })),
    ...TRITON_GRPC_ALLOWED.read.map((m) => ({ id: m, kind: "read" as const, match: { path: grpcPath(m), grpc: {} } })),
  ];
}

const serverReadEndpoints = (): Endpoint[] =>
  TRITON_HTTP_SERVER_READS.map((p) => ({ id: `server${p.replace(/\//g, "-")}`, kind: "read" as const, match: { path: p, headers: [method("GET")] } }));

/** One retry policy for every route, on the virtual host (routes set none, so none overrides it). */
const RETRY_POLICY = (): RetryPolicy => ({
  retry_on: RETRY_ON,
  num_retries: 2,
  // A retry that lands on the host that just failed is not a retry.
  retry_host_predicate: [previousHostsPredicate()],
  host_selection_retry_max_attempts: 3,
});

function canaryServes(group: GatewayGroup, e: Endpoint): boolean {
  if (!group.canary) return false;
  if (e.modelInBody) return true;
  return e.model === undefined ? group.canaryModels.length === 0 && group.models.length === 0 : group.canaryModels.includes(e.model);
}

/** The route action for an endpoint on a track; mirrors only inference to the canary, and only from the primary. */
function action(input: EnvoyConfigInput, group: GatewayGroup, e: Endpoint, protocol: Protocol, track: Track): RouteAction {
  const cluster = upstreamClusterName(group.name, track, protocol);
  const grpcDeadline = (max: number) => (protocol === "grpc" ? { max_stream_duration: { grpc_timeout_header_max: seconds(max) } } : {});
  if (e.kind === "stream") {
    // Bidirectional streams live as long as the client wants: no overall timeout (0s), an idle
    // bound instead, the client's deadline honoured uncapped, and no mirror (a shadow stream
    // would be buffered in Envoy).
    return { cluster, timeout: seconds(0), idle_timeout: seconds(STREAM_IDLE_SECONDS), ...grpcDeadline(0) };
  }
  if (e.kind === "read") return { cluster, timeout: seconds(READ_TIMEOUT_SECONDS), ...grpcDeadline(READ_TIMEOUT_SECONDS) };
  const mirror =
    track === "primary" && input.mirrorPercent > 0 && canaryServes(group, e)
      ? {
          request_mirror_policies: [
            mirrorPolicy(upstreamClusterName(group.name, "canary", protocol), input.mirrorPercent, `${MIRROR_RUNTIME_PREFIX}.${group.name}`),
          ],
        }
      : {};
  // gRPC: the client's grpc-timeout sets the deadline, capped by the inference timeout.
  return { cluster, timeout: seconds(input.inferTimeoutSeconds), ...grpcDeadline(input.inferTimeoutSeconds), ...mirror };
}

/**
 * The routes of one endpoint for one group and selector. With a canary traffic share, an
 * inference endpoint gets a canary route first (matching that share of requests, never
 * mirrored) and the primary route after it (the rest, mirrored): one request goes to the
 * canary by split or by mirror, never both.
 */
function endpointRoutes(input: EnvoyConfigInput, group: GatewayGroup, e: Endpoint, protocol: Protocol, tag: string, selector: HeaderMatcher[]): Route[] {
  const match: RouteMatch = { ...e.match, headers: [...(e.match.headers ?? []), ...selector] };
  const out: Route[] = [];
  if (e.kind === "infer" && group.canaryTrafficPercent > 0 && canaryServes(group, e)) {
    out.push({
      name: `${tag}-${protocol}-${e.id}-canary`,
      match: {
        ...match,
        runtime_fraction: { default_value: fractionalPercent(group.canaryTrafficPercent), runtime_key: `${CANARY_TRAFFIC_RUNTIME_PREFIX}.${group.name}` },
      },
      route: action(input, group, e, protocol, "canary"),
    });
  }
  out.push({ name: `${tag}-${protocol}-${e.id}`, match, route: action(input, group, e, protocol, "primary") });
  return out;
}

/** The allowed routes of a listener: by the group header first, then without it (by model, else the default group). */
function allowedRoutes(input: EnvoyConfigInput, protocol: Protocol): Route[] {
  const groups = input.servingGroups;
  const byHeader: Route[] = [];
  const headerless: Route[] = [];
  for (const g of groups) {
    const sel = [header(GATEWAY_GROUP_HEADER, g.name)];
    const isDefault = g.name === input.defaultGroup;
    if (protocol === "grpc") {
      // gRPC carries the model name in the message body, which routing cannot see: the group metadata key, else the default group.
      for (const e of grpcEndpoints()) {
        byHeader.push(...endpointRoutes(input, g, e, protocol, g.name, sel));
        if (isDefault) headerless.push(...endpointRoutes(input, g, e, protocol, `default-${g.name}`, [NO_GROUP_HEADER]));
      }
      continue;
    }
    for (const e of serverReadEndpoints()) {
      byHeader.push(...endpointRoutes(input, g, e, protocol, g.name, sel));
      if (isDefault) headerless.push(...endpointRoutes(input, g, e, protocol, `default-${g.name}`, [NO_GROUP_HEADER]));
    }
    const models = g.models.length ? g.models : [undefined];
    for (const m of models) {
      for (const e of httpModelEndpoints(m)) {
        byHeader.push(...endpointRoutes(input, g, e, protocol, g.name, sel));
        // Without the header: a listed model goes to its home group; a group without a model list only as the default group.
        const home = m === undefined ? isDefault : homeGroupOf(input, m) === g.name;
        if (home) headerless.push(...endpointRoutes(input, g, e, protocol, `model-${g.name}`, [NO_GROUP_HEADER]));
      }
    }
  }
  // Model-wide routes of a default group without a model list go last: listed models win.
  const wildcardLast = (r: Route) => (r.name.includes("-*-") ? 1 : 0);
  return [...byHeader, ...headerless.sort((a, b) => wildcardLast(a) - wildcardLast(b))];
}

/** What the gateway answers itself: Triton's control APIs 403, anything else 404. Never forwarded, never mirrored. */
function deniedRoutes(protocol: Protocol): Route[] {
  if (protocol === "grpc") {
    return [
      // PERMISSION_DENIED for the service's other methods (repository, shared memory, trace, logging, config, statistics).
      { name: "grpc-triton-control-denied", match: { prefix: `/${TRITON_GRPC_SERVICE}/`, grpc: {} }, direct_response: { status: 403 } },
      { name: "grpc-not-found", match: { prefix: "/" }, direct_response: { status: 404 } },
    ];
  }
  return [
    ...TRITON_HTTP_CONTROL_PREFIXES.map((p) => ({
      name: `http-control-denied${p.replace(/\//g, "-")}`,
      match: { path_separated_prefix: p },
      direct_response: { status: 403 },
    })),
    { name: "http-not-found", match: { prefix: "/" }, direct_response: { status: 404 } },
  ];
}

const ACCESS_LOG_FIELDS = {
  start_time: "%START_TIME%",
  request_id: "%REQ(X-REQUEST-ID)%",
  method: "%REQ(:METHOD)%",
  path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
  protocol: "%PROTOCOL%",
  route: "%ROUTE_NAME%",
  response_code: "%RESPONSE_CODE%",
  grpc_status: "%GRPC_STATUS%",
  response_flags: "%RESPONSE_FLAGS%",
  duration_ms: "%DURATION%",
  upstream_service_time_ms: "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
  upstream_cluster: "%UPSTREAM_CLUSTER%",
  upstream_host: "%UPSTREAM_HOST%",
  group: `%REQ(${GATEWAY_GROUP_HEADER.toUpperCase()})%`,
  client: "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%",
};

function servingHcm(statPrefix: Protocol, routes: Route[]): HttpConnectionManager {
  return {
    stat_prefix: statPrefix,
    // AUTO: HTTP/1.1, or HTTP/2 with prior knowledge (gRPC clients over plaintext).
    codec_type: "AUTO",
    route_config: {
      name: `triton-${statPrefix}`,
      virtual_hosts: [{ name: "triton", domains: ["*"], routes, retry_policy: RETRY_POLICY() }],
      // Only callers inside the cluster that hold the Secret's value may send the header Triton's
      // restricted APIs demand; from a client it is removed before any route (or mirror) sees the upstream.
      request_headers_to_remove: [TRITON_ADMIN_HEADER],
    },
    http_filters: [routerFilter()],
    access_log: [stdoutJsonAccessLog(ACCESS_LOG_FIELDS)],
    // x-request-id: keep the client's (an edge Envoy otherwise replaces it), create one when
    // absent, and return it, so one id follows a request through primary, mirror and logs
    // (Triton logs it: --http-header-forward-pattern / --grpc-header-forward-pattern).
    generate_request_id: true,
    preserve_external_request_id: true,
    always_set_request_id_in_response: true,
    use_remote_address: true,
    // Paths are normalised before routing (dot segments, duplicate slashes) and an escaped
    // slash is refused, so an allow-listed prefix cannot be walked out of (/v2/models/m/../../repository).
    normalize_path: true,
    merge_slashes: true,
    path_with_escaped_slashes_action: "REJECT_REQUEST",
    stream_idle_timeout: seconds(STREAM_IDLE_SECONDS),
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
            { name: `${statPrefix}-allowed`, match: { path, headers: [method("GET")] }, route: { cluster: ADMIN_CLUSTER, timeout: seconds(5) } },
            { name: `${statPrefix}-denied`, match: { prefix: "/" }, direct_response: { status: 404 } },
          ],
        },
      ],
    },
    http_filters: [routerFilter()],
  };
}

/**
 * The overload manager: a heap limit below the container's memory limit (shrink the heap, then
 * refuse new requests with 503 instead of being OOM-killed), and a cap on downstream
 * connections (checked as each connection is accepted; this monitor is not used in triggers).
 */
export function overloadManager(input: Pick<EnvoyConfigInput, "memoryLimitBytes" | "maxClientConnections">): OverloadManager {
  const heap = Math.floor(input.memoryLimitBytes * HEAP_SHARE_OF_MEMORY);
  const trigger = (value: number) => [{ name: FIXED_HEAP_MONITOR, threshold: { value } }];
  return {
    refresh_interval: seconds(0.25),
    resource_monitors: [
      { name: FIXED_HEAP_MONITOR, typed_config: typed(TYPE_URL.fixedHeap, { max_heap_size_bytes: heap }) },
      {
        name: DOWNSTREAM_CONNECTIONS_MONITOR,
        typed_config: typed(TYPE_URL.downstreamConnections, { max_active_downstream_connections: input.maxClientConnections }),
      },
    ],
    actions: [
      { name: OVERLOAD_ACTIONS.shrinkHeap, triggers: trigger(0.9) },
      { name: OVERLOAD_ACTIONS.disableHttpKeepalive, triggers: trigger(0.92) },
      { name: OVERLOAD_ACTIONS.stopAcceptingRequests, triggers: trigger(0.95) },
    ],
  };
}

/** The complete Envoy bootstrap for the gateway. */
export function envoyBootstrap(input: EnvoyConfigInput): Bootstrap {
  const groups = input.servingGroups;
  const clusters: Cluster[] = [];
  for (const g of groups) {
    for (const track of g.canary ? (["primary", "canary"] as const) : (["primary"] as const)) {
      for (const protocol of ["http", "grpc"] as const) clusters.push(upstreamCluster(input, g, track, protocol));
    }
  }
  clusters.push({
    name: ADMIN_CLUSTER,
    type: "STATIC",
    connect_timeout: seconds(1),
    lb_policy: "ROUND_ROBIN",
    load_assignment: singleAddressAssignment(ADMIN_CLUSTER, ENVOY_ADMIN.address, ENVOY_ADMIN.port),
  });
  const serving = (protocol: Protocol) => servingHcm(protocol, [...allowedRoutes(input, protocol), ...deniedRoutes(protocol)]);
  return {
    node: { id: "triton-gateway", cluster: "triton-gateway" },
    admin: { address: socketAddress(ENVOY_ADMIN.address, ENVOY_ADMIN.port) },
    overload_manager: overloadManager(input),
    // A static layer (empty: defaults come from the config), the canary stop's layer (a file the
    // stop job writes; ./canary-stop.ts), and an admin layer on top, so an operator can still change
    // a mirror fraction or a canary's share during an incident with POST /runtime_modify.
    layered_runtime: {
      layers: [{ name: "static", static_layer: {} }, ...(input.canaryStop ? [canaryStopRuntimeLayer()] : []), { name: "admin", admin_layer: {} }],
    },
    static_resources: {
      listeners: [
        listener("http", socketAddress("0.0.0.0", GATEWAY_PORTS.http), serving("http")),
        listener("grpc", socketAddress("0.0.0.0", GATEWAY_PORTS.grpc), serving("grpc")),
        listener("metrics", socketAddress("0.0.0.0", GATEWAY_METRICS.port), adminPathHcm("metrics", ADMIN_PATHS.prometheusStats)),
        listener("ready", socketAddress("0.0.0.0", ENVOY_READY_PORT), adminPathHcm("ready", ADMIN_PATHS.ready)),
      ],
      clusters,
    },
  };
}
