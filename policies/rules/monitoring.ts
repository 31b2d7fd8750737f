// Rules the monitoring component makes enforceable: Grafana's admin password comes from a
// generated Secret, production pages someone, and the monitoring charts are pinned.
import { KUBE_PROMETHEUS_STACK_CHART } from "../../components/upstream/kube-prometheus-stack";
import { PROMETHEUS_ADAPTER_CHART } from "../../components/upstream/prometheus-adapter";
import { ENVIRONMENT_LABEL } from "../../components/naming";
import { EXACT_VERSION } from "../../lib/version";
import { environmentsSchema, isHelmChart, reportAt, type EnvConfig, type Rule } from "./util";
import { HELM_RELEASE } from "./types";

export const monitoringRules: Rule[] = [
  {
    name: "monitoring-grafana-admin-secret",
    domain: "monitoring",
    description: "Grafana's admin credentials come from a Kubernetes Secret (grafana.admin.existingSecret), never a literal grafana.adminPassword.",
    prevents: "A known admin password (the chart ships 'prom-operator') on a Grafana that can read every production metric, committed to git or Helm history.",
    remediationSteps:
      "Create the Secret from a @pulumi/random RandomPassword and set grafana.admin.existingSecret/userKey/passwordKey; remove grafana.adminPassword (components/upstream/kube-prometheus-stack.ts).",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isHelmChart(args.type, args.props, KUBE_PROMETHEUS_STACK_CHART.chart)) return;
      const grafana = args.props.values?.grafana ?? {};
      if (grafana.enabled === false) return;
      // The value itself is never echoed: the message must not leak a password into CI logs.
      if (grafana.adminPassword !== undefined && grafana.adminPassword !== null && grafana.adminPassword !== "") {
        reportAt(report, { path: "values.grafana.adminPassword", value: "(hidden)" }, `Helm release ${args.name}: values.grafana.adminPassword is a literal (value hidden); use values.grafana.admin.existingSecret`);
      }
      const existing = grafana.admin?.existingSecret;
      if (typeof existing !== "string" || existing === "") {
        reportAt(report, { path: "values.grafana.admin.existingSecret", value: existing }, `Helm release ${args.name}: values.grafana.admin.existingSecret is ${JSON.stringify(existing ?? null)}; without it Grafana falls back to the chart's default password`);
      }
    },
  },
  {
    name: "monitoring-alerting-in-prod",
    domain: "monitoring",
    description: "In production stacks kube-prometheus-stack runs Alertmanager (values.alertmanager.enabled: true).",
    prevents: "Alert rules that evaluate and fire in Prometheus with nobody notified: a GPU XID or a failing model found by users instead of on-call.",
    remediationSteps: "Set triton-platform:monitoring.alerting.enabled: true in the stack file.",
    enforcementLevel: "advisory",
    configSchema: {
      properties: {
        ...environmentsSchema("Environments that must run Alertmanager."),
      },
    },
    validateResource: (args, report) => {
      if (!isHelmChart(args.type, args.props, KUBE_PROMETHEUS_STACK_CHART.chart)) return;
      const { environments } = args.getConfig<EnvConfig>();
      const env = args.props.values?.commonLabels?.[ENVIRONMENT_LABEL];
      if (env === undefined) {
        reportAt(report, { path: `values.commonLabels["${ENVIRONMENT_LABEL}"]`, value: null }, `Helm release ${args.name}: values.commonLabels["${ENVIRONMENT_LABEL}"] is missing, so whether Alertmanager is required cannot be decided`);
        return;
      }
      if (!environments.includes(env)) return;
      const enabled = args.props.values?.alertmanager?.enabled;
      if (enabled !== true) reportAt(report, { path: "values.alertmanager.enabled", value: enabled }, `Helm release ${args.name} (environment ${env}): values.alertmanager.enabled is ${JSON.stringify(enabled ?? null)}, must be true`);
    },
  },
  {
    name: "monitoring-chart-version-pinned",
    domain: "monitoring",
    description: "The monitoring Helm releases (kube-prometheus-stack, prometheus-adapter) pin an exact chart version and name their repository.",
    prevents: "An unpinned chart upgrading itself on the next `pulumi up` (new CRDs, renamed values, changed alert rules) in the middle of an incident.",
    remediationSteps: "Set triton-platform:monitoring.kubePrometheusStackVersion / prometheusAdapterVersion to an exact version such as 1.2.3.",
    enforcementLevel: "advisory",
    configSchema: {
      properties: {
        charts: {
          type: "array",
          items: { type: "string" },
          default: [KUBE_PROMETHEUS_STACK_CHART.chart, PROMETHEUS_ADAPTER_CHART.chart],
          description: "Charts this rule applies to.",
        },
      },
    },
    validateResource: (args, report) => {
      if (args.type !== HELM_RELEASE) return;
      const { charts } = args.getConfig<{ charts: string[] }>();
      if (!charts.includes(args.props.chart)) return;
      const version = args.props.version;
      if (typeof version !== "string" || !EXACT_VERSION.test(version)) {
        reportAt(report, { path: "version", value: version }, `Helm release ${args.name} (chart ${args.props.chart}): version is ${JSON.stringify(version ?? null)}, must be an exact version such as 1.2.3`);
      }
      if (!args.props.repositoryOpts?.repo) reportAt(report, { path: "repositoryOpts.repo", value: args.props.repositoryOpts?.repo }, `Helm release ${args.name} (chart ${args.props.chart}): repositoryOpts.repo is missing, so the chart resolves from whatever repo is configured locally`);
    },
  },
];
