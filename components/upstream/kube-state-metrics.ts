// kube-state-metrics (a subchart of kube-prometheus-stack, kube-state-metrics-8.1.3): the
// series the platform's alerts read, spelled once. Source: kubernetes/kube-state-metrics
// docs/metrics/cluster/node-metrics.md at v2.20.0 (read 2026-12-01; STABLE metrics, the same
// in every 2.x release): kube_node_spec_taint{node, key, value, effect}, value 1 per taint.

export const KSM_METRICS = {
  /** One series per taint of a node: labels node, key, value, effect (Kubernetes spelling, e.g. NoSchedule). */
  nodeSpecTaint: "kube_node_spec_taint",
} as const;

export const KSM_METRIC_NAMES: ReadonlySet<string> = new Set(Object.values(KSM_METRICS));
