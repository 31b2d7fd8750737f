// Rules the Envoy gateway makes enforceable: mirroring and the canary's share of real traffic stay within the stack's caps, Envoy's
// admin interface is never reachable from the network, every canary receives mirrored
// traffic, and every cluster a route names is defined.
// The Envoy bootstrap is JSON inside a ConfigMap, read as parsed JSON: its schema is Envoy's
// protos (test/envoy-bootstrap-matches-protos.test.ts walks the generated one against them), not an SDK type.
import { isIP } from "node:net";
import type { PolicyResource } from "@pulumi/policy";
import { GATEWAY_POD_LABELS } from "../../components/contracts";
import { ENVOY_ADMIN, ENVOY_CONFIG_FILE } from "../../components/gateway/envoy-config";
import { shippedBootstrapText } from "../../components/gateway/builders";
import { ADMIN_PATHS, findMirrorPolicies, fromJson, mirroredPercent, percentOf } from "../../components/upstream/envoy";
import { containersOf, metadataOf, podSpecsOf, podTemplateLabelsOf, propsOf } from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Resource, type Rule } from "./rule";
import { CONFIG_MAP, SERVICE } from "./types";
import { FLAGS } from "../../components/upstream/tritonserver";
import { isTritonContainer, isWorkload, namespaceOf, objectNameOf, parseEmbeddedOnce, servicesFor, show, tritonStatefulSets, tritonWorkloads } from "./util";

const EXPOSABLE_ADMIN_PATHS: string[] = [ADMIN_PATHS.prometheusStats, ADMIN_PATHS.ready];
/** Property path of the Envoy bootstrap inside the ConfigMap; paths into the bootstrap continue it. */
export const ENVOY_DATA_PATH = `data["${ENVOY_CONFIG_FILE}"]`;

/** An Envoy bootstrap a ConfigMap ships, or undefined when it ships none or an unreadable one (gateway-mirror-percent-within-max reports that). */
export function readableEnvoyConfig(r: Pick<Resource, "type" | "props">): Record<string, any> | undefined {
  try {
    return envoyConfigOf(r);
  } catch {
    return undefined;
  }
}

/**
 * The parsed Envoy bootstrap of a ConfigMap, plain (data["envoy.json"]) or packed (gzip in
 * binaryData["envoy.json.gz"]), or undefined when it carries none (or no object). Throws on bad
 * JSON or a packed value that is not gzip. Findings name paths inside it as data["envoy.json"]... in both forms.
 */
export function envoyConfigOf(r: Pick<Resource, "type" | "props">): Record<string, any> | undefined {
  const text = shippedBootstrapText(propsOf(r, CONFIG_MAP));
  if (typeof text !== "string") return undefined;
  const parsed = parseEmbeddedOnce(text, fromJson);
  return parsed && typeof parsed === "object" ? (parsed as Record<string, any>) : undefined;
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  if (address === "localhost" || address === "::1") return true;
  return isIP(address) === 4 && address.startsWith("127.");
}

/**
 * Names of clusters that can reach the admin interface: an endpoint at the admin address itself
 * (a pipe path, or the socket address), at a loopback or wildcard address on the admin port, or a
 * cluster whose destination the request picks (ORIGINAL_DST, dynamic forward proxy).
 */
function adminClusters(config: Record<string, any>, adminAddress: Record<string, any> | undefined): Set<string> {
  const out = new Set<string>();
  const port = adminAddress?.socket_address?.port_value;
  const pipe = adminAddress?.pipe?.path;
  const any = (a: string | undefined) => a === "0.0.0.0" || a === "::" || a === adminAddress?.socket_address?.address;
  for (const c of config.static_resources?.clusters ?? []) {
    if (c.type === "ORIGINAL_DST" || /dynamic_forward_proxy/.test(String(c.cluster_type?.name ?? c.cluster_type?.typed_config?.["@type"] ?? "")))
      out.add(c.name);
    for (const group of c.load_assignment?.endpoints ?? []) {
      for (const lb of group.lb_endpoints ?? []) {
        const addr = lb.endpoint?.address ?? {};
        const sa = addr.socket_address;
        if (pipe !== undefined && addr.pipe?.path === pipe) out.add(c.name);
        if (sa && (isLoopback(sa.address) || any(sa.address)) && Number(sa.port_value) === Number(port)) out.add(c.name);
      }
    }
  }
  return out;
}

const mirrorSettings = {
  maxPercent: { type: "number", minimum: 0, maximum: 100, default: 25, description: "Largest percentage of a route's traffic a mirror may copy to a canary." },
} as const;

