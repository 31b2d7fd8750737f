// Observability for the platform: kube-prometheus-stack (Prometheus, Alertmanager, Grafana),
// the Triton and DCGM scrape, alert rules, dashboards, and prometheus-adapter for the HPAs.
// Settings: schema.ts; plain data: builders.ts (and scrape, rules, adapter, dashboards); this
// class only creates resources from it.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as random from "@pulumi/random";
import { MONITORING_NAMESPACE } from "../contracts";
import { KPS_PROMETHEUS_SERVICE } from "../upstream/kube-prometheus-stack";
import * as v from "valibot";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { plural } from "../summary-text";
import { monitoringSettings, resolveMonitoringArgs, type MonitoringArgs, type ResolvedMonitoring } from "./schema";
import { alertmanagerReceiversSecret, alertmanagerSecretData, needsAlertmanagerSecret } from "./alertmanager";
import {
  alertsPrometheusRule,
  dashboardConfigMaps,
  grafanaAdminSecret,
  kubePrometheusStackRelease,
  monitoringNamespace,
  nodeExporterNamespace,
  PROMETHEUS_SERVICE_URL,
  prometheusAdapterRelease,
} from "./builders";
import { gatewayPodMonitor, tritonServiceMonitor } from "./scrape";

export * from "./schema";
export * from "./builders";
export {
  tritonServiceMonitor,
  tritonRelabelConfigs,
  dcgmScrapeConfig,
  additionalScrapeConfigs,
  gatewayPodMonitor,
  gatewayRelabelConfigs,
  TRITON_JOB,
  GATEWAY_JOB,
} from "./scrape";
export {
  alertRuleFile,
  targetDownFor,
  canaryGateRules,
  CANARY_GATE_RECORD,
  CANARY_GATE_FAILED_ALERT,
  CANARY_GATE_INSUFFICIENT_ALERT,
  type AlertInputs,
} from "./rules";
export { canaryGates, gateVerdict, stageVerdict, type CanaryGates, type Gate, type Verdict } from "./gates";
export { queueMetricsQuery, pendingMetricsQuery, adapterRateWindow } from "./adapter";
export { dashboards, dashboardExpressions } from "./dashboards";
export * from "./alertmanager";
export * from "./alerting-schema";

/** The receivers Secret (none when Alertmanager is off or no receiver has a secret), its values marked secret. */
function alertmanagerReceiversSecretResource(name: string, r: ResolvedMonitoring, opts: pulumi.CustomResourceOptions): k8s.core.v1.Secret[] {
  if (!needsAlertmanagerSecret(r.alerting)) return [];
  const data = Object.fromEntries(Object.entries(alertmanagerSecretData(r.alerting)).map(([k, v]) => [k, pulumi.secret(v)]));
  return [new k8s.core.v1.Secret(`${name}-alertmanager-receivers`, alertmanagerReceiversSecret(r.labels, data), opts)];
}

export class Monitoring extends pulumi.ComponentResource {
  readonly namespace: pulumi.Output<string>;
  readonly grafanaAdminSecretName: pulumi.Output<string>;
  readonly prometheusUrl: string;
  readonly kubePrometheusStack: k8s.helm.v3.Release;
  readonly prometheusAdapter: k8s.helm.v3.Release;

