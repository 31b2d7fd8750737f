// triton-platform: wiring only. The stack file is validated first (nothing is created on
// bad input), then components are created in dependency order and outputs exported.
import { loadStackConfig } from "./config";
import { Cluster } from "./components/cluster";
import { ServingNamespace } from "./components/namespace";
import { standardLabels, standardTags } from "./components/naming";
import { GpuNodeGroup, GpuOperator, hostSoftwareOf } from "./components/gpu";
import { ModelRepository } from "./components/model-repository";
import { ClusterStorage } from "./components/storage";
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
  // After the nodes: the release waits for its operands, which run only on GPU nodes.
  { provider: cluster.k8s, dependsOn: [gpuNodes] },
);

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
    servingGroups,
    storageClassName: storage.storageClassName,
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
