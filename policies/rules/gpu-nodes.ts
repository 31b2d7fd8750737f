// Rules the GPU node group and the GPU Operator make enforceable.
import type { PolicyResource } from "@pulumi/policy";
import {
  GPU_RESOURCE,
  GPU_TAINT,
  GPU_TAINT_EKS_EFFECT,
  NODE_GROUP_ZONES_TAG,
  NODE_LABEL_GPU_TYPE,
  NODE_LABEL_ROLE,
  NODE_ROLE_GPU,
} from "../../components/contracts";
import { gpuInstanceType } from "../../components/upstream/ec2-gpu-instances";
import { ENVIRONMENT_TAG } from "../../components/naming";
import { GPU_AMI_TYPES, WORKER_NODE_MANAGED_POLICIES, isGpuAmiType } from "../../components/upstream/eks";
import { GPU_OPERATOR_CHART } from "../../components/upstream/gpu-operator";
import { containersOf, metadataOf, podSpecsOf, propsOf, type PropsOf } from "./props";
import { NONE, resourceRule, stackRule, type Finding, type Resource, type Rule } from "./rule";
import { HELM_RELEASE, HORIZONTAL_POD_AUTOSCALER, IAM_ROLE, IAM_ROLE_POLICY, IAM_ROLE_POLICY_ATTACHMENT, LAUNCH_TEMPLATE, NODE_GROUP } from "./types";
import { decodeJson, environmentsSchema, isHelmChart, show, type EnvConfig } from "./util";

const GPU_NODE_GROUP_COMPONENT = "triton-platform:gpu:GpuNodeGroup";

type NodeGroup = PropsOf<typeof NODE_GROUP>;

/** The props of a node group of GPU nodes (an NVIDIA AMI type, or labelled as the platform's GPU role), else undefined. */
function gpuNodeGroupOf(r: Pick<Resource, "type" | "props">): NodeGroup | undefined {
  const ng = propsOf(r, NODE_GROUP);
  return ng && (isGpuAmiType(ng.amiType) || ng.labels?.[NODE_LABEL_ROLE] === NODE_ROLE_GPU) ? ng : undefined;
}

/** The props of the GPU Operator's Helm release, else undefined. */
function gpuOperatorReleaseOf(r: Pick<Resource, "type" | "props">): PropsOf<typeof HELM_RELEASE> | undefined {
  return isHelmChart(r.type, r.props, GPU_OPERATOR_CHART.chart) ? propsOf(r, HELM_RELEASE) : undefined;
}

export const gpuNodegroupTainted = resourceRule({
  name: "gpu-nodegroup-tainted",
  domain: "gpu-nodes",
  description: `GPU node groups carry the ${GPU_TAINT.key} ${GPU_TAINT_EKS_EFFECT} taint.`,
  prevents: "Ordinary pods filling the GPU nodes, so Triton pods stay Pending while paid-for GPUs run log shippers.",
  remediationSteps:
    `Set taints: [{ key: "${GPU_TAINT.key}", value: "${GPU_TAINT.value}", effect: "${GPU_TAINT_EKS_EFFECT}" }] ` +
    `(components/gpu/builders.ts gpuNodeTaintEks).`,
  check: (r) => {
    const ng = gpuNodeGroupOf(r);
    if (!ng) return NONE;
    const taints = ng.taints ?? [];
    if (taints.some((t) => t.key === GPU_TAINT.key && t.effect === GPU_TAINT_EKS_EFFECT)) return NONE;
    return [
      {
        path: "taints",
        value: ng.taints,
        message: `NodeGroup ${r.name}: taints lacks {key: "${GPU_TAINT.key}", effect: ` + `"${GPU_TAINT_EKS_EFFECT}"}, got ${show(ng.taints)}`,
      },
    ];
  },
});

const maxUnavailableSettings = { max: { type: "integer", minimum: 1, default: 1, description: "Most GPU nodes an update may take out at once." } } as const;

