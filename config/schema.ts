// The stack configuration: every `triton-platform:*` key, its rule and its default.
// Each top-level key is a section; later components add theirs to `sections` below.
import * as v from "valibot";
import { KUBE_PROMETHEUS_STACK_CHART } from "../components/upstream/kube-prometheus-stack";
import { PROMETHEUS_ADAPTER_CHART } from "../components/upstream/prometheus-adapter";
import { DEFAULT_THRESHOLDS as T, MONITORING_DEFAULTS as M } from "../components/monitoring/args";
import { bool, dnsLabel, integer, number, pattern, pinnedVersion, quantity, refined, section } from "../lib/schema";
import { clusterSettings, environmentSetting, tagsSetting } from "../components/cluster/schema";
import { gpuCrossChecks, gpuSection } from "./gpu";
import { modelRepositorySection } from "./model-repository";
import { monitoringCrossChecks } from "./monitoring";
import { gatewayCrossChecks, gatewaySection } from "./gateway";
import { tritonCrossChecks, tritonSection } from "./triton";

export { ENVIRONMENTS } from "../components/cluster/schema";

export const sections = {
  environment: environmentSetting,
  cluster: clusterSettings,
  tags: tagsSetting,
  /** The Kubernetes side of the serving platform: namespace and serving groups (config/triton.ts). */
  triton: tritonSection,
  /** GPU node group and NVIDIA GPU Operator (config/gpu.ts). */
  gpu: gpuSection,
  /** Where Triton's models live and how it reads them (components/model-repository). */
  modelRepository: modelRepositorySection,
  /** Observability: kube-prometheus-stack, scrape, alert rules, dashboards, prometheus-adapter. */
  monitoring: v.optional(section({
    /** kube-prometheus-stack chart version (exact). @default KUBE_PROMETHEUS_STACK_CHART.version */
    kubePrometheusStackVersion: v.optional(pinnedVersion, KUBE_PROMETHEUS_STACK_CHART.version),
    /** prometheus-adapter chart version (exact). @default PROMETHEUS_ADAPTER_CHART.version */
    prometheusAdapterVersion: v.optional(pinnedVersion, PROMETHEUS_ADAPTER_CHART.version),
    /** How often Triton and DCGM are scraped. @default "30s" */
    scrapeInterval: v.optional(pattern(/^([1-5][0-9]s|60s|1m)$/, "must be a duration from 10s to 60s such as 15s or 30s (rate windows assume at least 4 samples in 5m)"), M.scrapeInterval),
    /** TSDB retention (Prometheus duration). @default "15d" */
    retention: v.optional(pattern(/^[1-9][0-9]*[hdwy]$/, "must be a Prometheus duration in hours, days, weeks or years such as 15d"), M.retention),
    /** Size of each Prometheus volume, in Gi. @default "50Gi" */
    storageSize: v.optional(pattern(/^[1-9][0-9]*Gi$/, "must be a size in Gi such as 100Gi"), M.storageSize),
    /** StorageClass of the Prometheus and Alertmanager volumes. @default the cluster's default class */
    storageClass: v.optional(dnsLabel),
    /** Prometheus replicas (2 = an HA pair scraping the same targets). @default 1 */
    prometheusReplicas: v.optional(integer({ min: 1, max: 3 }), M.prometheusReplicas),
    /** Prometheus CPU/memory requests; the memory limit equals the request. */
    prometheusResources: v.optional(section({ cpu: v.optional(quantity, M.prometheusResources.cpu), memory: v.optional(quantity, M.prometheusResources.memory) }), {}),
    /** Alertmanager: on in staging and prod (policy monitoring-alerting-in-prod). */
    alerting: v.optional(section({
      /** @default true */
      enabled: v.optional(bool(), M.alerting.enabled),
      /** Alertmanager replicas (they gossip; 3 survive a node loss without double-paging). @default 1 */
      replicas: v.optional(integer({ min: 1, max: 5 }), M.alerting.replicas),
    }), {}),
    /** prometheus-adapter replicas (the HPAs stop scaling while it is down). @default 1 */
    adapterReplicas: v.optional(integer({ min: 1, max: 3 }), M.adapterReplicas),
    /** Alert thresholds. */
    thresholds: v.optional(section({
      /** Average queue time per request above which TritonQueueTimeAboveBudget fires, ms. @default 50 */
      queueTimeBudgetMs: v.optional(number({ min: 0.001 }), T.queueTimeBudgetMs),
      /** Failure ratio (per reason) above which TritonInferenceFailureRatioHigh fires, 0–1. @default 0.05 */
      failureRatio: v.optional(number({ min: 0, max: 1 }), T.failureRatio),
      /** p99 request latency SLO (summary quantile 0.99), ms. @default 500 */
      p99SloMs: v.optional(number({ min: 0.001 }), T.p99SloMs),
      /** How much worse (absolute ratio) the canary's failure ratio may be than the primary's. @default 0.02 */
      canaryFailureRatioMargin: v.optional(number({ min: 0, max: 1 }), T.canaryFailureRatioMargin),
      /** GPU temperature above which GpuTemperatureHigh fires, °C. @default 85 */
      gpuTempCelsius: v.optional(integer({ min: 40, max: 110 }), T.gpuTempCelsius),
      /** GPU utilisation (15 min average) above which GpuUtilisationSaturated fires, %. @default 95 */
      gpuUtilPercent: v.optional(integer({ min: 1, max: 100 }), T.gpuUtilPercent),
      /** Framebuffer growth under flat load above which GpuMemoryLeak fires, MiB per hour. @default 256 */
      gpuMemoryGrowthMiBPerHour: v.optional(number({ min: 1 }), T.gpuMemoryGrowthMiBPerHour),
    }), {}), // an absent section parses as {}: the defaults above, stated once
  }), {}),
  /** The Envoy gateway (mirroring to canaries) and who may reach it (config/gateway.ts). */
  gateway: v.optional(gatewaySection, {}),
};

// Checks that span sections; each names the key it is about.
export const stackConfigSchema = refined(section(sections), gpuCrossChecks, monitoringCrossChecks, gatewayCrossChecks, tritonCrossChecks);

/** The validated, defaulted configuration that index.ts hands to the components. */
export type StackConfig = v.InferOutput<typeof stackConfigSchema> & {
  /** The Pulumi stack name (dev, staging, prod, …). */
  stack: string;
  /** aws:region of the stack. */
  region: string;
};

// Keys of other namespaces that this program reads (and so validates).
export { awsRegion } from "../components/cluster/schema";

/** The docs page of each section (its key table is generated there by npm run docs); "" for none. */
export const SECTION_PAGES: Record<keyof typeof sections, string> = {
  environment: "",
  cluster: "",
  tags: "",
  triton: "docs/triton-serving.md",
  gpu: "docs/gpu-nodes.md",
  modelRepository: "docs/model-repository.md",
  monitoring: "docs/monitoring.md",
  gateway: "docs/gateway-and-firewall.md",
};
