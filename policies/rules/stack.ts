// Stack-wide rules: each joins resources of different components (serving × monitoring,
// serving × gateway, GPU nodes × environment, CRD objects × the release that installs the
// CRDs), which only a StackValidationPolicy can see together. Rules about one component's
// own resources stay in that component's module.
import type { PolicyResource } from "@pulumi/policy";
import { NODE_GROUP_ZONES_TAG, NODE_LABEL_GPU_TYPE, TRITON_PORTS, TRITON_METRICS_PORT_NAME } from "../../components/contracts";
import { ENVIRONMENT_TAG } from "../../components/naming";
import { findMirrorPolicies, mirroredPercent } from "../../components/upstream/envoy";
import { isGpuAmiType } from "../../components/upstream/eks";
import { KUBE_PROMETHEUS_STACK_CHART } from "../../components/upstream/kube-prometheus-stack";
import { ENVOY_DATA_PATH, envoyConfigOf } from "./gateway";
import { decodeJson, environmentsSchema, isHelmChart, isTritonPodLabels, type EnvConfig, reportAt, selects, show, type Rule } from "./util";
import { STATEFUL_SET as STS, SERVICE, SERVICE_MONITOR, NODE_GROUP, HORIZONTAL_POD_AUTOSCALER, HELM_RELEASE } from "./types";

const HPA_TYPES = [HORIZONTAL_POD_AUTOSCALER, "kubernetes:autoscaling/v1:HorizontalPodAutoscaler"];

const nsOf = (r: PolicyResource): string => r.props.metadata?.namespace ?? "default";
const nameOf = (r: PolicyResource): string => r.props.metadata?.name ?? r.name;
const podLabels = (r: PolicyResource): Record<string, string> => r.props.spec?.template?.metadata?.labels ?? {};

/** StatefulSets whose pods are Triton pods (TRITON_ALL_PODS). */
function tritonStatefulSets(resources: PolicyResource[]): PolicyResource[] {
  return resources.filter((r) => r.type === STS && isTritonPodLabels(podLabels(r)));
}

/**
 * Services by namespace and by one pair of their selector (the alphabetically first key):
 * a Service can select a pod only if that pair is among the pod's labels, so lookups visit
 * a few candidates instead of every resource (rules here ask once per StatefulSet).
 */
const serviceIndexOf = new WeakMap<PolicyResource[], Map<string, Map<string, PolicyResource[]>>>();
function serviceIndex(resources: PolicyResource[]): Map<string, Map<string, PolicyResource[]>> {
  let index = serviceIndexOf.get(resources);
  if (index) return index;
  index = new Map();
  for (const s of resources) {
    if (s.type !== SERVICE) continue;
    const sel: Record<string, string> = s.props.spec?.selector ?? {};
    const first = Object.keys(sel).sort()[0];
    if (first === undefined) continue;
    const byPair = index.get(nsOf(s)) ?? new Map<string, PolicyResource[]>();
    index.set(nsOf(s), byPair);
    const key = `${first}=${sel[first]}`;
    byPair.set(key, [...(byPair.get(key) ?? []), s]);
  }
  serviceIndexOf.set(resources, index);
  return index;
}

const positions = new WeakMap<PolicyResource[], Map<PolicyResource, number>>();
function positionsOf(resources: PolicyResource[]): Map<PolicyResource, number> {
  let p = positions.get(resources);
  if (!p) positions.set(resources, (p = new Map(resources.map((r, i) => [r, i]))));
  return p;
}

/** Services of a namespace whose (non-empty) selector selects pods with these labels. */
function servicesFor(resources: PolicyResource[], ns: string, labels: Record<string, string>): PolicyResource[] {
  const byPair = serviceIndex(resources).get(ns);
  if (!byPair) return [];
  const out: PolicyResource[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const s of byPair.get(`${k}=${v}`) ?? []) {
      const sel: Record<string, string> = s.props.spec.selector;
      if (Object.entries(sel).every(([sk, sv]) => labels[sk] === sv)) out.push(s);
    }
  }
  // Keep the resources' order, as a scan would.
  const pos = positionsOf(resources);
  return out.sort((a, b) => pos.get(a)! - pos.get(b)!);
}

