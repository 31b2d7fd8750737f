// Rules of the `monitoring` section that read other sections.
import type { CheckContext } from "../lib/schema";
import { DCGM_SCRAPED_BY_MONITORING } from "../components/contracts";

/**
 * The DCGM exporter is scraped once: by the monitoring component, or by the GPU Operator's
 * ServiceMonitor. The default (off) is components/gpu/schema.ts's; this refuses turning it on in
 * a stack that also runs the monitoring component. A direct GpuOperator caller without it may.
 */
export function monitoringCrossChecks(cfg: { gpu?: { operator?: { serviceMonitor?: unknown } } }, ctx: CheckContext): void {
  if (DCGM_SCRAPED_BY_MONITORING && cfg.gpu?.operator?.serviceMonitor === true) {
    ctx.addIssue({
      path: ["gpu", "operator", "serviceMonitor"],
      message:
        "must be false: the monitoring component already scrapes dcgm-exporter (job dcgm-exporter, keeping the GPU pod's namespace/pod labels); a second scrape doubles every GPU series and alert",
    });
  }
}
