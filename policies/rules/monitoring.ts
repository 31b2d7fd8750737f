// Rules the monitoring component makes enforceable: production pages someone, every Triton
// serving group is scraped, and CRD objects wait for the release that installs their CRDs.
// (Grafana's credentials: secrets.ts helm-values-no-credentials; chart pinning: foundation.ts helm-release-pinned.)
import type { PolicyResource } from "@pulumi/policy";
import { TRITON_METRICS_PORT_NAME, TRITON_PORTS } from "../../components/contracts";
import { ENVIRONMENT_LABEL } from "../../components/naming";
import { KUBE_PROMETHEUS_STACK_CHART } from "../../components/upstream/kube-prometheus-stack";
import {
  containersOf,
  metadataOf,
  podSpecsOf,
  podTemplateLabelsOf,
  propsOf,
  type PropsOf,
  type Relabeling,
  type ServiceMonitor,
  type ServicePort,
} from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Rule } from "./rule";
import { HELM_RELEASE, SERVICE, SERVICE_MONITOR } from "./types";
import {
  environmentsSchema,
  isHelmChart,
  flagValues,
  isTritonContainer,
  isWorkload,
  namespaceOf,
  objectNameOf,
  selects,
  servicesFor,
  show,
  tritonStatefulSets,
  type EnvConfig,
} from "./util";

type HelmRelease = PropsOf<typeof HELM_RELEASE>;

/** The kube-prometheus-stack release's props, else undefined. */
function kubePrometheusStackOf(r: Pick<PolicyResource, "type" | "props">): HelmRelease | undefined {
  return isHelmChart(r.type, r.props, KUBE_PROMETHEUS_STACK_CHART.chart) ? propsOf(r, HELM_RELEASE) : undefined;
}

export const monitoringAlertingInProd = resourceRule<EnvConfig>({
  name: "monitoring-alerting-in-prod",
  domain: "monitoring",
  configKey: "monitoring.alerting.enabled",
  description: "In production stacks kube-prometheus-stack runs Alertmanager (values.alertmanager.enabled: true).",
  prevents: "Alert rules that evaluate and fire in Prometheus with nobody notified: a GPU XID or a failing model found by users instead of on-call.",
  remediationSteps: "Set triton-platform:monitoring.alerting.enabled: true in the stack file.",
  configSchema: { properties: { ...environmentsSchema("Environments that must run Alertmanager.") } },
  check: (r, { environments }) => {
    const release = kubePrometheusStackOf(r);
    if (!release) return NONE;
    const env = release.values?.commonLabels?.[ENVIRONMENT_LABEL];
    if (env === undefined) {
      const path = `values.commonLabels["${ENVIRONMENT_LABEL}"]`;
      return [{ path, value: null, message: `Helm release ${r.name}: ${path} is missing, so whether Alertmanager is required cannot be decided` }];
    }
    if (!environments.includes(env)) return NONE;
    const enabled = release.values?.alertmanager?.enabled;
    if (enabled === true) return NONE;
    return [
      {
        path: "values.alertmanager.enabled",
        value: enabled,
        message: `Helm release ${r.name} (environment ${env}): ` + `values.alertmanager.enabled is ${JSON.stringify(enabled ?? null)}, must be true`,
      },
    ];
  },
});

// ---- Prometheus relabelling (keep/drop) over the labels service discovery gives a target ----

/** Prometheus label name of a Kubernetes label: every character outside [a-zA-Z0-9_] becomes "_". */
const sanitize = (k: string) => k.replace(/[^a-zA-Z0-9_]/g, "_");

/** The __meta_kubernetes_* labels role "endpoints" discovery gives a Service port's targets. */
function metaLabels(svc: PolicyResource, port: ServicePort, pods: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {
    __meta_kubernetes_namespace: namespaceOf(svc),
    __meta_kubernetes_service_name: objectNameOf(svc),
    __meta_kubernetes_endpoint_port_name: port.name ?? "",
  };
  for (const [k, v] of Object.entries<string>(metadataOf(svc).labels ?? {})) out[`__meta_kubernetes_service_label_${sanitize(k)}`] = v;
  for (const [k, v] of Object.entries(pods)) out[`__meta_kubernetes_pod_label_${sanitize(k)}`] = v;
  return out;
}