export const gpuNodegroupMaxUnavailable = resourceRule<{ max: number }>({
  name: "gpu-nodegroup-max-unavailable",
  domain: "gpu-nodes",
  configKey: "gpu.maxUnavailable",
  description: "An update replaces at most `max` GPU nodes at a time (an absolute count, not a percentage).",
  prevents: "A node group rollout draining several GPU nodes at once and taking serving capacity below what the traffic needs.",
  remediationSteps:
    `Set updateConfig.maxUnavailable (gpu.maxUnavailable in the stack config) to at most max (default ` +
    `${maxUnavailableSettings.max.default}); do not use maxUnavailablePercentage.`,
  configSchema: { properties: maxUnavailableSettings },
  check: (r, { max }) => {
    const ng = gpuNodeGroupOf(r);
    if (!ng) return NONE;
    const u = ng.updateConfig ?? {};
    if (u.maxUnavailablePercentage !== undefined) {
      const message = `NodeGroup ${r.name}: updateConfig.maxUnavailablePercentage is ${show(u.maxUnavailablePercentage)}; use maxUnavailable <= ${max}`;
      return [{ path: "updateConfig.maxUnavailablePercentage", value: u.maxUnavailablePercentage, message }];
    }
    if (typeof u.maxUnavailable !== "number" || u.maxUnavailable > max) {
      return [
        {
          path: "updateConfig.maxUnavailable",
          value: u.maxUnavailable,
          message: `NodeGroup ${r.name}: updateConfig.maxUnavailable must be ` + `<= ${max}, got ${show(u.maxUnavailable)}`,
        },
      ];
    }
    return NONE;
  },
});

const imdsSettings = {
  maxHopLimit: {
    type: "integer",
    minimum: 1,
    // 1: a pod on the pod network is one hop (its veth) from the node, so with 2 every pod gets an IMDSv2 token and the
    // node role's credentials; EKS's security best practices set 1 when pods use IRSA (hostNetwork agents keep IMDS).
    default: 1,
    description: "Highest IMDSv2 response hop limit (1 keeps IMDS to the node and hostNetwork pods; 2 lets every pod on the pod network reach it).",
  },
} as const;

export const launchTemplateImdsv2 = resourceRule<{ maxHopLimit: number }>({
  name: "launch-template-imdsv2",
  domain: "gpu-nodes",
  description: "Launch templates require IMDSv2 tokens and keep the hop limit at `maxHopLimit` or below.",
  prevents: "A pod (or an SSRF in a model's pre-processing) reading the node role's credentials from the instance metadata service.",
  remediationSteps:
    `Set metadataOptions: { httpEndpoint: "enabled", httpTokens: "required", httpPutResponseHopLimit: <= maxHopLimit (default ` +
    `${imdsSettings.maxHopLimit.default}) }.`,
  configSchema: { properties: imdsSettings },
  check: (r, { maxHopLimit }) => {
    const lt = propsOf(r, LAUNCH_TEMPLATE);
    if (!lt) return NONE;
    const m = lt.metadataOptions ?? {};
    if (m.httpEndpoint === "disabled") return NONE;
    const out: Finding[] = [];
    if (m.httpTokens !== "required")
      out.push({
        path: "metadataOptions.httpTokens",
        value: m.httpTokens,
        message: `LaunchTemplate ${r.name}: metadataOptions.httpTokens must be "required", got ${show(m.httpTokens)}`,
      });
    if (typeof m.httpPutResponseHopLimit !== "number" || m.httpPutResponseHopLimit > maxHopLimit) {
      const message = `LaunchTemplate ${r.name}: metadataOptions.httpPutResponseHopLimit must be <= ${maxHopLimit}, got ${show(m.httpPutResponseHopLimit)}`;
      out.push({ path: "metadataOptions.httpPutResponseHopLimit", value: m.httpPutResponseHopLimit, message });
    }
    return out;
  },
});

