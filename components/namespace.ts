// The namespace the Triton serving groups run in.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { POD_SECURITY_VERSION } from "./upstream/pod-security";
import type { ComponentDescriptor } from "./component";

export interface ServingNamespaceArgs {
  /** Namespace name. */
  readonly name: string;
  /** Standard labels of the stack. */
  readonly labels: Record<string, string>;
}

/** Pure: the Namespace manifest. */
export function servingNamespace(args: ServingNamespaceArgs): k8s.types.input.core.v1.Namespace {
  return {
    metadata: {
      name: args.name,
      labels: {
        ...args.labels,
        // Pod Security Admission "restricted": a pod that runs as root or keeps
        // capabilities is refused at admission, not discovered in an audit.
        "pod-security.kubernetes.io/enforce": "restricted",
        // Pinned: "latest" changes what is refused with every control-plane upgrade.
        "pod-security.kubernetes.io/enforce-version": POD_SECURITY_VERSION,
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": POD_SECURITY_VERSION,
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": POD_SECURITY_VERSION,
      },
    },
  };
}

export class ServingNamespace extends pulumi.ComponentResource {
  readonly namespace: k8s.core.v1.Namespace;
  readonly name: pulumi.Output<string>;

  constructor(name: string, args: ServingNamespaceArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:cluster:ServingNamespace", name, {}, opts);
    this.namespace = new k8s.core.v1.Namespace(name, servingNamespace(args), { parent: this });
    this.name = this.namespace.metadata.name;
    this.registerOutputs({ name: this.name });
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
declare module "./component" {
  interface Produced {
    /** The serving namespace (Pod Security "restricted"): serving, the gateway and the firewall's policies live in it. */
    servingNamespace: ServingNamespace;
  }
}

/** The serving namespace, named by triton.namespace, created before anything that runs in it. */
export const namespaceComponent: ComponentDescriptor = {
  name: "namespace",
  policyDomains: ["workloads"],
  argumentKeys: { name: "triton.namespace" },
  build: (ctx) => ({
    servingNamespace: new ServingNamespace(
      "triton",
      { name: ctx.settings.triton.namespace, labels: ctx.need("labels") },
      { provider: ctx.need("cluster").k8s },
    ),
  }),
  outputs: (ctx) => ({ tritonNamespace: ctx.need("servingNamespace").name }),
};
