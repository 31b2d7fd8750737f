// The gateway's settings, written once: each key's type, rule, default and documentation.
// config/schema.ts composes gatewaySettings as the `triton-platform:gateway` section, and a
// direct caller of EnvoyGateway resolves through resolveEnvoyGatewayArgs over the same
// entries, so the stack file and the component get each default from the same line. The
// rules that read other sections (prod needs client CIDRs; defaultGroup names one of
// triton.groups) are config/cross-section.ts rules.
import type * as pulumi from "@pulumi/pulumi";
import * as v from "valibot";
import type { ServingGroupRef } from "../contracts";
import { ENVOY_DEFAULT_TAG, ENVOY_PERCENT_RULE, isEnvoyPercent } from "../upstream/envoy";
import { hasHostBits, isWorldOpen, parseCidr } from "../../lib/cidr";
import { SettingsError, show, type SettingProblem } from "../../lib/errors";
import {
  bool,
  checkSettings,
  str,
  dnsLabel,
  doc,
  integer,
  list,
  number,
  oneOf,
  pattern,
  quantity,
  refined,
  section,
  uniqueList,
  type DeepReadonly,
} from "../../lib/schema";

const CIDR_RULE = "must be a CIDR such as 10.0.0.0/16 or 2001:db8::/32 with no host bits set";

/** A client CIDR: IPv4 or IPv6, network address only, never world-open. */
export const clientCidr = v.pipe(
  v.string(CIDR_RULE),
  v.check((s) => {
    const c = parseCidr(s);
    return c !== undefined && !hasHostBits(c);
  }, CIDR_RULE),
  // The gateway listens on the Triton ports 8000/8001: a /0 here would open them to the world.
  v.check((s) => !isWorldOpen(s), "must not be a world-open range (/0); list the client networks"),
);

/** A percentage with at most 4 decimal places (Envoy's finest fraction is 1/MILLION = 0.0001 %). */
export const envoyPercent = v.pipe(number({ min: 0, max: 100 }), v.check(isEnvoyPercent, ENVOY_PERCENT_RULE));

/** The keys a stack file sets in its `gateway` section (and a direct caller alike). */
const gatewayEntries = {
  defaultGroup: doc(
    v.optional(dnsLabel),
    "Serving group for requests without the x-triton-group header (gRPC: metadata); must name one of triton.groups. " +
      "Set it explicitly, so that reordering the groups cannot move the default.",
    { default: "the first of triton.groups" },
  ),
  mirrorPercent: doc(
    v.optional(envoyPercent, 0),
    "Percentage of each group's requests shadowed to its canary, 0–100 with at most 4 decimal places " +
      "(Envoy's finest fraction is 1/MILLION); 0 disables mirroring.",
  ),
  clientCidrs: doc(
    v.optional(uniqueList(clientCidr, {}, "must not repeat a CIDR"), []),
    "Networks allowed to reach the gateway (its load balancer and its pods): IPv4/IPv6 CIDRs, host bits zero, never /0, " +
      "no repeats. Prod must list at least one. The load balancer exists only when this is set.",
  ),
  clientNamespaces: doc(v.optional(list(dnsLabel), []), "Namespaces whose pods may call the gateway inside the cluster (DNS labels)."),
  replicas: doc(v.optional(integer({ min: 1, max: 50 }), 2), "Envoy replicas, 1–50."),
  zoneSpread: doc(
    v.optional(oneOf(["required", "preferred"] as const), "preferred"),
    "Zone spread of the replicas: required (DoNotSchedule) or preferred (ScheduleAnyway).",
  ),
  cpu: doc(v.optional(quantity, "500m"), "CPU request per replica (Kubernetes quantity); Envoy's worker threads = the request rounded up. No CPU limit."),
  memory: doc(v.optional(quantity, "256Mi"), "Memory request per replica (Kubernetes quantity), also its limit."),
  imageTag: doc(
    v.optional(pattern(/^v\d+\.\d+\.\d+$/, "must be an exact Envoy release tag such as v1.37.1 (no 'latest', no -dev)"), ENVOY_DEFAULT_TAG),
    "envoyproxy/envoy release tag, exact (vX.Y.Z). The default is the release pinned in components/upstream/envoy.ts.",
  ),
  loadBalancerScheme: doc(
    v.optional(oneOf(["internal", "internet-facing"] as const), "internal"),
    "Scheme of the gateway's NLB (when clientCidrs is set): internal or internet-facing.",
  ),
  inferTimeoutSeconds: doc(
    v.optional(integer({ min: 1, max: 3600 }), 60),
    "Upper bound for one inference call, in seconds (1–3600); a gRPC client's shorter deadline (grpc-timeout) is honoured. " +
      "The gateway pod's drain and termination grace are derived from it.",
  ),
  maxRequestsPerPod: doc(
    v.optional(integer({ min: 1 }), 64),
    "Concurrent requests the gateway fleet gives one Triton pod; each replica's circuit breakers allow this × the track's most pods " +
      "(HPA max, canary replicas) ÷ (replicas − 1, at least 1), and answer 503 beyond it instead of queueing.",
  ),
  maxClientConnections: doc(
    v.optional(integer({ min: 1 }), 4096),
    "Downstream connections one gateway replica accepts (overload manager); beyond it new connections are refused.",
  ),
  canaryStop: doc(
    v.optional(bool(), true),
    "Stop a canary without a deploy: a CronJob sets its mirror and traffic share to 0 in the gateway's runtime (ConfigMap " +
      "triton-gateway-canary-stop, read live by Envoy) when the monitoring's CanaryGateFailed alert fires for the group. " +
      "pulumi up never resets that ConfigMap's data (ignoreChanges).",
  ),
  drainSeconds: doc(
    v.optional(integer({ min: 1, max: 600 }), 30),
    "--drain-time-s: how long a stopping gateway pod discourages requests (gradual Connection: close / GOAWAY) before its listeners close.",
  ),
};