/** An AWS-managed key reference: the EBS service key by alias (alias/aws/ebs, as a name or an alias ARN). */
const AWS_MANAGED_EBS_KEY = /(^|:)alias\/aws\/ebs$/;

export const launchTemplateEncryptedVolumes = resourceRule<EnvConfig>({
  name: "launch-template-encrypted-volumes",
  domain: "gpu-nodes",
  configKey: "gpu.rootVolumeKmsKeyArn",
  description:
    "Launch templates map their volumes explicitly, and every EBS volume is encrypted; in the listed environments with a customer-managed " +
    "key named in ebs.kmsKeyId (not absent, which leaves the account's default key, and not alias/aws/ebs).",
  prevents:
    "Model files and cached images on unencrypted disks whenever the account's EBS encryption-by-default is off; in production, volumes " +
    "under the AWS-managed key, whose policy nobody can restrict, rotate on a schedule of one's own or audit as a compliance suite expects.",
  remediationSteps:
    'Add blockDeviceMappings for the root/data devices with ebs.encrypted: "true" and ebs.kmsKeyId: the stack\'s volume key ' +
    "(components/gpu/node-group.ts creates one unless triton-platform:gpu.rootVolumeKmsKeyArn names another).",
  configSchema: { properties: { ...environmentsSchema("Environments whose launch templates need a customer-managed key (tag triton-platform:environment).") } },
  check: (r, { environments }) => {
    const lt = propsOf(r, LAUNCH_TEMPLATE);
    if (!lt) return NONE;
    const mappings = lt.blockDeviceMappings ?? [];
    const out: Finding[] = [];
    if (mappings.length === 0) {
      out.push({
        path: "blockDeviceMappings",
        value: mappings,
        message: `LaunchTemplate ${r.name}: blockDeviceMappings is empty, so volume ` + `encryption is left to the account default`,
      });
    }
    const env = awsEnvironment(r);
    const needsCmk = env !== undefined && environments.includes(env);
    mappings.forEach((m, i) => {
      if (m.ebs && String(m.ebs.encrypted) !== "true") {
        const path = `blockDeviceMappings[${i}].ebs.encrypted`;
        out.push({
          path,
          value: m.ebs.encrypted,
          message: `LaunchTemplate ${r.name}: ${path} (${m.deviceName ?? "?"}) must be "true", got ${show(m.ebs.encrypted)}`,
        });
      }
      const key = m.ebs?.kmsKeyId;
      if (m.ebs && needsCmk && (typeof key !== "string" || key === "" || AWS_MANAGED_EBS_KEY.test(key))) {
        const path = `blockDeviceMappings[${i}].ebs.kmsKeyId`;
        out.push({
          path,
          value: key ?? null,
          message: `LaunchTemplate ${r.name}: ${path} (${m.deviceName ?? "?"}) must name a customer-managed KMS key in ${env}, got ${show(key)}`,
        });
      }
    });
    return out;
  },
});

export const gpuOperatorMatchesNodeImage = stackRule({
  name: "gpu-operator-matches-node-image",
  domain: "gpu-nodes",
  configKey: "gpu.operator.version",
  description: "The GPU Operator does not install a driver, toolkit or device plugin that the GPU nodes' AMI type already ships.",
  prevents: "The operator's driver container fighting the AMI's preinstalled driver (or two device plugins), leaving GPU nodes without usable GPUs.",
  remediationSteps: "Derive the operator's host software from the AMI type (components/gpu/builders.ts hostSoftwareOf).",
  check: (resources) => {
    const amiTypes = [
      ...new Set(
        resources.flatMap((r) => {
          const amiType = propsOf(r, NODE_GROUP)?.amiType;
          return isGpuAmiType(amiType) ? [amiType] : [];
        }),
      ),
    ];
    const out: Finding[] = [];
    for (const release of resources) {
      const operator = gpuOperatorReleaseOf(release);
      if (!operator) continue;
      const v = operator.values ?? {};
      for (const amiType of amiTypes) {
        const ships = GPU_AMI_TYPES[amiType].ships;
        const clashes = (
          [
            ["driver.enabled", ships.driver, v.driver?.enabled],
            ["toolkit.enabled", ships.toolkit, v.toolkit?.enabled],
            ["devicePlugin.enabled", ships.devicePlugin, v.devicePlugin?.enabled],
          ] as const
        ).filter(([, shipped, enabled]) => shipped && enabled !== false);
        for (const [path, , enabled] of clashes) {
          out.push({
            path: `values.${path}`,
            value: enabled,
            message: `Release ${release.name}: values.${path} must be false because ${amiType} ` + `nodes ship it, got ${show(enabled)}`,
            urn: release.urn,
          });
        }
      }
    }
    return out;
  },
});

