// NVIDIA dcgm-exporter (deployed by the GPU Operator): the one place its Service, port and
// metric names are spelled. Source: NVIDIA/dcgm-exporter default-counters.csv and the
// gpu-operator chart (see shared/reference/upstream-facts.md, "DCGM exporter").

/** The exporter's Service and port, as the GPU Operator creates them. */
export const DCGM_EXPORTER = { serviceName: "nvidia-dcgm-exporter", portName: "gpu-metrics", port: 9400 } as const;

/** Metrics, with their units. All are gauges except TOTAL_ENERGY_CONSUMPTION. */
export const DCGM_METRICS = {
  /** GPU utilisation, 0–100 %. */
  gpuUtil: "DCGM_FI_DEV_GPU_UTIL",
  /** Framebuffer memory used, MiB (not bytes). */
  fbUsedMiB: "DCGM_FI_DEV_FB_USED",
  /** Framebuffer memory free, MiB (not bytes). */
  fbFreeMiB: "DCGM_FI_DEV_FB_FREE",
  /** GPU temperature, °C. */
  gpuTempC: "DCGM_FI_DEV_GPU_TEMP",
  /** Power draw, W. */
  powerUsageW: "DCGM_FI_DEV_POWER_USAGE",
  /** Memory copy utilisation, 0–100 %. */
  memCopyUtil: "DCGM_FI_DEV_MEM_COPY_UTIL",
  /** Value of the last XID error: a gauge, not a counter (rate() over it is meaningless). */
  xidErrors: "DCGM_FI_DEV_XID_ERRORS",
  /** Energy since boot, mJ: a counter. */
  totalEnergyMj: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
  /** Ratio of time the graphics engine is active (profiling metric). */
  grEngineActive: "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
} as const;

/**
 * Labels the exporter sets itself. namespace/pod/container name the pod that uses the GPU,
 * and appear only when the exporter can read the kubelet pod-resources socket and the pod
 * requests nvidia.com/gpu in its limits.
 */
export const DCGM_LABELS = {
  gpu: "gpu",
  uuid: "UUID",
  hostname: "Hostname",
  modelName: "modelName",
  namespace: "namespace",
  pod: "pod",
  container: "container",
} as const;

export const DCGM_METRIC_NAMES: ReadonlySet<string> = new Set(Object.values(DCGM_METRICS));
