// triton-platform: wiring only. The stack file is validated first (nothing is created on
// bad input), then components are created in dependency order and outputs exported.
import { loadStackConfig } from "./config";
import { Cluster } from "./components/cluster";
import { ServingNamespace } from "./components/namespace";
import { standardLabels, standardTags } from "./components/naming";
import { GpuNodeGroup, GpuOperator, hostSoftwareOf } from "./components/gpu";
import { gpuInstanceType } from "./components/upstream/ec2-gpu-instances";
import { ModelRepository } from "./components/model-repository";
import { ClusterStorage } from "./components/storage";
import { ClusterAutoscaler } from "./components/autoscaler";
import { Monitoring } from "./components/monitoring";
import { PROMETHEUS_PODS, type ServingGroupRef } from "./components/contracts";
import { Firewall } from "./components/firewall";
import { EnvoyGateway, GATEWAY_LB_SECURITY_GROUP, gatewayNetworkNeeds, gatewayPods } from "./components/gateway";
import { TritonPriorityClass, TritonServer } from "./components/triton";
import { hpaBounds } from "./components/triton/schema";
import { tritonNetworkNeeds, tritonPods } from "./components/triton/network";

const config = loadStackConfig();
const labels = standardLabels(config);

const cluster = new Cluster("cluster", { name: config.cluster.name, region: config.region, tags: standardTags(config) });
const k8sOpts = { provider: cluster.k8s };

// What routing and scraping need to know of each serving group.
const servingGroups: ServingGroupRef[] = config.triton.groups.map((g) => ({
  name: g.name,
  canary: g.canary !== undefined,
  models: g.models ?? [],
  canaryModels: g.canary ? (g.canary.models ?? g.models ?? []) : [],
  canaryTrafficPercent: g.canary?.trafficPercent ?? 0,
  maxPods: { primary: hpaBounds(g.replicas, g.hpa).max, canary: g.canary?.replicas ?? 0 },
}));

const servingNs = new ServingNamespace("triton", { name: config.triton.namespace, labels }, k8sOpts);

// GPU capacity and the GPU Operator (issue 3). gpuNodes.ref carries the security group, node
// role, labels and taint that serving, EFS and the firewall consume.
const gpuNodes = new GpuNodeGroup(
  "gpu",
  {
    clusterName: cluster.name,
    vpcId: cluster.vpcId,
    clusterSecurityGroupId: cluster.clusterSecurityGroupId,
    region: config.region,
    zones: config.cluster.zones,
    amiType: config.gpu.amiType,
    instanceTypes: config.gpu.instanceTypes,
    gpuType: config.gpu.gpuType,
    // The autoscaler's node template for a group at zero: the fewest GPUs among its instance
    // types (loadConfig has refused unknown types already, so each one is in the facts table).
    gpusPerNode: Math.min(...config.gpu.instanceTypes.map((t) => gpuInstanceType(t)?.gpus ?? 1)),
    scaling: config.gpu.scaling,
    rootVolumeGiB: config.gpu.rootVolumeGiB,
    maxUnavailable: config.gpu.maxUnavailable,
    tags: standardTags(config),
  },
  { provider: cluster.aws },
);
const gpuOperator = new GpuOperator(
  "gpu-operator",
  {
    version: config.gpu.operator.version,
    namespace: config.gpu.operator.namespace,
    labels,
    host: hostSoftwareOf(config.gpu.amiType),
    serviceMonitor: config.gpu.operator.serviceMonitor,
  },
  // After the nodes. Helm waits for the chart's own objects only, not for the operands the
  // operator starts on the GPU nodes (ClusterPolicy status is not awaited; components/gpu/builders.ts).
  { provider: cluster.k8s, dependsOn: [gpuNodes] },
);

// The Cluster Autoscaler owns the GPU node group's desired size between its min and max (the
// node group ignores desiredSize after creation); it discovers the group by the tags EKS sets.
const autoscaler = config.autoscaler.enabled
  ? new ClusterAutoscaler(
      "cluster-autoscaler",
      { ...config.autoscaler, clusterName: config.cluster.name, region: config.region, oidcIssuerUrl: cluster.oidcIssuerUrl, labels },
      { providers: [cluster.aws, cluster.k8s], dependsOn: [gpuNodes] },
    )
  : undefined;

// Model repository (S3 + IRSA, or EFS): what the serving groups read their models from.
const modelRepository = new ModelRepository(
  "model-repository",
  {
    ...config.modelRepository,
    namespace: servingNs.name,
    labels,
    clusterRegion: config.region,
    oidcIssuerUrl: cluster.oidcIssuerUrl,
    vpcId: cluster.vpcId,
    // NFS is admitted from the GPU nodes' own security group only.
    nodeSecurityGroupId: gpuNodes.ref.securityGroupId,
  },
  { providers: [cluster.aws, cluster.k8s] },
);

// Triton serving groups: one TritonServer per configured group (primary + optional canary),
// reading the model repository through its binding (URI, IRSA service account or EFS claim).
const tritonPriority = new TritonPriorityClass("triton-serving", { name: "triton-serving", labels }, k8sOpts);
const tritonServers = config.triton.groups.map(
  (g) =>
    new TritonServer(
      g.name,
      {
        ...g,
        namespace: config.triton.namespace,
        labels,
        modelRepository: modelRepository.binding,
        priorityClassName: tritonPriority.name,
        zoneCount: config.cluster.zones.length,
      },
      // The repository's ServiceAccount (and claim) must exist before pods reference them.
      { ...k8sOpts, dependsOn: [servingNs, tritonPriority, modelRepository] },
    ),
);

