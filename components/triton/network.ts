// What the Triton pods need from the network: serving (8000/8001) reached only by the pods that
// route to them (the gateway), metrics (8002) only by Prometheus, and egress to DNS and the
// model repository only. On AWS: the GPU nodes admit those ports only from the cluster group
// of the general nodes, where the gateway and Prometheus run. The Firewall composes these.
import { TRITON_ALL_PODS, TRITON_PORTS } from "../contracts";
import { allowTo, ANYWHERE, dnsEgress, podsPeer, tcp, type NetworkNeeds, type PodSet } from "../network";

/** Every Triton pod of the stack (all groups, both tracks) in `namespace`. */
export function tritonPods(namespace: string): PodSet {
  return { name: "triton", namespace, labels: { ...TRITON_ALL_PODS } };
}

export interface TritonNetworkArgs {
  /** The Triton pods (tritonPods). */
  readonly pods: PodSet;
  /** Pods that send inference requests (the gateway): clients go through it, never around it. Their egress to Triton is written from this declaration. */
  readonly servedBy: PodSet;
  /** Pods that scrape the metrics port (Prometheus). */
  readonly scrapedBy: PodSet;
  /** The model repository's port: 443 (S3 and STS for IRSA) or 2049 (EFS); binding.egressPort. */
  readonly modelRepositoryEgressPort: number;
}

/** Pure: the Triton pods' network needs. */
export function tritonNetworkNeeds(a: TritonNetworkArgs): NetworkNeeds {
  const { pods } = a;
  return {
    component: "triton",
    // Clients go through the gateway (routing, mirroring, breakers, access log); a direct path
    // to 8000/8001 would bypass all of it. Both sides: the gateway's egress to Triton follows.
    links: [allowTo("serving", a.servedBy, pods, [tcp(TRITON_PORTS.http), tcp(TRITON_PORTS.grpc)])],
    connections: [
      {
        name: `${pods.name}-metrics-from-${a.scrapedBy.name}`,
        pods,
        // Metrics name models and their load: only the monitoring stack reads them.
        allowFrom: [{ peers: [podsPeer(a.scrapedBy)], ports: [tcp(TRITON_PORTS.metrics)] }],
      },
      {
        name: `${pods.name}-egress`,
        pods,
        // DNS and the model repository only (443: S3 and STS for IRSA; 2049: EFS). Triton
        // needs no Kubernetes API access. A compromised backend cannot reach anything else.
        allowTo: [dnsEgress(), { peers: [ANYWHERE], ports: [tcp(a.modelRepositoryEgressPort)] }],
      },
    ],
    securityGroupRules: [
      {
        name: "gpu-triton-serving-from-cluster",
        direction: "ingress",
        securityGroup: "gpuNodes",
        fromPort: TRITON_PORTS.http,
        toPort: TRITON_PORTS.grpc,
        peer: { securityGroup: "cluster" },
        description: "Triton HTTP/gRPC from the gateway pods (general nodes)",
      },
      {
        name: "gpu-triton-metrics-from-cluster",
        direction: "ingress",
        securityGroup: "gpuNodes",
        fromPort: TRITON_PORTS.metrics,
        toPort: TRITON_PORTS.metrics,
        peer: { securityGroup: "cluster" },
        description: "Triton metrics from Prometheus (general nodes)",
      },
    ],
  };
}