/** Does a target with these labels survive the keep/drop steps of a relabel list? (Other actions do not filter.) */
function survivesRelabelling(relabels: readonly Relabeling[] | undefined, labels: Record<string, string>): boolean {
  for (const r of relabels ?? []) {
    const action = String(r.action ?? "replace").toLowerCase();
    if (action !== "keep" && action !== "drop") continue;
    const sources = r.sourceLabels ?? r.source_labels ?? [];
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
function isMetricsPort(p: ServicePort): boolean {
  return (
    p.port === TRITON_PORTS.metrics || p.name === TRITON_METRICS_PORT_NAME || p.targetPort === TRITON_METRICS_PORT_NAME || p.targetPort === TRITON_PORTS.metrics
  );
}

/** Does a kube-prometheus-stack release's Prometheus select ServiceMonitors with these labels? (the chart's serviceMonitorSelector logic) */
function prometheusSelects(release: PolicyResource, smLabels: Readonly<Record<string, string>>): boolean {
  const props = release.props as HelmRelease;
  const spec = props.values?.prometheus?.prometheusSpec ?? {};
  const explicit = spec.serviceMonitorSelector;
  if (explicit && Object.keys(explicit).length > 0) return selects(explicit, smLabels);
  if (spec.serviceMonitorSelectorNilUsesHelmValues === false) return true;
  // Chart default: only ServiceMonitors labelled with the release's name.
  return smLabels.release === (props.name ?? release.name);
}

/** ServiceMonitors that scrape this Service port: namespace, selector, endpoint port and keep/drop relabelings all match. */
function serviceMonitorCovers(sm: PolicyResource, svc: PolicyResource, port: ServicePort, pods: Readonly<Record<string, string>>): boolean {
  const spec = (sm.props as ServiceMonitor).spec;
  const nsSel = spec?.namespaceSelector ?? {};
  const namespaces = nsSel.any === true ? undefined : nsSel.matchNames?.length ? nsSel.matchNames : [namespaceOf(sm)];
  if (namespaces && !namespaces.includes(namespaceOf(svc))) return false;
  if (!selects(spec?.selector ?? {}, metadataOf(svc).labels ?? {})) return false;
  const labels = metaLabels(svc, port, pods);
  return (spec?.endpoints ?? []).some(
    (ep) =>
      (ep.port !== undefined ? ep.port === port.name : ep.targetPort !== undefined && (ep.targetPort === port.targetPort || ep.targetPort === port.port)) &&
      survivesRelabelling(ep.relabelings, labels),
  );
}

/** A raw Prometheus scrape job (values.prometheus.prometheusSpec.additionalScrapeConfigs), the fields read here. */
interface ScrapeJob {
  static_configs?: { targets?: unknown[] }[];
  kubernetes_sd_configs?: { role?: string; namespaces?: { names?: string[] } }[];
  relabel_configs?: Relabeling[];
}

/** Does a raw Prometheus scrape job (additionalScrapeConfigs) scrape this Service port? */
function scrapeJobCovers(job: ScrapeJob, svc: PolicyResource, port: ServicePort, pods: Readonly<Record<string, string>>): boolean {
  const host = (t: string) => t.replace(/:\d+$/, "").split(".");
  for (const sc of job.static_configs ?? []) {
    for (const t of sc.targets ?? []) {
      const [svcName, ns] = host(String(t));
      if (svcName === objectNameOf(svc) && ns === namespaceOf(svc) && String(t).endsWith(`:${port.port}`)) return true;
    }
  }
  return (job.kubernetes_sd_configs ?? []).some((sd) => {
    if (!["endpoints", "endpointslice", "service"].includes(sd.role as string)) return false;
    const names = sd.namespaces?.names;
    if (names?.length && !names.includes(namespaceOf(svc))) return false;
    return survivesRelabelling(job.relabel_configs, metaLabels(svc, port, pods));
  });
}

export const tritonMetricsScraped = stackRule({
  name: "triton-metrics-scraped",
  domain: "monitoring",
  description:
    'Every Triton StatefulSet has a metrics Service (port 8002 / "metrics") that Prometheus scrapes: a ServiceMonitor the ' +
    "kube-prometheus-stack Prometheus selects covers its namespace, labels, port and keep/drop relabelings, or an additionalScrapeConfigs job " +
    "does.",
  prevents:
    "A serving group (often a newly added one) whose queue time, failures and GPU use nobody sees: its alerts never fire and its " +
    "autoscaler's custom metric is empty.",
  remediationSteps:
    "Give the group a metrics Service (components/triton/builders.ts tritonMetricsService) labelled app.kubernetes.io/component=metrics, and " +
    "keep the monitoring ServiceMonitor's namespaceSelector, selector and service-name keep regex in step with the serving groups " +
    "(components/monitoring, servingGroups).",
  check: (resources) => {
    const monitors = resources.filter((r) => r.type === SERVICE_MONITOR);
    const releases = resources.filter((r) => kubePrometheusStackOf(r) !== undefined);
    const jobs: ScrapeJob[] = releases.flatMap((r) => (r.props as HelmRelease).values?.prometheus?.prometheusSpec?.additionalScrapeConfigs ?? []);
    const selected = monitors.filter((sm) => releases.some((rel) => prometheusSelects(rel, metadataOf(sm).labels ?? {})));
    const out: Finding[] = [];
    for (const sts of tritonStatefulSets(resources)) {
      const pods = podTemplateLabelsOf(sts);
      const ns = namespaceOf(sts);
      const metrics = servicesFor(resources, ns, pods).flatMap((svc) =>
        (propsOf(svc, SERVICE)?.spec?.ports ?? []).filter(isMetricsPort).map((port) => ({ svc, port })),
      );
      if (metrics.length === 0) {
        out.push({
          path: "spec.template.metadata.labels",
          value: pods,
          message:
            `StatefulSet ${ns}/${objectNameOf(sts)}: no Service in namespace ${ns} selects its pods (spec.template.metadata.labels ` +
            `${JSON.stringify(pods)}) on the metrics port ${TRITON_PORTS.metrics}`,
          urn: sts.urn,
        });
        continue;
      }
      const scraped = metrics.some(
        ({ svc, port }) => selected.some((sm) => serviceMonitorCovers(sm, svc, port, pods)) || jobs.some((j) => scrapeJobCovers(j, svc, port, pods)),
      );
      if (!scraped) {
        const { svc } = metrics[0];
        const labels = metadataOf(svc).labels ?? {};
        out.push({
          path: "metadata.labels",
          value: labels,
          message:
            `Service ${namespaceOf(svc)}/${objectNameOf(svc)} (metrics of StatefulSet ${objectNameOf(sts)}): metadata.labels ` +
            `${JSON.stringify(labels)} are scraped by ` +
            `no ServiceMonitor that Prometheus selects (${selected.map(objectNameOf).join(", ") || "none"}: namespaceSelector, selector, endpoint port, keep/drop relabelings) ` +
            "and by no additionalScrapeConfigs job",
          urn: svc.urn,
        });
      }
    }
    return out;
  },
});

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

export const crdObjectsDependOnRelease = stackRule<{ crdCharts: Record<string, string> }>({
  name: "crd-objects-depend-on-release",
  domain: "monitoring",
  description:
    "Kubernetes objects of a CRD kind (ServiceMonitor, PrometheusRule: group monitoring.coreos.com) depend, directly or through other " +
    "dependencies, on a Helm release of the chart that installs those CRDs.",
  prevents:
    "A first `pulumi up` on a fresh cluster failing (or a destroy hanging) because a ServiceMonitor or PrometheusRule is sent before " +
    "kube-prometheus-stack has installed its CRD.",
  remediationSteps:
    "Create the object with dependsOn: [the kube-prometheus-stack release] (components/monitoring does: crdOpts); add a group → " +
    "chart entry to crdCharts for other CRDs.",
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
  check: (resources, { crdCharts }) => {
    const releases = resources.filter((x) => x.type === HELM_RELEASE);
    const out: Finding[] = [];
    for (const r of resources) {
      const group = apiGroupOf(r.type);
      const chart = group === undefined ? undefined : crdCharts[group];
      if (chart === undefined) continue;
      const installers = releases.filter((x) => (x.props as HelmRelease).chart === chart);
      const deps = transitiveDependencies(r);
      if (installers.some((rel) => deps.has(rel.urn))) continue;
      const direct = r.dependencies.map((d) => `${d.type} ${d.name}`);
      out.push({
        path: "dependencies",
        value: direct,
        message:
          `${(r.props as { kind?: string }).kind ?? r.type} ${objectNameOf(r)}: dependencies ${JSON.stringify(direct)} include no release of chart ${chart} ` +
          `(${installers.map((x) => x.name).join(", ") || "none in the stack"}), which installs the ${group} CRDs`,
        urn: r.urn,
      });
    }
    return out;
  },
});

// ---- Alertmanager routing: does a critical alert (and the Watchdog) reach someone? ----

/** An Alertmanager route as the chart's values hold it (the fields routing reads). */
export interface AlertmanagerRoute {
  receiver?: string;
  matchers?: string[];
  match?: Record<string, string>;
  match_re?: Record<string, string>;
  continue?: boolean;
  routes?: AlertmanagerRoute[];
}

/**
 * The chart's own alertmanager.config route and receivers (kube-prometheus-stack values.yaml
 * 88.1.5): what Helm merges the stack's config onto. Without a config of the stack's, every
 * alert, the Watchdog included, reaches `null`.
 */
export const KPS_DEFAULT_ALERTMANAGER_ROUTE: AlertmanagerRoute = { receiver: "null", routes: [{ receiver: "null", matchers: ['alertname = "Watchdog"'] }] };
export const KPS_DEFAULT_ALERTMANAGER_RECEIVERS = [{ name: "null" }];

/** Notifier lists that deliver somewhere (an Alertmanager receiver with none of them notifies nobody). */
const NOTIFIER_LISTS = [
  "pagerduty_configs",
  "slack_configs",
  "webhook_configs",
  "opsgenie_configs",
  "email_configs",
  "sns_configs",
  "victorops_configs",
  "pushover_configs",
  "wechat_configs",
  "telegram_configs",
  "discord_configs",
  "webex_configs",
  "msteams_configs",
  "msteamsv2_configs",
  "jira_configs",
  "rocketchat_configs",
  "incidentio_configs",
  "mattermost_configs",
];

/** One Alertmanager matcher string (`name = "value"`, =~, !=, !~; value quoted or bare) against labels; undefined when unparsable. */
function matcherMatches(m: string, labels: Readonly<Record<string, string>>): boolean | undefined {
  const parsed = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/.exec(m);
  if (!parsed) return undefined;
  const [, name, op, raw] = parsed;
  let value = raw;
  if (raw.startsWith('"')) {
    try {
      value = JSON.parse(raw) as string;
    } catch {
      return undefined;
    }
  }
  const actual = labels[name] ?? "";
  if (op === "=" || op === "!=") return (actual === value) === (op === "=");
  try {
    return new RegExp(`^(?:${value})$`).test(actual) === (op === "=~"); // Alertmanager anchors the regex
  } catch {
    return undefined;
  }
}

function routeMatches(r: AlertmanagerRoute, labels: Readonly<Record<string, string>>): boolean {
  const eq = Object.entries(r.match ?? {}).every(([k, v]) => (labels[k] ?? "") === v);
  const re = Object.entries(r.match_re ?? {}).every(([k, v]) => matcherMatches(`${k} =~ ${JSON.stringify(v)}`, labels) === true);
  return eq && re && (r.matchers ?? []).every((m) => matcherMatches(m, labels) === true);
}

/** The receivers an alert with `labels` is delivered to (Alertmanager's tree walk: first match, `continue`, inherited receiver). */
export function routeAlert(route: AlertmanagerRoute, labels: Readonly<Record<string, string>>, inherited = "null"): string[] {
  const receiver = route.receiver ?? inherited;
  const out: string[] = [];
  for (const child of route.routes ?? []) {
    if (!routeMatches(child, labels)) continue;
    out.push(...routeAlert(child, labels, receiver));
    if (child.continue !== true) break;
  }
  return out.length > 0 ? out : [receiver];
}

/** Does a receiver of this name notify anyone (at least one non-empty notifier list)? */
function notifies(receivers: readonly Record<string, unknown>[], name: string): boolean {
  const r = receivers.find((x) => x.name === name);
  return r !== undefined && NOTIFIER_LISTS.some((k) => Array.isArray(r[k]) && (r[k] as unknown[]).length > 0);
}

/** The probes: alert labels that must reach a notifying receiver, and the stack keys that give them one. */
const NOTIFY_PROBES = [
  {
    what: "a critical alert",
    labels: { alertname: "TritonTargetDown", severity: "critical", namespace: "triton", serving_group: "any" },
    keys: "triton-platform:monitoring.alerting.pagerduty.routingKey (or .webhook / .slack, among those listed in triton-platform:monitoring.alerting.critical)",
  },
  {
    what: "the Watchdog (dead-man's switch)",
    labels: { alertname: "Watchdog", severity: "none" },
    keys: "triton-platform:monitoring.alerting.heartbeat.url",
  },
] as const;

export const monitoringCriticalAlertsNotify = resourceRule<EnvConfig>({
  name: "monitoring-critical-alerts-notify",
  domain: "monitoring",
  configKey: "monitoring.alerting",
  description:
    "In the listed environments, Alertmanager's routing (kube-prometheus-stack values.alertmanager.config, merged onto the chart's default) " +
    "delivers a critical alert and the Watchdog to receivers that notify someone (a pagerduty/slack/webhook/... config), not to `null`.",
  prevents:
    "Alertmanager running with nobody on the other end: the chart's default sends every alert to its `null` receiver, so a failing " +
    "model or a dead Prometheus pages no one.",
  remediationSteps:
    "Set a critical receiver (triton-platform:monitoring.alerting.pagerduty.routingKey, or webhook/slack listed in monitoring.alerting.critical) " +
    "and a heartbeat (triton-platform:monitoring.alerting.heartbeat.url), secrets with `pulumi config set --secret --path`.",
  configSchema: {
    properties: {
      environments: { ...environmentsSchema("").environments, default: ["staging", "prod"], description: "Environments whose critical alerts must notify." },
    },
  },
  check: (r, { environments }) => {
    const release = kubePrometheusStackOf(r);
    if (!release) return NONE;
    const env = release.values?.commonLabels?.[ENVIRONMENT_LABEL];
    if (env === undefined || !environments.includes(env)) return NONE;
    const am = release.values?.alertmanager ?? {};
    // Alertmanager off is monitoring-alerting-in-prod's finding.
    if (am.enabled === false) return NONE;
    const config = am.config ?? {};
    // Helm merges mappings key by key; lists (routes, receivers) replace the chart's.
    const route: AlertmanagerRoute = { ...KPS_DEFAULT_ALERTMANAGER_ROUTE, ...(config.route ?? {}) };
    const receivers: Record<string, unknown>[] = config.receivers ?? KPS_DEFAULT_ALERTMANAGER_RECEIVERS;
    const out: Finding[] = [];
    for (const probe of NOTIFY_PROBES) {
      const reached = routeAlert(route, probe.labels);
      if (reached.some((name) => notifies(receivers, name))) continue;
      out.push({
        path: "values.alertmanager.config",
        value: reached,
        message:
          `Helm release ${r.name} (environment ${env}): values.alertmanager.config routes ${probe.what} ${JSON.stringify(probe.labels)} to ` +
          `${JSON.stringify(reached)}, which notifies nobody; set ${probe.keys}`,
      });
    }
    return out;
  },
});

// ---- Triton's own metrics endpoint: on, reachable, with the series the HPA and the alerts read ----

/** ParseOption<bool> false spellings (any case). */
const FALSE = /^(false|off|0)$/i;
const isLoopbackAddress = (a: string): boolean => a === "localhost" || a === "::1" || /^127\./.test(a) || a === "[::1]";

/** `--metrics-config` settings as tritonserver reads them (setting=value, one per flag). */
function metricsConfig(c: { command?: readonly string[]; args?: readonly string[] }): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const v of flagValues(c, "--metrics-config")) {
    const eq = v.indexOf("=");
    if (eq > 0) out.set(v.slice(0, eq), [...(out.get(v.slice(0, eq)) ?? []), v.slice(eq + 1)]);
  }
  return out;
}