/**
 * AWS managed policies the node role may carry beyond the worker policies: AmazonSSMManagedInstanceCore, the policy AWS
 * documents for Session Manager access to EKS nodes (its alternative to SSH, which firewall-no-ssh-from-internet keeps closed).
 */
const NODE_ROLE_EXTRA_POLICIES = ["AmazonSSMManagedInstanceCore"] as const;

/** The AWS managed policy an ARN names exactly (`arn:<partition>:iam::aws:policy/<name>`), else undefined: a customer managed policy has an account id. */
function awsManagedPolicyName(arn: unknown): string | undefined {
  return /^arn:aws(-[a-z]+)*:iam::aws:policy\/(.+)$/.exec(String(arn))?.[2];
}

const ROLE_POLICY_ATTACHMENTS_EXCLUSIVE = "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive";

export const gpuNodeRoleLeastPrivilege = stackRule({
  name: "gpu-node-role-least-privilege",
  domain: "gpu-nodes",
  description:
    `The GPU node role has only the worker managed policies (${WORKER_NODE_MANAGED_POLICIES.join(", ")}; ${NODE_ROLE_EXTRA_POLICIES.join(", ")} ` +
    "for Session Manager is allowed too), each identified by its exact AWS managed ARN arn:<partition>:iam::aws:policy/<name>, and no inline policies.",
  prevents:
    "Every pod on a GPU node inheriting broad AWS permissions through the node role (pods get their own through IRSA), including through a " +
    "customer managed policy named like an AWS managed one.",
  remediationSteps: "Give workloads IRSA roles instead of attaching policies to the node role (components/gpu/builders.ts nodeRolePolicyArns).",
  check: (resources) => {
    const allowed: readonly string[] = [...WORKER_NODE_MANAGED_POLICIES, ...NODE_ROLE_EXTRA_POLICIES];
    // The node roles: roles of the GPU node group component, and the roles GPU node groups name (their nodeRoleArn dependency).
    const roles = new Set(resources.filter((r) => r.type === IAM_ROLE && r.parent?.type === GPU_NODE_GROUP_COMPONENT).map((r) => r.urn));
    for (const ng of resources) if (gpuNodeGroupOf(ng)) for (const d of ng.dependencies) if (d.type === IAM_ROLE) roles.add(d.urn);
    // Elsewhere, a policy or attachment is the node role's when every role it depends on is a node role (its `role` input is one):
    // a policy of another role that merely names the node role (iam:PassRole) also depends on that other role.
    const onNodeRole = (r: PolicyResource) => {
      if (r.parent?.type === GPU_NODE_GROUP_COMPONENT || roles.has(r.urn)) return true;
      const deps = r.dependencies.filter((d) => d.type === IAM_ROLE);
      return deps.length > 0 && deps.every((d) => roles.has(d.urn));
    };
    const out: Finding[] = [];
    const arnFinding = (r: PolicyResource, path: string, arn: unknown) => {
      const name = awsManagedPolicyName(arn);
      if (name !== undefined && allowed.includes(name)) return;
      const why =
        name === undefined
          ? `not an AWS managed policy ARN (arn:<partition>:iam::aws:policy/<name>; allowed: ${allowed.join(", ")})`
          : "not one of the worker node policies";
      const kind = r.type.split(":").pop();
      out.push({ path, value: arn, message: `${kind} ${r.name}: ${path} ${show(arn)} is ${why}`, urn: r.urn });
    };
    for (const r of resources.filter(onNodeRole)) {
      const attachment = propsOf(r, IAM_ROLE_POLICY_ATTACHMENT);
      if (attachment) arnFinding(r, "policyArn", attachment.policyArn);
      if (r.type === ROLE_POLICY_ATTACHMENTS_EXCLUSIVE)
        ((r.props as { policyArns?: unknown[] }).policyArns ?? []).forEach((arn, i) => arnFinding(r, `policyArns[${i}]`, arn));
      if (r.type === IAM_ROLE_POLICY) {
        const props = r.props as { policy?: unknown; role?: unknown };
        out.push({
          path: "policy",
          value: props.policy,
          message: `RolePolicy ${r.name}: policy is an inline policy on the GPU node role (role ` + `${show(props.role)})`,
          urn: r.urn,
        });
      }
      const role = propsOf(r, IAM_ROLE);
      if (role && Array.isArray(role.inlinePolicies) && role.inlinePolicies.length > 0) {
        out.push({
          path: "inlinePolicies",
          value: role.inlinePolicies,
          message: `Role ${r.name}: inlinePolicies must be empty, got ` + `${role.inlinePolicies.length}`,
          urn: r.urn,
        });
      }
      if (role) ((role as { managedPolicyArns?: unknown[] }).managedPolicyArns ?? []).forEach((arn, i) => arnFinding(r, `managedPolicyArns[${i}]`, arn));
    }
    return out;
  },
});

