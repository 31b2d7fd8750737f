// The Monitoring component's settings: every key's type, rule, default and documentation,
// stated once. config/schema.ts composes this section as `triton-platform:monitoring`, and a
// direct caller of the component resolves through resolveMonitoringArgs, so both get the
// same default from the same line.
import * as v from "valibot";
import type { ServingGroupAlertRef } from "../contracts";
import { DCGM_EXPORTER_BY_OPERATOR, dcgmLabels, type DcgmLabelNames } from "../upstream/dcgm";
import { KUBE_PROMETHEUS_STACK_CHART } from "../upstream/kube-prometheus-stack";
import { PROMETHEUS_ADAPTER_CHART } from "../upstream/prometheus-adapter";
import { alertingSettings } from "./alerting-schema";
import { bool, dnsLabel, doc, integer, list, number, oneOf, parseSettings, pattern, pinnedVersion, quantity, refined, section, str } from "../../lib/schema";

/** Alert thresholds, in the units each key states (ms, ratios, °C, %, MiB/h). */
export const alertThresholdsSettings = section({
  queueTimeBudgetMs: doc(
    v.optional(number({ min: 0.001 }), 50),
    "Average queue time per request above which TritonQueueTimeAboveBudget fires, ms (> 0; compared in µs, ×1000).",
  ),
  failureRatio: doc(
    v.optional(number({ min: 0, max: 1 }), 0.05),
    "Failure ratio per reason (failures of one reason / (successes + failures)) above which TritonInferenceFailureRatioHigh fires, 0–1.",
  ),
  p99SloMs: doc(
    v.optional(number({ min: 0.001 }), 500),
    "p99 request latency SLO (summary quantile 0.99, worst pod) above which TritonP99LatencyAboveSLO fires, ms (> 0).",
  ),
  canaryFailureRatioMargin: doc(
    v.optional(number({ min: 0, max: 1 }), 0.02),
    "How much worse (absolute ratio, 0–1) the canary's failure ratio may be than the primary's before TritonCanaryFailureRatioWorse fires.",
  ),
  gpuTempCelsius: doc(v.optional(integer({ min: 40, max: 110 }), 85), "GPU temperature above which GpuTemperatureHigh fires, °C (40–110)."),
  gpuUtilPercent: doc(
    v.optional(integer({ min: 1, max: 100 }), 95),
    "GPU utilisation (15-minute average) above which GpuUtilisationSaturated fires, % (1–100).",
  ),
  gpuMemoryGrowthMiBPerHour: doc(
    v.optional(number({ min: 1 }), 256),
    "Framebuffer growth under flat load above which GpuMemoryLeak fires, MiB per hour (>= 1).",
  ),
});