// The StorageClass of the persistent volumes (created, or an existing one by name): EKS
// clusters created at 1.30+ have no default class, so every claim names this one.
const storage = new ClusterStorage("storage", { ...config.storage, labels, region: config.region }, k8sOpts);

// Observability: scrapes the serving groups' metrics Services through the contracts (not the
// serving component's code), so it can be created before or without it.
const monitoring = new Monitoring(
  "monitoring",
  {
    labels,
    servingNamespace: config.triton.namespace,
    // Each group's start-up budget and listed models, as the serving groups resolved them.
    servingGroups: tritonServers.map((t, i) => ({
      ...servingGroups[i],
      modelLoadBudgetSeconds: t.resolved.modelLoadBudgetSeconds,
      tracks: t.resolved.tracks.map((x) => ({ track: x.track, models: x.models })),
    })),
    storageClassName: storage.storageClassName,
    gpuOperatorVersion: config.gpu.operator.version,
    gpuOperatorNamespace: config.gpu.operator.namespace,
    zoneCount: config.cluster.zones.length,
    ...config.monitoring,
  },
  // The claims name the class: it exists before the volumes are provisioned.
  { ...k8sOpts, dependsOn: [storage] },
);

// What each component's pods need from the network, declared by the component; the firewall
// composes them (anything undeclared stays closed by its default-deny ingress).
const tritonPodSet = tritonPods(config.triton.namespace);
const gatewayPodSet = gatewayPods(config.triton.namespace);
const networkNeeds = [
  tritonNetworkNeeds({
    pods: tritonPodSet,
    servedBy: gatewayPodSet,
    scrapedBy: PROMETHEUS_PODS,
    // Triton's egress to its models: 443 (S3, STS for IRSA) or 2049 (EFS).
    modelRepositoryEgressPort: modelRepository.binding.egressPort,
  }),
  gatewayNetworkNeeds({
    pods: gatewayPodSet,
    clientCidrs: config.gateway.clientCidrs,
    clientNamespaces: config.gateway.clientNamespaces,
    scrapedBy: PROMETHEUS_PODS,
    upstream: tritonPodSet,
  }),
];

// Firewall first: the gateway's load balancer needs the security group it creates.
const firewall = new Firewall(
  "firewall",
  {
    namespace: config.triton.namespace,
    labels,
    needs: networkNeeds,
    vpcId: cluster.vpcId,
    securityGroupIds: { gpuNodes: gpuNodes.ref.securityGroupId, cluster: cluster.clusterSecurityGroupId },
  },
  { providers: { aws: cluster.aws, kubernetes: cluster.k8s }, dependsOn: [servingNs] },
);
const gatewayLbSecurityGroupId = firewall.securityGroupIds[GATEWAY_LB_SECURITY_GROUP];

const gateway = new EnvoyGateway(
  "gateway",
  {
    ...config.gateway,
    namespace: config.triton.namespace,
    labels,
    servingGroups,
    loadBalancerSecurityGroupId: gatewayLbSecurityGroupId,
  },
  { ...k8sOpts, dependsOn: [servingNs] },
);

export const environment = config.environment;
export const clusterName = cluster.name;
export const clusterEndpoint = cluster.endpoint;
export const tritonNamespace = servingNs.name;
export const servingGroupNames = servingGroups.map((g) => g.name);
export const gpuNodeGroupName = gpuNodes.nodeGroup.nodeGroupName;
export const gpuNodeSecurityGroupId = gpuNodes.securityGroupId;
export const gpuNodeRoleArn = gpuNodes.nodeRoleArn;
export const gpuNodeLabels = gpuNodes.labels;
export const gpuNodeTaint = gpuNodes.taint;
export const gpuOperatorNamespace = gpuOperator.namespace.metadata.name;
// null when autoscaler.enabled is false.
export const clusterAutoscalerRoleArn = autoscaler?.roleArn ?? null;
export const modelRepositoryUri = modelRepository.uri;
// Backend-specific details (absent keys are simply not exported).
export const modelRepositoryDetails = {
  bucketName: modelRepository.bucketName,
  readerRoleArn: modelRepository.readerRoleArn,
  publisherRoleArn: modelRepository.publisherRoleArn,
  fileSystemId: modelRepository.fileSystemId,
  serviceAccountName: modelRepository.binding.serviceAccountName,
};
export const storageClassName = storage.storageClassName;
export const monitoringNamespace = monitoring.namespace;
export const grafanaAdminSecret = monitoring.grafanaAdminSecretName;
export const prometheusUrl = monitoring.prometheusUrl;
export const gatewayServiceName = gateway.serviceName;
// null when the gateway has no load balancer (no client CIDRs: in-cluster clients only).
export const gatewayLoadBalancerSecurityGroupId = gatewayLbSecurityGroupId ?? null;
export const tritonStatefulSets = tritonServers.flatMap((t) => t.resolved.tracks.map((x) => x.name));