// ---- Prometheus relabelling (keep/drop) over the labels service discovery gives a target ----

/** Prometheus label name of a Kubernetes label: every character outside [a-zA-Z0-9_] becomes "_". */
const sanitize = (k: string) => k.replace(/[^a-zA-Z0-9_]/g, "_");

/** The __meta_kubernetes_* labels role "endpoints" discovery gives a Service port's targets. */
function metaLabels(svc: PolicyResource, port: Record<string, any>, pods: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {
    __meta_kubernetes_namespace: nsOf(svc),
    __meta_kubernetes_service_name: nameOf(svc),
    __meta_kubernetes_endpoint_port_name: port.name ?? "",
  };
  for (const [k, v] of Object.entries<string>(svc.props.metadata?.labels ?? {})) out[`__meta_kubernetes_service_label_${sanitize(k)}`] = v;
  for (const [k, v] of Object.entries(pods)) out[`__meta_kubernetes_pod_label_${sanitize(k)}`] = v;
  return out;
}

/** Does a target with these labels survive the keep/drop steps of a relabel list? (Other actions do not filter.) */
function survivesRelabelling(relabels: Record<string, any>[] | undefined, labels: Record<string, string>): boolean {
  for (const r of relabels ?? []) {
    const action = String(r.action ?? "replace").toLowerCase();
    if (action !== "keep" && action !== "drop") continue;
    const sources: string[] = r.sourceLabels ?? r.source_labels ?? [];
    const value = sources.map((s) => labels[s] ?? "").join(r.separator ?? ";");
    let matches: boolean;
    try {
      matches = new RegExp(`^(?:${r.regex ?? "(.*)"})$`).test(value); // Prometheus anchors the regex
    } catch {
      return false;
    }
    if ((action === "keep" && !matches) || (action === "drop" && matches)) return false;
  }
  return true;
}

/** Is a port of a Service the Triton metrics port? */
function isMetricsPort(p: Record<string, any>): boolean {
  return p.port === TRITON_PORTS.metrics || p.name === TRITON_METRICS_PORT_NAME || p.targetPort === TRITON_METRICS_PORT_NAME || p.targetPort === TRITON_PORTS.metrics;
}

/** Does a kube-prometheus-stack release's Prometheus select ServiceMonitors with these labels? (the chart's serviceMonitorSelector logic) */
function prometheusSelects(release: PolicyResource, smLabels: Record<string, string>): boolean {
  const spec = release.props.values?.prometheus?.prometheusSpec ?? {};
  const explicit = spec.serviceMonitorSelector;
  if (explicit && Object.keys(explicit).length > 0) return selects(explicit, smLabels);
  if (spec.serviceMonitorSelectorNilUsesHelmValues === false) return true;
  // Chart default: only ServiceMonitors labelled with the release's name.
  return smLabels.release === (release.props.name ?? release.name);
}

/** ServiceMonitors that scrape this Service port: namespace, selector, endpoint port and keep/drop relabelings all match. */
function serviceMonitorCovers(sm: PolicyResource, svc: PolicyResource, port: Record<string, any>, pods: Record<string, string>): boolean {
  const nsSel = sm.props.spec?.namespaceSelector ?? {};
  const namespaces: string[] | undefined = nsSel.any === true ? undefined : nsSel.matchNames?.length ? nsSel.matchNames : [nsOf(sm)];
  if (namespaces && !namespaces.includes(nsOf(svc))) return false;
  if (!selects(sm.props.spec?.selector ?? {}, svc.props.metadata?.labels ?? {})) return false;
  const labels = metaLabels(svc, port, pods);
  return (sm.props.spec?.endpoints ?? []).some(
    (ep: Record<string, any>) =>
      (ep.port !== undefined ? ep.port === port.name : ep.targetPort !== undefined && (ep.targetPort === port.targetPort || ep.targetPort === port.port)) &&
      survivesRelabelling(ep.relabelings, labels),
  );
}

