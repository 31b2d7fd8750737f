// Arguments of the Monitoring component, their defaults (stated once, here) and where they are applied.
import type { ServingGroupRef } from "../contracts";
import { EXACT_VERSION } from "../../lib/version";

/** Alert thresholds, in the units the config states (ms, ratios, °C, %, MiB/h). */
export interface AlertThresholds {
  /** Average queue time per request, ms. @default 50 */
  readonly queueTimeBudgetMs: number;
  /** Failure ratio per reason, 0–1. @default 0.05 */
  readonly failureRatio: number;
  /** p99 request latency SLO, ms. @default 500 */
  readonly p99SloMs: number;
  /** Canary failure ratio minus primary failure ratio that alerts, 0–1. @default 0.02 */
  readonly canaryFailureRatioMargin: number;
  /** °C. @default 85 */
  readonly gpuTempCelsius: number;
  /** %, 15-minute average. @default 95 */
  readonly gpuUtilPercent: number;
  /** MiB per hour of framebuffer growth under flat load. @default 256 */
  readonly gpuMemoryGrowthMiBPerHour: number;
}

export const DEFAULT_THRESHOLDS: AlertThresholds = {
  queueTimeBudgetMs: 50,
  failureRatio: 0.05,
  p99SloMs: 500,
  canaryFailureRatioMargin: 0.02,
  gpuTempCelsius: 85,
  gpuUtilPercent: 95,
  gpuMemoryGrowthMiBPerHour: 256,
};

/** Defaults of the optional arguments: applied here, and stated by the stack config schema. */
export const MONITORING_DEFAULTS = {
  scrapeInterval: "30s",
  retention: "15d",
  storageSize: "50Gi",
  prometheusReplicas: 1,
  prometheusResources: { cpu: "500m", memory: "2Gi" },
  alerting: { enabled: true, replicas: 1 },
  adapterReplicas: 1,
} as const;

export interface MonitoringArgs {
  /** Standard labels of the stack, put on every object (and the charts' commonLabels). */
  readonly labels: Record<string, string>;
  /** Namespace the Triton serving groups (and their metrics Services) run in. */
  readonly servingNamespace: string;
  /** Serving groups to scrape and to draw (from config; not from the serving component). */
  readonly servingGroups: readonly ServingGroupRef[];
  /** kube-prometheus-stack chart version, exact. */
  readonly kubePrometheusStackVersion: string;
  /** prometheus-adapter chart version, exact. */
  readonly prometheusAdapterVersion: string;
  /** @default "30s" */
  readonly scrapeInterval?: string;
  /** @default "15d" */
  readonly retention?: string;
  /** Prometheus volume size, "<n>Gi". @default "50Gi" */
  readonly storageSize?: string;
  /** @default the cluster's default StorageClass */
  readonly storageClass?: string;
  /** @default 1 */
  readonly prometheusReplicas?: number;
  /** @default { cpu: "500m", memory: "2Gi" } */
  readonly prometheusResources?: { readonly cpu: string; readonly memory: string };
  /** Alertmanager. @default { enabled: true, replicas: 1 } */
  readonly alerting?: { readonly enabled?: boolean; readonly replicas?: number };
  /** @default 1 */
  readonly adapterReplicas?: number;
  /** @default DEFAULT_THRESHOLDS */
  readonly thresholds?: Partial<AlertThresholds>;
}

export interface ResolvedMonitoring {
  readonly labels: Record<string, string>;
  readonly servingNamespace: string;
  readonly servingGroups: readonly ServingGroupRef[];
  readonly kubePrometheusStackVersion: string;
  readonly prometheusAdapterVersion: string;
  readonly scrapeInterval: string;
  readonly retention: string;
  readonly storageSize: string;
  /** 85 % of storageSize in Prometheus units (GB = GiB there). */
  readonly retentionSize: string;
  readonly storageClass?: string;
  readonly prometheusReplicas: number;
  readonly prometheusResources: { readonly cpu: string; readonly memory: string };
  readonly alerting: { readonly enabled: boolean; readonly replicas: number };
  readonly adapterReplicas: number;
  readonly thresholds: AlertThresholds;
}

export class MonitoringArgsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid Monitoring arguments:\n  - ${problems.join("\n  - ")}`);
    this.name = "MonitoringArgsError";
  }
}

/** Apply defaults once and validate; throws MonitoringArgsError naming every bad argument. */
export function resolveMonitoring(args: MonitoringArgs): ResolvedMonitoring {
  const problems: string[] = [];
  for (const key of ["kubePrometheusStackVersion", "prometheusAdapterVersion"] as const) {
    if (!EXACT_VERSION.test(args[key])) problems.push(`'${key}' (${JSON.stringify(args[key])}) must be an exact chart version such as 1.2.3`);
  }
  const storageSize = args.storageSize ?? MONITORING_DEFAULTS.storageSize;
  const gi = /^([1-9][0-9]*)Gi$/.exec(storageSize);
  if (!gi) problems.push(`'storageSize' (${JSON.stringify(storageSize)}) must be a size in Gi such as 100Gi`);
  if (args.servingGroups.length === 0) problems.push("'servingGroups' must name at least one serving group");
  if (problems.length) throw new MonitoringArgsError(problems);
  return {
    labels: args.labels,
    servingNamespace: args.servingNamespace,
    servingGroups: args.servingGroups,
    kubePrometheusStackVersion: args.kubePrometheusStackVersion,
    prometheusAdapterVersion: args.prometheusAdapterVersion,
    scrapeInterval: args.scrapeInterval ?? MONITORING_DEFAULTS.scrapeInterval,
    retention: args.retention ?? MONITORING_DEFAULTS.retention,
    storageSize,
    // Leave 15 % headroom for the WAL and compaction; Prometheus counts GB as GiB.
    retentionSize: `${Math.max(1, Math.floor(Number(gi![1]) * 0.85))}GB`,
    storageClass: args.storageClass,
    prometheusReplicas: args.prometheusReplicas ?? MONITORING_DEFAULTS.prometheusReplicas,
    prometheusResources: args.prometheusResources ?? MONITORING_DEFAULTS.prometheusResources,
    alerting: {
      enabled: args.alerting?.enabled ?? MONITORING_DEFAULTS.alerting.enabled,
      replicas: args.alerting?.replicas ?? MONITORING_DEFAULTS.alerting.replicas,
    },
    adapterReplicas: args.adapterReplicas ?? MONITORING_DEFAULTS.adapterReplicas,
    thresholds: { ...DEFAULT_THRESHOLDS, ...args.thresholds },
  };
}
