// The cluster's storage for the stack's persistent volumes: an encrypted gp3 StorageClass on
// the EBS CSI driver, or an existing class by name. Settings: ./schema.ts; manifest:
// ./builders.ts. Consumers take `storageClassName` (Prometheus and Alertmanager volumes).
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { ebsStorageClass, storageClassNameOf } from "./builders";
import * as v from "valibot";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { resolveClusterStorageArgs, storageSettings, type ClusterStorageArgs } from "./schema";

export * from "./builders";
export * from "./schema";

export class ClusterStorage extends pulumi.ComponentResource {
  /** The StorageClass the stack created; undefined when an existing class is used. */
  readonly storageClass?: k8s.storage.v1.StorageClass;
  /** Name of the class every persistent volume of the stack names. */
  readonly storageClassName: string;

  constructor(name: string, args: ClusterStorageArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:storage:ClusterStorage", name, {}, opts);
    const r = resolveClusterStorageArgs(args, name);
    const sc = ebsStorageClass(r);
    if (sc !== undefined) this.storageClass = new k8s.storage.v1.StorageClass(name, sc, { parent: this });
    this.storageClassName = storageClassNameOf(r);
    this.registerOutputs({ storageClassName: this.storageClassName });
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
/** The stack file's `storage` section: optional, every key defaulted. */
const storageSection = v.optional(storageSettings, {});

declare module "../component" {
  interface StackSettings {
    storage: v.InferOutput<typeof storageSection>;
  }
  interface Produced {
    /** The StorageClass every persistent volume of the stack names. */
    storage: ClusterStorage;
  }
}

/**
 * The StorageClass of the persistent volumes (created, or an existing one by name): EKS
 * clusters created at 1.30+ have no default class, so every claim names this one.
 */
export const storageComponent: ComponentDescriptor = {
  name: "storage",
  sections: { storage: sectionSpec<"storage">(storageSection, "docs/storage.md") },
  policyDomains: ["workloads"],
  argumentKeys: { region: "aws:region" },
  build: (ctx) => ({
    storage: new ClusterStorage("storage", { ...ctx.settings.storage, labels: ctx.need("labels"), region: ctx.region }, { provider: ctx.need("cluster").k8s }),
  }),
  outputs: (ctx) => ({ storageClassName: ctx.need("storage").storageClassName }),
};
