// Prometheus' relabelling (relabel_config: replace, keep, drop) applied to a target's discovered
// labels, and the target labels prometheus-operator adds to a ServiceMonitor's or PodMonitor's
// targets before their relabelings (namespace, service, pod, container, endpoint, job; its
// generator pkg/prometheus/promcfg.go). The tests derive the label shapes of synthetic series
// from the rendered monitors with it, instead of writing them by hand.
import type { OperatorRelabelConfig } from "../../components/upstream/prometheus";

type Labels = Record<string, string>;

/** Apply relabel rules (operator spelling) in order; undefined when the target is dropped. */
export function relabel(labels: Labels, rules: readonly OperatorRelabelConfig[]): Labels | undefined {
  let out: Labels = { ...labels };
  for (const r of rules) {
    const value = (r.sourceLabels ?? []).map((l) => out[l] ?? "").join(r.separator ?? ";");
    // Prometheus anchors every relabel regex.
    const re = new RegExp(`^(?:${r.regex ?? "(.*)"})$`);
    const action = r.action ?? "replace";
    if (action === "keep" && !re.test(value)) return undefined;
    if (action === "drop" && re.test(value)) return undefined;
    if (action === "replace") {
      const m = re.exec(value);
      if (!m || !r.targetLabel) continue;
      const v = (r.replacement ?? "$1").replace(/\$(\d+)|\$\{(\d+)\}/g, (_s, a: string, b: string) => m[Number(a ?? b)] ?? "");
      if (v === "") delete out[r.targetLabel];
      else out[r.targetLabel] = v;
    }
    out = { ...out };
  }
  return out;
}

/** Target labels after relabelling: the __-prefixed ones dropped, instance from __address__. */
export function targetLabels(discovered: Labels, rules: readonly OperatorRelabelConfig[], implicit: Labels): Labels | undefined {
  const l = relabel({ ...discovered, ...implicit }, rules);
  if (!l) return undefined;
  const out: Labels = { instance: l.instance ?? l.__address__ };
  for (const [k, v] of Object.entries(l)) if (!k.startsWith("__")) out[k] = v;
  return out;
}

/** What prometheus-operator sets on a ServiceMonitor (endpoints role) target before its relabelings. */
export function serviceMonitorImplicit(d: Labels, monitor: { namespace: string; name: string }, port: string): Labels {
  return {
    namespace: d.__meta_kubernetes_namespace,
    service: d.__meta_kubernetes_service_name,
    pod: d.__meta_kubernetes_pod_name,
    container: d.__meta_kubernetes_pod_container_name,
    endpoint: port,
    job: d.__meta_kubernetes_service_name ?? `${monitor.namespace}/${monitor.name}`,
  };
}

/** What prometheus-operator sets on a PodMonitor (pod role) target before its relabelings. */
export function podMonitorImplicit(d: Labels, monitor: { namespace: string; name: string }, port: string): Labels {
  return {
    namespace: d.__meta_kubernetes_namespace,
    pod: d.__meta_kubernetes_pod_name,
    container: d.__meta_kubernetes_pod_container_name,
    endpoint: port,
    job: `${monitor.namespace}/${monitor.name}`,
  };
}