/** Does a raw Prometheus scrape job (additionalScrapeConfigs) scrape this Service port? */
function scrapeJobCovers(job: Record<string, any>, svc: PolicyResource, port: Record<string, any>, pods: Record<string, string>): boolean {
  const host = (t: string) => t.replace(/:\d+$/, "").split(".");
  for (const sc of job.static_configs ?? []) {
    for (const t of sc.targets ?? []) {
      const [svcName, ns] = host(String(t));
      if (svcName === nameOf(svc) && ns === nsOf(svc) && String(t).endsWith(`:${port.port}`)) return true;
    }
  }
  return (job.kubernetes_sd_configs ?? []).some((sd: Record<string, any>) => {
    if (!["endpoints", "endpointslice", "service"].includes(sd.role)) return false;
    const names: string[] | undefined = sd.namespaces?.names;
    if (names?.length && !names.includes(nsOf(svc))) return false;
    return survivesRelabelling(job.relabel_configs, metaLabels(svc, port, pods));
  });
}

// ---- Envoy bootstraps held in ConfigMaps ---------------------------------------------------

interface EnvoyConfig {
  cm: PolicyResource;
  config: Record<string, any>;
}

/** Every ConfigMap that carries a parseable Envoy bootstrap (unparseable ones are gateway-mirror-percent-within-max's to report). */
function envoyConfigs(resources: PolicyResource[]): EnvoyConfig[] {
  const out: EnvoyConfig[] = [];
  for (const cm of resources) {
    try {
      const config = envoyConfigOf(cm.type, cm.props);
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
      if (host === nameOf(svc) && (ns === nsOf(svc) || (ns === undefined && fromNs === nsOf(svc)))) return true;
    }
  }
  return false;
}

// ---- environments -----------------------------------------------------------------------

const environmentsByTag = environmentsSchema("Environments the rule applies to (tag triton-platform:environment).");

/** The environment of an AWS resource: its own tag, else its provider's defaultTags. */
function awsEnvironment(r: PolicyResource): string | undefined {
  return r.props.tags?.[ENVIRONMENT_TAG] ?? decodeJson(r.provider?.props?.defaultTags)?.tags?.[ENVIRONMENT_TAG];
}

/** Resources `r` waits for: its dependencies and theirs, transitively (dependsOn and input references alike). */
function transitiveDependencies(r: PolicyResource): Set<string> {
  const seen = new Set<string>();
  const stack = [...r.dependencies];
  while (stack.length) {
    const d = stack.pop()!;
    if (seen.has(d.urn)) continue;
    seen.add(d.urn);
    stack.push(...d.dependencies);
  }
  return seen;
}

/** `<group>` of a Kubernetes type token `kubernetes:<group>/<version>:<Kind>` ("core" for the core group). */
function apiGroupOf(type: string): string | undefined {
  const m = /^kubernetes:([^:]+)\/[^/:]+:[^:]+$/.exec(type);
  return m?.[1];
}