export const gatewayMirrorPercentWithinMax = resourceRule<{ maxPercent: number }>({
  name: "gateway-mirror-percent-within-max",
  domain: "gateway",
  configKey: "gateway.mirrorPercent",
  description: "Every request_mirror_policies entry in an Envoy config mirrors at most the stack's maximum percentage (maxPercent).",
  prevents:
    "A canary flooded with a copy of production traffic (GPU saturation, cost) because a mirror fraction was set or typed too high, or " +
    "left without runtime_fraction (= 100 %).",
  remediationSteps:
    `Lower triton-platform:gateway.mirrorPercent to at most maxPercent (default ${mirrorSettings.maxPercent.default}), ` +
    "or raise maxPercent in policies/config/<stack>.json if the stack's canary is sized for it.",
  configSchema: { properties: mirrorSettings },
  check: (r, { maxPercent }) => {
    let config: Record<string, any> | undefined;
    const name = metadataOf(r).name ?? r.name;
    try {
      config = envoyConfigOf(r);
    } catch (e) {
      const value = String(propsOf(r, CONFIG_MAP)?.data?.[ENVOY_CONFIG_FILE]).slice(0, 200);
      return [{ path: ENVOY_DATA_PATH, value, message: `ConfigMap ${name}: ${ENVOY_DATA_PATH} is not valid JSON (${(e as Error).message.split("\n")[0]})` }];
    }
    if (!config) return NONE;
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
    return [...over].map(([what, { path, count, value }]) => ({
      path,
      value,
      message: `ConfigMap ${name}: ${path}${count > 1 ? ` (and ${count - 1} more route(s))` : ""} mirrors ${what} (maximum for this stack: ${maxPercent} %)`,
    }));
  },
});

const canaryTrafficSettings = {
  maxPercent: {
    type: "number",
    minimum: 0,
    maximum: 100,
    default: 10,
    description: "Largest share of a route's real traffic a canary may serve (canary.trafficPercent).",
  },
} as const;

/** Every route of a listener's HTTP connection managers, with its path inside the listener. */
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

/** Every route that takes a share of requests (runtime_fraction) to a canary cluster, with its path and share. */
export function canarySplits(config: Record<string, any>): { path: string; cluster: string; percent: number }[] {
  const out: { path: string; cluster: string; percent: number }[] = [];
  (config.static_resources?.listeners ?? []).forEach((l: Record<string, any>, i: number) => {
    for (const { path, route } of routesOf(l)) {
      const share = route.match?.runtime_fraction?.default_value;
      const cluster = route.route?.cluster;
      if (!share || typeof cluster !== "string" || !/-canary-(http|grpc)$/.test(cluster)) continue;
      out.push({
        path: `${ENVOY_DATA_PATH}.static_resources.listeners[${i}].${path}.match.runtime_fraction.default_value`,
        cluster,
        percent: percentOf(share),
      });
    }
  });
  return out;
}

export const gatewayCanaryTrafficWithinMax = resourceRule<{ maxPercent: number }>({
  name: "gateway-canary-traffic-within-max",
  domain: "gateway",
  configKey: "triton.groups[name={group}].canary.trafficPercent",
  description:
    "Every Envoy route that sends a share of real requests to a canary cluster (match.runtime_fraction) sends at most the stack's maximum percentage (maxPercent).",
  prevents:
    "An untested canary answering a large share of real requests (errors and latency go to clients, not a shadow) because " +
    "canary.trafficPercent was set for a later stage, or typed too high.",
  remediationSteps:
    `Lower triton-platform:triton.groups[*].canary.trafficPercent to at most maxPercent (default ${canaryTrafficSettings.maxPercent.default}), ` +
    "or raise maxPercent in policies/config/<stack>.json for the environment's stage; promotion is the primary's image change, not 100 % here.",
  configSchema: { properties: canaryTrafficSettings },
  check: (r, { maxPercent }) => {
    const config = readableEnvoyConfig(r);
    if (!config) return NONE;
    const name = metadataOf(r).name ?? r.name;
    const over = new Map<string, { path: string; count: number }>();
    for (const { path, cluster, percent } of canarySplits(config)) {
      if (percent <= maxPercent) continue;
      const key = `${percent} % to ${cluster}`;
      const seen = over.get(key);
      if (seen) seen.count++;
      else over.set(key, { path, count: 1 });
    }
    return [...over].map(([what, { path, count }]) => ({
      path,
      value: what,
      message: `ConfigMap ${name}: ${path}${count > 1 ? ` (and ${count - 1} more route(s))` : ""} sends ${what} of real traffic (maximum for this stack: ${maxPercent} %)`,
    }));
  },
});

