// NVIDIA dcgm-exporter (deployed by the GPU Operator): the one place its Service, port, metric
// names and label names are spelled. Sources, read 2026-12-01:
// - metrics: NVIDIA/dcgm-exporter etc/dcp-metrics-included.csv (the file the GPU Operator
//   points DCGM_EXPORTER_COLLECTORS at: NVIDIA/gpu-operator assets/state-dcgm-exporter/
//   0800_daemonset.yaml at v25.10.1 and v26.7.0) at tags 4.4.2-4.7.0 and 4.5.3-4.8.2 and on main
//   after it; also shared/reference/upstream-facts.md, "DCGM exporter".
// - labels: internal/pkg/rendermetrics/render_metrics.go at 4.4.2-4.7.0 (`Hostname`), renamed
//   `hostname` by commit d5e5f51 "Rename Hostname label to hostname (#655)", the first commit
//   after tag 4.5.3-4.8.2; GPU Operator v26.7.0 ships 4.6.0-4.8.3 (its values.yaml), which
//   upstream-facts.md records as the release with the rename (the tag itself was not in the
//   mirror read here).
// - the exporter version each operator release ships: dcgmExporter.version in
//   shared/reference/charts/gpu-operator-<version>/values.yaml (a test compares).

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
  /** Framebuffer memory reserved by the driver, MiB: total = used + free + reserved. */
  fbReservedMiB: "DCGM_FI_DEV_FB_RESERVED",
  /** GPU temperature, °C. */
  gpuTempC: "DCGM_FI_DEV_GPU_TEMP",
  /** Power draw, W. */
  powerUsageW: "DCGM_FI_DEV_POWER_USAGE",
  /** Memory copy utilisation, 0–100 %. */
  memCopyUtil: "DCGM_FI_DEV_MEM_COPY_UTIL",
  /**
   * Value of the last XID error: a gauge, not a counter (rate() over it is meaningless). It
   * keeps the last XID until the exporter restarts, so "non-zero" latches; a new XID is a
   * change of value.
   */
  xidErrors: "DCGM_FI_DEV_XID_ERRORS",
  /** Energy since boot, mJ: a counter. */
  totalEnergyMj: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
  /** Ratio of time the graphics engine is active (profiling metric). */
  grEngineActive: "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
} as const;

/**
 * Labels the exporter sets itself. namespace/pod/container name the pod that uses the GPU,
 * and appear only when the exporter can read the kubelet pod-resources socket and the pod
 * requests nvidia.com/gpu in its limits. `hostname` is spelled per exporter release: use
 * dcgmLabels(operatorVersion).
 */
export interface DcgmLabelNames {
  readonly gpu: "gpu";
  readonly uuid: "UUID";
  /** The node's name: `Hostname` up to 4.5.3-4.8.2, `hostname` after. */
  readonly hostname: "Hostname" | "hostname";
  readonly modelName: "modelName";
  readonly namespace: "namespace";
  readonly pod: "pod";
  readonly container: "container";
}

/** What each GPU Operator release ships of dcgm-exporter, and the node label it writes. */
export interface DcgmExporterRelease {
  /** dcgmExporter.version in the operator chart's values.yaml. */
  readonly exporterVersion: string;
  readonly hostnameLabel: DcgmLabelNames["hostname"];
}

/**
 * Per GPU Operator chart version (gpu.operator.version). A bump to a version not listed here
 * is refused (dcgmLabels throws) until its row is added from that chart's values.yaml.
 */
export const DCGM_EXPORTER_BY_OPERATOR: Readonly<Record<string, DcgmExporterRelease>> = {
  "v25.10.1": { exporterVersion: "4.4.2-4.7.0-distroless", hostnameLabel: "Hostname" },
  "v26.7.0": { exporterVersion: "4.6.0-4.8.3-distroless", hostnameLabel: "hostname" },
};

/** The label names dcgm-exporter writes under the given GPU Operator chart version; undefined when the table does not know it. */
export function dcgmLabels(operatorVersion: string): DcgmLabelNames | undefined {
  const release = DCGM_EXPORTER_BY_OPERATOR[operatorVersion];
  if (release === undefined) return undefined;
  return { gpu: "gpu", uuid: "UUID", hostname: release.hostnameLabel, modelName: "modelName", namespace: "namespace", pod: "pod", container: "container" };
}

export const DCGM_METRIC_NAMES: ReadonlySet<string> = new Set(Object.values(DCGM_METRICS));
