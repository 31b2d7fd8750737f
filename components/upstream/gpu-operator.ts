// NVIDIA GPU Operator: chart coordinates and the value names this stack sets, in one place.
// A chart bump that renames a value is one edit here.
//
// Checked against NVIDIA/gpu-operator at tag v26.7.0 (commit 10ee5b36, 2026-08-20), read with git
// on 2026-12-01: deployments/gpu-operator/values.yaml (identical to
// shared/reference/charts/gpu-operator-v26.7.0/values.yaml), templates/clusterpolicy.yaml and
// api/nvidia/v1/clusterpolicy_types.go. What that release ships, from its values.yaml: driver
// 595.91.07 (unused here: EKS AMIs ship theirs), container toolkit v1.20.0, device plugin and GFD
// v0.20.0, DCGM 4.6.0 and dcgm-exporter 4.6.0-4.8.3 (image nvcr.io/nvidia/k8s/dcgm-exporter:
// 4.6.0-4.8.3-distroless), MIG manager v0.15.0. Every value key this module sets exists there with
// the type set (test/chart-values-match-upstream.test.ts).

export const GPU_OPERATOR_CHART = {
  repo: "https://helm.ngc.nvidia.com/nvidia",
  chart: "gpu-operator",
} as const;

/** The release whose values and operand versions this module was checked against (the example stacks pin it). */
export const GPU_OPERATOR_CHECKED_VERSION = "v26.7.0";
/** dcgm-exporter image tag GPU Operator v26.7.0 deploys (values.yaml dcgmExporter.version): DCGM 4.6.0, exporter 4.8.3. */
export const DCGM_EXPORTER_VERSION_OF_CHECKED_OPERATOR = "4.6.0-4.8.3-distroless";

/**
 * How the operator reports that its operands (driver or not, toolkit, device plugin, validators,
 * dcgm-exporter) are up: the status of its one ClusterPolicy object (`cluster-policy`, rendered by
 * the chart while clusterPolicy.deployCR is true), `status.state` = "ready" (else "notReady";
 * clusterpolicy_types.go State). The operands are DaemonSets the operator creates at run time, so
 * Helm, which waits only for the objects the chart renders, never sees them.
 */
export const CLUSTER_POLICY_READINESS = {
  resource: "clusterpolicies.nvidia.com",
  name: "cluster-policy",
  jsonPath: "{.status.state}",
  ready: "ready",
} as const;

/** A toleration as the chart takes it. */
export interface ChartToleration {
  key: string;
  operator: string;
  effect: string;
}

/** What the stack decides; `gpuOperatorChartValues` spells it in the chart's value names. */
export interface GpuOperatorIntent {
  /** Install the driver (custom/plain images); `version` pins it. */
  driver: { enabled: boolean; version?: string };
  /** Install the NVIDIA container toolkit. */
  toolkit: boolean;
  /** Run the Kubernetes device plugin DaemonSet. */
  devicePlugin: boolean;
  /**
   * Container Device Interface: the operator configures the runtime and device plugin to inject GPUs
   * through CDI specs. Set explicitly, so a chart whose default changes does not change it silently.
   */
  cdi: boolean;
  /** Run dcgm-exporter, and whether the operator creates its ServiceMonitor. */
  dcgmExporter: { enabled: boolean; serviceMonitor: boolean };
  /** Tolerations for the operator, every operand DaemonSet, and NFD's worker. */
  tolerations: ChartToleration[];
}

export function gpuOperatorChartValues(i: GpuOperatorIntent): Record<string, unknown> {
  return {
    operator: { tolerations: i.tolerations },
    daemonsets: { tolerations: i.tolerations },
    // NFD's worker labels the GPU nodes the operands select on; without the toleration it
    // never runs there and no operand is scheduled.
    "node-feature-discovery": { worker: { tolerations: i.tolerations } },
    cdi: { enabled: i.cdi },
    driver: i.driver.version === undefined ? { enabled: i.driver.enabled } : { enabled: i.driver.enabled, version: i.driver.version },
    toolkit: { enabled: i.toolkit },
    devicePlugin: { enabled: i.devicePlugin },
    dcgmExporter: { enabled: i.dcgmExporter.enabled, serviceMonitor: { enabled: i.dcgmExporter.serviceMonitor } },
  };
}