export const gatewayEnvoyAdminNotExposed = resourceRule({
  name: "gateway-envoy-admin-not-exposed",
  domain: "gateway",
  description:
    `Envoy's admin interface listens on loopback (or a pipe) only; no listener reaches a cluster whose endpoint is the admin address in any form (tcp_proxy, ` +
    `weighted_clusters, mirrors, cluster_header, a rewritten path) except routes of the exact paths ${EXPOSABLE_ADMIN_PATHS.join(" and ")} ` +
    "(Services: gateway-envoy-admin-no-service).",
  prevents:
    "Anyone who reaches the gateway draining its listeners, changing runtime values (mirror fractions), dumping config or stopping Envoy " +
    "through /quitquitquit.",
  remediationSteps: "Keep admin.address on 127.0.0.1 and expose stats only through the dedicated metrics listener (components/gateway/envoy-config.ts).",
  check: (r) => {
    const name = metadataOf(r).name ?? r.name;
    const config = readableEnvoyConfig(r);
    if (!config) return NONE;
    const out: Finding[] = [];
    const where = `ConfigMap ${name}: ${ENVOY_DATA_PATH}`;
    const sa = config.admin?.address?.socket_address;
    if (sa && !isLoopback(sa.address)) {
      const message = `${where}.admin.address.socket_address.address is ${JSON.stringify(sa.address)}, not a loopback address`;
      out.push({ path: `${ENVOY_DATA_PATH}.admin.address.socket_address.address`, value: sa.address, message });
    }
    const admin = adminClusters(config, config.admin?.address);
    (config.static_resources?.listeners ?? []).forEach((l: Record<string, any>, i: number) => {
      for (const ref of adminReferences(l, admin)) {
        const path = `${ENVOY_DATA_PATH}.static_resources.listeners[${i}].${ref.path}`;
        out.push({ path, value: ref.value, message: `${where}.static_resources.listeners[${i}].${ref.path} is ${show(ref.value)}: ${ref.why}` });
      }
    });
    return out;
  },
});

/**
 * Every way a listener reaches an admin cluster other than one allowed route: a tcp_proxy (cluster or
 * weighted_clusters), a route's weighted_clusters, a mirror, a cluster_header (the client picks the
 * cluster), or a route.cluster whose match is not an exact allowed path or that rewrites the path
 * (prefix_rewrite, regex_rewrite, path_rewrite_policy). Found by walking the whole listener, so
 * every filter form is covered, not only http_connection_manager routes.
 */
