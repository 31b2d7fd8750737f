// Rules the Envoy gateway makes enforceable: mirroring stays within the stack's cap, and
// Envoy's admin interface is never reachable from the network.
import { isIP } from "node:net";
import { GATEWAY_POD_LABELS } from "../../components/contracts";
import { ENVOY_ADMIN, ENVOY_CONFIG_FILE } from "../../components/gateway/envoy-config";
import { ADMIN_PATHS, findMirrorPolicies, fromJson, mirroredPercent } from "../../components/upstream/envoy";
import { parseEmbeddedOnce, reportAt, type Rule } from "./util";
import { CONFIG_MAP, SERVICE } from "./types";

const EXPOSABLE_ADMIN_PATHS: string[] = [ADMIN_PATHS.prometheusStats, ADMIN_PATHS.ready];
/** Property path of the Envoy bootstrap inside the ConfigMap; paths into the bootstrap continue it. */
export const ENVOY_DATA_PATH = `data["${ENVOY_CONFIG_FILE}"]`;

/** The parsed Envoy bootstrap of a ConfigMap, or undefined when it carries none (or no object). Throws on bad JSON. */
export function envoyConfigOf(type: string, props: Record<string, any>): Record<string, any> | undefined {
  if (type !== CONFIG_MAP) return undefined;
  const text = props.data?.[ENVOY_CONFIG_FILE];
  if (typeof text !== "string") return undefined;
  const parsed = parseEmbeddedOnce(text, fromJson);
  return parsed && typeof parsed === "object" ? (parsed as Record<string, any>) : undefined;
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  if (address === "localhost" || address === "::1") return true;
  return isIP(address) === 4 && address.startsWith("127.");
}

/** Names of clusters whose endpoints are the admin interface (loopback:admin port). */
function adminClusters(config: Record<string, any>, adminPort: number | undefined): Set<string> {
  const out = new Set<string>();
  for (const c of config.static_resources?.clusters ?? []) {
    for (const group of c.load_assignment?.endpoints ?? []) {
      for (const lb of group.lb_endpoints ?? []) {
        const sa = lb.endpoint?.address?.socket_address;
        if (sa && isLoopback(sa.address) && sa.port_value === adminPort) out.add(c.name);
      }
    }
  }
  return out;
}

function routesOf(listener: Record<string, any>): { path: string; route: Record<string, any> }[] {
  const out: { path: string; route: Record<string, any> }[] = [];
  (listener.filter_chains ?? []).forEach((fc: Record<string, any>, i: number) =>
    (fc.filters ?? []).forEach((f: Record<string, any>, j: number) =>
      (f.typed_config?.route_config?.virtual_hosts ?? []).forEach((vh: Record<string, any>, k: number) =>
        (vh.routes ?? []).forEach((route: Record<string, any>, l: number) =>
          out.push({ path: `filter_chains[${i}].filters[${j}].typed_config.route_config.virtual_hosts[${k}].routes[${l}]`, route }),
        ),
      ),
    ),
  );
  return out;
}