// ---- zones per environment -----------------------------------------------------------------

/** The environment of an AWS resource: its own tag, else its provider's defaultTags. */
function awsEnvironment(r: Pick<Resource, "props" | "provider">): string | undefined {
  return (r.props as NodeGroup).tags?.[ENVIRONMENT_TAG] ?? decodeJson(r.provider?.props?.defaultTags)?.tags?.[ENVIRONMENT_TAG];
}

const spanZonesSettings = {
  ...environmentsSchema("Environments the rule applies to (tag triton-platform:environment)."),
  minZones: { type: "integer", minimum: 1, default: 3, description: "Least distinct availability zones (and least nodes) of a GPU type's node groups." },
} as const;

export const gpuNodesSpanZones = stackRule<EnvConfig & { minZones: number }>({
  name: "gpu-nodes-span-zones",
  domain: "gpu-nodes",
  configKey: "cluster.zones",
  description:
    `In the listed environments, the GPU node groups of each GPU type run in subnets of at least minZones availability zones (tag ` +
    `${NODE_GROUP_ZONES_TAG}) with at least minZones nodes (scalingConfig.minSize).`,
  prevents:
    "One availability-zone outage taking every GPU of a serving group with it: Triton's zone spread cannot place replicas in zones that " +
    "have no GPU nodes.",
  remediationSteps:
    `List at least minZones (default ${spanZonesSettings.minZones.default}, in ${spanZonesSettings.environments.default.join(", ")}) zones in triton-platform:cluster.zones ` +
    "(the node group looks up a private subnet in each and records their zones) and set gpu.scaling.min to at least as many.",
  configSchema: { properties: spanZonesSettings },
  check: (resources, cfg) => {
    const byGpuType = new Map<string, PolicyResource[]>();
    for (const g of resources) {
      const ng = propsOf(g, NODE_GROUP);
      if (!ng || !(isGpuAmiType(ng.amiType) || ng.labels?.[NODE_LABEL_GPU_TYPE] !== undefined)) continue;
      const env = awsEnvironment(g);
      if (env === undefined || !cfg.environments.includes(env)) continue;
      const key = ng.labels?.[NODE_LABEL_GPU_TYPE] ?? String(ng.amiType);
      byGpuType.set(key, [...(byGpuType.get(key) ?? []), g]);
    }
    const out: Finding[] = [];
    const props = (g: PolicyResource) => g.props as NodeGroup;
    for (const [gpuType, gs] of byGpuType) {
      const path = `tags["${NODE_GROUP_ZONES_TAG}"]`;
      const zones = new Set(
        gs.flatMap((g) =>
          String(props(g).tags?.[NODE_GROUP_ZONES_TAG] ?? "")
            .split(/\s+/)
            .filter(Boolean),
        ),
      );
      const g = gs[0];
      if (zones.size < cfg.minZones) {
        const value = props(g).tags?.[NODE_GROUP_ZONES_TAG];
        out.push({
          path,
          value,
          message:
            `NodeGroup ${g.name} (${gpuType}, ${awsEnvironment(g)}): ${path} is ${show(value)} (subnetIds ` +
            `${JSON.stringify(gs.flatMap((x) => props(x).subnetIds ?? []))}); ` +
            `GPU nodes of ${gpuType} span ${zones.size} zone(s), need >= ${cfg.minZones}`,
          urn: g.urn,
        });
      }
      const minNodes = gs.reduce((n, x) => n + (props(x).scalingConfig?.minSize ?? 0), 0);
      if (minNodes < cfg.minZones) {
        const value = props(g).scalingConfig?.minSize;
        out.push({
          path: "scalingConfig.minSize",
          value,
          message:
            `NodeGroup ${g.name} (${gpuType}, ${awsEnvironment(g)}): scalingConfig.minSize is ${show(value)} (${minNodes} across the ` +
            `type's groups), below the ${cfg.minZones} nodes one per zone needs`,
          urn: g.urn,
        });
      }
    }
    return out;
  },
});

