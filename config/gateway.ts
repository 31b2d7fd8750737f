// The `gateway` section: the Envoy gateway in front of the serving groups and who may
// reach it. Defaults that belong to the component (image tag, timeouts) are applied by
// resolveEnvoyGatewayArgs; the stack file only states what differs per stack.
import * as v from "valibot";
import { hasHostBits, isWorldOpen, parseCidr } from "../lib/cidr";
import { dnsLabel, integer, list, number, oneOf, pattern, quantity, section, uniqueList, type CheckContext } from "../lib/schema";

const CIDR_RULE = "must be a CIDR such as 10.0.0.0/16 or 2001:db8::/32 with no host bits set";

/** A client CIDR: IPv4 or IPv6, network address only, never world-open. */
export const clientCidr = v.pipe(
  v.string(CIDR_RULE),
  v.check((s) => {
    const c = parseCidr(s);
    return c !== undefined && !hasHostBits(c);
  }, CIDR_RULE),
  // The gateway listens on the Triton ports 8000/8001: a /0 here would open them to the world.
  v.check((s) => !isWorldOpen(s), "must not be a world-open range (/0); list the client networks"),
);

/** A percentage with at most 4 decimal places (Envoy's finest fraction is 1/MILLION = 0.0001 %). */
const mirrorPercent = v.pipe(number({ min: 0, max: 100 }), v.check((p) => Math.abs(Math.round(p * 1e4) - p * 1e4) < 1e-6, "must have at most 4 decimal places (Envoy's finest mirror fraction is 0.0001 %)"));

export const gatewaySection = section({
  /** Serving group for requests without the x-triton-group header. @default the first of triton.groups */
  defaultGroup: v.optional(dnsLabel),
  /** Percentage of each group's requests shadowed to its canary (0 disables). @default 0 */
  mirrorPercent: v.optional(mirrorPercent, 0),
  /** Networks allowed to reach the gateway's load balancer; the load balancer exists only when this is set. @default [] */
  clientCidrs: v.optional(uniqueList(clientCidr, {}, "must not repeat a CIDR"), []),
  /** Namespaces whose pods may call the gateway inside the cluster. @default [] */
  clientNamespaces: v.optional(list(dnsLabel), []),
  /** Envoy replicas. @default 2 */
  replicas: v.optional(integer({ min: 1, max: 50 })),
  /** Zone spread of the replicas: required (DoNotSchedule) or preferred (ScheduleAnyway). @default "preferred" */
  zoneSpread: v.optional(oneOf(["required", "preferred"] as const)),
  /** CPU request per replica (also sets Envoy's worker count). @default "500m" */
  cpu: v.optional(quantity),
  /** Memory request and limit per replica. @default "256Mi" */
  memory: v.optional(quantity),
  /** envoyproxy/envoy release tag. @default the tag pinned in components/upstream/envoy.ts */
  imageTag: v.optional(pattern(/^v\d+\.\d+\.\d+$/, "must be an exact Envoy release tag such as v1.37.1 (no 'latest', no -dev)")),
  /** internal or internet-facing NLB. @default "internal" */
  loadBalancerScheme: v.optional(oneOf(["internal", "internet-facing"] as const)),
  /** Upper bound for one inference call, in seconds. @default 60 */
  inferTimeoutSeconds: v.optional(integer({ min: 1, max: 3600 })),
  /** Circuit breaker: concurrent requests per upstream cluster. @default 1024 */
  maxRequests: v.optional(integer({ min: 1 })),
});

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
