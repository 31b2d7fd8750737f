// The rules that read more than one section of the stack configuration. Each section's own
// keys, defaults and rules are its component's schema (components/<c>/schema.ts); what is
// here could not be checked by one component alone. Each rule names the key it reports on
// and states itself for the docs (npm run docs adds it to that key's rule column).
import type { CheckContext } from "../lib/schema";
import { DCGM_SCRAPED_BY_MONITORING, MONITORING_NAMESPACE, NODE_EXPORTER_NAMESPACE } from "../components/contracts";
import { checkTritonImages } from "../components/gpu/compatibility";
import { isGpuAmiType } from "../components/upstream/eks";
import { canaryImageRef, gpuMemoryDemand, imageRef, tritonShutdownProblems } from "../components/triton/schema";
import { gpuInstanceType } from "../components/upstream/ec2-gpu-instances";
import { longestRequestSeconds } from "../components/gateway/envoy-config";
import { zonesNotOfRegion } from "../components/cluster/schema";
import { DCGM_EXPORTER_BY_OPERATOR, dcgmLabels } from "../components/upstream/dcgm";
import { AWS_REGIONS, isAwsRegion, regionOfZone } from "../components/upstream/aws-regions";
import type { StackSettings } from "../components/component";
import { capacityProblems, type CapacityProblem } from "../components/gpu/capacity";

/** The configuration as the cross-section rules see it: every section parsed and defaulted. */
export type ParsedSections = StackSettings;

export interface CrossSectionRule {
  /** The key the rule reports on, as the docs name it (`gpu.maxUnavailable`, `triton.groups[].gpu.type`). */
  readonly key: string;
  /** The rule in the docs' words. */
  readonly doc: string;
  readonly check: (cfg: ParsedSections, ctx: CheckContext) => void;
}

type ImageRefs = { path: (string | number)[]; image: string }[];

/** Image references of every serving group (primary and canary), with the key each comes from. */
export function tritonImageRefs(triton: ParsedSections["triton"]): ImageRefs {
  return triton.groups.flatMap((g, i): ImageRefs => {
    const canary = canaryImageRef(g);
    return [
      { path: ["triton", "groups", i, "image"], image: imageRef(g.image) },
      ...(canary ? [{ path: ["triton", "groups", i, "canary", "image"], image: canary }] : []),
    ];
  });
}

// The capacity rules (config/capacity.ts) share one plan per configuration: each rule below
// reports the problems under its key, and the plan is computed once for all of them.
const capacityOf = new WeakMap<object, CapacityProblem[]>();
function capacityRule(key: string, doc: string, at: (path: readonly (string | number)[]) => boolean): CrossSectionRule {
  return {
    key,
    doc,
    check: (cfg, ctx) => {
      let problems = capacityOf.get(cfg);
      if (!problems) capacityOf.set(cfg, (problems = capacityProblems(cfg)));
      for (const p of problems) if (at(p.path)) ctx.addIssue({ path: [...p.path], message: p.message });
    },
  };
}
const isGroupKey = (k: string) => (p: readonly (string | number)[]) => p[0] === "triton" && p.slice(3).join(".") === k;

/** The capacity plan's rejections, one rule per key they report on. */
const CAPACITY_RULES: readonly CrossSectionRule[] = [
  capacityRule(
    "gpu.instanceTypes",
    "each must be an NVIDIA GPU instance type EKS offers (components/upstream/ec2-gpu-instances.ts)",
    (p) => p[0] === "gpu" && p[1] === "instanceTypes",
  ),
  capacityRule("triton.groups[].gpu.count", "must fit one node of gpu.instanceTypes (its GPUs)", isGroupKey("gpu.count")),
  capacityRule(
    "triton.groups[].cpu",
    "must fit one GPU node's allocatable CPU (vCPUs − the EKS AMI's kube-reserved − the GPU nodes' DaemonSets), with gpu.count and memory on the same node",
    isGroupKey("cpu"),
  ),
  capacityRule(
    "triton.groups[].memory",
    "must fit one GPU node's allocatable memory (memory − the EKS AMI's kube-reserved and eviction threshold − the GPU nodes' DaemonSets)",
    isGroupKey("memory"),
  ),
  capacityRule(
    "gpu.scaling.max",
    "nodes × GPUs per node must hold every serving group's minimum (hpa.min plus canary replicas, × gpu.count)",
    (p) => p.join(".") === "gpu.scaling.max",
  ),
];

