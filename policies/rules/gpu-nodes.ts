// Rules the GPU node group and the GPU Operator make enforceable.
import { GPU_TAINT, GPU_TAINT_EKS_EFFECT, NODE_LABEL_ROLE, NODE_ROLE_GPU } from "../../components/contracts";
import { GPU_AMI_TYPES, WORKER_NODE_MANAGED_POLICIES, isGpuAmiType } from "../../components/upstream/eks";
import { GPU_OPERATOR_CHART } from "../../components/upstream/gpu-operator";
import { EXACT_VERSION } from "../../lib/version";
import { isHelmChart, reportAt, show, type Rule } from "./util";
import { NODE_GROUP, LAUNCH_TEMPLATE } from "./types";

const GPU_NODE_GROUP_COMPONENT = "triton-platform:gpu:GpuNodeGroup";

/** A node group of GPU nodes: an NVIDIA AMI type, or labelled as the platform's GPU role. */
function isGpuNodeGroup(props: Record<string, any>): boolean {
  return isGpuAmiType(props.amiType) || props.labels?.[NODE_LABEL_ROLE] === NODE_ROLE_GPU;
}

function isGpuOperatorRelease(type: string, props: Record<string, any>): boolean {
  return isHelmChart(type, props, GPU_OPERATOR_CHART.chart);
}

