// The stack configuration: every `triton-platform:*` key, its rule and its default.
// Each top-level key is a section; later components add theirs to `sections` below.
import * as v from "valibot";
import { KUBE_PROMETHEUS_STACK_CHART } from "../components/upstream/kube-prometheus-stack";
import { PROMETHEUS_ADAPTER_CHART } from "../components/upstream/prometheus-adapter";
import { DEFAULT_THRESHOLDS as T, MONITORING_DEFAULTS as M } from "../components/monitoring/args";
import { bool, dnsLabel, integer, mapping, number, oneOf, pattern, pinnedVersion, quantity, refined, section, uniqueList } from "../lib/schema";
import { gpuCrossChecks, gpuSection } from "./gpu";
import { modelRepositorySection } from "./model-repository";
import { monitoringCrossChecks } from "./monitoring";
import { gatewaySettings } from "../components/gateway/schema";
import { gatewayCrossChecks } from "./gateway";
import { tritonCrossChecks, tritonSection } from "./triton";

export const ENVIRONMENTS = ["dev", "staging", "prod"] as const;

const awsZone = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/, "must be an AWS availability zone such as us-east-1a");
const TAGS_RULE = "must be a mapping of tag keys to values";
const tagValue = pattern(/^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u, "must be an AWS tag value (at most 256 letters, digits, spaces and _.:/=+-@)");

export const sections = {
  /** Which environment this stack is; drives policy levels and production defaults. */
  environment: oneOf(ENVIRONMENTS),
  /** The existing EKS cluster the platform is installed into. */
  cluster: section({
    /** EKS cluster name, looked up with aws.eks.getCluster. */
    name: pattern(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, "must be an EKS cluster name (letters, digits, '-' and '_', at most 100 characters)"),
    /** Availability zones the GPU capacity spans. */
    zones: uniqueList(awsZone, { min: 1, what: "zone" }, "must not repeat a zone"),
  }),
  /** Extra tags for every AWS resource (on top of the standard ones). */
  tags: v.optional(
    v.pipe(
      mapping(TAGS_RULE),
      v.record(
        pattern(/^(?!aws:)[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$/u, "must be an AWS tag key (1-128 characters, not starting with 'aws:')"),
        tagValue,
        TAGS_RULE,
      ),
    ),
    {},
  ),
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
  /** The Envoy gateway (mirroring to canaries) and who may reach it (components/gateway/schema.ts). */
  gateway: v.optional(gatewaySettings, {}),
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
export const awsRegion = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, "must be an AWS region such as us-east-1");
