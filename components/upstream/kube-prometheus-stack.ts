// kube-prometheus-stack (prometheus-community/helm-charts): chart coordinates and every
// value key this stack sets, in one place. Keys checked against the chart's values.yaml
// (prometheus.prometheusSpec.*, alertmanager.*, grafana.* of the grafana subchart).
import { labelsChartDoesNotOwn } from "../../lib/labels";
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

/** Node label of a node's zone (well-known label): the HA replicas' anti-affinity topology. */
export const ZONE_TOPOLOGY_KEY = "topology.kubernetes.io/zone";

/**
 * Components the chart scrapes (and alerts and draws) that EKS does not expose (values.yaml
 * 88.1.5: `<component>.enabled` gates each one's Service, ServiceMonitor, rules and dashboard,
 * templates/exporters/<c>/ and templates/prometheus/rules-1.14/ at kube-prometheus-stack-88.1.5):
 * the scheduler, controller-manager and etcd run in the AWS-managed control plane, with no pod
 * in kube-system to select, so their Down alerts would fire forever. kube-proxy runs as the EKS
 * add-on DaemonSet but serves metrics on 127.0.0.1:10249 unless its add-on configuration is
 * changed (aws/containers-roadmap#657), which this stack does not do; scraping it would page
 * KubeProxyDown on every node.
 */
export const KPS_COMPONENTS_EKS_HIDES = ["kubeScheduler", "kubeControllerManager", "kubeEtcd", "kubeProxy"] as const;

/**
 * Spreading of an HA workload the chart runs (Prometheus, Alertmanager): one replica per zone,
 * required (the chart's podAntiAffinity "hard" with a zone topology key), and a PDB keeping all
 * but one up through a drain (podDisruptionBudget: its keys copied into the PDB's spec).
 */
function haValues(replicas: number) {
  const ha = replicas > 1;
  return {
    spec: { podAntiAffinity: ha ? "hard" : "soft", podAntiAffinityTopologyKey: ZONE_TOPOLOGY_KEY },
    // A single replica gets no PDB: minAvailable 1 of 1 would block every node drain.
    pdb: ha ? { enabled: true, minAvailable: replicas - 1, unhealthyPodEvictionPolicy: "AlwaysAllow" } : { enabled: false },
  };
}

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
  /** The release's namespace: Grafana's sidecar reads dashboards here only (namespaced RBAC). */
  readonly namespace: string;
  /** node-exporter's own namespace (Pod Security privileged), so the release namespace can enforce baseline. */
  readonly nodeExporterNamespace: string;
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
  const prometheusHa = haValues(i.prometheusReplicas);
  const alertmanagerHa = haValues(i.alertmanager.replicas);
  return {
    fullnameOverride: KPS_FULLNAME,
    commonLabels: labelsChartDoesNotOwn(i.commonLabels, KPS_CHART_LABELS),
    ...Object.fromEntries(KPS_COMPONENTS_EKS_HIDES.map((c) => [c, { enabled: false }])),
    // node-exporter needs hostNetwork/hostPID/hostPath (Pod Security privileged): in its own
    // namespace, so the release namespace does not have to admit privileged pods.
    "prometheus-node-exporter": { namespaceOverride: i.nodeExporterNamespace },
    prometheus: {
      podDisruptionBudget: prometheusHa.pdb,
      prometheusSpec: {
        ...prometheusHa.spec,
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
      podDisruptionBudget: alertmanagerHa.pdb,
      alertmanagerSpec: {
        ...alertmanagerHa.spec,
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
      // A Role in the release namespace instead of a ClusterRole: the sidecars read ConfigMaps
      // and Secrets of this namespace only (grafana 12.10.3 values.yaml rbac.namespaced).
      rbac: { namespaced: true },
      sidecar: {
        dashboards: {
          enabled: true,
          label: GRAFANA_DASHBOARD_LABEL.key,
          labelValue: GRAFANA_DASHBOARD_LABEL.value,
          // Every dashboard (the chart's and the stack's) is a ConfigMap of the release namespace;
          // the chart's "ALL" would need cluster-wide read of Secrets.
          searchNamespace: i.namespace,
        },
      },
    },
  };
}
