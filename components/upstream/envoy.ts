// Envoy v3 API knowledge, in one place: the image, command-line flags, extension names,
// type URLs and the typed shape of every part of the v3 API this stack emits. Field names
// are the proto field names of envoyproxy/envoy api/ (data-plane-api), checked against:
//   envoy/config/bootstrap/v3/bootstrap.proto          Bootstrap, Admin, LayeredRuntime, RuntimeLayer (RtdsLayer)
//   envoy/config/core/v3/config_source.proto            ConfigSource, PathConfigSource (watched_directory)
//   envoy/service/discovery/v3/discovery.proto, envoy/service/runtime/v3/rtds.proto   DiscoveryResponse, Runtime
//   envoy/config/listener/v3/{listener,listener_components}.proto   Listener, FilterChain, Filter
//   envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto
//   envoy/extensions/filters/http/router/v3/router.proto
//   envoy/config/route/v3/{route,route_components}.proto   RouteConfiguration … RequestMirrorPolicy
//   envoy/config/cluster/v3/{cluster,circuit_breaker,outlier_detection}.proto
//   envoy/config/core/v3/{address,base,health_check,protocol}.proto, envoy/type/v3/percent.proto
//   envoy/config/endpoint/v3/{endpoint,endpoint_components}.proto
//   envoy/extensions/upstreams/http/v3/http_protocol_options.proto
//   envoy/extensions/access_loggers/stream/v3/stream.proto
// A version bump is one edit here. Everything is plain data built by pure functions and
// serialised with JSON.stringify (never string templates), so a typo is a compile error here
// and a failing proto walk (test/envoy-bootstrap-matches-protos.test.ts, over the protos of
// ENVOY_PROTO_API) rather than a crash-looping pod.

// ---- Image and process ----------------------------------------------------------------
/** Pinned Envoy release (envoyproxy/envoy on Docker Hub; changelogs/1.37.1.yaml upstream). */
export const ENVOY_IMAGE_REPOSITORY = "envoyproxy/envoy";
export const ENVOY_DEFAULT_TAG = "v1.37.1";
/**
 * The Envoy API level the tests check bootstraps against: the data-plane-api protos that
 * @grpc/grpc-js-xds 1.14.1 ships in deps/envoy-api (grpc/grpc-node, submodule
 * packages/grpc-js-xds/deps/envoy-api at tag @grpc/grpc-js-xds@1.14.0 and at main, read
 * 2026-12-01). That is envoyproxy/data-plane-api f8b75d1 of 2024-07-19, mirrored from
 * envoyproxy/envoy 799e3e2c: main between the 1.31 and 1.32 releases, older than
 * ENVOY_DEFAULT_TAG. Consequences: a field added after mid-2024 is reported as unknown (we use
 * none), and a field deprecated after it is not warned about by the walk. For those, the same
 * walk was run once (2026-12-01, by hand, not in CI) over the rendered dev/staging/prod
 * bootstraps with data-plane-api at its 2026-01-29 head (84e8436, about Envoy 1.37): no
 * error, no deprecated field. There Cluster.dns_refresh_rate, respect_dns_ttl and the other
 * DNS settings are deprecated in favour of the envoy.cluster.dns extension, so the gateway
 * sets none of them (the 5 s default refresh stays); the walk flags dns_refresh_rate there.
 */
export const ENVOY_PROTO_API = {
  package: "@grpc/grpc-js-xds@1.14.1",
  dataPlaneApiCommit: "f8b75d1efa92bbf534596a013d9ca5873f79dd30",
  date: "2024-07-19",
  envoyCommit: "799e3e2cb6b4058912538e920b22a76edd55e283",
} as const;
/** The binary inside the image; called directly so the entrypoint script's user switching never runs. */
export const ENVOY_BINARY = "/usr/local/bin/envoy";
/** uid/gid of the `envoy` user the upstream image creates. */
export const ENVOY_UID = 101;

