// An independent oracle for the Envoy config the gateway generates: the v3 field names of
// each message, copied from the protos of envoyproxy/envoy api/ (data-plane-api), not from
// components/upstream/envoy.ts, so a field misspelt there (and in its TypeScript types)
// still fails here. Lists hold the fields read from the proto, a subset where a message is
// large; a field that exists upstream but is missing here fails too, and is added after
// checking the proto. Deprecated fields are left out on purpose.
//
// Notation: "scalar", "scalar[]", "Duration" (google.protobuf.Duration as "<n>s"),
// "Struct" (free-form), "Any" (resolved by its @type), "Msg", "Msg[]", "map<Msg>",
// "enum:<Name>".

export type FieldType = string;

export const MESSAGES: Record<string, Record<string, FieldType>> = {
  // envoy/config/bootstrap/v3/bootstrap.proto
  Bootstrap: {
    node: "Node",
    static_resources: "StaticResources",
    layered_runtime: "LayeredRuntime",
    admin: "Admin",
    flags_path: "scalar",
    stats_flush_interval: "Duration",
    enable_dispatcher_stats: "scalar",
    header_prefix: "scalar",
    use_tcp_for_dns_lookups: "scalar",
  },
  StaticResources: { listeners: "Listener[]", clusters: "Cluster[]" },
  Admin: { access_log: "AccessLog[]", profile_path: "scalar", address: "Address" },
  LayeredRuntime: { layers: "RuntimeLayer[]" },
  RuntimeLayer: { name: "scalar", static_layer: "Struct", admin_layer: "AdminLayer" },
  AdminLayer: {},
  // envoy/config/core/v3/base.proto
  Node: { id: "scalar", cluster: "scalar", metadata: "Struct" },
  RuntimeFractionalPercent: { default_value: "FractionalPercent", runtime_key: "scalar" },
  DataSource: { filename: "scalar", inline_bytes: "scalar", inline_string: "scalar", environment_variable: "scalar" },
  // envoy/type/v3/percent.proto
  FractionalPercent: { numerator: "scalar", denominator: "enum:DenominatorType" },
  // envoy/config/core/v3/address.proto
  Address: { socket_address: "SocketAddress" },
  SocketAddress: {
    protocol: "enum:SocketProtocol",
    address: "scalar",
    port_value: "scalar",
    named_port: "scalar",
    resolver_name: "scalar",
    ipv4_compat: "scalar",
  },
  // envoy/config/listener/v3/listener.proto, listener_components.proto
  Listener: { name: "scalar", address: "Address", filter_chains: "FilterChain[]" },
  FilterChain: { filters: "Filter[]", name: "scalar" },
  Filter: { name: "scalar", typed_config: "Any" },
  // envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto
  HttpConnectionManager: {
    codec_type: "enum:CodecType",
    stat_prefix: "scalar",
    route_config: "RouteConfiguration",
    http_filters: "HttpFilter[]",
    add_user_agent: "scalar",
    common_http_protocol_options: "CoreHttpProtocolOptions",
    http_protocol_options: "Http1ProtocolOptions",
    http2_protocol_options: "Http2ProtocolOptions",
    server_name: "scalar",
    max_request_headers_kb: "scalar",
    stream_idle_timeout: "Duration",
    request_timeout: "Duration",
    request_headers_timeout: "Duration",
    drain_timeout: "Duration",
    delayed_close_timeout: "Duration",
    access_log: "AccessLog[]",
    use_remote_address: "scalar",
    xff_num_trusted_hops: "scalar",
    skip_xff_append: "scalar",
    via: "scalar",
    generate_request_id: "scalar",
    preserve_external_request_id: "scalar",
    always_set_request_id_in_response: "scalar",
    proxy_100_continue: "scalar",
    normalize_path: "scalar",
    merge_slashes: "scalar",
    strip_matching_host_port: "scalar",
    strip_any_host_port: "scalar",
    stream_error_on_invalid_http_message: "scalar",
  },
  HttpFilter: { name: "scalar", typed_config: "Any", is_optional: "scalar", disabled: "scalar" },
  // envoy/extensions/filters/http/router/v3/router.proto
  Router: {
    dynamic_stats: "scalar",
    start_child_span: "scalar",
    upstream_log: "AccessLog[]",
    suppress_envoy_headers: "scalar",
    strict_check_headers: "scalar[]",
    respect_expected_rq_timeout: "scalar",
    suppress_grpc_request_failure_code_stats: "scalar",
  },
  // envoy/config/accesslog/v3/accesslog.proto, extensions/access_loggers/stream/v3/stream.proto
  AccessLog: { name: "scalar", typed_config: "Any" },
  StdoutAccessLog: { log_format: "SubstitutionFormatString" },
  // envoy/config/core/v3/substitution_format_string.proto
  SubstitutionFormatString: { json_format: "Struct", text_format_source: "DataSource", omit_empty_values: "scalar", content_type: "scalar" },
  // envoy/config/core/v3/protocol.proto
  CoreHttpProtocolOptions: {
    idle_timeout: "Duration",
    max_headers_count: "scalar",
    max_connection_duration: "Duration",
    max_stream_duration: "Duration",
    headers_with_underscores_action: "enum:HeadersWithUnderscoresAction",
    max_requests_per_connection: "scalar",
  },
  Http1ProtocolOptions: {},
  Http2ProtocolOptions: { max_concurrent_streams: "scalar", initial_stream_window_size: "scalar", initial_connection_window_size: "scalar" },
  // envoy/config/route/v3/route.proto, route_components.proto
  RouteConfiguration: { name: "scalar", virtual_hosts: "VirtualHost[]" },
  VirtualHost: {
    name: "scalar",
    domains: "scalar[]",
    routes: "Route[]",
    require_tls: "enum:TlsRequirementType",
    request_headers_to_remove: "scalar[]",
    response_headers_to_remove: "scalar[]",
    retry_policy: "RetryPolicy",
    include_request_attempt_count: "scalar",
    include_attempt_count_in_response: "scalar",
  },
  Route: {
    name: "scalar",
    match: "RouteMatch",
    route: "RouteAction",
    direct_response: "DirectResponseAction",
    request_headers_to_remove: "scalar[]",
    response_headers_to_remove: "scalar[]",
  },
  RouteMatch: {
    prefix: "scalar",
    path: "scalar",
    safe_regex: "RegexMatcher",
    case_sensitive: "scalar",
    runtime_fraction: "RuntimeFractionalPercent",
    headers: "HeaderMatcher[]",
    grpc: "GrpcRouteMatchOptions",
  },
  GrpcRouteMatchOptions: {},
  HeaderMatcher: { name: "scalar", string_match: "StringMatcher", present_match: "scalar", invert_match: "scalar", treat_missing_header_as_empty: "scalar" },
  // envoy/type/matcher/v3/string.proto, regex.proto
  StringMatcher: { exact: "scalar", prefix: "scalar", suffix: "scalar", safe_regex: "RegexMatcher", contains: "scalar", ignore_case: "scalar" },
  RegexMatcher: { regex: "scalar" },
  RouteAction: {
    cluster: "scalar",
    cluster_header: "scalar",
    cluster_not_found_response_code: "scalar",
    prefix_rewrite: "scalar",
    host_rewrite_literal: "scalar",
    auto_host_rewrite: "scalar",
    timeout: "Duration",
    idle_timeout: "Duration",
    retry_policy: "RetryPolicy",
    request_mirror_policies: "RequestMirrorPolicy[]",
    max_stream_duration: "MaxStreamDuration",
  },
  MaxStreamDuration: { max_stream_duration: "Duration", grpc_timeout_header_max: "Duration", grpc_timeout_header_offset: "Duration" },
  RequestMirrorPolicy: { cluster: "scalar", runtime_fraction: "RuntimeFractionalPercent", trace_sampled: "scalar" },
  RetryPolicy: {
    retry_on: "scalar",
    num_retries: "scalar",
    per_try_timeout: "Duration",
    retry_host_predicate: "RetryHostPredicate[]",
    host_selection_retry_max_attempts: "scalar",
    retriable_status_codes: "scalar[]",
    retry_back_off: "RetryBackOff",
  },
  RetryBackOff: { base_interval: "Duration", max_interval: "Duration" },
  RetryHostPredicate: { name: "scalar", typed_config: "Any" },
  PreviousHostsPredicate: {},
  DirectResponseAction: { status: "scalar", body: "DataSource" },
  // envoy/config/cluster/v3/cluster.proto
  Cluster: {
    name: "scalar",
    alt_stat_name: "scalar",
    type: "enum:DiscoveryType",
    connect_timeout: "Duration",
    per_connection_buffer_limit_bytes: "scalar",
    lb_policy: "enum:LbPolicy",
    load_assignment: "ClusterLoadAssignment",
    health_checks: "HealthCheck[]",
    circuit_breakers: "CircuitBreakers",
    typed_extension_protocol_options: "map<Any>",
    dns_refresh_rate: "Duration",
    respect_dns_ttl: "scalar",
    dns_lookup_family: "enum:DnsLookupFamily",
    outlier_detection: "OutlierDetection",
    close_connections_on_host_health_failure: "scalar",
    ignore_health_on_host_removal: "scalar",
  },
  // envoy/config/endpoint/v3/endpoint.proto, endpoint_components.proto
  ClusterLoadAssignment: { cluster_name: "scalar", endpoints: "LocalityLbEndpoints[]" },
  LocalityLbEndpoints: { lb_endpoints: "LbEndpoint[]", priority: "scalar", load_balancing_weight: "scalar" },
  LbEndpoint: { endpoint: "Endpoint", load_balancing_weight: "scalar" },
  Endpoint: { address: "Address", hostname: "scalar" },
  // envoy/config/core/v3/health_check.proto
  HealthCheck: {
    timeout: "Duration",
    interval: "Duration",
    initial_jitter: "Duration",
    interval_jitter: "Duration",
    interval_jitter_percent: "scalar",
    unhealthy_threshold: "scalar",
    healthy_threshold: "scalar",
    reuse_connection: "scalar",
    http_health_check: "HttpHealthCheck",
    grpc_health_check: "GrpcHealthCheck",
    no_traffic_interval: "Duration",
    no_traffic_healthy_interval: "Duration",
    unhealthy_interval: "Duration",
    unhealthy_edge_interval: "Duration",
    healthy_edge_interval: "Duration",
    event_log_path: "scalar",
  },
  HttpHealthCheck: { host: "scalar", path: "scalar", request_headers_to_remove: "scalar[]", codec_client_type: "enum:CodecClientType" },
  GrpcHealthCheck: { service_name: "scalar", authority: "scalar" },
  // envoy/config/cluster/v3/outlier_detection.proto
  OutlierDetection: {
    consecutive_5xx: "scalar",
    interval: "Duration",
    base_ejection_time: "Duration",
    max_ejection_percent: "scalar",
    enforcing_consecutive_5xx: "scalar",
    enforcing_success_rate: "scalar",
    success_rate_minimum_hosts: "scalar",
    success_rate_request_volume: "scalar",
    success_rate_stdev_factor: "scalar",
    consecutive_gateway_failure: "scalar",
    enforcing_consecutive_gateway_failure: "scalar",
    split_external_local_origin_errors: "scalar",
    consecutive_local_origin_failure: "scalar",
    enforcing_consecutive_local_origin_failure: "scalar",
    failure_percentage_threshold: "scalar",
    enforcing_failure_percentage: "scalar",
    max_ejection_time: "Duration",
  },
  // envoy/config/cluster/v3/circuit_breaker.proto
  CircuitBreakers: { thresholds: "Thresholds[]", per_host_thresholds: "Thresholds[]" },
  Thresholds: {
    priority: "enum:RoutingPriority",
    max_connections: "scalar",
    max_pending_requests: "scalar",
    max_requests: "scalar",
    max_retries: "scalar",
    track_remaining: "scalar",
    max_connection_pools: "scalar",
  },
  // envoy/extensions/upstreams/http/v3/http_protocol_options.proto
  UpstreamHttpProtocolOptions: { common_http_protocol_options: "CoreHttpProtocolOptions", explicit_http_config: "ExplicitHttpConfig" },
  ExplicitHttpConfig: { http_protocol_options: "Http1ProtocolOptions", http2_protocol_options: "Http2ProtocolOptions" },
};

