// Rules of the `gpu` section that read other sections (environment, cluster.zones, the Triton
// images of the serving groups). The section itself, its defaults and its own rules are the
// GPU components' schema (components/gpu/schema.ts).
import { checkTritonImages } from "../components/gpu/compatibility";
import { isGpuAmiType } from "../components/upstream/eks";
import type { CheckContext } from "../lib/schema";
import { tritonImageRefs } from "./triton";

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