function adminReferences(listener: Record<string, any>, admin: Set<string>): { path: string; value: unknown; why: string }[] {
  const out: { path: string; value: unknown; why: string }[] = [];
  if (admin.size === 0) return out;
  // Every form below names an admin cluster as a string value, or is a cluster_header: a listener
  // whose JSON holds neither cannot reach the admin, so the (costly) walk is skipped for it.
  const text = JSON.stringify([listener.filter_chains, listener.default_filter_chain]);
  if (!text.includes('"cluster_header"') && ![...admin].some((name) => text.includes(JSON.stringify(name)))) return out;
  const walk = (v: unknown, at: string, route: Record<string, any> | undefined): void => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}[${i}]`, route));
    if (v === null || typeof v !== "object") return;
    const o = v as Record<string, any>;
    const isRoute = /\.routes\[\d+\]$/.test(at);
    const here = isRoute ? o : route;
    if (typeof o.cluster === "string" && admin.has(o.cluster)) {
      const inRouteAction = here !== undefined && at.endsWith(".route") && here.route === o;
      const exact: unknown = here?.match?.path;
      const rewrite = ["prefix_rewrite", "regex_rewrite", "path_rewrite_policy"].find((k) => o[k] !== undefined);
      if (!inRouteAction)
        out.push({
          path: `${at}.cluster`.replace(/^\./, ""),
          value: o.cluster,
          why: `forwards to the admin cluster ${o.cluster} (not a route with an exact allowed path)`,
        });
      else if (
        typeof exact !== "string" ||
        !EXPOSABLE_ADMIN_PATHS.includes(exact) ||
        Object.keys(here?.match ?? {}).some((k) => !["path", "headers"].includes(k))
      )
        out.push({
          path: `${at.replace(/\.route$/, "")}.match`.replace(/^\./, ""),
          value: here?.match ?? null,
          why: `forwards to the admin cluster ${o.cluster}; only exact paths ${EXPOSABLE_ADMIN_PATHS.join(", ")} may`,
        });
      else if (rewrite)
        out.push({ path: `${at}.${rewrite}`.replace(/^\./, ""), value: o[rewrite], why: `rewrites the path of a route to the admin cluster ${o.cluster}` });
    }
    if (o.cluster_header !== undefined)
      out.push({
        path: `${at}.cluster_header`.replace(/^\./, ""),
        value: o.cluster_header,
        why: `lets the client pick any cluster, the admin cluster ${[...admin].join(", ")} included`,
      });
    for (const [k, x] of Object.entries(o)) {
      if (k === "weighted_clusters") {
        (x?.clusters ?? []).forEach((w: Record<string, any>, j: number) => {
          if (admin.has(w?.name))
            out.push({
              path: `${at}.weighted_clusters.clusters[${j}].name`.replace(/^\./, ""),
              value: w.name,
              why: `sends a weighted share to the admin cluster ${w.name}`,
            });
        });
        continue;
      }
      if (k === "request_mirror_policies") {
        (Array.isArray(x) ? x : []).forEach((m: Record<string, any>, j: number) => {
          if (admin.has(m?.cluster))
            out.push({
              path: `${at}.request_mirror_policies[${j}].cluster`.replace(/^\./, ""),
              value: m.cluster,
              why: `mirrors requests to the admin cluster ${m.cluster}`,
            });
        });
        continue;
      }
      walk(x, `${at}.${k}`, here);
    }
  };
  walk(listener.filter_chains ?? [], "filter_chains", undefined);
  walk(listener.default_filter_chain ?? {}, "default_filter_chain", undefined);
  return out;
}

// ---- Envoy bootstraps across the stack ------------------------------------------------------

interface EnvoyConfig {
  cm: PolicyResource;
  config: Record<string, any>;
}

/** Every ConfigMap that carries a parseable Envoy bootstrap (unparseable ones are gateway-mirror-percent-within-max's to report). */
function envoyConfigs(resources: readonly PolicyResource[]): EnvoyConfig[] {
  const out: EnvoyConfig[] = [];
  for (const cm of resources) {
    try {
      const config = envoyConfigOf(cm);
      if (config) out.push({ cm, config });
    } catch {
      // reported elsewhere
    }
  }
  return out;
}

/** Does an Envoy cluster's endpoint address name this Service? (`svc.ns[.svc[.cluster.local]]`, or `svc` from the same namespace) */
function clusterReaches(cluster: Record<string, any>, svc: PolicyResource, fromNs: string): boolean {
  for (const group of cluster.load_assignment?.endpoints ?? []) {
    for (const lb of group.lb_endpoints ?? []) {
      const address: string | undefined = lb.endpoint?.address?.socket_address?.address;
      if (!address) continue;
      const [host, ns] = address.split(".");
      if (host === objectNameOf(svc) && (ns === namespaceOf(svc) || (ns === undefined && fromNs === namespaceOf(svc)))) return true;
    }
  }
  return false;
}

export const gatewayCanaryMirrored = stackRule({
  name: "gateway-canary-mirrored",
  domain: "gateway",
  configKey: "gateway.mirrorPercent",
  description:
    "Every Triton canary StatefulSet (pods labelled track=canary) receives mirrored traffic: an Envoy gateway route mirrors a " +
    "non-zero fraction to a cluster whose endpoint is a Service of the canary's pods.",
  prevents: "A canary that serves nothing: it looks healthy because it is never asked, and is promoted without having seen one production request.",
  remediationSteps:
    "List the group in the gateway's servingGroups with canary: true and keep triton-platform:gateway.mirrorPercent above 0 " +
    "(components/gateway/envoy-config.ts mirror policies).",
  check: (resources) => {
    const gateways = envoyConfigs(resources);
    const canaries = tritonStatefulSets(resources).filter((s) => podTemplateLabelsOf(s).track === "canary");
    const out: Finding[] = [];
    for (const canary of canaries) {
      const where = `${namespaceOf(canary)}/${objectNameOf(canary)}`;
      const services = servicesFor(resources, namespaceOf(canary), podTemplateLabelsOf(canary));
      const mirrored = gateways.some(({ cm, config }) => {
        const clusters: Record<string, any>[] = config.static_resources?.clusters ?? [];
        return findMirrorPolicies(config).some(({ policy }) => {
          if (mirroredPercent(policy) <= 0) return false;
          const target = clusters.find((c) => c.name === policy.cluster);
          return target !== undefined && services.some((svc) => clusterReaches(target, svc, namespaceOf(cm)));
        });
      });
      if (mirrored) continue;
      if (gateways.length === 0) {
        const name = objectNameOf(canary);
        const message = `StatefulSet ${where}: metadata.name ${JSON.stringify(name)} is a canary but the stack has no Envoy gateway to mirror traffic to it`;
        out.push({ path: "metadata.name", value: name, message, urn: canary.urn });
        continue;
      }
      const { cm, config } = gateways[0];
      const targets = [...new Set(findMirrorPolicies(config).map((m) => m.policy.cluster))];
      const path = `${ENVOY_DATA_PATH}..request_mirror_policies[*].cluster`;
      out.push({
        path,
        value: targets,
        message:
          `ConfigMap ${objectNameOf(cm)}: ${path} is ${JSON.stringify(targets)}; none mirrors (above 0 %) to a cluster reaching canary StatefulSet ${where} ` +
          `through its Services ${JSON.stringify(services.map(objectNameOf))}`,
        urn: cm.urn,
      });
    }
    return out;
  },
});

export const gatewayClustersDefined = stackRule({
  name: "gateway-clusters-defined",
  domain: "gateway",
  configKey: "gateway.defaultGroup",
  description:
    "Every cluster an Envoy route sends to (route.cluster) or mirrors to (request_mirror_policies[].cluster) is defined in the " +
    "bootstrap's static_resources.clusters.",
  prevents:
    "Envoy rejecting the whole bootstrap at start (static route configs validate their clusters): new gateway pods crash-loop and a " +
    "rollout stalls, or a canary silently gets nothing.",
  remediationSteps:
    "Build routes and mirrors from the same serving-group list as the clusters (components/gateway/envoy-config.ts " +
    "upstreamClusterName); rename both together.",
  check: (resources) => {
    const out: Finding[] = [];
    for (const { cm, config } of envoyConfigs(resources)) {
      const defined = new Set<string>((config.static_resources?.clusters ?? []).map((c: Record<string, any>) => c.name));
      const refs: { path: string; cluster: unknown }[] = findMirrorPolicies(config).map(({ path, policy }) => ({
        path: `${path.replace(/^\$/, "")}.cluster`,
        cluster: policy.cluster,
      }));
      const walk = (v: unknown, at: string): void => {
        if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}[${i}]`));
        if (v === null || typeof v !== "object") return;
        const o = v as Record<string, any>;
        if (at.endsWith("].route") && o.match === undefined) {
          if (o.cluster !== undefined) refs.push({ path: `${at}.cluster`, cluster: o.cluster });
          (o.weighted_clusters?.clusters ?? []).forEach((w: Record<string, any>, i: number) =>
            refs.push({ path: `${at}.weighted_clusters.clusters[${i}].name`, cluster: w.name }),
          );
        }
        for (const [k, x] of Object.entries(o)) walk(x, `${at}.${k}`);
      };
      walk(config.static_resources?.listeners ?? [], ".static_resources.listeners");
      for (const { path, cluster } of refs) {
        if (typeof cluster === "string" && defined.has(cluster)) continue;
        out.push({
          path: `${ENVOY_DATA_PATH}${path}`,
          value: cluster,
          message: `ConfigMap ${objectNameOf(cm)}: ${ENVOY_DATA_PATH}${path} is ${show(cluster)}, which static_resources.clusters does not define (defined: ${[...defined].join(", ")})`,
          urn: cm.urn,
        });
      }
    }
    return out;
  },
});