export const ENUMS: Record<string, string[]> = {
  DenominatorType: ["HUNDRED", "TEN_THOUSAND", "MILLION"],
  SocketProtocol: ["TCP", "UDP"],
  CodecType: ["AUTO", "HTTP1", "HTTP2", "HTTP3"],
  HeadersWithUnderscoresAction: ["ALLOW", "REJECT_REQUEST", "DROP_HEADER"],
  TlsRequirementType: ["NONE", "EXTERNAL_ONLY", "ALL"],
  DiscoveryType: ["STATIC", "STRICT_DNS", "LOGICAL_DNS", "EDS", "ORIGINAL_DST"],
  LbPolicy: ["ROUND_ROBIN", "LEAST_REQUEST", "RING_HASH", "RANDOM", "MAGLEV", "CLUSTER_PROVIDED"],
  DnsLookupFamily: ["AUTO", "V4_ONLY", "V6_ONLY", "V4_PREFERRED", "ALL"],
  CodecClientType: ["HTTP1", "HTTP2", "HTTP3"],
  RoutingPriority: ["DEFAULT", "HIGH"],
};

/** google.protobuf.Any payloads by type URL. */
export const ANY_TYPES: Record<string, string> = {
  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager": "HttpConnectionManager",
  "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router": "Router",
  "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions": "UpstreamHttpProtocolOptions",
  "type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog": "StdoutAccessLog",
  "type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate": "PreviousHostsPredicate",
};

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Every field of `value` checked against message `type`, recursively. Returns the problems (empty = valid). */
export function checkMessage(value: unknown, type: string, path = "$"): string[] {
  const fields = MESSAGES[type];
  if (!fields) return [`${path}: no field table for message ${type}`];
  if (!isObject(value)) return [`${path}: expected a ${type} object, got ${JSON.stringify(value)}`];
  const problems: string[] = [];
  for (const [name, v] of Object.entries(value)) {
    if (name === "@type") continue; // checked where the Any is resolved
    const ft = fields[name];
    if (!ft) problems.push(`${path}.${name}: ${type} has no field "${name}"`);
    else problems.push(...checkField(v, ft, `${path}.${name}`));
  }
  return problems;
}