  constructor(name: string, args: MonitoringArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:monitoring:Monitoring", name, {}, opts);
    const r = resolveMonitoringArgs(args, name);

    const ns = new k8s.core.v1.Namespace(`${name}-ns`, monitoringNamespace(r), { parent: this });
    const nodeExporterNs = new k8s.core.v1.Namespace(`${name}-node-exporter-ns`, nodeExporterNamespace(r), { parent: this });

    // Generated, stored only as a secret in state: no literal password in code or stack files.
    const password = new random.RandomPassword(`${name}-grafana-admin`, { length: 32, special: false }, { parent: this });
    const adminSecret = new k8s.core.v1.Secret(`${name}-grafana-admin`, grafanaAdminSecret(r, password.result), { parent: this, dependsOn: [ns] });

    // Alertmanager's receiver keys: a Secret of their own (alertmanager.ts), never in the Helm values.
    const receivers = alertmanagerReceiversSecretResource(name, r, { parent: this, dependsOn: [ns] });

    this.kubePrometheusStack = new k8s.helm.v3.Release(`${name}-kube-prometheus-stack`, kubePrometheusStackRelease(r), {
      parent: this,
      dependsOn: [ns, nodeExporterNs, adminSecret, ...receivers],
    });

    // ServiceMonitor and PrometheusRule are CRDs the release installs: without dependsOn the
    // first `pulumi up` fails with "no matches for kind".
    const crdOpts = { parent: this, dependsOn: [this.kubePrometheusStack] };
    new k8s.apiextensions.CustomResource(`${name}-triton-servicemonitor`, tritonServiceMonitor(r, MONITORING_NAMESPACE), crdOpts);
    new k8s.apiextensions.CustomResource(`${name}-gateway-podmonitor`, gatewayPodMonitor(r, MONITORING_NAMESPACE), crdOpts);
    new k8s.apiextensions.CustomResource(`${name}-alerts`, alertsPrometheusRule(r), crdOpts);

    for (const cm of dashboardConfigMaps(r)) {
      new k8s.core.v1.ConfigMap(`${name}-${cm.metadata.name}`, cm, { parent: this, dependsOn: [ns] });
    }

    this.prometheusAdapter = new k8s.helm.v3.Release(`${name}-prometheus-adapter`, prometheusAdapterRelease(r), {
      parent: this,
      dependsOn: [this.kubePrometheusStack],
    });

    this.namespace = ns.metadata.name;
    this.grafanaAdminSecretName = adminSecret.metadata.name;
    this.prometheusUrl = `${PROMETHEUS_SERVICE_URL}:${KPS_PROMETHEUS_SERVICE.port}`;
    this.registerOutputs({ namespace: this.namespace, grafanaAdminSecretName: this.grafanaAdminSecretName, prometheusUrl: this.prometheusUrl });
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
/** The stack file's `monitoring` section (observability: kube-prometheus-stack, scrape, alert rules, dashboards, prometheus-adapter): optional, every key defaulted. */
const monitoringSection = v.optional(monitoringSettings, {});

declare module "../component" {
  interface StackSettings {
    monitoring: v.InferOutput<typeof monitoringSection>;
  }
  interface Produced {
    monitoring: Monitoring;
  }
}

/**
 * Observability: scrapes the serving groups' metrics Services through the contracts (not the
 * serving component's code), so it can be created before or without it.
 */
export const monitoringComponent: ComponentDescriptor = {
  name: "monitoring",
  sections: { monitoring: sectionSpec<"monitoring">(monitoringSection, "docs/monitoring.md") },
  policyDomains: ["monitoring", "secrets"],
  argumentKeys: {
    servingNamespace: "triton.namespace",
    gpuOperatorVersion: "gpu.operator.version",
    gpuOperatorNamespace: "gpu.operator.namespace",
    zoneCount: "cluster.zones",
  },
  build(ctx) {
    const { triton, gpu, cluster } = ctx.settings;
    const storage = ctx.need("storage");
    const monitoring = new Monitoring(
      "monitoring",
      {
        labels: ctx.need("labels"),
        servingNamespace: triton.namespace,
        // Each group's start-up budget and listed models, as the serving groups resolved them.
        servingGroups: ctx.need("servingGroupAlerts"),
        storageClassName: storage.storageClassName,
        gpuOperatorVersion: gpu.operator.version,
        gpuOperatorNamespace: gpu.operator.namespace,
        zoneCount: cluster.zones.length,
        ...ctx.settings.monitoring,
      },
      // The claims name the class: it exists before the volumes are provisioned.
      { provider: ctx.need("cluster").k8s, dependsOn: [storage] },
    );
    return { monitoring };
  },
  summary: [
    {
      at: 70,
      row: ({ settings }) => {
        const m = settings.monitoring;
        const a = m.alerting;
        const receivers: string[] = [];
        // Only whether each is set, never a value: keys and webhook URLs are secrets or near enough.
        if (a.pagerduty) receivers.push("pagerduty");
        if (a.slack) receivers.push(a.slack.channel ? `slack (${a.slack.channel})` : "slack");
        if (a.webhook) receivers.push("webhook");
        if (a.heartbeat) receivers.push("heartbeat");
        const alerting = a.enabled
          ? `Alertmanager × ${a.replicas} → ${receivers.length ? receivers.join(", ") : "no receiver set"}`
          : "Alertmanager off (alerts evaluate in Prometheus only)";
        return { label: "monitoring", lines: [`retention ${m.retention} · ${plural(m.prometheusReplicas, "Prometheus replica")} · ${alerting}`] };
      },
    },
  ],
  outputs(ctx) {
    const m = ctx.need("monitoring");
    return { monitoringNamespace: m.namespace, grafanaAdminSecret: m.grafanaAdminSecretName, prometheusUrl: m.prometheusUrl };
  },
};