/**
 * Command-line arguments (envoy --help; https://www.envoyproxy.io/docs/envoy/latest/operations/cli,
 * read 2026-12-01, not checked in v1.37.1's source): config path, no hot restart, worker threads,
 * drain time and strategy.
 */
export function envoyArgs(opts: { configPath: string; concurrency: number; drainSeconds: number; logLevel?: string }): string[] {
  return [
    "--config-path",
    opts.configPath,
    // Hot restart needs a shared-memory region and a parent process; a pod restarts by
    // replacement, and the region is one more thing a read-only root must accommodate.
    "--disable-hot-restart",
    // Envoy defaults to one worker per host CPU; on a 64-core node that is 64 workers
    // competing for a 1-CPU request and throttled latency.
    "--concurrency",
    String(opts.concurrency),
    // How long a graceful drain (drain_listeners?graceful, healthcheck/fail) discourages
    // requests before the listeners close; gradual: Connection: close / GOAWAY are sent to a
    // growing share of requests over that time, so clients move off without a thundering herd.
    "--drain-time-s",
    String(opts.drainSeconds),
    "--drain-strategy",
    "gradual",
    "--log-level",
    opts.logLevel ?? "info",
  ];
}

// ---- Extension names and type URLs ----------------------------------------------------
export const HTTP_CONNECTION_MANAGER = "envoy.filters.network.http_connection_manager";
export const ROUTER_FILTER = "envoy.filters.http.router";
export const STDOUT_ACCESS_LOG = "envoy.access_loggers.stdout";
export const PREVIOUS_HOSTS_PREDICATE = "envoy.retry_host_predicates.previous_hosts";
/** Overload manager resource monitors (envoy/extensions/resource_monitors/{fixed_heap,downstream_connections}/v3). */
export const FIXED_HEAP_MONITOR = "envoy.resource_monitors.fixed_heap";
export const DOWNSTREAM_CONNECTIONS_MONITOR = "envoy.resource_monitors.downstream_connections";
/** Overload actions (configuration/operations/overload_manager docs). */
export const OVERLOAD_ACTIONS = {
  shrinkHeap: "envoy.overload_actions.shrink_heap",
  stopAcceptingRequests: "envoy.overload_actions.stop_accepting_requests",
  disableHttpKeepalive: "envoy.overload_actions.disable_http_keepalive",
} as const;
/** Key of Cluster.typed_extension_protocol_options for upstream HTTP protocol selection. */
export const UPSTREAM_HTTP_PROTOCOL_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

export const TYPE_URL = {
  httpConnectionManager: "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  router: "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
  upstreamHttpProtocolOptions: `type.googleapis.com/${UPSTREAM_HTTP_PROTOCOL_OPTIONS}`,
  stdoutAccessLog: "type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog",
  previousHostsPredicate: "type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate",
  fixedHeap: "type.googleapis.com/envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig",
  downstreamConnections: "type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig",
  runtime: "type.googleapis.com/envoy.service.runtime.v3.Runtime",
} as const;

/** Admin endpoints the stack exposes (through dedicated listeners, never the admin port). */
export const ADMIN_PATHS = { prometheusStats: "/stats/prometheus", ready: "/ready" } as const;
/**
 * Admin endpoints the gateway's preStop POSTs on the loopback admin (operations/admin docs,
 * https://www.envoyproxy.io/docs/envoy/latest/operations/admin, read 2026-12-01): fail the
 * health check (/ready answers 503, so probes and the NLB take the pod out), then drain the
 * listeners gracefully for --drain-time-s before they close.
 */
export const ADMIN_DRAIN_PATHS = { healthcheckFail: "/healthcheck/fail", drainListenersGraceful: "/drain_listeners?graceful" } as const;

// ---- Typed v3 messages (only the fields this stack emits) ------------------------------
/** google.protobuf.Duration in its JSON/YAML form, e.g. "5s", "0.250s". */
export type Duration = `${number}s`;

