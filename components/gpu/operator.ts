// The NVIDIA GPU Operator as a Helm release in its own namespace. What it installs follows the
// node image: EKS NVIDIA AMIs ship the driver and container toolkit (Bottlerocket also the
// device plugin), and a second copy from the operator breaks GPU access on the node.
// Settings: ./schema.ts; namespace, values and release arguments: ./builders.ts.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { resolveGpuOperatorArgs, type GpuOperatorArgs } from "./schema";
import { gpuOperatorNamespace, gpuOperatorRelease } from "./builders";

export class GpuOperator extends pulumi.ComponentResource {
  readonly namespace: k8s.core.v1.Namespace;
  readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: GpuOperatorArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:gpu:GpuOperator", name, {}, opts);
    const r = resolveGpuOperatorArgs(args, name);
    this.namespace = new k8s.core.v1.Namespace(name, gpuOperatorNamespace(r), { parent: this });
    this.release = new k8s.helm.v3.Release(name, gpuOperatorRelease(r, this.namespace.metadata.name), { parent: this });
    this.registerOutputs({ namespace: this.namespace.metadata.name, release: this.release.status });
  }
}
