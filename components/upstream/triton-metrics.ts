// Triton Inference Server's Prometheus metrics: the one place their names, types, units and
// labels are spelled. Source: triton-inference-server/core src/metrics.cc and the server's
// docs/user_guide/metrics.md (see shared/reference/upstream-facts.md, "Health and metrics").
// Alerts written against names that do not exist (triton_server_*) never fire: every
// expression this stack generates is checked against the names below by the tests.

/** Counters (cumulative since the model was loaded). Durations are in microseconds. */
export const TRITON_COUNTERS = {
  requestSuccess: "nv_inference_request_success",
  /** Label `reason` = REJECTED | CANCELED | BACKEND | OTHER. */
  requestFailure: "nv_inference_request_failure",
  inferenceCount: "nv_inference_count",
  execCount: "nv_inference_exec_count",
  requestDurationUs: "nv_inference_request_duration_us",
  queueDurationUs: "nv_inference_queue_duration_us",
  computeInputDurationUs: "nv_inference_compute_input_duration_us",
  computeInferDurationUs: "nv_inference_compute_infer_duration_us",
  computeOutputDurationUs: "nv_inference_compute_output_duration_us",
  energyConsumption: "nv_energy_consumption",
} as const;

/** Gauges. nv_gpu_utilization is a ratio 0.0–1.0, not a percentage. */
export const TRITON_GAUGES = {
  pendingRequestCount: "nv_inference_pending_request_count",
  modelLoadDurationSecs: "nv_model_load_duration_secs",
  gpuUtilization: "nv_gpu_utilization",
  gpuMemoryTotalBytes: "nv_gpu_memory_total_bytes",
  gpuMemoryUsedBytes: "nv_gpu_memory_used_bytes",
  gpuPowerUsage: "nv_gpu_power_usage",
  gpuPowerLimit: "nv_gpu_power_limit",
  cpuUtilization: "nv_cpu_utilization",
  pinnedMemoryPoolTotalBytes: "nv_pinned_memory_pool_total_bytes",
  pinnedMemoryPoolUsedBytes: "nv_pinned_memory_pool_used_bytes",
} as const;

/**
 * Summaries (label `quantile`), in microseconds. Exported only when tritonserver runs with
 * `--metrics-config summary_latencies=true` (the serving component sets it); there are no
 * latency histograms by default, so tail latency comes from these or not at all.
 */
export const TRITON_SUMMARIES = {
  requestUs: "nv_inference_request_summary_us",
  queueUs: "nv_inference_queue_summary_us",
  computeInputUs: "nv_inference_compute_input_summary_us",
  computeInferUs: "nv_inference_compute_infer_summary_us",
  computeOutputUs: "nv_inference_compute_output_summary_us",
} as const;

/** Summary quantile label values Triton exports by default (summary_quantiles). */
export const TRITON_SUMMARY_QUANTILES = { p50: "0.5", p90: "0.9", p99: "0.99" } as const;

/** Every metric name Triton exports, including the _sum/_count series of the summaries. */
export const TRITON_METRIC_NAMES: ReadonlySet<string> = new Set([
  ...Object.values(TRITON_COUNTERS),
  ...Object.values(TRITON_GAUGES),
  ...Object.values(TRITON_SUMMARIES).flatMap((s) => [s, `${s}_sum`, `${s}_count`]),
]);
