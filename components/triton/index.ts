// A Triton serving group: the primary StatefulSet (and a canary when configured), their
// headless, ClusterIP and metrics Services, a PodDisruptionBudget per StatefulSet and an
// HPA on the primary. Thin layer: settings resolved by ./schema, objects built by the pure
// functions of ./builders.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as random from "@pulumi/random";
import type * as v from "valibot";
import { PROMETHEUS_PODS, type ServingGroupAlertRef, type ServingGroupRef, type Track } from "../contracts";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { gatewayPods } from "../gateway/network";
import { longestRequestSeconds } from "../gateway/envoy-config";
import { tritonNetworkNeeds, tritonPods } from "./network";
import { canaryStageRef, currentStage, effectiveRollout } from "./rollout";
import { list, pct, plural, range } from "../summary-text";
import { warn } from "../../lib/warnings";
import {
  hpaBounds,
  modelNameOf,
  resolveTritonServer,
  servingGroupRef,
  tritonGroupWarnings,
  tritonSection,
  type ResolvedTritonServer,
  type TritonServerArgs,
} from "./schema";
import {
  ADMIN_KEY_LENGTH,
  tritonAdminSecret,
  tritonHeadlessService,
  tritonHorizontalPodAutoscaler,
  tritonMetricsService,
  tritonPodDisruptionBudget,
  tritonPriorityClass,
  tritonService,
  tritonStatefulSet,
  type PlainBinding,
} from "./builders";

export * from "./schema";
export * from "./builders";

/** The objects of one track (primary or canary). */
export interface TritonTrackResources {
  readonly statefulSet: k8s.apps.v1.StatefulSet;
  readonly service: k8s.core.v1.Service;
  readonly headlessService: k8s.core.v1.Service;
  readonly metricsService: k8s.core.v1.Service;
  readonly podDisruptionBudget: k8s.policy.v1.PodDisruptionBudget;
}

export class TritonServer extends pulumi.ComponentResource {
  readonly resolved: ResolvedTritonServer;
  readonly tracks: Partial<Record<Track, TritonTrackResources>>;
  readonly horizontalPodAutoscaler: k8s.autoscaling.v2.HorizontalPodAutoscaler;
  /** The admin key Secret (tritonAdminSecretName) both tracks read their restriction value from. */
  readonly adminSecret: k8s.core.v1.Secret;

  constructor(name: string, args: TritonServerArgs, opts?: pulumi.ComponentResourceOptions) {
    // Defaults and rules once, through the schema the stack config uses, before anything
    // (the component itself included) is registered.
    const r = resolveTritonServer(args);
    super("triton-platform:triton:TritonServer", name, {}, opts);
    this.resolved = r;
    const repo: pulumi.Output<PlainBinding> = pulumi.output(args.modelRepository);
    // Children do not inherit the component's dependsOn (e.g. on the namespace): pass it on.
    const child = { parent: this, dependsOn: opts?.dependsOn };
    const tracks: Partial<Record<Track, TritonTrackResources>> = {};
    for (const w of tritonGroupWarnings(r)) warn(w, (m) => void pulumi.log.warn(m, this));

    // Generated, kept only as a secret in state: no literal key in code, stack files or the plan.
    const adminKey = new random.RandomPassword(`${name}-admin-key`, { length: ADMIN_KEY_LENGTH, special: false }, { parent: this });
    this.adminSecret = new k8s.core.v1.Secret(`${name}-admin-key`, tritonAdminSecret(r, adminKey.result), child);
    // A pod whose env names a missing Secret does not start (CreateContainerConfigError): the Secret first.
    const podsAfterSecret = { ...child, dependsOn: [...dependsOnList(opts?.dependsOn), this.adminSecret] };

    for (const t of r.tracks) {
      // The builder returns plain data; only the binding's values make it an Output.
      const sts = repo.apply((b) => tritonStatefulSet(r, t, b)) as pulumi.Output<pulumi.Unwrap<k8s.types.input.apps.v1.StatefulSet>>;
      const hpaOwnsReplicas = t.track === "primary";
      tracks[t.track] = {
        statefulSet: new k8s.apps.v1.StatefulSet(
          t.name,
          { metadata: sts.metadata, spec: sts.spec },
          // The HPA owns spec.replicas after creation; re-applying the configured count on
          // every update would undo its scaling.
          hpaOwnsReplicas ? { ...podsAfterSecret, ignoreChanges: ["spec.replicas"] } : podsAfterSecret,
        ),
        headlessService: new k8s.core.v1.Service(`${t.name}-headless`, tritonHeadlessService(r, t.track), child),
        service: new k8s.core.v1.Service(t.name, tritonService(r, t.track), child),
        metricsService: new k8s.core.v1.Service(`${t.name}-metrics`, tritonMetricsService(r, t.track), child),
        podDisruptionBudget: new k8s.policy.v1.PodDisruptionBudget(t.name, tritonPodDisruptionBudget(r, t.track), child),
      };
    }
    this.tracks = tracks;
    const primary = tracks.primary!;
    this.horizontalPodAutoscaler = new k8s.autoscaling.v2.HorizontalPodAutoscaler(name, tritonHorizontalPodAutoscaler(r), {
      parent: this,
      dependsOn: [primary.statefulSet],
    });
    this.registerOutputs({
      statefulSets: r.tracks.map((t) => t.name),
      services: Object.values(tracks).map((x) => x.service.metadata.name),
    });
  }
}

