// Rules about paths from outside the cluster to Triton: only the gateway may be exposed. A
// Service, Ingress or Gateway API route reaches Triton when it selects (or names a Service that
// selects) the pods of a Triton workload, judged by label selectors against pod labels, never by
// object names. Load balancers admit only the client ranges.
import type { PolicyResource } from "@pulumi/policy";
import { coversInternet } from "../../lib/cidr";
import { metadataOf, podTemplateLabelsOf, propsOf } from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Rule } from "./rule";
import { SERVICE } from "./types";
import { isK8sObject, namespaceOf, objectNameOf, show, tritonWorkloads } from "./util";

const kindOf = (r: Pick<PolicyResource, "props">): string | undefined => (r.props as { kind?: string }).kind;
const GATEWAY_API_ROUTES = ["HTTPRoute", "GRPCRoute", "TCPRoute", "TLSRoute", "UDPRoute"];

/** Services of the stack that select pods of some Triton workload in their namespace (selector ⊆ pod labels). */
function servicesSelectingTriton(resources: readonly PolicyResource[]): Map<string, PolicyResource> {
  const pods = tritonWorkloads(resources).map((w) => ({ ns: namespaceOf(w), labels: podTemplateLabelsOf(w) }));
  const out = new Map<string, PolicyResource>();
  for (const s of resources) {
    const svc = propsOf(s, SERVICE);
    const selector = svc?.spec?.selector ?? {};
    if (!svc || Object.keys(selector).length === 0) continue;
    if (pods.some((p) => p.ns === namespaceOf(s) && Object.entries(selector).every(([k, v]) => p.labels[k] === v)))
      out.set(`${namespaceOf(s)}/${objectNameOf(s)}`, s);
  }
  return out;
}

/** Backend Service names of an Ingress (networking.k8s.io/v1 and the older serviceName spelling), with their paths. */
function ingressBackends(spec: Record<string, any> | undefined): { path: string; name: unknown }[] {
  const out: { path: string; name: unknown }[] = [];
  const one = (b: Record<string, any> | undefined, at: string) => {
    if (!b) return;
    if (b.service?.name !== undefined) out.push({ path: `${at}.service.name`, name: b.service.name });
    if (b.serviceName !== undefined) out.push({ path: `${at}.serviceName`, name: b.serviceName });
  };
  one(spec?.defaultBackend, "spec.defaultBackend");
  one(spec?.backend, "spec.backend");
  (spec?.rules ?? []).forEach((rule: Record<string, any>, i: number) =>
    (rule?.http?.paths ?? []).forEach((p: Record<string, any>, j: number) => one(p?.backend, `spec.rules[${i}].http.paths[${j}].backend`)),
  );
  return out;
}