export interface SocketAddress {
  address: string;
  port_value: number;
}
export interface Address {
  socket_address: SocketAddress;
}
export interface FractionalPercent {
  numerator: number;
  denominator: "HUNDRED" | "TEN_THOUSAND" | "MILLION";
}
export interface RuntimeFractionalPercent {
  default_value: FractionalPercent;
  runtime_key?: string;
}
export interface RegexMatcher {
  regex: string;
}
export interface StringMatcher {
  exact?: string;
  prefix?: string;
  suffix?: string;
  contains?: string;
  safe_regex?: RegexMatcher;
}
export interface HeaderMatcher {
  name: string;
  string_match?: StringMatcher;
  /** true: header present; false: header absent. */
  present_match?: boolean;
  invert_match?: boolean;
}
export interface RouteMatch {
  prefix?: string;
  path?: string;
  path_separated_prefix?: string;
  safe_regex?: RegexMatcher;
  headers?: HeaderMatcher[];
  grpc?: Record<string, never>;
  /** The route matches this share of requests; the others fall through to the next route. */
  runtime_fraction?: RuntimeFractionalPercent;
}
export interface TypedConfig {
  "@type": string;
  [field: string]: unknown;
}
export interface RetryHostPredicate {
  name: string;
  typed_config: TypedConfig;
}
export interface RetryPolicy {
  retry_on: string;
  num_retries: number;
  per_try_timeout?: Duration;
  retry_host_predicate?: RetryHostPredicate[];
  host_selection_retry_max_attempts?: number;
}
export interface RequestMirrorPolicy {
  cluster: string;
  runtime_fraction: RuntimeFractionalPercent;
}
export interface MaxStreamDuration {
  /** Honour the client's grpc-timeout header up to this (0s: no cap). */
  grpc_timeout_header_max?: Duration;
}
export interface RouteAction {
  cluster: string;
  timeout: Duration;
  idle_timeout?: Duration;
  max_stream_duration?: MaxStreamDuration;
  retry_policy?: RetryPolicy;
  request_mirror_policies?: RequestMirrorPolicy[];
}
export interface DataSource {
  inline_string: string;
}
export interface DirectResponseAction {
  status: number;
  body?: DataSource;
}
export interface Route {
  name: string;
  match: RouteMatch;
  route?: RouteAction;
  direct_response?: DirectResponseAction;
}
export interface VirtualHost {
  name: string;
  domains: string[];
  routes: Route[];
  /** Applies to every route that sets none. */
  retry_policy?: RetryPolicy;
}
export interface RouteConfiguration {
  name: string;
  virtual_hosts: VirtualHost[];
  request_headers_to_remove?: string[];
}
export interface HttpFilter {
  name: string;
  typed_config: TypedConfig;
}
export interface AccessLog {
  name: string;
  typed_config: TypedConfig;
}
export interface CoreHttpProtocolOptions {
  idle_timeout?: Duration;
  headers_with_underscores_action?: "ALLOW" | "REJECT_REQUEST" | "DROP_HEADER";
}
export interface Http2ProtocolOptions {
  max_concurrent_streams?: number;
}
export interface HttpConnectionManager {
  stat_prefix: string;
  codec_type: "AUTO" | "HTTP1" | "HTTP2";
  route_config: RouteConfiguration;
  http_filters: HttpFilter[];
  access_log?: AccessLog[];
  generate_request_id?: boolean;
  preserve_external_request_id?: boolean;
  always_set_request_id_in_response?: boolean;
  use_remote_address?: boolean;
  normalize_path?: boolean;
  merge_slashes?: boolean;
  stream_idle_timeout?: Duration;
  request_headers_timeout?: Duration;
  common_http_protocol_options?: CoreHttpProtocolOptions;
  http2_protocol_options?: Http2ProtocolOptions;
  path_with_escaped_slashes_action?: "KEEP_UNCHANGED" | "REJECT_REQUEST" | "UNESCAPE_AND_REDIRECT" | "UNESCAPE_AND_FORWARD";
}
export interface NetworkFilter {
  name: string;
  typed_config: HttpConnectionManager & { "@type": string };
}
export interface FilterChain {
  filters: NetworkFilter[];
}
export interface Listener {
  name: string;
  address: Address;
  filter_chains: FilterChain[];
}
export interface LbEndpoint {
  endpoint: { address: Address };
}
export interface ClusterLoadAssignment {
  cluster_name: string;
  endpoints: { lb_endpoints: LbEndpoint[] }[];
}
export interface HealthCheck {
  timeout: Duration;
  interval: Duration;
  unhealthy_threshold: number;
  healthy_threshold: number;
  no_traffic_interval?: Duration;
  http_health_check?: { path: string };
  grpc_health_check?: { service_name?: string };
}
export interface OutlierDetection {
  split_external_local_origin_errors?: boolean;
  consecutive_5xx?: number;
  enforcing_consecutive_5xx?: number;
  consecutive_gateway_failure: number;
  enforcing_consecutive_gateway_failure: number;
  consecutive_local_origin_failure?: number;
  enforcing_consecutive_local_origin_failure?: number;
  enforcing_local_origin_success_rate?: number;
  enforcing_success_rate?: number;
  interval: Duration;
  base_ejection_time: Duration;
  max_ejection_percent: number;
}
export interface CircuitBreakerThresholds {
  priority: "DEFAULT" | "HIGH";
  max_connections: number;
  max_pending_requests: number;
  max_requests: number;
  max_retries: number;
  track_remaining?: boolean;
}
export interface UpstreamHttpProtocolOptions {
  "@type": string;
  common_http_protocol_options?: CoreHttpProtocolOptions;
  explicit_http_config: { http_protocol_options: Record<string, never> } | { http2_protocol_options: Http2ProtocolOptions };
}
export interface Cluster {
  name: string;
  type: "STATIC" | "STRICT_DNS" | "LOGICAL_DNS";
  connect_timeout: Duration;
  lb_policy: "ROUND_ROBIN" | "LEAST_REQUEST";
  load_assignment: ClusterLoadAssignment;
  ignore_health_on_host_removal?: boolean;
  typed_extension_protocol_options?: Record<typeof UPSTREAM_HTTP_PROTOCOL_OPTIONS, UpstreamHttpProtocolOptions>;
  health_checks?: HealthCheck[];
  outlier_detection?: OutlierDetection;
  circuit_breakers?: { thresholds: CircuitBreakerThresholds[] };
}
export interface Admin {
  address: Address;
}
/** config/core/v3/config_source.proto: a file source, reloaded when an entry of watched_directory is moved to (a ConfigMap's ..data swap). */
export interface PathConfigSource {
  path: string;
  watched_directory?: { path: string };
}
export interface ConfigSource {
  path_config_source: PathConfigSource;
  resource_api_version: "V3";
}
/** bootstrap.proto RuntimeLayer.RtdsLayer: the Runtime resource `name` read from `rtds_config`. */
export interface RtdsLayer {
  name: string;
  rtds_config: ConfigSource;
}
export interface RuntimeLayer {
  name: string;
  static_layer?: Record<string, unknown>;
  admin_layer?: Record<string, never>;
  rtds_layer?: RtdsLayer;
}
/**
 * A file-based xDS source holds a DiscoveryResponse (service/discovery/v3/discovery.proto); for
 * RTDS its resources are envoy.service.runtime.v3.Runtime (service/runtime/v3/rtds.proto): a
 * name and a layer (google.protobuf.Struct; dotted keys are runtime keys).
 */