/** An Envoy container: its image is an Envoy image (envoyproxy/envoy, envoy-distroless, ...; any registry, tag or digest). */
function isEnvoyImage(image: unknown): boolean {
  const repo = (typeof image === "string" ? image : "").split("@")[0];
  return /^envoy(-[a-z0-9]+)*$/.test(repo.slice(repo.lastIndexOf("/") + 1).split(":")[0]);
}

export const gatewayEnvoyAdminNoService = stackRule({
  name: "gateway-envoy-admin-no-service",
  domain: "gateway",
  description:
    `No Service reaches Envoy's admin port (${ENVOY_ADMIN.port}, or the admin port_value of an Envoy bootstrap of the stack) on the pods it selects ` +
    "(the gateway's, or any pod running an Envoy image): a targetPort by number, by default (the port), or by name, a name resolved as Kubernetes " +
    "does, to the containerPort of that name in each selected pod.",
  prevents:
    "The admin interface published inside the cluster (or beyond, through a LoadBalancer) under a port name: anyone who reaches the Service drains " +
    "the listeners, changes mirror fractions at runtime or stops Envoy through /quitquitquit.",
  remediationSteps:
    "Remove the Service port; expose Envoy's stats only through the dedicated metrics listener and its port (components/gateway: GATEWAY_METRICS).",
  check: (resources) => {
    const adminPorts = new Set<number>([ENVOY_ADMIN.port]);
    for (const r of resources) {
      const config = readableEnvoyConfig(r);
      const port = config?.admin?.address?.socket_address?.port_value;
      if (port !== undefined && Number.isInteger(Number(port))) adminPorts.add(Number(port));
    }
    const envoyPods = resources.flatMap((w) => {
      if (!isWorkload(w)) return [];
      const labels = podTemplateLabelsOf(w);
      const specs = podSpecsOf(w);
      const containers = specs.flatMap(({ spec, path }) => containersOf(spec, path)).map(({ c }) => c);
      const isEnvoy = Object.entries(GATEWAY_POD_LABELS).every(([k, v]) => labels[k] === v) || containers.some((c) => isEnvoyImage(c.image));
      return isEnvoy ? [{ w, labels, ns: namespaceOf(w), containers }] : [];
    });
    const out: Finding[] = [];
    if (envoyPods.length === 0) return out;
    for (const svc of resources) {
      const spec = propsOf(svc, SERVICE)?.spec;
      const selector = spec?.selector ?? {};
      if (!spec || Object.keys(selector).length === 0) continue; // no selector: endpoints are managed by hand, not by pod labels
      const ns = namespaceOf(svc);
      const selected = envoyPods.filter((p) => p.ns === ns && Object.entries(selector).every(([k, v]) => p.labels[k] === v));
      (spec.ports ?? []).forEach((p, i) => {
        const target = p.targetPort ?? p.port;
        for (const pod of selected) {
          // A number (or a numeric string) is the pod port itself; a name is looked up among the pod's container ports.
          const numeric = typeof target === "number" || /^\d+$/.test(String(target));
          const resolved = numeric
            ? Number(target)
            : pod.containers.flatMap((c) => c.ports ?? []).find((cp) => cp?.name === target && (cp.protocol ?? "TCP") === (p.protocol ?? "TCP"))?.containerPort;
          if (resolved === undefined || !adminPorts.has(Number(resolved))) continue;
          const at = p.targetPort === undefined ? `spec.ports[${i}].port` : `spec.ports[${i}].targetPort`;
          out.push({
            path: at,
            value: target,
            message:
              `Service ${ns}/${objectNameOf(svc)}: ${at} ${JSON.stringify(target)}` +
              `${numeric ? "" : ` (container port ${resolved} of ${(pod.w.props as { kind?: string }).kind} ${objectNameOf(pod.w)})`} reaches Envoy's admin port ${resolved}`,
            urn: svc.urn,
          });
          break;
        }
      });
    }
    return out;
  },
});