export const tritonReachableOnlyThroughGateway = stackRule({
  name: "triton-reachable-only-through-gateway",
  domain: "exposure",
  description:
    "No path from outside the cluster reaches Triton pods except through the gateway: no Service of type LoadBalancer or NodePort, and no " +
    "Service with externalIPs, selects Triton pods; no Ingress and no Gateway API route (HTTPRoute, GRPCRoute, TCPRoute, TLSRoute, UDPRoute) " +
    "has a backend Service that selects them.",
  prevents:
    "Inference, model-control and metrics endpoints reachable past the gateway's allow-listed routes, restricted APIs and mirroring: " +
    "model load/unload or theft by whoever reaches a node port or a load balancer.",
  remediationSteps:
    "Expose only the gateway (components/gateway): Triton Services stay ClusterIP without externalIPs, and Ingresses/routes point at the " +
    "gateway's Service.",
  check: (resources) => {
    const triton = servicesSelectingTriton(resources);
    const out: Finding[] = [];
    for (const [key, s] of triton) {
      const spec = propsOf(s, SERVICE)?.spec ?? {};
      if (spec.type === "LoadBalancer" || spec.type === "NodePort") {
        out.push({
          path: "spec.type",
          value: spec.type,
          message: `Service ${key}: spec.type is ${show(spec.type)} and its selector selects Triton pods`,
          urn: s.urn,
        });
      }
      if ((spec.externalIPs ?? []).length > 0) {
        out.push({
          path: "spec.externalIPs",
          value: spec.externalIPs,
          message: `Service ${key}: spec.externalIPs is ${show(spec.externalIPs)} and its selector selects Triton pods`,
          urn: s.urn,
        });
      }
    }
    for (const r of resources) {
      if (!isK8sObject(r.type, r.props)) continue;
      const kind = kindOf(r);
      const ns = namespaceOf(r);
      const refs: { path: string; name: unknown; ns: string }[] = [];
      if (kind === "Ingress") refs.push(...ingressBackends((r.props as { spec?: Record<string, any> }).spec).map((b) => ({ ...b, ns })));
      if (GATEWAY_API_ROUTES.includes(kind as string) && String((r.props as { apiVersion?: string }).apiVersion).startsWith("gateway.networking.k8s.io/")) {
        const spec = (r.props as { spec?: Record<string, any> }).spec;
        (spec?.rules ?? []).forEach((rule: Record<string, any>, i: number) =>
          (rule?.backendRefs ?? []).forEach((b: Record<string, any>, j: number) => {
            if ((b.group ?? "") === "" && (b.kind ?? "Service") === "Service")
              refs.push({ path: `spec.rules[${i}].backendRefs[${j}].name`, name: b.name, ns: b.namespace ?? ns });
          }),
        );
      }
      for (const ref of refs) {
        if (!triton.has(`${ref.ns}/${String(ref.name)}`)) continue;
        out.push({
          path: ref.path,
          value: ref.name,
          message: `${kind} ${ns}/${objectNameOf(r)}: ${ref.path} is ${show(ref.name)}, a Service (namespace ${ref.ns}) that selects Triton pods`,
          urn: r.urn,
        });
      }
    }
    return out;
  },
});

const LB_SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges";
const ALB_SCHEME = "alb.ingress.kubernetes.io/scheme";
const ALB_INBOUND = "alb.ingress.kubernetes.io/inbound-cidrs";

export const loadBalancerSourcesRestricted = resourceRule({
  name: "load-balancer-sources-restricted",
  domain: "exposure",
  description:
    "Every Service of type LoadBalancer lists loadBalancerSourceRanges (or the source-ranges annotation) whose union does not cover the internet; " +
    "an internet-facing ALB Ingress lists inbound-cidrs that do not either.",
  prevents: "A load balancer open to every address on the internet (the default without source ranges), whatever its scheme turns out to be.",
  remediationSteps: "List the client networks in triton-platform:gateway.clientCidrs (they become loadBalancerSourceRanges and the NLB's security group).",
  check: (r) => {
    const meta = metadataOf(r);
    const annotations = meta.annotations ?? {};
    const where = `${kindOf(r)} ${meta.namespace ?? "default"}/${meta.name ?? r.name}`;
    const svc = propsOf(r, SERVICE);
    if (svc) {
      if (svc.spec?.type !== "LoadBalancer") return NONE;
      const fromSpec = svc.spec?.loadBalancerSourceRanges ?? [];
      const fromAnnotation = String(annotations[LB_SOURCE_RANGES_ANNOTATION] ?? "")
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean);
      const ranges = fromSpec.length ? fromSpec : fromAnnotation;
      const path = fromSpec.length || !fromAnnotation.length ? "spec.loadBalancerSourceRanges" : `metadata.annotations["${LB_SOURCE_RANGES_ANNOTATION}"]`;
      if (ranges.length === 0) return [{ path, value: null, message: `${where}: ${path} is empty: the load balancer admits every source` }];
      if (coversInternet(ranges)) return [{ path, value: ranges, message: `${where}: ${path} is ${show(ranges)}, whose union covers the internet` }];
      return NONE;
    }
    if (isK8sObject(r.type, r.props) && kindOf(r) === "Ingress" && annotations[ALB_SCHEME] === "internet-facing") {
      const cidrs = String(annotations[ALB_INBOUND] ?? "")
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean);
      const path = `metadata.annotations["${ALB_INBOUND}"]`;
      if (cidrs.length === 0 || coversInternet(cidrs))
        return [
          {
            path,
            value: annotations[ALB_INBOUND],
            message: `${where}: ${path} is ${show(annotations[ALB_INBOUND])} on an internet-facing ALB: it admits the internet`,
          },
        ];
    }
    return NONE;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [tritonReachableOnlyThroughGateway, loadBalancerSourcesRestricted];