export const gpuNodeRules: Rule[] = [
  {
    name: "gpu-nodegroup-tainted",
    domain: "gpu-nodes",
    description: `GPU node groups carry the ${GPU_TAINT.key} ${GPU_TAINT_EKS_EFFECT} taint.`,
    prevents: "Ordinary pods filling the GPU nodes, so Triton pods stay Pending while paid-for GPUs run log shippers.",
    remediationSteps: `Set taints: [{ key: "${GPU_TAINT.key}", value: "${GPU_TAINT.value}", effect: "${GPU_TAINT_EKS_EFFECT}" }] (components/gpu/node-group.ts gpuNodeTaintEks).`,
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (args.type !== NODE_GROUP || !isGpuNodeGroup(args.props)) return;
      const taints: { key?: string; effect?: string }[] = args.props.taints ?? [];
      if (!taints.some((t) => t.key === GPU_TAINT.key && t.effect === GPU_TAINT_EKS_EFFECT)) {
        reportAt(report, { path: "taints", value: args.props.taints }, `NodeGroup ${args.name}: taints lacks {key: "${GPU_TAINT.key}", effect: "${GPU_TAINT_EKS_EFFECT}"}, got ${show(args.props.taints)}`);
      }
    },
  },
  {
    name: "gpu-nodegroup-max-unavailable",
    domain: "gpu-nodes",
    description: "An update replaces at most `max` GPU nodes at a time (an absolute count, not a percentage).",
    prevents: "A node group rollout draining several GPU nodes at once and taking serving capacity below what the traffic needs.",
    remediationSteps: "Set updateConfig.maxUnavailable (gpu.maxUnavailable in the stack config) to 1; do not use maxUnavailablePercentage.",
    enforcementLevel: "advisory",
    configSchema: { properties: { max: { type: "integer", minimum: 1, default: 1 } } },
    validateResource: (args, report) => {
      if (args.type !== NODE_GROUP || !isGpuNodeGroup(args.props)) return;
      const { max } = args.getConfig<{ max: number }>();
      const u = args.props.updateConfig ?? {};
      if (u.maxUnavailablePercentage !== undefined) {
        reportAt(report, { path: "updateConfig.maxUnavailablePercentage", value: u.maxUnavailablePercentage }, `NodeGroup ${args.name}: updateConfig.maxUnavailablePercentage is ${show(u.maxUnavailablePercentage)}; use maxUnavailable <= ${max}`);
      } else if (typeof u.maxUnavailable !== "number" || u.maxUnavailable > max) {
        reportAt(report, { path: "updateConfig.maxUnavailable", value: u.maxUnavailable }, `NodeGroup ${args.name}: updateConfig.maxUnavailable must be <= ${max}, got ${show(u.maxUnavailable)}`);
      }
    },
  },
  {
    name: "launch-template-imdsv2",
    domain: "gpu-nodes",
    description: "Launch templates require IMDSv2 tokens and keep the hop limit at `maxHopLimit` or below.",
    prevents: "A pod (or an SSRF in a model's pre-processing) reading the node role's credentials from the instance metadata service.",
    remediationSteps: 'Set metadataOptions: { httpEndpoint: "enabled", httpTokens: "required", httpPutResponseHopLimit: 2 } (or 1).',
    enforcementLevel: "advisory",
    configSchema: { properties: { maxHopLimit: { type: "integer", minimum: 1, default: 2 } } },
    validateResource: (args, report) => {
      if (args.type !== LAUNCH_TEMPLATE) return;
      const { maxHopLimit } = args.getConfig<{ maxHopLimit: number }>();
      const m = args.props.metadataOptions ?? {};
      if (m.httpEndpoint === "disabled") return;
      if (m.httpTokens !== "required") reportAt(report, { path: "metadataOptions.httpTokens", value: m.httpTokens }, `LaunchTemplate ${args.name}: metadataOptions.httpTokens must be "required", got ${show(m.httpTokens)}`);
      if (typeof m.httpPutResponseHopLimit !== "number" || m.httpPutResponseHopLimit > maxHopLimit) {
        reportAt(report, { path: "metadataOptions.httpPutResponseHopLimit", value: m.httpPutResponseHopLimit }, `LaunchTemplate ${args.name}: metadataOptions.httpPutResponseHopLimit must be <= ${maxHopLimit}, got ${show(m.httpPutResponseHopLimit)}`);
      }
    },
  },
  {
    name: "launch-template-encrypted-volumes",
    domain: "gpu-nodes",
    description: "Launch templates map their volumes explicitly, and every EBS volume is encrypted.",
    prevents: "Model files and cached images on unencrypted disks whenever the account's EBS encryption-by-default is off.",
    remediationSteps: 'Add blockDeviceMappings for the root/data devices with ebs.encrypted: "true".',
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (args.type !== LAUNCH_TEMPLATE) return;
      const mappings: { deviceName?: string; ebs?: { encrypted?: unknown } }[] = args.props.blockDeviceMappings ?? [];
      if (mappings.length === 0) {
        reportAt(report, { path: "blockDeviceMappings", value: mappings }, `LaunchTemplate ${args.name}: blockDeviceMappings is empty, so volume encryption is left to the account default`);
      }
      mappings.forEach((m, i) => {
        if (m.ebs && String(m.ebs.encrypted) !== "true") {
          reportAt(
            report,
            { path: `blockDeviceMappings[${i}].ebs.encrypted`, value: m.ebs.encrypted },
            `LaunchTemplate ${args.name}: blockDeviceMappings[${i}].ebs.encrypted (${m.deviceName ?? "?"}) must be "true", got ${show(m.ebs.encrypted)}`,
          );
        }
      });
    },
  },
  {
    name: "gpu-operator-chart-pinned",
    domain: "gpu-nodes",
    description: "The GPU Operator release pins an exact chart version from NVIDIA's Helm repository.",
    prevents: "A preview that silently upgrades the GPU Operator (and its driver/device-plugin defaults) on every run.",
    remediationSteps: `Set version to an exact chart version (e.g. v25.10.1; gpu.operator.version) and repositoryOpts.repo to ${GPU_OPERATOR_CHART.repo}.`,
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isGpuOperatorRelease(args.type, args.props)) return;
      if (typeof args.props.version !== "string" || !EXACT_VERSION.test(args.props.version)) {
        reportAt(report, { path: "version", value: args.props.version }, `Release ${args.name}: version must be an exact chart version, got ${show(args.props.version)}`);
      }
      const repo = args.props.repositoryOpts?.repo;
      if (repo !== GPU_OPERATOR_CHART.repo) reportAt(report, { path: "repositoryOpts.repo", value: repo }, `Release ${args.name}: repositoryOpts.repo must be ${GPU_OPERATOR_CHART.repo}, got ${show(repo)}`);
    },
  },
  {
    name: "gpu-operator-matches-node-image",
    domain: "gpu-nodes",
    description: "The GPU Operator does not install a driver, toolkit or device plugin that the GPU nodes' AMI type already ships.",
    prevents: "The operator's driver container fighting the AMI's preinstalled driver (or two device plugins), leaving GPU nodes without usable GPUs.",
    remediationSteps: "Derive the operator's host software from the AMI type (components/gpu/operator.ts hostSoftwareOf).",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      const amiTypes = [...new Set(args.resources.filter((r) => r.type === NODE_GROUP && isGpuAmiType(r.props.amiType)).map((r) => r.props.amiType as keyof typeof GPU_AMI_TYPES))];
      for (const release of args.resources.filter((r) => isGpuOperatorRelease(r.type, r.props))) {
        const values = release.props.values ?? {};
        for (const amiType of amiTypes) {
          const ships = GPU_AMI_TYPES[amiType].ships;
          const clashes = (
            [
              ["driver.enabled", ships.driver, values.driver?.enabled],
              ["toolkit.enabled", ships.toolkit, values.toolkit?.enabled],
              ["devicePlugin.enabled", ships.devicePlugin, values.devicePlugin?.enabled],
            ] as const
          ).filter(([, shipped, enabled]) => shipped && enabled !== false);
          for (const [path, , enabled] of clashes) {
            reportAt(report, { path: `values.${path}`, value: enabled }, `Release ${release.name}: values.${path} must be false because ${amiType} nodes ship it, got ${show(enabled)}`, release.urn);
          }
        }
      }
    },
  },
  {
    name: "gpu-node-role-least-privilege",
    domain: "gpu-nodes",
    description: `The GPU node role has only the worker managed policies (${WORKER_NODE_MANAGED_POLICIES.join(", ")}) and no inline policies.`,
    prevents: "Every pod on a GPU node inheriting broad AWS permissions through the node role (pods get their own through IRSA).",
    remediationSteps: "Give workloads IRSA roles instead of attaching policies to the node role (components/gpu/node-group.ts nodeRolePolicyArns).",
    enforcementLevel: "advisory",
    validateStack: (args, report) => {
      const underGpuNodes = (r: (typeof args.resources)[number]) => r.parent?.type === GPU_NODE_GROUP_COMPONENT;
      for (const r of args.resources.filter(underGpuNodes)) {
        if (r.type === "aws:iam/rolePolicyAttachment:RolePolicyAttachment") {
          const arn = String(r.props.policyArn ?? "");
          if (!WORKER_NODE_MANAGED_POLICIES.some((n) => arn.endsWith(`:policy/${n}`))) {
            reportAt(report, { path: "policyArn", value: r.props.policyArn }, `RolePolicyAttachment ${r.name}: policyArn ${show(r.props.policyArn)} is not one of the worker node policies`, r.urn);
          }
        }
        if (r.type === "aws:iam/rolePolicy:RolePolicy") {
          reportAt(report, { path: "policy", value: r.props.policy }, `RolePolicy ${r.name}: policy is an inline policy on the GPU node role (role ${show(r.props.role)})`, r.urn);
        }
        if (r.type === "aws:iam/role:Role" && Array.isArray(r.props.inlinePolicies) && r.props.inlinePolicies.length > 0) {
          reportAt(report, { path: "inlinePolicies", value: r.props.inlinePolicies }, `Role ${r.name}: inlinePolicies must be empty, got ${r.props.inlinePolicies.length}`, r.urn);
        }
      }
    },
  },
];