// ---- a serving pod's termination covers the gateway's requests -------------------------------

/** Envoy's Duration as JSON ("60s", "1.5s", or { seconds, nanos }) in seconds; undefined when absent or unreadable. */
function durationSeconds(d: unknown): number | undefined {
  if (typeof d === "string") {
    const m = /^(\d+(?:\.\d+)?)s$/.exec(d);
    return m ? Number(m[1]) : undefined;
  }
  if (d !== null && typeof d === "object") {
    const o = d as { seconds?: unknown; nanos?: unknown };
    return Number(o.seconds ?? 0) + Number(o.nanos ?? 0) / 1e9;
  }
  return undefined;
}

/** Envoy's default RouteAction.timeout when a route sets none (route_components.proto). */
const ENVOY_DEFAULT_ROUTE_TIMEOUT_SECONDS = 15;

/**
 * The longest a request on this route action can last upstream, in seconds, or Infinity when
 * unbounded: `timeout` (0 = none; absent = 15 s), raised by a gRPC client's grpc-timeout up to
 * max_stream_duration.grpc_timeout_header_max (0 = uncapped) when that is set, and capped by
 * max_stream_duration.max_stream_duration when that is set above 0.
 */
function routeBoundSeconds(action: Record<string, any>): number {
  const unbounded = (x: number) => (x === 0 ? Infinity : x);
  let bound = unbounded(durationSeconds(action.timeout) ?? ENVOY_DEFAULT_ROUTE_TIMEOUT_SECONDS);
  const msd = action.max_stream_duration ?? {};
  const headerMax = durationSeconds(msd.grpc_timeout_header_max);
  if (headerMax !== undefined) bound = Math.max(bound, unbounded(headerMax));
  const hardCap = durationSeconds(msd.max_stream_duration);
  if (hardCap !== undefined && hardCap > 0) bound = Math.min(bound, hardCap);
  return bound;
}