export interface RuntimeDiscoveryResponse {
  version_info: string;
  resources: { "@type": typeof TYPE_URL.runtime; name: string; layer: Record<string, number> }[];
}
export interface ResourceMonitor {
  name: string;
  typed_config: TypedConfig;
}
export interface OverloadAction {
  name: string;
  triggers: { name: string; threshold: { value: number } }[];
}
export interface OverloadManager {
  refresh_interval: Duration;
  resource_monitors: ResourceMonitor[];
  actions: OverloadAction[];
}
export interface Bootstrap {
  node: { id: string; cluster: string };
  admin: Admin;
  overload_manager?: OverloadManager;
  layered_runtime: { layers: RuntimeLayer[] };
  static_resources: { listeners: Listener[]; clusters: Cluster[] };
}

// ---- Pure builders ---------------------------------------------------------------------
export function seconds(s: number): Duration {
  return `${s}s`;
}

export function socketAddress(address: string, port: number): Address {
  return { socket_address: { address, port_value: port } };
}

const DENOMINATORS: [FractionalPercent["denominator"], number][] = [
  ["HUNDRED", 100],
  ["TEN_THOUSAND", 10_000],
  ["MILLION", 1_000_000],
];

/** Has `percent` at most 4 decimal places, so a FractionalPercent can state it exactly (the finest fraction is 1/MILLION)? The range 0–100 is checked apart. */
export function isEnvoyPercent(percent: number): boolean {
  return Math.abs(Math.round(percent * 1e4) - percent * 1e4) < 1e-6;
}
export const ENVOY_PERCENT_RULE = "must have at most 4 decimal places (Envoy's finest fraction is 1/MILLION = 0.0001 %)";