/** Kubernetes' own namespaces: `default` and every `kube-*` (kube-system, kube-public, kube-node-lease). */
export function isSystemNamespace(name: string): boolean {
  return name === "default" || name.startsWith("kube-");
}

const SYSTEM_NAMESPACE_RULE =
  "must not be a Kubernetes system namespace (default, kube-system, kube-public, kube-node-lease or any kube-*): the stack creates it, " +
  "adopting the system one, and labels it with its Pod Security level";

/**
 * The namespaces the stack creates and labels, and the pairs that must differ. Serving
 * (triton.namespace, with the gateway and the firewall's default-deny) enforces Pod Security
 * restricted; the GPU Operator's (gpu.operator.namespace) and node-exporter's are privileged and
 * exempt from it in the pack (privilegedNamespaces); monitoring's is baseline, and the serving
 * NetworkPolicies admit Prometheus by its namespace, so sharing it would admit every pod there.
 */
const NAMESPACE_RULES: readonly CrossSectionRule[] = [
  {
    key: "triton.namespace",
    doc:
      `must not be a Kubernetes system namespace (default, kube-*), nor the monitoring (${MONITORING_NAMESPACE}), node-exporter ` +
      `(${NODE_EXPORTER_NAMESPACE}) or gpu.operator.namespace: serving enforces Pod Security restricted and its NetworkPolicies select the others by namespace`,
    check: (cfg, ctx) => {
      const ns = cfg.triton.namespace;
      const at = ["triton", "namespace"];
      if (isSystemNamespace(ns)) ctx.addIssue({ path: at, message: SYSTEM_NAMESPACE_RULE });
      else if (ns === MONITORING_NAMESPACE)
        ctx.addIssue({
          path: at,
          message: `must not be the monitoring namespace (${MONITORING_NAMESPACE}): it enforces only Pod Security baseline, and the serving NetworkPolicies admit Prometheus by that namespace, so every pod of it would reach Triton`,
        });
      else if (ns === NODE_EXPORTER_NAMESPACE || ns === cfg.gpu.operator.namespace)
        ctx.addIssue({
          path: at,
          message: `must not be the ${ns === NODE_EXPORTER_NAMESPACE ? "node-exporter" : "GPU Operator's (gpu.operator.namespace)"} namespace (${ns}): node agents run Pod Security privileged there, exempt from the restricted level serving relies on`,
        });
    },
  },
  {
    key: "gpu.operator.namespace",
    doc: `must not be a Kubernetes system namespace (default, kube-*), nor the monitoring (${MONITORING_NAMESPACE}) or node-exporter (${NODE_EXPORTER_NAMESPACE}) namespace, which the stack creates with their own Pod Security levels`,
    check: (cfg, ctx) => {
      const ns = cfg.gpu.operator.namespace;
      const at = ["gpu", "operator", "namespace"];
      if (isSystemNamespace(ns)) ctx.addIssue({ path: at, message: SYSTEM_NAMESPACE_RULE });
      else if (ns === MONITORING_NAMESPACE || ns === NODE_EXPORTER_NAMESPACE)
        ctx.addIssue({
          path: at,
          message: `must not be the ${ns === MONITORING_NAMESPACE ? "monitoring" : "node-exporter"} namespace (${ns}): the stack creates that namespace itself, with its own Pod Security level, and the operator's privileged operands would share it`,
        });
    },
  },
];