export const tritonMetricsEnabled = resourceRule<EnvConfig>({
  name: "triton-metrics-enabled",
  domain: "monitoring",
  configKey: "triton.groups[name={group}].extraArgs",
  description:
    "In the listed environments (default: staging and prod), every tritonserver container serves its metrics where Prometheus scrapes them: " +
    `no --allow-metrics=false, a --metrics-port equal to its "${TRITON_METRICS_PORT_NAME}" container port (${TRITON_PORTS.metrics} without one), ` +
    "no loopback --metrics-address (nor a loopback --http-address it defaults to), and --metrics-config keeps the latency counters " +
    "(counter_latencies, which hold the queue time the HPA scales on) and turns the latency summaries on (summary_latencies=true, the p99 SLO alert's series).",
  prevents:
    "A serving group whose metrics are off or unreachable: its autoscaler's queue-time metric is empty (it never scales out), and its alerts " +
    "(failures, latency, TritonTargetDown aside) never fire, while triton-metrics-scraped still sees a ServiceMonitor and a Service.",
  remediationSteps:
    "Remove the flag from the group's extraArgs (triton-platform:triton.groups[].extraArgs); the component writes --allow-metrics=true, " +
    `--metrics-port=${TRITON_PORTS.metrics} and --metrics-config=summary_latencies=true (components/upstream/tritonserver.ts).`,
  configSchema: {
    properties: {
      environments: { ...environmentsSchema("").environments, default: ["staging", "prod"], description: "Environments whose Triton metrics must be on." },
    },
  },
  check: (r, { environments }) => {
    if (!isWorkload(r) || !environments.includes(metadataOf(r).labels?.[ENVIRONMENT_LABEL] as string)) return NONE;
    const out: Finding[] = [];
    const name = `${(r.props as { kind?: string }).kind} ${metadataOf(r).namespace ?? "default"}/${metadataOf(r).name ?? r.name}`;
    for (const { spec, path } of podSpecsOf(r)) {
      for (const { c, path: cp } of containersOf(spec, path)) {
        if (!isTritonContainer(c) || cp.includes(".initContainers[")) continue;
        const at = `${cp}.args`;
        const push = (value: unknown, why: string) => out.push({ path: at, value, message: `${name}: ${at} has ${show(value)}: ${why}` });
        for (const v of flagValues(c, "--allow-metrics")) if (FALSE.test(v)) push(`--allow-metrics=${v}`, "Triton serves no metrics at all");
        const ports = flagValues(c, "--metrics-port");
        const declared = (c.ports ?? []).find((p) => p?.name === TRITON_METRICS_PORT_NAME)?.containerPort;
        const expected = declared ?? TRITON_PORTS.metrics;
        for (const v of ports)
          if (Number(v) !== Number(expected))
            push(
              `--metrics-port=${v}`,
              `Triton listens for metrics on ${v}, but the scrape reaches ${expected} (${declared !== undefined ? `container port "${TRITON_METRICS_PORT_NAME}"` : "the metrics port"})`,
            );
        const address = flagValues(c, "--metrics-address");
        const bind = address.length ? address.map((a) => ["--metrics-address", a]) : flagValues(c, "--http-address").map((a) => ["--http-address", a]);
        for (const [flag, a] of bind) if (isLoopbackAddress(a)) push(`${flag}=${a}`, "the metrics endpoint binds to loopback, out of Prometheus' reach");
        const cfg = metricsConfig(c);
        // Metrics-config values are judged strictly: only "true" is read as on here (docs/user_guide/metrics.md spells them true/false).
        for (const v of cfg.get("counter_latencies") ?? [])
          if (!/^true$/i.test(v))
            push(`--metrics-config=counter_latencies=${v}`, "the latency counters (nv_inference_queue_duration_us, the HPA's metric) are off");
        const summaries = cfg.get("summary_latencies") ?? [];
        if (summaries.length === 0 || summaries.some((v) => !/^true$/i.test(v)))
          push(
            summaries.length ? summaries.map((v) => `--metrics-config=summary_latencies=${v}`) : null,
            "latency summaries are off (the default), so the p99 SLO alert (nv_inference_request_summary_us) has no series",
          );
      }
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  monitoringAlertingInProd,
  tritonMetricsScraped,
  crdObjectsDependOnRelease,
  monitoringCriticalAlertsNotify,
  tritonMetricsEnabled,
];
