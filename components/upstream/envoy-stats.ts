// Envoy's statistics as Prometheus sees them through /stats/prometheus: the one place their
// names and label names are spelled. Envoy names a cluster counter cluster.<name>.<stat>; the
// default tag extractors (source/common/config/well_known_names.cc) move <name> into the tag
// envoy.cluster_name and the class digit of upstream_rq_<d>xx into envoy.response_code_class,
// and the Prometheus output prefixes envoy_, turning dots into underscores. The counters are
// declared in envoy/upstream/upstream.h (ALL_CLUSTER_TRAFFIC_STATS). An upstream reset or
// timeout before the response started is charged as its 503 (source/common/router/router.cc,
// Filter::chargeUpstreamAbort → chargeUpstreamCode), so it is in upstream_rq_5xx; a reset after
// the response started is only in upstream_rq_rx_reset / upstream_rq_tx_reset.
// Read in envoyproxy/envoy sources of the 1.3x line through the code index (the v1.37.1
// snapshot itself is too large to fetch here), not at the exact tag.

/** Counters of one upstream cluster. */
export const ENVOY_CLUSTER_COUNTERS = {
  /** Upstream requests by response class; label ENVOY_STAT_LABELS.responseCodeClass = "1".."5". */
  rqXx: "envoy_cluster_upstream_rq_xx",
  rqTotal: "envoy_cluster_upstream_rq_total",
  /** Requests the upstream reset (remote) / Envoy reset (local). */
  rqRxReset: "envoy_cluster_upstream_rq_rx_reset",
  rqTxReset: "envoy_cluster_upstream_rq_tx_reset",
  /** Connections the upstream closed with requests in flight. */
  cxDestroyRemoteWithActiveRq: "envoy_cluster_upstream_cx_destroy_remote_with_active_rq",
  rqPendingOverflow: "envoy_cluster_upstream_rq_pending_overflow",
  rqTimeout: "envoy_cluster_upstream_rq_timeout",
} as const;

/** Tag names as Prometheus labels. */
export const ENVOY_STAT_LABELS = { clusterName: "envoy_cluster_name", responseCodeClass: "envoy_response_code_class" } as const;