export const CROSS_SECTION_RULES: readonly CrossSectionRule[] = [
  ...NAMESPACE_RULES,
  {
    key: "gpu.maxUnavailable",
    doc: "must be 1 in prod",
    check: (cfg, ctx) => {
      if (cfg.environment === "prod" && cfg.gpu.maxUnavailable > 1) {
        ctx.addIssue({ path: ["gpu", "maxUnavailable"], message: "must be 1 in prod (an update never takes more than one GPU node out at a time)" });
      }
    },
  },
  {
    key: "gpu.scaling.min",
    doc: "must be at least the number of cluster.zones in prod",
    check: (cfg, ctx) => {
      const zones = cfg.cluster.zones.length;
      if (cfg.environment === "prod" && cfg.gpu.scaling.min < zones) {
        ctx.addIssue({
          path: ["gpu", "scaling", "min"],
          message: `must be at least the number of cluster.zones (${zones}) in prod, so losing a zone leaves GPU capacity`,
        });
      }
    },
  },
  {
    key: "autoscaler.replicas",
    doc: "must be at least 2 in prod (when autoscaler.enabled)",
    check: (cfg, ctx) => {
      if (cfg.environment === "prod" && cfg.autoscaler.enabled && cfg.autoscaler.replicas < 2) {
        ctx.addIssue({
          path: ["autoscaler", "replicas"],
          message: "must be at least 2 in prod (a standby takes over the leader's lease, so node scaling survives a drained or lost node)",
        });
      }
    },
  },
  {
    key: "triton.groups[].image",
    doc: "its CUDA version must run on the driver branch of gpu.amiType (primary and canary images)",
    check: (cfg, ctx) => {
      if (!isGpuAmiType(cfg.gpu.amiType)) return;
      const images = tritonImageRefs(cfg.triton);
      for (const p of checkTritonImages(
        images.map((x) => x.image),
        cfg.gpu.amiType,
      )) {
        ctx.addIssue({ path: images[p.index].path, message: `is incompatible with gpu.amiType: ${p.message}` });
      }
    },
  },
  {
    key: "triton.groups[].models[].gpuMemoryPerInstance",
    doc:
      "the instances on each GPU × their gpuMemoryPerInstance, plus cudaMemoryPoolByteSize, must fit the memory of the group's GPU " +
      "(the smallest among gpu.instanceTypes that carry gpu.type)",
    check: (cfg, ctx) => {
      const types = cfg.gpu.instanceTypes.map(gpuInstanceType).filter((t) => t !== undefined);
      cfg.triton.groups.forEach((g, i) => {
        const carriers = types.filter((t) => t.gpuLabel === g.gpu.type);
        if (carriers.length === 0) return; // triton.groups[].gpu.type's own rule reports it
        const smallest = carriers.reduce((a, t) => (t.gpuMemoryMiB < a.gpuMemoryMiB ? t : a));
        for (const track of g.canary ? (["primary", "canary"] as const) : (["primary"] as const)) {
          if (track === "canary" && !g.canary?.models) continue; // the canary loads the primary's list: the same demand
          for (const d of gpuMemoryDemand(g, track)) {
            if (d.mib <= smallest.gpuMemoryMiB) continue;
            const gi = (mib: number) => `${Math.round((mib / 1024) * 100) / 100}Gi`;
            const who = d.models.map((m) => `${m.name} ${m.instances} × ${gi(m.mibEach)}`).join(", ");
            const last = d.models[d.models.length - 1];
            ctx.addIssue({
              path: ["triton", "groups", i, ...last.path],
              message:
                `with the other instances on GPU ${d.gpu} of a ${track} pod must fit its ${gi(smallest.gpuMemoryMiB)} (${g.gpu.type}, ${smallest.name}): ` +
                `${who} + cudaMemoryPoolByteSize ${gi(g.cudaMemoryPoolByteSize / 1024 / 1024)} = ${gi(d.mib)}; ` +
                "lower instanceGroups[].count or spread instances over more GPUs (gpu.count, instanceGroups[].gpus), or use a GPU with more memory",
            });
          }
        }
      });
    },
  },
  ...(["exitTimeoutSecs", "terminationGracePeriodSeconds"] as const).map((k): CrossSectionRule => ({
    key: `triton.groups[].${k}`,
    doc:
      k === "exitTimeoutSecs"
        ? "must be at least the gateway's longest route timeout (gateway.inferTimeoutSeconds)"
        : "must be at least preStopSleepSeconds + the exit timeout derived from gateway.inferTimeoutSeconds + 15 s",
    check: (cfg, ctx) => {
      const longest = longestRequestSeconds(cfg.gateway);
      cfg.triton.groups.forEach((g, i) => {
        for (const p of tritonShutdownProblems(g, longest)) if (p.path[0] === k) ctx.addIssue({ path: ["triton", "groups", i, ...p.path], message: p.message });
      });
    },
  })),
  {
    key: "triton.groups[].gpu.type",
    doc: "must be the GPU node group's gpuType",
    check: (cfg, ctx) => {
      const nodeGpu = cfg.gpu.gpuType;
      cfg.triton.groups.forEach((g, i) => {
        if (g.gpu.type !== nodeGpu) {
          ctx.addIssue({
            path: ["triton", "groups", i, "gpu", "type"],
            message: `must be the GPU node group's gpu-type (${nodeGpu}): no node carries that label, so the pods would stay Pending`,
          });
        }
      });
    },
  },
  {
    key: "triton.groups[].models",
    doc: "a model contract (a mapping) needs modelRepository.backend s3: the stack writes its config.pbtxt as an S3 object, and Triton mounts EFS read-only",
    check: (cfg, ctx) => {
      if (cfg.modelRepository.backend !== "efs") return;
      cfg.triton.groups.forEach((g, i) => {
        for (const [base, entries] of [
          [["models"], g.models ?? []],
          [["canary", "models"], g.canary?.models ?? []],
        ] as const) {
          entries.forEach((m, j) => {
            if (typeof m !== "string")
              ctx.addIssue({
                path: ["triton", "groups", i, ...base, j],
                message:
                  "must be a bare model name with modelRepository.backend efs: the stack writes a contract's config.pbtxt as an S3 object and Triton " +
                  "mounts EFS read-only (publish the config with the model, or use the s3 backend)",
              });
          });
        }
      });
    },
  },
  {
    key: "gpu.operator.serviceMonitor",
    doc: "must be false while the monitoring component scrapes dcgm-exporter itself",
    check: (cfg, ctx) => {
      if (DCGM_SCRAPED_BY_MONITORING && cfg.gpu.operator.serviceMonitor) {
        ctx.addIssue({
          path: ["gpu", "operator", "serviceMonitor"],
          message:
            "must be false: the monitoring component already scrapes dcgm-exporter (job dcgm-exporter, keeping the GPU pod's namespace/pod labels); a second scrape doubles every GPU series and alert",
        });
      }
    },
  },
  {
    key: "gateway.clientCidrs",
    doc: "must list at least one CIDR in prod",
    check: (cfg, ctx) => {
      if (cfg.environment === "prod" && cfg.gateway.clientCidrs.length === 0) {
        ctx.addIssue({
          path: ["gateway", "clientCidrs"],
          message: "must list at least one client CIDR in prod (the gateway load balancer has no world-open default)",
        });
      }
    },
  },
  {
    key: "triton.groups[].canary.rollout.stage",
    doc: "the current stage's mirrorPercent must equal gateway.mirrorPercent (the gateway mirrors every canary group's share alike)",
    check: (cfg, ctx) => {
      cfg.triton.groups.forEach((g, i) => {
        const r = g.canary?.rollout;
        const stage = r?.stages.find((s) => s.name === r.stage);
        if (!stage || stage.mirrorPercent === cfg.gateway.mirrorPercent) return;
        ctx.addIssue({
          path: ["triton", "groups", i, "canary", "rollout", "stage"],
          message:
            `must name a stage whose mirrorPercent (${stage.name}: ${stage.mirrorPercent}) equals gateway.mirrorPercent (${cfg.gateway.mirrorPercent}): ` +
            "the gateway mirrors every canary group's share alike, so a stage move changes both keys",
        });
      });
    },
  },
  {
    key: "gateway.defaultGroup",
    doc: "must name one of triton.groups",
    check: (cfg, ctx) => {
      const groups = cfg.triton.groups.map((g) => g.name);
      const dg = cfg.gateway.defaultGroup;
      if (dg !== undefined && !groups.includes(dg)) {
        ctx.addIssue({ path: ["gateway", "defaultGroup"], message: `must name one of triton.groups (${groups.join(", ")})` });
      }
    },
  },
  ...CAPACITY_RULES,
  {
    key: "gpu.operator.version",
    doc: "must be a version whose dcgm-exporter labels components/upstream/dcgm.ts knows (the GPU dashboard and alerts select on them)",
    check: (cfg, ctx) => {
      if (dcgmLabels(cfg.gpu.operator.version) === undefined) {
        ctx.addIssue({
          path: ["gpu", "operator", "version"],
          message:
            `must be one of ${Object.keys(DCGM_EXPORTER_BY_OPERATOR).join(", ")} (the dcgm-exporter label names of another release are not known: ` +
            "add its row to DCGM_EXPORTER_BY_OPERATOR in components/upstream/dcgm.ts from that chart's values.yaml)",
        });
      }
    },
  },
  {
    key: "monitoring.prometheusReplicas",
    doc: "must be at most the number of cluster.zones when above 1 (HA replicas run one per zone); likewise monitoring.alerting.replicas",
    check: (cfg, ctx) => {
      // A zone list that is itself wrong is reported on cluster.zones; counting it would only add noise.
      if (cfg.cluster.zones.length === 0 || cfg.cluster.zones.some((z) => regionOfZone(z) === undefined)) return;
      const zones = cfg.cluster.zones.length;
      const m = cfg.monitoring;
      const why = `must be at most the number of cluster.zones (${zones}): HA replicas run one per zone`;
      if (m.prometheusReplicas > 1 && m.prometheusReplicas > zones) ctx.addIssue({ path: ["monitoring", "prometheusReplicas"], message: why });
      if (m.alerting.enabled && m.alerting.replicas > 1 && m.alerting.replicas > zones)
        ctx.addIssue({ path: ["monitoring", "alerting", "replicas"], message: why });
    },
  },
];