/**
 * A percentage (0–100, at most 4 decimal places) as the smallest exact FractionalPercent:
 * 5 → 5/HUNDRED, 0.25 → 25/TEN_THOUSAND, 0.0001 → 1/MILLION.
 */
export function fractionalPercent(percent: number): FractionalPercent {
  if (!(percent >= 0 && percent <= 100)) throw new RangeError(`percentage must be within 0-100, got ${percent}`);
  for (const [denominator, value] of DENOMINATORS) {
    const numerator = (percent * value) / 100;
    const rounded = Math.round(numerator);
    if (Math.abs(numerator - rounded) < 1e-6) return { numerator: rounded, denominator };
  }
  throw new RangeError(`percentage ${percent} has more than 4 decimal places (finest Envoy fraction is 1/MILLION)`);
}

/** The percentage a FractionalPercent stands for (numerator above denominator is capped at 100 by Envoy). */
export function percentOf(fp: { numerator?: number; denominator?: string }): number {
  const value = DENOMINATORS.find(([d]) => d === (fp.denominator ?? "HUNDRED"))?.[1] ?? 100;
  return Math.min(100, ((fp.numerator ?? 0) * 100) / value);
}

/** The share of requests a parsed request_mirror_policies entry mirrors: without runtime_fraction, all of them. */
export function mirroredPercent(policy: { runtime_fraction?: { default_value?: { numerator?: number; denominator?: string } } }): number {
  const dv = policy.runtime_fraction?.default_value;
  return dv ? percentOf(dv) : 100;
}

/** request_mirror_policies entry: shadow `percent` of requests to `cluster`, adjustable at runtime under `runtimeKey`. */
export function mirrorPolicy(cluster: string, percent: number, runtimeKey: string): RequestMirrorPolicy {
  return { cluster, runtime_fraction: { default_value: fractionalPercent(percent), runtime_key: runtimeKey } };
}

export function typed<T extends Record<string, unknown>>(typeUrl: string, body: T): T & TypedConfig {
  return { "@type": typeUrl, ...body };
}

export function routerFilter(): HttpFilter {
  // suppress_envoy_headers: x-envoy-* response headers tell clients about the topology behind the gateway.
  return { name: ROUTER_FILTER, typed_config: typed(TYPE_URL.router, { suppress_envoy_headers: true }) };
}

