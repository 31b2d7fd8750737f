// The `gateway` section's rules that read other sections: prod must say who its clients are,
// and a default group must be one of triton.groups. The section itself (keys, defaults,
// rules, docs) is components/gateway/schema.ts.
import type { CheckContext } from "../lib/schema";

/**
 * Cross-field rules: prod must say who its clients are (no world-open default to fall back
 * on), and a default group must be one of the serving groups.
 */
export function gatewayCrossChecks(
  cfg: { environment: string; triton?: { groups?: { name: string }[] }; gateway?: { clientCidrs?: string[]; defaultGroup?: string } },
  ctx: CheckContext,
): void {
  if (cfg.environment === "prod" && (cfg.gateway?.clientCidrs ?? []).length === 0) {
    ctx.addIssue({
      path: ["gateway", "clientCidrs"],
      message: "must list at least one client CIDR in prod (the gateway load balancer has no world-open default)",
    });
  }
  const groups = (cfg.triton?.groups ?? []).map((g) => g.name);
  const dg = cfg.gateway?.defaultGroup;
  if (dg !== undefined && !groups.includes(dg)) {
    ctx.addIssue({ path: ["gateway", "defaultGroup"], message: `must name one of triton.groups (${groups.join(", ")})` });
  }
}