/**
 * A rule that reads aws:region beside the sections (a key of the aws namespace, which the
 * sections do not hold): loadConfig runs these with the region it read, once the sections parse.
 */
export interface RegionRule {
  readonly key: string;
  readonly doc: string;
  readonly check: (cfg: ParsedSections, region: unknown, ctx: CheckContext) => void;
}

export const REGION_RULES: readonly RegionRule[] = [
  {
    key: "cluster.zones",
    doc: "each must be an availability zone of aws:region (components/upstream/aws-regions.ts)",
    check: (cfg, region, ctx) => {
      if (isAwsRegion(region)) {
        // A zone of another region (or none) has no subnet in the cluster's VPC: the GPU node
        // group's subnet lookup fails at the first pulumi up, or finds the wrong subnets.
        for (const p of zonesNotOfRegion(cfg.cluster.zones, region)) ctx.addIssue({ path: ["cluster", "zones", p.index], message: p.rule });
        return;
      }
      // aws:region itself is reported; a zone of no region at all is wrong whatever it becomes.
      cfg.cluster.zones.forEach((z, i) => {
        if (regionOfZone(z) === undefined) {
          ctx.addIssue({
            path: ["cluster", "zones", i],
            message: `must be an availability zone of an AWS region (${AWS_REGIONS.length} regions; their zones are listed in components/upstream/aws-regions.ts)`,
          });
        }
      });
    },
  },
];