const monitoringEntries = {
  kubePrometheusStackVersion: doc(
    v.optional(pinnedVersion, KUBE_PROMETHEUS_STACK_CHART.version),
    "kube-prometheus-stack chart version, exact (no ranges). The default is the version whose value keys " +
      "components/upstream/kube-prometheus-stack.ts was checked against.",
  ),
  prometheusAdapterVersion: doc(
    v.optional(pinnedVersion, PROMETHEUS_ADAPTER_CHART.version),
    "prometheus-adapter chart version, exact (no ranges). The default is the version whose value keys " +
      "components/upstream/prometheus-adapter.ts was checked against.",
  ),
  scrapeInterval: doc(
    v.optional(
      pattern(/^([1-5][0-9]s|60s|1m)$/, "must be a duration from 10s to 60s such as 15s or 30s (rate windows assume at least 4 samples in 5m)"),
      "30s",
    ),
    "How often Triton and DCGM are scraped, 10s–60s (rate windows assume at least 4 samples in 5m); also Prometheus' rule " +
      "evaluation interval, and the adapter's rate window is 4 of them (at least 60s).",
  ),
  retention: doc(
    v.optional(pattern(/^[1-9][0-9]*[hdwy]$/, "must be a Prometheus duration in hours, days, weeks or years such as 15d"), "15d"),
    "TSDB retention of Prometheus, a Prometheus duration in hours, days, weeks or years (h/d/w/y).",
  ),
  storageSize: doc(
    v.optional(pattern(/^[1-9][0-9]*Gi$/, "must be a size in Gi such as 100Gi"), "50Gi"),
    "Size of each Prometheus volume, `<n>Gi`; Prometheus' retentionSize is 85 % of it (headroom for the WAL and compaction).",
  ),
  prometheusReplicas: doc(v.optional(integer({ min: 1, max: 3 }), 1), "Prometheus replicas, 1–3 (2 = an HA pair scraping the same targets)."),
  prometheusResources: doc(
    v.optional(
      section({
        cpu: doc(v.optional(quantity, "500m"), "CPU request of each Prometheus pod (a Kubernetes quantity)."),
        memory: doc(v.optional(quantity, "2Gi"), "Memory request of each Prometheus pod (a Kubernetes quantity); the memory limit equals it."),
      }),
      {},
    ),
    "Prometheus CPU/memory requests; the memory limit equals the request (an over-committed node would OOM-kill Prometheus mid-compaction).",
  ),
  alerting: doc(
    v.optional(alertingSettings, {}),
    "Alertmanager: on/off, replicas, and the receivers alerts notify (PagerDuty, Slack, webhook, a Watchdog heartbeat); " +
      "prod must keep it on (policy monitoring-alerting-in-prod) and page someone on critical alerts (policy monitoring-critical-alerts-notify).",
  ),
  adapterReplicas: doc(v.optional(integer({ min: 1, max: 3 }), 1), "prometheus-adapter replicas, 1–3 (the HPAs stop scaling while it is down)."),
  // An absent thresholds section parses as {}: the defaults above, stated once.
  thresholds: doc(v.optional(alertThresholdsSettings, {}), "Alert thresholds, in the units each key states (ms, ratios, °C, %, MiB/h)."),
};

/** The `monitoring` section of a stack file. */
export const monitoringSettings = doc(
  section(monitoringEntries),
  "Observability: kube-prometheus-stack (Prometheus, Alertmanager, Grafana), the Triton and DCGM scrape, alert rules, dashboards, prometheus-adapter.",
);

/** The settings as a stack file or a direct caller writes them (every key optional). */
export type MonitoringSettingsInput = v.InferInput<typeof monitoringSettings>;
/** The settings with every default applied. */
export type MonitoringSettings = v.InferOutput<typeof monitoringSettings>;
export type AlertThresholds = MonitoringSettings["thresholds"];

/** The thresholds with nothing set: the schema's defaults (what the promtool cases are built around). */
export const DEFAULT_THRESHOLDS: AlertThresholds = v.parse(alertThresholdsSettings, {});

/** What the component takes from its caller beside its settings (not stack-file keys). */
export interface MonitoringReferences {
  /** Standard labels of the stack, put on every object (and the charts' commonLabels). */
  readonly labels: Readonly<Record<string, string>>;
  /** Namespace the Triton serving groups (and their metrics Services) run in. */
  readonly servingNamespace: string;
  /** Serving groups to scrape, draw and alert on (their start-up budget and listed models). At least one. */
  readonly servingGroups: readonly ServingGroupAlertRef[];
  /** GPU Operator chart version (gpu.operator.version): dcgm-exporter's label names follow it. */
  readonly gpuOperatorVersion: string;
  /** Namespace of the GPU Operator (gpu.operator.namespace): the only one the DCGM scrape discovers. */
  readonly gpuOperatorNamespace: string;
  /** Zones of the cluster: HA Prometheus and Alertmanager replicas are spread one per zone (hard anti-affinity). */
  readonly zoneCount: number;
  /**
   * StorageClass of the Prometheus and Alertmanager volumes (the storage component's class).
   * Required: EKS clusters created at 1.30 or later have no default class, so a claim without
   * one stays Pending.
   */
  readonly storageClassName: string;
}

