// The NVIDIA GPU Operator as a Helm release in its own namespace. What it installs follows the
// node image: EKS NVIDIA AMIs ship the driver and container toolkit (Bottlerocket also the
// device plugin), and a second copy from the operator breaks GPU access on the node.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { GPU_TOLERATION } from "../contracts";
import { GPU_AMI_TYPES, type GpuAmiType, type GpuAmiTypeName } from "../upstream/eks";
import { GPU_OPERATOR_CHART, gpuOperatorChartValues, type GpuOperatorIntent } from "../upstream/gpu-operator";

/** What the GPU nodes' image already provides (the AMI table's `ships`). */
export type GpuHostSoftware = GpuAmiType["ships"];

/** Arguments for the GPU Operator. */
export interface GpuOperatorArgs {
  /** Exact chart version, e.g. "v25.10.1". */
  readonly version: string;
  /** Namespace the operator and its operands run in. @default "gpu-operator" */
  readonly namespace?: string;
  /** Standard labels of the stack. */
  readonly labels: Record<string, string>;
  /** What the node image ships; the operator installs the rest. */
  readonly host: GpuHostSoftware;
  /** Driver version the operator installs when the host has none (custom/plain images). */
  readonly driverVersion?: string;
  /** Have the operator create dcgm-exporter's ServiceMonitor (needs the Prometheus Operator CRDs). @default true */
  readonly serviceMonitor?: boolean;
}

export type ResolvedGpuOperatorArgs = Required<Omit<GpuOperatorArgs, "driverVersion">> & Pick<GpuOperatorArgs, "driverVersion">;

/** What an EKS AMI type ships. */
export function hostSoftwareOf(amiType: GpuAmiTypeName): GpuHostSoftware {
  return GPU_AMI_TYPES[amiType].ships;
}

export function resolveGpuOperatorArgs(args: GpuOperatorArgs): ResolvedGpuOperatorArgs {
  const r = { ...args, namespace: args.namespace ?? "gpu-operator", serviceMonitor: args.serviceMonitor ?? true };
  if (!r.host.driver && r.driverVersion === undefined) {
    // An unpinned driver changes with the chart's default on every chart bump.
    throw new pulumi.InputPropertyError({ propertyPath: "driverVersion", reason: "must pin the driver the operator installs on a host without one" });
  }
  if (r.host.driver && r.driverVersion !== undefined) {
    throw new pulumi.InputPropertyError({
      propertyPath: "driverVersion",
      reason: `must not be set when the node image ships its driver (the operator would not use it), got ${JSON.stringify(r.driverVersion)}`,
    });
  }
  return r;
}

/** Pure: what the operator installs, from what the host has. */
export function gpuOperatorIntent(r: ResolvedGpuOperatorArgs): GpuOperatorIntent {
  return {
    driver: r.host.driver ? { enabled: false } : { enabled: true, version: r.driverVersion },
    toolkit: !r.host.toolkit,
    devicePlugin: !r.host.devicePlugin,
    // Set explicitly: the chart's default for serviceMonitor differs between versions.
    dcgmExporter: { enabled: true, serviceMonitor: r.serviceMonitor },
    // Every operand must run on the tainted GPU nodes, or the node never advertises nvidia.com/gpu.
    tolerations: [{ ...GPU_TOLERATION }],
  };
}

/** Pure: the chart values. */
export function gpuOperatorValues(r: ResolvedGpuOperatorArgs): Record<string, unknown> {
  return gpuOperatorChartValues(gpuOperatorIntent(r));
}

/** Pure: the operator's namespace. */
export function gpuOperatorNamespace(r: ResolvedGpuOperatorArgs): k8s.types.input.core.v1.Namespace {
  return {
    metadata: {
      name: r.namespace,
      labels: {
        ...r.labels,
        // The operands (device plugin, dcgm-exporter, validators) mount host paths and run
        // privileged by design; "privileged" is the only Pod Security level they pass.
        "pod-security.kubernetes.io/enforce": "privileged",
      },
    },
  };
}

export class GpuOperator extends pulumi.ComponentResource {
  readonly namespace: k8s.core.v1.Namespace;
  readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: GpuOperatorArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:gpu:GpuOperator", name, {}, opts);
    const r = resolveGpuOperatorArgs(args);
    this.namespace = new k8s.core.v1.Namespace(name, gpuOperatorNamespace(r), { parent: this });
    this.release = new k8s.helm.v3.Release(
      name,
      {
        name: "gpu-operator",
        chart: GPU_OPERATOR_CHART.chart,
        version: r.version,
        repositoryOpts: { repo: GPU_OPERATOR_CHART.repo },
        namespace: this.namespace.metadata.name,
        values: gpuOperatorValues(r),
        // A failed upgrade rolls back instead of leaving GPU nodes without a device plugin.
        atomic: true,
        timeout: 900,
      },
      { parent: this },
    );
    this.registerOutputs({ namespace: this.namespace.metadata.name, release: this.release.status });
  }
}