export const gatewayRules: Rule[] = [
  {
    name: "gateway-mirror-percent-within-max",
    domain: "gateway",
    description: "Every request_mirror_policies entry in an Envoy config mirrors at most the stack's maximum percentage (maxPercent).",
    prevents: "A canary flooded with a copy of production traffic (GPU saturation, cost) because a mirror fraction was set or typed too high, or left without runtime_fraction (= 100 %).",
    remediationSteps: "Lower triton-platform:gateway.mirrorPercent, or raise maxPercent for the stack in policies/config/<stack>.json if the canary is sized for it.",
    enforcementLevel: "advisory",
    configSchema: { properties: { maxPercent: { type: "number", minimum: 0, maximum: 100, default: 100 } } },
    validateResource: (args, report) => {
      let config: Record<string, any> | undefined;
      try {
        config = envoyConfigOf(args.type, args.props);
      } catch (e) {
        reportAt(
          report,
          { path: ENVOY_DATA_PATH, value: String(args.props.data?.[ENVOY_CONFIG_FILE]).slice(0, 200) },
          `ConfigMap ${args.props.metadata?.name ?? args.name}: ${ENVOY_DATA_PATH} is not valid JSON (${(e as Error).message.split("\n")[0]})`,
        );
        return;
      }
      if (!config) return;
      const { maxPercent } = args.getConfig<{ maxPercent: number }>();
      // One report per mirror target and percentage (a group has several routes), naming the first path.
      const over = new Map<string, { path: string; count: number; value: unknown }>();
      for (const { path, policy } of findMirrorPolicies(config)) {
        const pct = mirroredPercent(policy);
        if (pct <= maxPercent) continue;
        const key = `${pct} % to ${policy.cluster}`;
        const seen = over.get(key);
        if (seen) seen.count++;
        else over.set(key, { path: `${ENVOY_DATA_PATH}${path.replace(/^\$/, "")}`, count: 1, value: policy.runtime_fraction?.default_value ?? null });
      }
      for (const [what, { path, count, value }] of over) {
        reportAt(
          report,
          { path, value },
          `ConfigMap ${args.props.metadata?.name ?? args.name}: ${path}${count > 1 ? ` (and ${count - 1} more route(s))` : ""} mirrors ${what} (maximum for this stack: ${maxPercent} %)`,
        );
      }
    },
  },
  {
    name: "gateway-envoy-admin-not-exposed",
    domain: "gateway",
    description: `Envoy's admin interface listens on loopback only; listeners forward to it only the exact paths ${EXPOSABLE_ADMIN_PATHS.join(" and ")}; no Service targets the admin port.`,
    prevents: "Anyone who reaches the gateway draining its listeners, changing runtime values (mirror fractions), dumping config or stopping Envoy through /quitquitquit.",
    remediationSteps: "Keep admin.address on 127.0.0.1 and expose stats only through the dedicated metrics listener (components/gateway/envoy-config.ts).",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (args.type === SERVICE) {
        const selector: Record<string, string> = args.props.spec?.selector ?? {};
        const targetsGateway = Object.entries(GATEWAY_POD_LABELS).every(([k, v]) => selector[k] === v);
        if (!targetsGateway) return;
        (args.props.spec?.ports ?? []).forEach((p: Record<string, any>, i: number) => {
          const target = p.targetPort ?? p.port;
          if (target === ENVOY_ADMIN.port || target === String(ENVOY_ADMIN.port)) {
            reportAt(report, { path: `spec.ports[${i}].targetPort`, value: target }, `Service ${args.props.metadata?.name ?? args.name}: spec.ports[${i}].targetPort targets Envoy's admin port ${ENVOY_ADMIN.port}`);
          }
        });
        return;
      }
      let config: Record<string, any> | undefined;
      try {
        config = envoyConfigOf(args.type, args.props);
      } catch {
        return; // reported by gateway-mirror-percent-within-max
      }
      if (!config) return;
      const where = `ConfigMap ${args.props.metadata?.name ?? args.name}: ${ENVOY_DATA_PATH}`;
      const sa = config.admin?.address?.socket_address;
      if (sa && !isLoopback(sa.address)) {
        reportAt(report, { path: `${ENVOY_DATA_PATH}.admin.address.socket_address.address`, value: sa.address }, `${where}.admin.address.socket_address.address is ${JSON.stringify(sa.address)}, not a loopback address`);
      }
      const admin = adminClusters(config, sa?.port_value);
      (config.static_resources?.listeners ?? []).forEach((l: Record<string, any>, i: number) => {
        for (const { path, route } of routesOf(l)) {
          if (!admin.has(route.route?.cluster)) continue;
          const exact: string | undefined = route.match?.path;
          if (exact === undefined || !EXPOSABLE_ADMIN_PATHS.includes(exact)) {
            reportAt(
              report,
              { path: `${ENVOY_DATA_PATH}.static_resources.listeners[${i}].${path}.match`, value: route.match ?? null },
              `${where}.static_resources.listeners[${i}].${path}.match ${JSON.stringify(route.match ?? {})} forwards to the admin cluster ${route.route.cluster}; only exact paths ${EXPOSABLE_ADMIN_PATHS.join(", ")} may`,
            );
          }
        }
      });
    },
  },
];