/** Arguments of the Monitoring component: its settings (defaults in monitoringSettings) and the runtime references. */
export type MonitoringArgs = Readonly<MonitoringSettingsInput> & MonitoringReferences;

export interface ResolvedMonitoring extends MonitoringSettings, MonitoringReferences {
  /** 85 % of storageSize in Prometheus units (GB = GiB there). */
  readonly retentionSize: string;
  /** dcgm-exporter's label names at gpuOperatorVersion. */
  readonly dcgmLabels: DcgmLabelNames;
}

/** Keys of the DCGM label table (components/upstream/dcgm.ts), as a non-empty tuple. */
const KNOWN_OPERATOR_VERSIONS = Object.keys(DCGM_EXPORTER_BY_OPERATOR) as [string, ...string[]];

/**
 * What a direct caller's arguments are checked against: the settings, and the one rule of the
 * references (a ServiceMonitor that keeps no Service would scrape nothing, silently). The
 * other references are passed through.
 */
const monitoringArgsSchema = refined(
  section({
    ...monitoringEntries,
    servingGroups: list(
      v.object({
        name: str(),
        canary: bool(),
        modelLoadBudgetSeconds: integer({ min: 1 }),
        tracks: list(v.object({ track: oneOf(["primary", "canary"]), models: list(str()) }), { min: 1, what: "track" }),
      }),
      { min: 1, what: "serving group" },
    ),
    // An empty storageClassName asks for a volume of no class: never provisioned dynamically.
    storageClassName: str(),
    // The label names of another operator release are unknown: dashboards and alerts would select nothing.
    gpuOperatorVersion: oneOf(KNOWN_OPERATOR_VERSIONS),
    gpuOperatorNamespace: dnsLabel,
    zoneCount: integer({ min: 1 }),
  }),
  (s, ctx) => {
    // HA replicas are spread one per zone (hard anti-affinity): one more than the zones never schedules.
    if (s.prometheusReplicas > 1 && s.prometheusReplicas > s.zoneCount) {
      ctx.addIssue({ path: ["prometheusReplicas"], message: `must be at most the number of zones (${s.zoneCount}): HA replicas run one per zone` });
    }
    if (s.alerting.enabled && s.alerting.replicas > 1 && s.alerting.replicas > s.zoneCount) {
      ctx.addIssue({ path: ["alerting", "replicas"], message: `must be at most the number of zones (${s.zoneCount}): HA replicas run one per zone` });
    }
  },
);

/**
 * Resolve a direct caller's arguments through the schema: defaults applied once, every bad
 * argument reported together in one SettingsError naming the component.
 */
export function resolveMonitoringArgs(args: MonitoringArgs, name = "monitoring"): ResolvedMonitoring {
  const { labels, servingNamespace, servingGroups, storageClassName, gpuOperatorVersion, gpuOperatorNamespace, zoneCount, ...settings } = args;
  const {
    servingGroups: _checked,
    storageClassName: _named,
    gpuOperatorVersion: _version,
    gpuOperatorNamespace: _namespace,
    zoneCount: _zones,
    ...s
  } = parseSettings(
    monitoringArgsSchema,
    { ...settings, servingGroups, storageClassName, gpuOperatorVersion, gpuOperatorNamespace, zoneCount },
    `invalid arguments of Monitoring "${name}"`,
  );
  // storageSize matched /^[1-9][0-9]*Gi$/ above.
  const gi = Number(s.storageSize.slice(0, -"Gi".length));
  return {
    ...s,
    labels,
    servingNamespace,
    servingGroups,
    storageClassName,
    gpuOperatorVersion,
    gpuOperatorNamespace,
    zoneCount,
    // Leave 15 % headroom for the WAL and compaction; Prometheus counts GB as GiB.
    retentionSize: `${Math.max(1, Math.floor(gi * 0.85))}GB`,
    // gpuOperatorVersion is one of the table's keys (checked above).
    dcgmLabels: dcgmLabels(gpuOperatorVersion)!,
  };
}