/** The `triton-platform:gateway` section of a stack file. */
export const gatewaySettings = doc(
  section(gatewayEntries),
  "The Envoy gateway in front of the serving groups (routes, canary mirroring, circuit breakers) and who may reach it.",
);

const servingGroupRef = refined(
  section({
    name: doc(dnsLabel, "The group's name (its Services are named after it)."),
    canary: doc(bool(), "The group has a canary track: its inference routes get a mirror to it."),
    models: doc(v.optional(list(str()), []), "Models the primary loads: routed by name. Empty: the group is reached by its header only."),
    canaryModels: doc(v.optional(list(str()), []), "Models the canary loads: only their inference is mirrored or split to it."),
    canaryTrafficPercent: doc(v.optional(envoyPercent, 0), "Share of the group's real inference traffic its canary serves (0: shadowing only)."),
    maxPods: doc(
      v.optional(
        section({
          primary: doc(v.optional(integer({ min: 1 }), 1), "Most primary pods (the HPA's max)."),
          canary: doc(v.optional(integer({ min: 0 }), 1), "Canary pods."),
        }),
        {},
      ),
      "Most pods of each track: sizes the circuit breakers.",
    ),
  }),
  (g, ctx) => {
    if (g.canaryTrafficPercent > 0 && !g.canary) ctx.addIssue({ path: ["canaryTrafficPercent"], message: "must be 0 for a group without a canary" });
  },
);

/** Every setting of an EnvoyGateway: the section's keys and what only a component caller passes. */
export const envoyGatewaySettings = refined(
  section({
    ...gatewayEntries,
    servingGroups: doc(list(servingGroupRef, { min: 1, what: "serving group" }), "The serving groups to route to; groups with a canary get mirroring."),
    clusterDomain: doc(
      v.optional(dnsDomain(), "cluster.local"),
      "Kubernetes cluster DNS domain (the kubelet's --cluster-domain): upstream names are <service>.<namespace>.svc.<domain>.",
    ),
  }),
  (s, ctx) => {
    const groups = s.servingGroups.map((g) => g.name);
    if (s.defaultGroup !== undefined && !groups.includes(s.defaultGroup)) {
      ctx.addIssue({ path: ["defaultGroup"], message: `must name one of the serving groups (${groups.join(", ")})` });
    }
  },
);

/** A DNS name of labels (cluster.local). */
function dnsDomain() {
  return pattern(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/, "must be a DNS domain such as cluster.local");
}

/** Plain settings as a caller may pass them: nothing is mutated, so readonly arrays are welcome. */

export type GatewaySettingsInput = DeepReadonly<v.InferInput<typeof gatewaySettings>>;
export type GatewaySettings = v.InferOutput<typeof gatewaySettings>;

/** Arguments of the Envoy gateway: its settings (see the schema for defaults) plus runtime references. */
export type EnvoyGatewayArgs = DeepReadonly<v.InferInput<typeof envoyGatewaySettings>> & {
  /** Namespace of the gateway and of the Triton Services it routes to. */
  readonly namespace: string;
  /** Standard labels of the stack. */
  readonly labels: Readonly<Record<string, string>>;
  /** The serving groups to route to (contracts' ServingGroupRef). */
  readonly servingGroups: readonly ServingGroupRef[];
  /**
   * Frontend security group of the NLB, which admits only the client CIDRs (the Firewall creates
   * it from the gateway's network needs). Required when clientCidrs is set: the NLB exists only then.
   */
  readonly loadBalancerSecurityGroupId?: pulumi.Input<string>;
};

/** Every setting with its default, defaultGroup resolved, plus the runtime references. */
export type ResolvedEnvoyGatewayArgs = Omit<v.InferOutput<typeof envoyGatewaySettings>, "defaultGroup"> & {
  readonly defaultGroup: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly loadBalancerSecurityGroupId?: pulumi.Input<string>;
};

/** Apply the defaults once and check every rule, all problems reported together (SettingsError). */
export function resolveEnvoyGatewayArgs(args: EnvoyGatewayArgs, name = "gateway"): ResolvedEnvoyGatewayArgs {
  const { namespace, labels, loadBalancerSecurityGroupId, ...settings } = args;
  const parsed = checkSettings(envoyGatewaySettings, settings);
  const problems: SettingProblem[] = parsed.success ? [] : [...parsed.problems];
  const clientCidrs: readonly string[] | undefined = parsed.success ? parsed.output.clientCidrs : settings.clientCidrs;
  if (clientCidrs?.length && loadBalancerSecurityGroupId === undefined) {
    problems.push({
      key: "loadBalancerSecurityGroupId",
      rule: "is required when clientCidrs is set (the NLB's frontend security group admits only the client networks)",
      value: { shown: show(undefined) },
    });
  }
  if (!parsed.success || problems.length) throw new SettingsError(`invalid arguments of EnvoyGateway "${name}"`, problems);
  const s = parsed.output;
  return { ...s, defaultGroup: s.defaultGroup ?? s.servingGroups[0].name, namespace, labels, loadBalancerSecurityGroupId };
}