/** Every route action of a bootstrap's listeners, with the clusters it sends to (route.cluster, weighted_clusters) and its path. */
function routeActions(config: Record<string, any>): { path: string; action: Record<string, any>; clusters: string[] }[] {
  const out: { path: string; action: Record<string, any>; clusters: string[] }[] = [];
  const walk = (v: unknown, at: string): void => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}[${i}]`));
    if (v === null || typeof v !== "object") return;
    const o = v as Record<string, any>;
    if (at.endsWith("].route") && o.match === undefined) {
      const clusters = [o.cluster, ...(o.weighted_clusters?.clusters ?? []).map((w: Record<string, any>) => w.name)].filter((c) => typeof c === "string");
      out.push({ path: at, action: o, clusters });
    }
    for (const [k, x] of Object.entries(o)) walk(x, `${at}.${k}`);
  };
  walk(config.static_resources?.listeners ?? [], ".static_resources.listeners");
  return out;
}

const EXIT_TIMEOUT_FLAG = "--exit-timeout-secs";
const EXIT_TIMEOUT_DEFAULT = Number(FLAGS.find((f) => f.name === EXIT_TIMEOUT_FLAG)?.default);
/** Kubernetes' default terminationGracePeriodSeconds (PodSpec). */
const K8S_DEFAULT_GRACE_SECONDS = 30;

/** A tritonserver container's --exit-timeout-secs (`=N` or `N` as the next argument; tritonserver's default when absent), with where it is. */
function exitTimeoutOf(c: { command?: readonly string[]; args?: readonly string[] }, at: string): { seconds: number; path: string; given: boolean } {
  for (const [list, key] of [
    [c.args, "args"],
    [c.command, "command"],
  ] as const) {
    const a = list ?? [];
    for (let i = 0; i < a.length; i++) {
      const x = String(a[i]);
      if (x.startsWith(`${EXIT_TIMEOUT_FLAG}=`)) return { seconds: Number(x.slice(EXIT_TIMEOUT_FLAG.length + 1)), path: `${at}.${key}[${i}]`, given: true };
      if (x === EXIT_TIMEOUT_FLAG) return { seconds: Number(a[i + 1]), path: `${at}.${key}[${i + 1}]`, given: true };
    }
  }
  return { seconds: EXIT_TIMEOUT_DEFAULT, path: `${at}.args`, given: false };
}

/** The seconds a preStop hook holds the container: sleep.seconds, or an exec whose command ends in `sleep N` (any shell form); 0 otherwise. */
function preStopSecondsOf(c: { lifecycle?: { preStop?: { sleep?: { seconds?: number }; exec?: { command?: readonly string[] } } } }): number {
  const h = c.lifecycle?.preStop;
  if (h?.sleep?.seconds !== undefined) return Number(h.sleep.seconds);
  const line = (h?.exec?.command ?? []).join(" ");
  const sleeps = [...line.matchAll(/(?:^|[\s;&|])sleep\s+(\d+(?:\.\d+)?)s?\b/g)].map((m) => Number(m[1]));
  return sleeps.reduce((a, b) => a + b, 0);
}

export const tritonTerminationCoversGatewayTimeout = stackRule({
  name: "triton-termination-covers-gateway-timeout",
  domain: "gateway",
  configKey: "triton.groups[].exitTimeoutSecs",
  description:
    "Every Triton pod (any workload kind) stops within its grace period and gives in-flight requests as long as the gateway lets them run: " +
    "terminationGracePeriodSeconds ≥ preStop + --exit-timeout-secs, and --exit-timeout-secs ≥ the longest bounded timeout of every Envoy " +
    "route whose cluster reaches a Service of the pods (route timeout, raised by grpc_timeout_header_max, capped by max_stream_duration).",
  prevents:
    "A rollout, a scale-down or an eviction that cuts requests in flight: Triton closes its endpoints after its exit timeout (or the kubelet " +
    "kills it after the grace period) while the gateway still waits for the answer, and the client gets a reset or a 503 for work that ran.",
  remediationSteps:
    "Leave triton-platform:triton.groups[].exitTimeoutSecs and terminationGracePeriodSeconds out: they are derived from " +
    "gateway.inferTimeoutSeconds (components/triton/schema.ts tritonShutdown); or raise them together with the gateway's timeout.",
  check: (resources) => {
    // Each bootstrap's route actions walked once, not once per serving workload (100 groups: 200 workloads × every route).
    const gateways = envoyConfigs(resources).map((g) => ({ ...g, routes: routeActions(g.config) }));
    const out: Finding[] = [];
    for (const w of tritonWorkloads(resources)) {
      const kind = String((w.props as { kind?: unknown }).kind);
      const where = `${kind} ${namespaceOf(w)}/${objectNameOf(w)}`;
      const services = servicesFor(resources, namespaceOf(w), podTemplateLabelsOf(w));
      // The longest bounded route into these pods, over every gateway.
      let longest: { seconds: number; what: string } | undefined;
      for (const { cm, config, routes } of gateways) {
        const clusters: Record<string, any>[] = config.static_resources?.clusters ?? [];
        const reaching = new Set(clusters.filter((c) => services.some((svc) => clusterReaches(c, svc, namespaceOf(cm)))).map((c) => c.name as string));
        if (reaching.size === 0) continue;
        for (const r of routes) {
          if (!r.clusters.some((c) => reaching.has(c))) continue;
          const bound = routeBoundSeconds(r.action);
          // An unbounded route (a bidirectional stream, timeout 0s) has no time a termination could cover.
          if (!Number.isFinite(bound)) continue;
          if (!longest || bound > longest.seconds) longest = { seconds: bound, what: `ConfigMap ${objectNameOf(cm)} ${ENVOY_DATA_PATH}${r.path}` };
        }
      }
      for (const { spec, path } of podSpecsOf(w)) {
        if (!spec) continue;
        const grace = spec.terminationGracePeriodSeconds ?? K8S_DEFAULT_GRACE_SECONDS;
        for (const { c, path: cPath, list } of containersOf(spec, path)) {
          if (list !== "containers" || !isTritonContainer(c)) continue;
          const exit = exitTimeoutOf(c, cPath);
          const preStop = preStopSecondsOf(c);
          if (!(grace >= preStop + exit.seconds)) {
            out.push({
              path: `${path}.terminationGracePeriodSeconds`,
              value: grace,
              message:
                `${where}: ${path}.terminationGracePeriodSeconds is ${grace}, below the preStop (${preStop} s) + ${EXIT_TIMEOUT_FLAG} (${exit.seconds} s` +
                `${exit.given ? "" : ", tritonserver's default"}) of container ${c.name}: the kubelet kills Triton mid-drain`,
              urn: w.urn,
            });
          }
          if (longest && !(exit.seconds >= longest.seconds)) {
            out.push({
              path: exit.path,
              value: exit.seconds,
              message:
                `${where}: ${exit.path} (container ${c.name}'s ${EXIT_TIMEOUT_FLAG}) is ${exit.seconds}${exit.given ? "" : " (tritonserver's default, flag absent)"}, below the ` +
                `${longest.seconds} s the gateway lets a request to these pods run (${longest.what}): a stopping pod cuts requests in flight`,
              urn: w.urn,
            });
          }
        }
      }
    }
    return out;
  },
});