function checkField(v: unknown, ft: FieldType, path: string): string[] {
  if (ft.endsWith("[]")) {
    if (!Array.isArray(v)) return [`${path}: expected a list`];
    return v.flatMap((x, i) => checkField(x, ft.slice(0, -2), `${path}[${i}]`));
  }
  if (ft.startsWith("map<")) {
    if (!isObject(v)) return [`${path}: expected a map`];
    const inner = ft.slice(4, -1);
    return Object.entries(v).flatMap(([k, x]) => checkField(x, inner, `${path}.${k}`));
  }
  if (ft === "scalar") return isObject(v) || Array.isArray(v) ? [`${path}: expected a scalar`] : [];
  if (ft === "Duration")
    return typeof v === "string" && /^\d+(\.\d+)?s$/.test(v) ? [] : [`${path}: expected a Duration such as "5s", got ${JSON.stringify(v)}`];
  if (ft === "Struct") return isObject(v) ? [] : [`${path}: expected an object`];
  if (ft.startsWith("enum:")) {
    const values = ENUMS[ft.slice(5)];
    return values.includes(v as string) ? [] : [`${path}: ${JSON.stringify(v)} is not one of ${ft.slice(5)} ${values.join("|")}`];
  }
  if (ft === "Any") {
    if (!isObject(v)) return [`${path}: expected an Any object`];
    const url = v["@type"];
    const msg = typeof url === "string" ? ANY_TYPES[url] : undefined;
    if (!msg) return [`${path}.@type: unknown type URL ${JSON.stringify(url)}`];
    return checkMessage(v, msg, path);
  }
  return checkMessage(v, ft, path);
}