/** JSON access log on stdout, carrying the request id so a client's x-request-id can be traced. */
export function stdoutJsonAccessLog(fields: Record<string, string>): AccessLog {
  return { name: STDOUT_ACCESS_LOG, typed_config: typed(TYPE_URL.stdoutAccessLog, { log_format: { json_format: fields } }) };
}

export function previousHostsPredicate(): RetryHostPredicate {
  // A retry that lands on the host that just failed is not a retry.
  return { name: PREVIOUS_HOSTS_PREDICATE, typed_config: typed(TYPE_URL.previousHostsPredicate, {}) };
}

export function upstreamProtocolOptions(
  protocol: "http1" | "http2",
  idleTimeout: Duration,
  maxConcurrentStreams = 100,
): Cluster["typed_extension_protocol_options"] {
  return {
    [UPSTREAM_HTTP_PROTOCOL_OPTIONS]: typed(TYPE_URL.upstreamHttpProtocolOptions, {
      common_http_protocol_options: { idle_timeout: idleTimeout },
      explicit_http_config: protocol === "http2" ? { http2_protocol_options: { max_concurrent_streams: maxConcurrentStreams } } : { http_protocol_options: {} },
    }),
  };
}

export function httpConnectionManager(hcm: HttpConnectionManager): NetworkFilter {
  return { name: HTTP_CONNECTION_MANAGER, typed_config: { "@type": TYPE_URL.httpConnectionManager, ...hcm } };
}

export function listener(name: string, address: Address, hcm: HttpConnectionManager): Listener {
  return { name, address, filter_chains: [{ filters: [httpConnectionManager(hcm)] }] };
}

/** A STATIC or STRICT_DNS cluster of one address:port (DNS names resolve to every A record). */
export function singleAddressAssignment(clusterName: string, address: string, port: number): ClusterLoadAssignment {
  return { cluster_name: clusterName, endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(address, port) } }] }] };
}

/**
 * Serialise a bootstrap as JSON, the format generators of Envoy bootstraps use (Istio's
 * envoy-rev.json, Contour's envoy.json): Envoy reads it by its .json extension as the proto3
 * JSON mapping, with none of YAML's implicit typing, and parsing it back (policies, plan) is
 * native. Indented, so `kubectl get configmap` and plan diffs stay readable line by line.
 */
export function toJson(bootstrap: Bootstrap): string {
  return JSON.stringify(bootstrap, null, 2) + "\n";
}

/** Parse a bootstrap back (tests, policies). */
export function fromJson(text: string): unknown {
  return JSON.parse(text);
}

const mirrorPoliciesOf = new WeakMap<object, { path: string; policy: Record<string, any> }[]>();

/**
 * Every request_mirror_policies list anywhere in a parsed config (route, virtual host or
 * route configuration). Memoised per config object: stack policies ask once per canary,
 * and the walk is over the whole bootstrap.
 */
export function findMirrorPolicies(config: unknown): { path: string; policy: Record<string, any> }[] {
  if (config !== null && typeof config === "object") {
    const known = mirrorPoliciesOf.get(config);
    if (known) return known;
  }
  const out: { path: string; policy: Record<string, any> }[] = [];
  // The path is kept as segments (pushed and popped) and spelled out only for a hit.
  const at: string[] = ["$"];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        at.push(`[${i}]`);
        walk(x);
        at.pop();
      });
      return;
    }
    if (v === null || typeof v !== "object") return;
    for (const [k, x] of Object.entries(v)) {
      at.push(`.${k}`);
      if (k === "request_mirror_policies" && Array.isArray(x)) x.forEach((p, i) => out.push({ path: `${at.join("")}[${i}]`, policy: p ?? {} }));
      walk(x);
      at.pop();
    }
  };
  walk(config);
  if (config !== null && typeof config === "object") mirrorPoliciesOf.set(config, out);
  return out;
}
