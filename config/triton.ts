// Rules between the `triton` section and other sections. The section itself (keys, defaults,
// rules between a group's keys, documentation) belongs to the component:
// components/triton/schema.ts `tritonSection`, which config/schema.ts composes.
import type { CheckContext } from "../lib/schema";
import { canaryImageRef, imageRef, type TritonGroupSettings } from "../components/triton/schema";

type ImageRefs = { path: (string | number)[]; image: string }[];

/**
 * Image references of every serving group (primary and canary), with the key each comes from.
 * Takes the parsed `triton` section: cross-section checks run only once every section is
 * well-typed, so the schema has filled in each primary's repository.
 */
export function tritonImageRefs(triton: unknown): ImageRefs {
  const groups = (triton as { groups?: readonly TritonGroupSettings[] } | undefined)?.groups ?? [];
  return groups.flatMap((g, i): ImageRefs => {
    const canary = canaryImageRef(g);
    return [
      { path: ["triton", "groups", i, "image"], image: imageRef(g.image) },
      ...(canary ? [{ path: ["triton", "groups", i, "canary", "image"], image: canary }] : []),
    ];
  });
}

/** Rules between the serving groups and other sections; each names the group's key. */
export function tritonCrossChecks(cfg: { triton?: { groups?: { gpu?: { type?: string } }[] }; gpu?: { gpuType?: string } }, ctx: CheckContext): void {
  const nodeGpu = cfg.gpu?.gpuType;
  if (!nodeGpu) return;
  cfg.triton?.groups?.forEach((g, i) => {
    if (g.gpu?.type !== undefined && g.gpu.type !== nodeGpu) {
      ctx.addIssue({
        path: ["triton", "groups", i, "gpu", "type"],
        message: `must be the GPU node group's gpu-type (${nodeGpu}): no node carries that label, so the pods would stay Pending`,
      });
    }
  });
}