// ---- the canary stop's write access ------------------------------------------------------------

/** Verbs that change or create a ConfigMap; a runtime writer may hold only the two that edit one it names. */
const CONFIGMAP_WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection", "*"];
const NAMED_EDIT_VERBS = ["get", "update", "patch"];

export const gatewayRuntimeWritersNamed = stackRule({
  name: "gateway-runtime-writers-named",
  domain: "gateway",
  configKey: "gateway.canaryStop",
  description:
    "Every Role or ClusterRole that may write ConfigMaps (create, update, patch, delete, deletecollection or *, on configmaps or *, in the core group or *) " +
    "is a namespaced Role that names them (resourceNames) and grants only get, update and patch: what can move the gateway's runtime (the canary " +
    "stop's ConfigMap) is exactly the stop job, and it can touch nothing else.",
  prevents:
    "A stop job (or any account) able to rewrite other ConfigMaps of the namespace, Envoy bootstraps included, or to create ones that pods mount, " +
    "or a cluster-wide role that edits ConfigMaps in every namespace.",
  remediationSteps:
    "Grant ConfigMap writes through a Role in the ConfigMap's namespace, with resourceNames and verbs get/patch (components/gateway/canary-stop.ts canaryStopRole).",
  check: (resources) => {
    const out: Finding[] = [];
    for (const r of resources) {
      const kind = (r.props as { kind?: string }).kind;
      if (kind !== "Role" && kind !== "ClusterRole") continue;
      const rules: { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs?: string[] }[] = (r.props as { rules?: [] }).rules ?? [];
      const where = `${kind} ${kind === "Role" ? `${namespaceOf(r)}/` : ""}${objectNameOf(r)}`;
      rules.forEach((rule, i) => {
        const groups = rule.apiGroups ?? [];
        const res = rule.resources ?? [];
        const verbs = rule.verbs ?? [];
        const onConfigMaps = (groups.includes("") || groups.includes("*")) && (res.includes("configmaps") || res.includes("*"));
        if (!onConfigMaps || !verbs.some((v) => CONFIGMAP_WRITE_VERBS.includes(v))) return;
        const why =
          kind === "ClusterRole"
            ? "a ClusterRole (every namespace)"
            : !rule.resourceNames?.length
              ? "no resourceNames (every ConfigMap of the namespace)"
              : verbs.some((v) => !NAMED_EDIT_VERBS.includes(v))
                ? `verbs ${verbs.filter((v) => !NAMED_EDIT_VERBS.includes(v)).join(", ")} beyond get, update, patch`
                : undefined;
        if (why) out.push({ path: `rules[${i}]`, value: rule, message: `${where}: rules[${i}] ${show(rule)} writes ConfigMaps with ${why}`, urn: r.urn });
      });
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  gatewayMirrorPercentWithinMax,
  gatewayCanaryTrafficWithinMax,
  gatewayEnvoyAdminNotExposed,
  gatewayCanaryMirrored,
  gatewayClustersDefined,
  gatewayEnvoyAdminNoService,
  tritonTerminationCoversGatewayTimeout,
  gatewayRuntimeWritersNamed,
];
