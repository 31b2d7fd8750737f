// Prometheus and prometheus-operator: the shapes of a scrape config, a rule file and the
// monitoring.coreos.com/v1 objects, spelled once. Field names follow the Prometheus
// configuration reference (snake_case) and the operator's API (camelCase); the one
// conversion between the two is here, so a relabel rule is written once and used by both.

/** A Prometheus relabel_config (configuration reference, <relabel_config>). */
export interface RelabelConfig {
  readonly source_labels?: string[];
  readonly separator?: string;
  readonly target_label?: string;
  readonly regex?: string;
  readonly replacement?: string;
  readonly action?: "replace" | "keep" | "drop" | "labelmap" | "labeldrop" | "labelkeep" | "hashmod" | "lowercase" | "uppercase";
}

/** A Prometheus <scrape_config> with Kubernetes service discovery (the subset this stack uses). */
export interface ScrapeConfig {
  readonly job_name: string;
  readonly scrape_interval?: string;
  readonly scrape_timeout?: string;
  readonly metrics_path?: string;
  readonly scheme?: "http" | "https";
  readonly honor_labels?: boolean;
  readonly kubernetes_sd_configs: { role: "endpoints" | "endpointslice" | "service" | "pod"; namespaces?: { names: string[] } }[];
  readonly relabel_configs?: RelabelConfig[];
  readonly metric_relabel_configs?: RelabelConfig[];
}

/** An alerting rule of a rule group (Prometheus <rule>). */
export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: { severity: "critical" | "warning" | "info"; [k: string]: string };
  readonly annotations: { summary: string; description: string; [k: string]: string };
}

/** A recording rule (used by the tests to prove expressions parse). */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
  readonly labels?: Readonly<Record<string, string>>;
}

export interface RuleGroup {
  readonly name: string;
  readonly interval?: string;
  readonly rules: (AlertingRule | RecordingRule)[];
}

/** A Prometheus rule file: what `promtool check rules` reads and PrometheusRule.spec holds. */
export interface RuleFile {
  readonly groups: RuleGroup[];
}

export const MONITORING_API_VERSION = "monitoring.coreos.com/v1";

/** prometheus-operator RelabelConfig: the same rule, camelCase. */
export interface OperatorRelabelConfig {
  sourceLabels?: string[];
  separator?: string;
  targetLabel?: string;
  regex?: string;
  replacement?: string;
  action?: string;
}

/** Convert a Prometheus relabel_config to the operator's form (ServiceMonitor endpoints[].relabelings). */
export function toOperatorRelabel(r: RelabelConfig): OperatorRelabelConfig {
  const out: OperatorRelabelConfig = {};
  if (r.source_labels) out.sourceLabels = [...r.source_labels];
  if (r.separator !== undefined) out.separator = r.separator;
  if (r.target_label !== undefined) out.targetLabel = r.target_label;
  if (r.regex !== undefined) out.regex = r.regex;
  if (r.replacement !== undefined) out.replacement = r.replacement;
  if (r.action !== undefined) out.action = r.action;
  return out;
}

/** Kubernetes service-discovery meta labels (endpoints role) this stack relabels from. */
export const K8S_SD = {
  namespace: "__meta_kubernetes_namespace",
  serviceName: "__meta_kubernetes_service_name",
  endpointPortName: "__meta_kubernetes_endpoint_port_name",
  podName: "__meta_kubernetes_pod_name",
  podNodeName: "__meta_kubernetes_pod_node_name",
  /** `__meta_kubernetes_pod_label_<name>` with the label name sanitised (non-alphanumerics → _). */
  podLabel: (name: string) => `__meta_kubernetes_pod_label_${name.replace(/[^a-zA-Z0-9_]/g, "_")}`,
} as const;

/** Escape a literal for use inside a (fully anchored) Prometheus RE2 regex. */
export function regexLiteral(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
