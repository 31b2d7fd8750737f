// NVIDIA GPU Operator: chart coordinates and the value names this stack sets, in one place
// (NVIDIA/gpu-operator deployments/gpu-operator/values.yaml). A chart bump that renames a
// value is one edit here.

export const GPU_OPERATOR_CHART = {
  repo: "https://helm.ngc.nvidia.com/nvidia",
  chart: "gpu-operator",
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
    driver: i.driver.version === undefined ? { enabled: i.driver.enabled } : { enabled: i.driver.enabled, version: i.driver.version },
    toolkit: { enabled: i.toolkit },
    devicePlugin: { enabled: i.devicePlugin },
    dcgmExporter: { enabled: i.dcgmExporter.enabled, serviceMonitor: { enabled: i.dcgmExporter.serviceMonitor } },
  };
}