/** The config.pbtxt objects of the contracted models a group loads (primary and canary lists). */
type ModelList = readonly (string | { readonly name: string })[];
function groupConfigObjects(
  g: { readonly models?: ModelList; readonly canary?: { readonly models?: ModelList } },
  repo: { readonly modelConfigObjects: Readonly<Record<string, pulumi.Resource>> },
): pulumi.Resource[] {
  const names = new Set([...(g.models ?? []), ...(g.canary?.models ?? [])].flatMap((m) => (typeof m === "string" ? [] : [m.name])));
  return [...names].map((n) => repo.modelConfigObjects[n]).filter((o) => o !== undefined);
}

/** The resources a dependsOn option names, as a list (it may be one resource, a list or an Input of either). */
function dependsOnList(d: pulumi.ComponentResourceOptions["dependsOn"]): pulumi.Input<pulumi.Resource>[] {
  if (d === undefined) return [];
  return Array.isArray(d) ? d : [d as pulumi.Input<pulumi.Resource>];
}

export interface TritonPriorityClassArgs {
  /** PriorityClass name. */
  readonly name: string;
  /** Standard labels of the stack. */
  readonly labels: Readonly<Record<string, string>>;
}

/** The serving PriorityClass: cluster-scoped, so created once per stack, not per group. */
export class TritonPriorityClass extends pulumi.ComponentResource {
  readonly priorityClass: k8s.scheduling.v1.PriorityClass;
  readonly name: string;

  constructor(name: string, args: TritonPriorityClassArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:triton:TritonPriorityClass", name, {}, opts);
    this.name = args.name;
    this.priorityClass = new k8s.scheduling.v1.PriorityClass(name, tritonPriorityClass(args.name, { ...args.labels }), { parent: this });
    this.registerOutputs({ name: this.name });
  }
}

// ---- the component's descriptor (components/registry.ts) --------------------------------
declare module "../component" {
  interface StackSettings {
    triton: v.InferOutput<typeof tritonSection>;
  }
  interface Produced {
    /** One TritonServer per configured group, in the order of triton.groups. */
    tritonServers: readonly TritonServer[];
    /** What routing needs to know of each serving group (the gateway). */
    servingGroups: readonly ServingGroupRef[];
    /** What the alerts need to know of each serving group (monitoring): its start-up budget and listed models, as the groups resolved them. */
    servingGroupAlerts: readonly ServingGroupAlertRef[];
  }
}

/**
 * Triton serving groups: one TritonServer per configured group (primary + optional canary),
 * reading the model repository through its binding (URI, IRSA service account or EFS claim).
 */
