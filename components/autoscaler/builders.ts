// Pure builders of the Cluster Autoscaler: resolved args in, plain data out (IAM documents, the
// IRSA role's arguments, chart values and the Helm release). Tests and the policy pack call them
// without the Pulumi runtime.
import type * as pulumi from "@pulumi/pulumi";
import type { ReleaseArgs } from "@pulumi/kubernetes/helm/v3";
import { NODE_LABEL_ROLE, NODE_ROLE_GPU } from "../contracts";
import { IAM_POLICY_VERSION, IRSA_REGIONAL_STS_ANNOTATION, IRSA_ROLE_ANNOTATION, irsaTrustPolicy, type PolicyDocument } from "../upstream/aws-iam";
import {
  CLUSTER_AUTOSCALER_CHART,
  CLUSTER_AUTOSCALER_READ_ACTIONS,
  CLUSTER_AUTOSCALER_SCALING_ACTIONS,
  DESCRIBE_NODEGROUP,
  DISCOVERY_ENABLED_TAG,
  DISCOVERY_TAG_VALUES,
  discoveryClusterTag,
} from "../upstream/cluster-autoscaler";
import { helmRelease } from "../helm";
import type { ResolvedClusterAutoscalerArgs } from "./schema";

/** The ServiceAccount the chart creates (rbac.serviceAccount.name) and the role trusts: one name, stated once. */
export const AUTOSCALER_SERVICE_ACCOUNT = "cluster-autoscaler";
/** Names of the chart's objects (fullnameOverride): the Deployment, PDB and Service are "cluster-autoscaler". */
export const AUTOSCALER_FULLNAME = "cluster-autoscaler";

/**
 * Requests of the autoscaler container, from the upstream example manifest
 * (cloudprovider/aws/examples/cluster-autoscaler-autodiscover.yaml at cluster-autoscaler-1.35.0:
 * 100m CPU, 600Mi). The chart sets none: an unrequested pod is the first evicted under pressure.
 */
const RESOURCES = { requests: { cpu: "100m", memory: "600Mi" }, limits: { memory: "600Mi" } } as const;

/** Where the role acts: the cluster (by name), its account, partition and region. */
export interface AutoscalerScope {
  readonly partition: string;
  readonly accountId: string;
  readonly region: string;
  readonly clusterName: string;
}

/** ARN pattern of the cluster's managed node groups (eks nodegroup ARNs: nodegroup/<cluster>/<name>/<uuid>). */
export function clusterNodegroupsArn(s: AutoscalerScope): string {
  return `arn:${s.partition}:eks:${s.region}:${s.accountId}:nodegroup/${s.clusterName}/*/*`;
}

/** ARN pattern of every Auto Scaling group of the account in the region (the tag condition narrows it). */
export function regionAutoScalingGroupsArn(s: AutoscalerScope): string {
  return `arn:${s.partition}:autoscaling:${s.region}:${s.accountId}:autoScalingGroup:*:autoScalingGroupName/*`;
}

/**
 * The autoscaler's permissions, as the AWS provider's README lists them for auto-discovery
 * (components/upstream/cluster-autoscaler.ts): the describe calls on "*" (they support no
 * resource-level permission), eks:DescribeNodegroup on this cluster's node groups only, and the two
 * scaling calls only on Auto Scaling groups that carry both discovery tags with the values EKS sets
 * for this cluster's managed node groups: another cluster's group, or an untagged one, is refused.
 */
