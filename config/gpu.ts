// The `gpu` section: GPU node group and GPU Operator settings, and the checks that span
// sections (zones, environment, the Triton images of the serving groups).
import * as v from "valibot";
import { checkTritonImages } from "../components/gpu/compatibility";
import { GPU_AMI_TYPE_NAMES, GPU_BY_INSTANCE_FAMILY, instanceFamily, isGpuAmiType } from "../components/upstream/eks";
import { DCGM_SCRAPED_BY_MONITORING } from "../components/contracts";
import { bool, dnsLabel, integer, oneOf, pattern, pinnedVersion, refined, section, uniqueList, type CheckContext } from "../lib/schema";
import { tritonImageRefs } from "./triton";

const instanceType = pattern(/^[a-z][a-z0-9-]*\.[a-z0-9]+$/, "must be an EC2 instance type such as g5.xlarge");
const knownFamilies = Object.keys(GPU_BY_INSTANCE_FAMILY).join(", ");

export const gpuSection = v.pipe(refined(section({
  /** EKS AMI type of the GPU nodes. @default "AL2023_x86_64_NVIDIA" */
  amiType: v.optional(oneOf(GPU_AMI_TYPE_NAMES), "AL2023_x86_64_NVIDIA"),
  /** EC2 instance types, all with the same GPU model. */
  instanceTypes: uniqueList(instanceType, { min: 1, what: "instance type" }, "must not repeat an instance type"),
  /** Value of the gpu-type node label. @default derived from the instance family (g5 → nvidia-a10g) */
  gpuType: v.optional(dnsLabel),
  /** Node count: min <= desired <= max. */
  scaling: refined(section({ min: integer({ min: 0 }), desired: integer({ min: 0 }), max: integer({ min: 1 }) }), (s, ctx) => {
    if (s.min > s.desired) ctx.addIssue({ path: ["min"], message: `must be <= desired (${s.desired})` });
    if (s.desired > s.max) ctx.addIssue({ path: ["desired"], message: `must be <= max (${s.max})` });
  }),
  /** Volume for container images and model caches, GiB. @default 200 */
  rootVolumeGiB: v.optional(integer({ min: 50, max: 16384 }), 200),
  /** GPU nodes replaced at once during an update. @default 1 */
  maxUnavailable: v.optional(integer({ min: 1 }), 1),
  /** The NVIDIA GPU Operator. */
  operator: section({
    /** Exact gpu-operator chart version (e.g. v25.10.1). */
    version: pinnedVersion,
    /** Namespace of the operator. @default "gpu-operator" */
    namespace: v.optional(dnsLabel, "gpu-operator"),
    /**
     * Have the operator create dcgm-exporter's ServiceMonitor. @default false: the monitoring
     * component scrapes the exporter itself (DCGM_SCRAPED_BY_MONITORING); two scrapes double every GPU series.
     */
    serviceMonitor: v.optional(bool(), !DCGM_SCRAPED_BY_MONITORING),
  }),
}), (g, ctx) => {
    // One GPU model per group: Triton selects nodes by the gpu-type label, so a mislabelled
    // node runs a model built for another GPU (TensorRT plans are GPU-specific).
    const gpus = new Set<string>();
    g.instanceTypes.forEach((t, i) => {
      const gpu = GPU_BY_INSTANCE_FAMILY[instanceFamily(t)];
      if (gpu) gpus.add(gpu);
      else if (g.gpuType === undefined) {
        ctx.addIssue({
          path: ["instanceTypes", i],
          message: `is not an NVIDIA GPU instance family this stack knows (${knownFamilies}); set gpu.gpuType to label it`,
        });
      }
    });
    if (gpus.size > 1) {
      ctx.addIssue({ path: ["instanceTypes"], message: `must all have the same GPU model (one gpu-type label per node group), got ${[...gpus].join(", ")}` });
    } else if (gpus.size === 1 && g.gpuType !== undefined && !gpus.has(g.gpuType)) {
      ctx.addIssue({ path: ["gpuType"], message: `must match the instance types' GPU (${[...gpus][0]})` });
    }
  }), v.transform((g) => ({ ...g, gpuType: g.gpuType ?? GPU_BY_INSTANCE_FAMILY[instanceFamily(g.instanceTypes[0])] })));

/** Rules that read more than the gpu section. */
export function gpuCrossChecks(
  cfg: { environment?: unknown; cluster?: { zones?: unknown }; gpu?: { amiType?: unknown; maxUnavailable?: unknown; scaling?: { min?: unknown } }; triton?: unknown },
  ctx: CheckContext,
): void {
  const gpu = cfg.gpu;
  if (!gpu) return;
  if (cfg.environment === "prod" && typeof gpu.maxUnavailable === "number" && gpu.maxUnavailable > 1) {
    ctx.addIssue({ path: ["gpu", "maxUnavailable"], message: "must be 1 in prod (an update never takes more than one GPU node out at a time)" });
  }
  const zones = Array.isArray(cfg.cluster?.zones) ? cfg.cluster.zones.length : 0;
  if (cfg.environment === "prod" && typeof gpu.scaling?.min === "number" && gpu.scaling.min < zones) {
    ctx.addIssue({ path: ["gpu", "scaling", "min"], message: `must be at least the number of cluster.zones (${zones}) in prod, so losing a zone leaves GPU capacity` });
  }
  if (isGpuAmiType(gpu.amiType)) {
    // Every image the serving groups run, primary and canary (config/triton.ts owns their shape).
    const images = tritonImageRefs(cfg.triton);
    for (const p of checkTritonImages(images.map((x) => x.image), gpu.amiType)) {
      ctx.addIssue({ path: images[p.index].path, message: `is incompatible with gpu.amiType: ${p.message}` });
    }
  }
}