export const tritonComponent: ComponentDescriptor = {
  name: "triton",
  sections: { triton: sectionSpec<"triton">(tritonSection, "docs/triton-serving.md") },
  policyDomains: ["triton", "models", "workloads", "exposure", "rbac"],
  build(ctx) {
    const { triton, cluster } = ctx.settings;
    const labels = ctx.need("labels");
    const k8sOpts = { provider: ctx.need("cluster").k8s };
    const servingNs = ctx.need("servingNamespace");
    const modelRepository = ctx.need("modelRepository");
    const servingGroups = triton.groups.map(servingGroupRef);
    const tritonPriority = new TritonPriorityClass("triton-serving", { name: "triton-serving", labels }, k8sOpts);
    const tritonServers = triton.groups.map((g, i) =>
      // Each group's errors at its own item of the list (triton.groups[i].<key>).
      ctx.at(
        ["triton", "groups", i],
        () =>
          new TritonServer(
            g.name,
            {
              ...g,
              namespace: triton.namespace,
              labels,
              modelRepository: modelRepository.binding,
              priorityClassName: tritonPriority.name,
              zoneCount: cluster.zones.length,
              // The gateway's longest route timeout: the pods' termination covers it (tritonShutdown).
              longestRequestSeconds: longestRequestSeconds(ctx.settings.gateway),
            },
            // The repository's ServiceAccount, read access (or claim) and this group's model configs
            // exist before its pods start (they read the configs at load); not the whole repository.
            { ...k8sOpts, dependsOn: [servingNs, tritonPriority, ...modelRepository.podPrerequisites, ...groupConfigObjects(g, modelRepository)] },
          ),
        { namespace: "triton.namespace", zoneCount: "cluster.zones", longestRequestSeconds: "gateway.inferTimeoutSeconds" },
      ),
    );
    const servingGroupAlerts = tritonServers.map((t, i): ServingGroupAlertRef => {
      const c = triton.groups[i].canary;
      return {
        ...servingGroups[i],
        modelLoadBudgetSeconds: t.resolved.modelLoadBudgetSeconds,
        tracks: t.resolved.tracks.map((x) => ({ track: x.track, models: x.models })),
        ...(c ? { canaryStage: canaryStageRef(effectiveRollout(c.rollout, ctx.settings.gateway.mirrorPercent, c.trafficPercent)) } : {}),
      };
    });
    return { tritonServers, servingGroups, servingGroupAlerts };
  },
  network: (ctx) =>
    tritonNetworkNeeds({
      pods: tritonPods(ctx.settings.triton.namespace),
      servedBy: gatewayPods(ctx.settings.triton.namespace),
      scrapedBy: PROMETHEUS_PODS,
      // Triton's egress to its models: 443 (S3, STS for IRSA) or 2049 (EFS).
      modelRepositoryEgressPort: ctx.need("modelRepository").binding.egressPort,
    }),
  summary: [
    {
      at: 30,
      row: ({ settings: c }) => {
        const lines: string[] = [];
        for (const g of c.triton.groups) {
          const hpa = hpaBounds(g.replicas, g.hpa);
          const models = g.models?.length ? `models ${list(g.models.map(modelNameOf))}` : `model control ${g.modelControlMode}`;
          lines.push(
            `${g.name}: Triton ${g.image.tag} · ${plural(g.replicas, "replica")}, HPA ${range(hpa.min, hpa.max)} · per pod ` +
              `${g.gpu.count} GPU (${g.gpu.type}), ${g.cpu} CPU, ${g.memory} · ${models}`,
          );
          if (g.canary) {
            const tag = g.canary.image?.tag ?? g.image.tag;
            const shares = [`mirror ${pct(c.gateway.mirrorPercent)} of requests`, `traffic ${pct(g.canary.trafficPercent)}`];
            const r = g.canary.rollout;
            if (r) shares.push(`stage ${r.stage} (${currentStage(r).index + 1} of ${r.stages.length})`);
            const canaryModels = g.canary.models ? ` · models ${list(g.canary.models.map(modelNameOf))}` : "";
            lines.push(`  canary: Triton ${tag}${tag === g.image.tag ? " (same release)" : ""} × ${g.canary.replicas} · ${shares.join(", ")}${canaryModels}`);
          }
        }
        return { label: "serving", lines: lines.length ? lines : ["no serving groups"] };
      },
    },
  ],
  outputs: (ctx) => ({
    servingGroupNames: ctx.need("servingGroups").map((g) => g.name),
    tritonStatefulSets: ctx.need("tritonServers").flatMap((t) => t.resolved.tracks.map((x) => x.name)),
  }),
};