/** GPUs one pod of a workload requests (every container's nvidia.com/gpu limit, else request), and the GPU type its node affinity requires. */
function gpuPodOf(r: PolicyResource): { gpus: number; gpuType?: string } | undefined {
  const kind = (r.props as { kind?: unknown }).kind;
  if (kind !== "StatefulSet" && kind !== "Deployment") return undefined;
  const [{ spec } = { spec: undefined }] = podSpecsOf(r);
  let gpus = 0;
  for (const { c, list } of containersOf(spec, "spec.template.spec")) {
    if (list !== "containers") continue; // init containers run before, not beside, the others
    const n = Number(c.resources?.limits?.[GPU_RESOURCE] ?? c.resources?.requests?.[GPU_RESOURCE] ?? 0);
    if (Number.isFinite(n)) gpus += n;
  }
  if (gpus === 0) return undefined;
  const selector = spec?.nodeSelector?.[NODE_LABEL_GPU_TYPE];
  const terms = spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const values = terms.flatMap((t) =>
    (t.matchExpressions ?? []).filter((e) => e.key === NODE_LABEL_GPU_TYPE && e.operator === "In").flatMap((e) => e.values ?? []),
  );
  const gpuType = typeof selector === "string" ? selector : values.length === 1 ? values[0] : undefined;
  return { gpus, ...(gpuType ? { gpuType } : {}) };
}