export function autoscalerPolicy(s: AutoscalerScope): PolicyDocument {
  const describe = CLUSTER_AUTOSCALER_READ_ACTIONS.filter((a) => a !== DESCRIBE_NODEGROUP);
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      { Sid: "DiscoverNodeGroups", Effect: "Allow", Action: [...describe], Resource: "*" },
      // Labels, taints and node-template tags of a managed node group at zero nodes (aws_manager.go buildNodeFromTemplate).
      { Sid: "DescribeOwnManagedNodeGroups", Effect: "Allow", Action: DESCRIBE_NODEGROUP, Resource: clusterNodegroupsArn(s) },
      {
        Sid: "ScaleOwnNodeGroups",
        Effect: "Allow",
        Action: [...CLUSTER_AUTOSCALER_SCALING_ACTIONS],
        Resource: regionAutoScalingGroupsArn(s),
        Condition: {
          StringEquals: {
            [`aws:ResourceTag/${discoveryClusterTag(s.clusterName)}`]: DISCOVERY_TAG_VALUES.cluster,
            [`aws:ResourceTag/${DISCOVERY_ENABLED_TAG}`]: DISCOVERY_TAG_VALUES.enabled,
          },
        },
      },
    ],
  };
}

/** Trust policy: only the cluster's OIDC provider, only the autoscaler's ServiceAccount token, only for STS. */
export function autoscalerTrustPolicy(a: { providerArn: string; issuerUrl: string; namespace: string }): PolicyDocument {
  return irsaTrustPolicy({ sid: "ClusterAutoscalerServiceAccountOnly", ...a, serviceAccount: AUTOSCALER_SERVICE_ACCOUNT });
}

/** Pure: the IRSA role's arguments. */
export function autoscalerRoleArgs<T>(assumeRolePolicy: T) {
  return { assumeRolePolicy, description: "Kubernetes Cluster Autoscaler (IRSA, triton-platform): scales the cluster's EKS managed node groups" };
}

/** Pure: the chart values. */
export function autoscalerValues(r: ResolvedClusterAutoscalerArgs, roleArn: pulumi.Input<string>): Record<string, unknown> {
  return {
    cloudProvider: "aws",
    awsRegion: r.region,
    // --node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/<cluster>
    // (the chart's default autoDiscovery.tags): the tags EKS puts on every managed node group's ASG.
    autoDiscovery: { clusterName: r.clusterName },
    fullnameOverride: AUTOSCALER_FULLNAME,
    // Stated, not left to the chart: the autoscaler's minor should be the cluster's (autoscaler.imageTag).
    image: { tag: r.imageTag },
    replicaCount: r.replicas,
    rbac: {
      serviceAccount: {
        create: true,
        name: AUTOSCALER_SERVICE_ACCOUNT,
        annotations: { [IRSA_ROLE_ANNOTATION]: roleArn, [IRSA_REGIONAL_STS_ANNOTATION]: "true" },
      },
    },
    // The chart's default, stated: a drain takes one autoscaler pod at a time (with 2 replicas one keeps leading).
    podDisruptionBudget: { maxUnavailable: 1 },
    extraArgs: {
      expander: r.expander,
      // One group per zone (or per size) of the same shape is scaled evenly, keeping Triton's zone spread satisfiable.
      "balance-similar-node-groups": true,
      // --skip-nodes-with-system-pods stays at its default (true): kube-system's non-DaemonSet pods
      // (CoreDNS, controllers) do not tolerate the GPU taint, so they never hold a GPU node up.
    },
    // Off the GPU nodes: no toleration for their taint, and a required anti-affinity to their role
    // label (NotIn also matches nodes without the label), so a costly GPU node is never kept for it.
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_LABEL_ROLE, operator: "NotIn", values: [NODE_ROLE_GPU] }] }],
        },
      },
    },
    resources: RESOURCES,
  };
}

/** Pure: the Helm release (release name = chart name, cluster-autoscaler). */
export function autoscalerRelease(r: ResolvedClusterAutoscalerArgs, roleArn: pulumi.Input<string>): ReleaseArgs {
  return helmRelease({
    chart: CLUSTER_AUTOSCALER_CHART,
    version: r.version,
    namespace: r.namespace,
    values: autoscalerValues(r, roleArn),
    // Helm waits for the Deployment's pods to be ready and rolls back a failed upgrade.
    atomic: true,
    timeout: 300,
  });
}
