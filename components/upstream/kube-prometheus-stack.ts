// kube-prometheus-stack (prometheus-community/helm-charts): chart coordinates and every
// value key this stack sets, in one place. Keys checked against the chart's values.yaml
// (prometheus.prometheusSpec.*, alertmanager.*, grafana.* of the grafana subchart).
import { labelsChartDoesNotOwn } from "../naming";
import type { ScrapeConfig } from "./prometheus";

export const KUBE_PROMETHEUS_STACK_CHART = {
  chart: "kube-prometheus-stack",
  repo: "https://prometheus-community.github.io/helm-charts",
  /** The version these value keys were checked against (stack files may pin another). */
  version: "88.1.5",
} as const;

/**
 * fullnameOverride: object names stop depending on the release name (the chart truncates
 * its fullname to 26 characters), so the adapter's Prometheus URL is stable.
 */
export const KPS_FULLNAME = "kube-prometheus-stack";
/** The ClusterIP Service the chart creates in front of Prometheus, and its port. */
export const KPS_PROMETHEUS_SERVICE = { name: `${KPS_FULLNAME}-prometheus`, port: 9090 } as const;

/** Keys of the grafana.admin.existingSecret Secret (the grafana chart's defaults, set explicitly). */
export const GRAFANA_ADMIN_SECRET_KEYS = { user: "admin-user", password: "admin-password" } as const;
/** Label (and value) the Grafana dashboard sidecar watches ConfigMaps for. */
export const GRAFANA_DASHBOARD_LABEL = { key: "grafana_dashboard", value: "1" } as const;

/**
 * Labels the chart sets on its objects itself, so commonLabels must not repeat them: the
 * `kube-prometheus-stack.labels` helper (templates/_helpers.tpl at kube-prometheus-stack-88.1.5:
 * app.kubernetes.io/managed-by, instance, version, part-of, chart, release, heritage) and the
 * keys its templates write beside it (`app` on every object; app.kubernetes.io/name and
 * component on some).
 */
export const KPS_CHART_LABELS = [
  "app.kubernetes.io/managed-by",
  "app.kubernetes.io/instance",
  "app.kubernetes.io/version",
  "app.kubernetes.io/part-of",
  "chart",
  "release",
  "heritage",
  "app",
  "app.kubernetes.io/name",
  "app.kubernetes.io/component",
] as const;

export interface KubePrometheusStackInputs {
  /** The stack's labels; those the chart owns (KPS_CHART_LABELS) are left to the chart. */
  readonly commonLabels: Readonly<Record<string, string>>;
  readonly scrapeInterval: string;
  readonly evaluationInterval: string;
  readonly retention: string;
  /** Prometheus retentionSize, e.g. "85GB" (Prometheus units, powers of 1024). */
  readonly retentionSize: string;
  readonly storageSize: string;
  /** StorageClass of both volumes (Prometheus storageSpec, Alertmanager storage); always named, since a cluster may have no default. */
  readonly storageClass: string;
  readonly prometheusReplicas: number;
  readonly prometheusResources: { requests: { cpu: string; memory: string }; limits: { memory: string } };
  readonly additionalScrapeConfigs: ScrapeConfig[];
  readonly alertmanager: { enabled: boolean; replicas: number; storageSize: string };
  readonly grafanaAdminSecretName: string;
}

// prometheus.prometheusSpec.storageSpec and alertmanager.alertmanagerSpec.storage take the same
// shape (values.yaml 88.1.5: `volumeClaimTemplate.spec.storageClassName`, prometheus-operator's StorageSpec).
function volumeClaimTemplate(size: string, storageClass: string) {
  return {
    spec: {
      storageClassName: storageClass,
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: size } },
    },
  };
}

/** The chart's values for this stack. */
export function kubePrometheusStackValues(i: KubePrometheusStackInputs): Record<string, unknown> {
  return {
    fullnameOverride: KPS_FULLNAME,
    commonLabels: labelsChartDoesNotOwn(i.commonLabels, KPS_CHART_LABELS),
    prometheus: {
      prometheusSpec: {
        scrapeInterval: i.scrapeInterval,
        evaluationInterval: i.evaluationInterval,
        retention: i.retention,
        // retentionSize below the volume size: Prometheus deletes old blocks before the
        // disk fills, instead of crash-looping on a full volume.
        retentionSize: i.retentionSize,
        replicas: i.prometheusReplicas,
        resources: i.prometheusResources,
        // Persistent TSDB: a pod reschedule must not wipe the history alerts look back on.
        storageSpec: { volumeClaimTemplate: volumeClaimTemplate(i.storageSize, i.storageClass) },
        // Select every ServiceMonitor/PodMonitor/PrometheusRule, not only those labelled with
        // this Helm release: the stack's own objects carry the platform's labels, not `release`.
        serviceMonitorSelectorNilUsesHelmValues: false,
        podMonitorSelectorNilUsesHelmValues: false,
        ruleSelectorNilUsesHelmValues: false,
        probeSelectorNilUsesHelmValues: false,
        additionalScrapeConfigs: i.additionalScrapeConfigs,
      },
    },
    alertmanager: {
      enabled: i.alertmanager.enabled,
      alertmanagerSpec: {
        replicas: i.alertmanager.replicas,
        // Silences and notification state survive a restart (no re-paging after a reschedule).
        storage: { volumeClaimTemplate: volumeClaimTemplate(i.alertmanager.storageSize, i.storageClass) },
      },
    },
    grafana: {
      enabled: true,
      // The chart's values.yaml ships adminPassword "prom-operator"; existingSecret replaces it
      // with the generated Secret, so no literal password exists anywhere.
      admin: {
        existingSecret: i.grafanaAdminSecretName,
        userKey: GRAFANA_ADMIN_SECRET_KEYS.user,
        passwordKey: GRAFANA_ADMIN_SECRET_KEYS.password,
      },
      sidecar: {
        dashboards: {
          enabled: true,
          label: GRAFANA_DASHBOARD_LABEL.key,
          labelValue: GRAFANA_DASHBOARD_LABEL.value,
          searchNamespace: "ALL",
        },
      },
    },
  };
}