export const stackRules: Rule[] = [
  {
    name: "triton-metrics-scraped",
    domain: "monitoring",
    description:
      "Every Triton StatefulSet has a metrics Service (port 8002 / \"metrics\") that Prometheus scrapes: a ServiceMonitor the kube-prometheus-stack Prometheus selects covers its namespace, labels, port and keep/drop relabelings, or an additionalScrapeConfigs job does.",
    prevents: "A serving group (often a newly added one) whose queue time, failures and GPU use nobody sees: its alerts never fire and its autoscaler's custom metric is empty.",
    remediationSteps:
      "Give the group a metrics Service (components/triton/manifests.ts tritonMetricsService) labelled app.kubernetes.io/component=metrics, and keep the monitoring ServiceMonitor's namespaceSelector, selector and service-name keep regex in step with the serving groups (components/monitoring, servingGroups).",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      const monitors = args.resources.filter((r) => r.type === SERVICE_MONITOR);
      const releases = args.resources.filter((r) => isHelmChart(r.type, r.props, KUBE_PROMETHEUS_STACK_CHART.chart));
      const jobs: Record<string, any>[] = releases.flatMap((r) => r.props.values?.prometheus?.prometheusSpec?.additionalScrapeConfigs ?? []);
      const selected = monitors.filter((sm) => releases.some((rel) => prometheusSelects(rel, sm.props.metadata?.labels ?? {})));
      for (const sts of tritonStatefulSets(args.resources)) {
        const pods = podLabels(sts);
        const metrics = servicesFor(args.resources, nsOf(sts), pods).flatMap((svc) =>
          (svc.props.spec?.ports ?? []).filter(isMetricsPort).map((port: Record<string, any>) => ({ svc, port })),
        );
        if (metrics.length === 0) {
          reportAt(
            report,
            { path: "spec.template.metadata.labels", value: pods },
            `StatefulSet ${nsOf(sts)}/${nameOf(sts)}: no Service in namespace ${nsOf(sts)} selects its pods (spec.template.metadata.labels ${JSON.stringify(pods)}) on the metrics port ${TRITON_PORTS.metrics}`,
            sts.urn,
          );
          continue;
        }
        const scraped = metrics.some(({ svc, port }) => selected.some((sm) => serviceMonitorCovers(sm, svc, port, pods)) || jobs.some((j) => scrapeJobCovers(j, svc, port, pods)));
        if (!scraped) {
          const { svc } = metrics[0];
          const labels = svc.props.metadata?.labels ?? {};
          reportAt(
            report,
            { path: "metadata.labels", value: labels },
            `Service ${nsOf(svc)}/${nameOf(svc)} (metrics of StatefulSet ${nameOf(sts)}): metadata.labels ${JSON.stringify(labels)} are scraped by no ServiceMonitor that Prometheus selects (${selected.map(nameOf).join(", ") || "none"}: namespaceSelector, selector, endpoint port, keep/drop relabelings) and by no additionalScrapeConfigs job`,
            svc.urn,
          );
        }
      }
    },
  },
  {
    name: "gateway-canary-mirrored",
    domain: "gateway",
    description: "Every Triton canary StatefulSet (pods labelled track=canary) receives mirrored traffic: an Envoy gateway route mirrors a non-zero fraction to a cluster whose endpoint is a Service of the canary's pods.",
    prevents: "A canary that serves nothing: it looks healthy because it is never asked, and is promoted without having seen one production request.",
    remediationSteps: "List the group in the gateway's servingGroups with canary: true and keep triton-platform:gateway.mirrorPercent above 0 (components/gateway/envoy-config.ts mirror policies).",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      const gateways = envoyConfigs(args.resources);
      const canaries = tritonStatefulSets(args.resources).filter((s) => podLabels(s).track === "canary");
      for (const canary of canaries) {
        const services = servicesFor(args.resources, nsOf(canary), podLabels(canary));
        const mirrored = gateways.some(({ cm, config }) => {
          const clusters: Record<string, any>[] = config.static_resources?.clusters ?? [];
          return findMirrorPolicies(config).some(({ policy }) => {
            if (mirroredPercent(policy) <= 0) return false;
            const target = clusters.find((c) => c.name === policy.cluster);
            return target !== undefined && services.some((svc) => clusterReaches(target, svc, nsOf(cm)));
          });
        });
        if (mirrored) continue;
        if (gateways.length === 0) {
          reportAt(report, { path: "metadata.name", value: nameOf(canary) }, `StatefulSet ${nsOf(canary)}/${nameOf(canary)}: metadata.name ${JSON.stringify(nameOf(canary))} is a canary but the stack has no Envoy gateway to mirror traffic to it`, canary.urn);
          continue;
        }
        const { cm, config } = gateways[0];
        const targets = [...new Set(findMirrorPolicies(config).map((m) => m.policy.cluster))];
        const path = `${ENVOY_DATA_PATH}..request_mirror_policies[*].cluster`;
        reportAt(
          report,
          { path, value: targets },
          `ConfigMap ${nameOf(cm)}: ${path} is ${JSON.stringify(targets)}; none mirrors (above 0 %) to a cluster reaching canary StatefulSet ${nsOf(canary)}/${nameOf(canary)} through its Services ${JSON.stringify(services.map(nameOf))}`,
          cm.urn,
        );
      }
    },
  },
  {
    name: "gateway-clusters-defined",
    domain: "gateway",
    description: "Every cluster an Envoy route sends to (route.cluster) or mirrors to (request_mirror_policies[].cluster) is defined in the bootstrap's static_resources.clusters.",
    prevents: "Envoy rejecting the whole bootstrap at start (static route configs validate their clusters): new gateway pods crash-loop and a rollout stalls, or a canary silently gets nothing.",
    remediationSteps: "Build routes and mirrors from the same serving-group list as the clusters (components/gateway/envoy-config.ts upstreamClusterName); rename both together.",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      for (const { cm, config } of envoyConfigs(args.resources)) {
        const defined = new Set<string>((config.static_resources?.clusters ?? []).map((c: Record<string, any>) => c.name));
        const refs: { path: string; cluster: unknown }[] = findMirrorPolicies(config).map(({ path, policy }) => ({ path: `${path.replace(/^\$/, "")}.cluster`, cluster: policy.cluster }));
        const walk = (v: unknown, at: string): void => {
          if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}[${i}]`));
          if (v === null || typeof v !== "object") return;
          const o = v as Record<string, any>;
          if (at.endsWith("].route") && o.match === undefined) {
            if (o.cluster !== undefined) refs.push({ path: `${at}.cluster`, cluster: o.cluster });
            (o.weighted_clusters?.clusters ?? []).forEach((w: Record<string, any>, i: number) => refs.push({ path: `${at}.weighted_clusters.clusters[${i}].name`, cluster: w.name }));
          }
          for (const [k, x] of Object.entries(o)) walk(x, `${at}.${k}`);
        };
        walk(config.static_resources?.listeners ?? [], ".static_resources.listeners");
        for (const { path, cluster } of refs) {
          if (typeof cluster === "string" && defined.has(cluster)) continue;
          reportAt(
            report,
            { path: `${ENVOY_DATA_PATH}${path}`, value: cluster },
            `ConfigMap ${nameOf(cm)}: ${ENVOY_DATA_PATH}${path} is ${show(cluster)}, which static_resources.clusters does not define (defined: ${[...defined].join(", ")})`,
            cm.urn,
          );
        }
      }
    },
  },
  {
    name: "hpa-target-exists",
    domain: "triton",
    description: "Every HorizontalPodAutoscaler's spec.scaleTargetRef names a workload of that apiVersion and kind (for Triton, a StatefulSet) that the stack creates in the HPA's namespace.",
    prevents: "An autoscaler that scales nothing (a renamed group, a typo, a wrong kind): serving stays at its initial replicas while the queue grows.",
    remediationSteps: "Point scaleTargetRef at the group's StatefulSet: apiVersion apps/v1, kind StatefulSet, name = the group's workload name (components/triton/manifests.ts tritonHorizontalPodAutoscaler).",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      const byKey = new Set(args.resources.filter((r) => r.type.startsWith("kubernetes:")).map((r) => JSON.stringify([r.type, nsOf(r), nameOf(r)])));
      for (const hpa of args.resources.filter((r) => HPA_TYPES.includes(r.type))) {
        const ref = hpa.props.spec?.scaleTargetRef ?? {};
        const type = `kubernetes:${ref.apiVersion ?? ""}:${ref.kind ?? ""}`;
        if (byKey.has(JSON.stringify([type, nsOf(hpa), ref.name]))) continue;
        reportAt(
          report,
          { path: "spec.scaleTargetRef", value: ref },
          `HorizontalPodAutoscaler ${nsOf(hpa)}/${nameOf(hpa)}: spec.scaleTargetRef ${JSON.stringify(ref)} names no ${ref.kind ?? "workload"} ${ref.name ?? "(unnamed)"} in namespace ${nsOf(hpa)}`,
          hpa.urn,
        );
      }
    },
  },
  {
    name: "crd-objects-depend-on-release",
    domain: "monitoring",
    description:
      "Kubernetes objects of a CRD kind (ServiceMonitor, PrometheusRule: group monitoring.coreos.com) depend, directly or through other dependencies, on a Helm release of the chart that installs those CRDs.",
    prevents: "A first `pulumi up` on a fresh cluster failing (or a destroy hanging) because a ServiceMonitor or PrometheusRule is sent before kube-prometheus-stack has installed its CRD.",
    remediationSteps: "Create the object with dependsOn: [the kube-prometheus-stack release] (components/monitoring does: crdOpts); add a group → chart entry to crdCharts for other CRDs.",
    enforcementLevel: "advisory",
    configSchema: {
      properties: {
        crdCharts: {
          type: "object",
          additionalProperties: { type: "string" },
          default: { "monitoring.coreos.com": KUBE_PROMETHEUS_STACK_CHART.chart },
          description: "API group → the Helm chart whose release installs its CRDs.",
        },
      },
    },
    validateStack: (args, report) => {
      const { crdCharts } = args.getConfig<{ crdCharts: Record<string, string> }>();
      const releases = args.resources.filter((x) => x.type === HELM_RELEASE);
      for (const r of args.resources) {
        const group = apiGroupOf(r.type);
        const chart = group === undefined ? undefined : crdCharts[group];
        if (chart === undefined) continue;
        const installers = releases.filter((x) => x.props.chart === chart);
        const deps = transitiveDependencies(r);
        if (installers.some((rel) => deps.has(rel.urn))) continue;
        const direct = r.dependencies.map((d) => `${d.type} ${d.name}`);
        reportAt(
          report,
          { path: "dependencies", value: direct },
          `${r.props.kind ?? r.type} ${nameOf(r)}: dependencies ${JSON.stringify(direct)} include no release of chart ${chart} (${installers.map((x) => x.name).join(", ") || "none in the stack"}), which installs the ${group} CRDs`,
          r.urn,
        );
      }
    },
  },
  {
    name: "gpu-nodes-span-zones",
    domain: "gpu-nodes",
    description: `In the listed environments, the GPU node groups of each GPU type run in subnets of at least minZones availability zones (tag ${NODE_GROUP_ZONES_TAG}) with at least minZones nodes (scalingConfig.minSize).`,
    prevents: "One availability-zone outage taking every GPU of a serving group with it: Triton's zone spread cannot place replicas in zones that have no GPU nodes.",
    remediationSteps: "List at least three zones in triton-platform:cluster.zones (the node group looks up a private subnet in each and records their zones) and set gpu.scaling.min to at least 3.",
    enforcementLevel: "advisory",
    configSchema: {
      properties: {
        ...environmentsByTag,
        minZones: { type: "integer", minimum: 1, default: 3, description: "Least distinct availability zones of a GPU type's node groups." },
      },
    },
    validateStack: (args, report) => {
      const cfg = args.getConfig<EnvConfig & { minZones: number }>();
      const groups = args.resources.filter((r) => r.type === NODE_GROUP && (isGpuAmiType(r.props.amiType) || r.props.labels?.[NODE_LABEL_GPU_TYPE] !== undefined));
      const byGpuType = new Map<string, PolicyResource[]>();
      for (const g of groups) {
        const env = awsEnvironment(g);
        if (env === undefined || !cfg.environments.includes(env)) continue;
        const key = g.props.labels?.[NODE_LABEL_GPU_TYPE] ?? String(g.props.amiType);
        byGpuType.set(key, [...(byGpuType.get(key) ?? []), g]);
      }
      for (const [gpuType, gs] of byGpuType) {
        const path = `tags["${NODE_GROUP_ZONES_TAG}"]`;
        const zones = new Set(gs.flatMap((g) => String(g.props.tags?.[NODE_GROUP_ZONES_TAG] ?? "").split(/\s+/).filter(Boolean)));
        if (zones.size < cfg.minZones) {
          const g = gs[0];
          const value = g.props.tags?.[NODE_GROUP_ZONES_TAG];
          reportAt(
            report,
            { path, value },
            `NodeGroup ${g.name} (${gpuType}, ${awsEnvironment(g)}): ${path} is ${show(value)} (subnetIds ${JSON.stringify(gs.flatMap((x) => x.props.subnetIds ?? []))}); GPU nodes of ${gpuType} span ${zones.size} zone(s), need >= ${cfg.minZones}`,
            g.urn,
          );
        }
        const minNodes = gs.reduce((n, g) => n + (g.props.scalingConfig?.minSize ?? 0), 0);
        if (minNodes < cfg.minZones) {
          const g = gs[0];
          reportAt(
            report,
            { path: "scalingConfig.minSize", value: g.props.scalingConfig?.minSize },
            `NodeGroup ${g.name} (${gpuType}, ${awsEnvironment(g)}): scalingConfig.minSize is ${show(g.props.scalingConfig?.minSize)} (${minNodes} across the type's groups), below the ${cfg.minZones} nodes one per zone needs`,
            g.urn,
          );
        }
      }
    },
  },
];