export const gpuCapacityHoldsServingPods = stackRule({
  name: "gpu-capacity-holds-serving-pods",
  domain: "gpu-nodes",
  configKey: "gpu.scaling.max",
  description:
    `The GPU node groups at their maximum (scalingConfig.maxSize × the ${GPU_RESOURCE} of the instance type) hold every GPU pod of the ` +
    "stack at its own maximum (a StatefulSet's or Deployment's HPA maxReplicas, else its replicas), per GPU type the pods' node affinity requires.",
  prevents:
    "Pods that can never schedule: the HPA scales up under load (or a canary is started) and the new pods stay Pending because the node " +
    "group may not grow far enough, so the capacity the plan promises is not there when the traffic is.",
  remediationSteps:
    "Raise gpu.scaling.max (each node adds its instance type's GPUs), or lower the serving groups' triton.groups[].hpa.max, replicas " +
    "or canary.replicas, so the node group's maximum covers the pods' maximum.",
  check: (resources) => {
    const hpaMax = new Map<string, number>();
    for (const r of resources) {
      const h = propsOf(r, HORIZONTAL_POD_AUTOSCALER)?.spec;
      const t = h?.scaleTargetRef;
      if (t?.name && typeof h?.maxReplicas === "number") hpaMax.set(`${t.kind}/${metadataOf(r).namespace ?? ""}/${t.name}`, h.maxReplicas);
    }
    const demand: { r: PolicyResource; gpuType?: string; pods: number; gpus: number; hpa: boolean }[] = [];
    for (const r of resources) {
      const pod = gpuPodOf(r);
      if (!pod) continue;
      const m = metadataOf(r);
      const scaled = hpaMax.get(`${(r.props as { kind?: string }).kind}/${m.namespace ?? ""}/${m.name ?? ""}`);
      const replicas = (r.props as { spec?: { replicas?: unknown } }).spec?.replicas;
      const pods = scaled ?? (typeof replicas === "number" ? replicas : 1);
      demand.push({ r, gpuType: pod.gpuType, pods, gpus: pods * pod.gpus, hpa: scaled !== undefined });
    }
    const supply = resources.flatMap((r) => {
      const ng = gpuNodeGroupOf(r);
      const max = ng?.scalingConfig?.maxSize;
      const per = (ng?.instanceTypes ?? []).map((t) => gpuInstanceType(String(t))?.gpus).filter((n): n is number => n !== undefined);
      if (!ng || typeof max !== "number" || per.length === 0) return [];
      const perNode = Math.max(...per);
      return [{ r, ng, max, perNode, gpus: max * perNode, gpuType: ng.labels?.[NODE_LABEL_GPU_TYPE] }];
    });
    if (supply.length === 0) return NONE; // no GPU node group this rule can count: gpu-nodes' other rules and the config report it
    const out: Finding[] = [];
    for (const gpuType of [...new Set(demand.map((d) => d.gpuType))]) {
      const pods = demand.filter((d) => d.gpuType === gpuType || d.gpuType === undefined || gpuType === undefined);
      const carriers = supply.filter((s) => gpuType === undefined || s.gpuType === undefined || s.gpuType === gpuType);
      const needed = pods.reduce((a, d) => a + d.gpus, 0);
      const available = carriers.reduce((a, s) => a + s.gpus, 0);
      if (needed <= available) continue;
      if (carriers.length === 0) continue; // no node group of that GPU type: a placement problem (triton.groups[].gpu.type), not capacity
      const [at, ...others] = carriers;
      const need = pods.map(
        (d) => `${(d.r.props as { kind?: string }).kind} ${metadataOf(d.r).name ?? d.r.name} ${d.hpa ? "HPA max " : ""}${d.pods} × ${d.gpus / d.pods}`,
      );
      const side = (s: (typeof supply)[number]) => `${s.max} × ${s.perNode} GPU (${(s.ng.instanceTypes ?? []).join(", ")}) = ${s.gpus}`;
      out.push({
        path: "scalingConfig.maxSize",
        value: at.max,
        message:
          `NodeGroup ${at.r.name}: scalingConfig.maxSize ${side(at)}${others.map((s) => `, NodeGroup ${s.r.name} ${side(s)}`).join("")}: ` +
          `at most ${available} ${gpuType ?? "GPU"} GPUs, but the pods need ${needed} at their maximum (${need.join("; ")}): ` +
          `${needed - available} GPU(s) of pods stay Pending`,
        urn: at.r.urn,
      });
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [
  gpuNodegroupTainted,
  gpuNodegroupMaxUnavailable,
  launchTemplateImdsv2,
  launchTemplateEncryptedVolumes,
  gpuOperatorMatchesNodeImage,
  gpuNodeRoleLeastPrivilege,
  gpuNodesSpanZones,
  gpuCapacityHoldsServingPods,
];
