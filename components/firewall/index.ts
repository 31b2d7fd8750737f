// Firewall: Kubernetes NetworkPolicies in the Triton namespace and AWS security-group rules.
// Triton's ports are reachable only from the gateway (8000/8001) and from Prometheus in
// the monitoring namespace (8002); the gateway only from configured clients. Builders are
// pure and return plain data (rule specs with symbolic security-group references), so the
// tests and the policy pack can prove "never world-open" without the Pulumi runtime.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { SecurityGroup } from "@pulumi/aws/ec2/securityGroup";
import { SecurityGroupIngressRule } from "@pulumi/aws/vpc/securityGroupIngressRule";
import { SecurityGroupEgressRule } from "@pulumi/aws/vpc/securityGroupEgressRule";
import {
  GATEWAY_METRICS,
  GATEWAY_POD_LABELS,
  GATEWAY_PORTS,
  MONITORING_NAMESPACE,
  PROMETHEUS_POD_LABELS,
  TRITON_ALL_PODS,
  TRITON_PORTS,
} from "../contracts";
import { ENVOY_READY_PORT } from "../gateway/envoy-config";
import { NFS_PORT } from "../upstream/aws-efs-csi";
import { isWorldOpen, parseCidr } from "../../lib/cidr";

/** Arguments for the firewall. */
export interface FirewallArgs {
  /** Namespace of the Triton pods and the gateway. */
  readonly namespace: string;
  /** Standard labels of the stack. */
  readonly labels: Record<string, string>;
  /** Egress the Triton pods need to the model repository: 443 (S3) or 2049 (EFS). */
  readonly modelRepositoryEgressPort: 443 | 2049;
  /** Networks allowed to reach the gateway (its NLB and its pods). @default [] */
  readonly clientCidrs?: readonly string[];
  /** Namespaces whose pods may call the gateway. @default [] */
  readonly clientNamespaces?: readonly string[];
  /** VPC of the cluster (for the gateway load balancer's security group). */
  readonly vpcId: pulumi.Input<string>;
  /** Security group of the GPU nodes, i.e. of the Triton pods' network interfaces. */
  readonly gpuNodeSecurityGroupId: pulumi.Input<string>;
  /** Security group of the general nodes the gateway and Prometheus run on (EKS cluster SG). */
  readonly clusterSecurityGroupId: pulumi.Input<string>;
  /** Security group of the EFS mount targets, when the EFS model repository is on. */
  readonly efsSecurityGroupId?: pulumi.Input<string>;
  /** Cluster DNS pods. @default kube-system, k8s-app=kube-dns (CoreDNS on EKS) */
  readonly dns?: { readonly namespace: string; readonly podLabels: Record<string, string> };
}

export type ResolvedFirewallArgs = Required<Omit<FirewallArgs, "efsSecurityGroupId">> & Pick<FirewallArgs, "efsSecurityGroupId">;

export function resolveFirewallArgs(args: FirewallArgs): ResolvedFirewallArgs {
  const clientCidrs = args.clientCidrs ?? [];
  const bad = clientCidrs.filter((c) => parseCidr(c) === undefined || isWorldOpen(c));
  if (bad.length) throw new pulumi.InputPropertyError({ propertyPath: "clientCidrs", reason: `must be CIDRs narrower than /0, got ${bad.join(", ")}` });
  return {
    namespace: args.namespace,
    labels: args.labels,
    modelRepositoryEgressPort: args.modelRepositoryEgressPort,
    clientCidrs,
    clientNamespaces: args.clientNamespaces ?? [],
    vpcId: args.vpcId,
    gpuNodeSecurityGroupId: args.gpuNodeSecurityGroupId,
    clusterSecurityGroupId: args.clusterSecurityGroupId,
    efsSecurityGroupId: args.efsSecurityGroupId,
    dns: args.dns ?? { namespace: "kube-system", podLabels: { "k8s-app": "kube-dns" } },
  };
}

// ---- NetworkPolicies -------------------------------------------------------------------
/** A NetworkPolicy manifest with plain metadata (what the builders return). */
type NetworkPolicy = k8s.types.input.networking.v1.NetworkPolicy & { metadata: { name: string; namespace: string; labels: Record<string, string> } };
type Peer = k8s.types.input.networking.v1.NetworkPolicyPeer;

const tcp = (port: number) => ({ protocol: "TCP", port });
const namespacePeer = (ns: string): Peer => ({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } });
/** Prometheus pods of the monitoring namespace (both selectors in one peer: AND). */
export const PROMETHEUS_PEER: Peer = { ...namespacePeer(MONITORING_NAMESPACE), podSelector: { matchLabels: { ...PROMETHEUS_POD_LABELS } } };

function policy(r: ResolvedFirewallArgs, name: string, spec: NetworkPolicy["spec"]): NetworkPolicy {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace: r.namespace, labels: { ...r.labels, "app.kubernetes.io/component": "firewall" } },
    spec,
  };
}

function dnsEgress(r: ResolvedFirewallArgs) {
  return {
    to: [{ ...namespacePeer(r.dns.namespace), podSelector: { matchLabels: { ...r.dns.podLabels } } }],
    ports: [
      { protocol: "UDP", port: 53 },
      { protocol: "TCP", port: 53 },
    ],
  };
}

/** Pure: the namespace's NetworkPolicies, in the order they are created. */
export function networkPolicies(r: ResolvedFirewallArgs): NetworkPolicy[] {
  const clientPeers: Peer[] = [...r.clientCidrs.map((cidr) => ({ ipBlock: { cidr } })), ...r.clientNamespaces.map(namespacePeer)];
  return [
    // Everything in the namespace is closed unless a policy below opens it: a new pod
    // (or a new port) is unreachable until someone decides who may reach it.
    policy(r, "default-deny-ingress", { podSelector: {}, policyTypes: ["Ingress"] }),
    policy(r, "triton-serving-from-gateway", {
      podSelector: { matchLabels: { ...TRITON_ALL_PODS } },
      policyTypes: ["Ingress"],
      // Clients go through the gateway (routing, mirroring, breakers, access log); a direct
      // path to 8000/8001 would bypass all of it.
      ingress: [{ from: [{ podSelector: { matchLabels: { ...GATEWAY_POD_LABELS } } }], ports: [tcp(TRITON_PORTS.http), tcp(TRITON_PORTS.grpc)] }],
    }),
    policy(r, "triton-metrics-from-prometheus", {
      podSelector: { matchLabels: { ...TRITON_ALL_PODS } },
      policyTypes: ["Ingress"],
      // Metrics name models and their load: only the monitoring stack reads them.
      ingress: [{ from: [PROMETHEUS_PEER], ports: [tcp(TRITON_PORTS.metrics)] }],
    }),
    policy(r, "triton-egress", {
      podSelector: { matchLabels: { ...TRITON_ALL_PODS } },
      policyTypes: ["Egress"],
      // DNS and the model repository only (443: S3 and STS for IRSA; 2049: EFS). Triton
      // needs no Kubernetes API access. A compromised backend cannot reach anything else.
      egress: [dnsEgress(r), { ports: [tcp(r.modelRepositoryEgressPort)] }],
    }),
    policy(r, "gateway-ingress", {
      podSelector: { matchLabels: { ...GATEWAY_POD_LABELS } },
      policyTypes: ["Ingress"],
      ingress: [
        ...(clientPeers.length ? [{ from: clientPeers, ports: [tcp(GATEWAY_PORTS.http), tcp(GATEWAY_PORTS.grpc)] }] : []),
        { from: [PROMETHEUS_PEER], ports: [tcp(GATEWAY_METRICS.port)] },
        // /ready only (the listener 404s every other path): NLB health checks come from the
        // load balancer's own addresses, kubelet probes from the node.
        { ports: [tcp(ENVOY_READY_PORT)] },
      ],
    }),
    policy(r, "gateway-egress", {
      podSelector: { matchLabels: { ...GATEWAY_POD_LABELS } },
      policyTypes: ["Egress"],
      // Envoy resolves the headless Services and talks to Triton; its static config needs no API server.
      egress: [dnsEgress(r), { to: [{ podSelector: { matchLabels: { ...TRITON_ALL_PODS } } }], ports: [tcp(TRITON_PORTS.http), tcp(TRITON_PORTS.grpc)] }],
    }),
  ];
}

// ---- Security-group rules --------------------------------------------------------------
/** Security groups the rules refer to. */
export type SgRef = "gpuNodes" | "cluster" | "gatewayLb" | "efs";

export interface SgRuleSpec {
  /** Stable resource name suffix. */
  readonly name: string;
  readonly direction: "ingress" | "egress";
  /** The group the rule belongs to. */
  readonly securityGroup: SgRef;
  readonly fromPort: number;
  readonly toPort: number;
  /** The other side: a CIDR or another group. */
  readonly peer: { readonly cidr: string } | { readonly securityGroup: SgRef };
  readonly description: string;
}

const slug = (cidr: string) => cidr.replace(/[^0-9a-zA-Z]+/g, "-").replace(/-+$/, "");

/** Pure: every security-group rule the firewall creates. */
export function securityGroupRules(r: Pick<ResolvedFirewallArgs, "clientCidrs" | "efsSecurityGroupId">): SgRuleSpec[] {
  const rules: SgRuleSpec[] = [
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
  ];
  if (r.clientCidrs.length > 0) {
    for (const cidr of r.clientCidrs) {
      rules.push({
        name: `gateway-lb-from-${slug(cidr)}`,
        direction: "ingress",
        securityGroup: "gatewayLb",
        fromPort: GATEWAY_PORTS.http,
        toPort: GATEWAY_PORTS.grpc,
        peer: { cidr },
        description: `Gateway HTTP/gRPC from client network ${cidr}`,
      });
    }
    rules.push(
      {
        name: "gateway-lb-to-pods",
        direction: "egress",
        securityGroup: "gatewayLb",
        fromPort: GATEWAY_PORTS.http,
        toPort: GATEWAY_PORTS.grpc,
        peer: { securityGroup: "cluster" },
        description: "NLB to gateway pods (IP targets)",
      },
      {
        name: "gateway-lb-health-to-pods",
        direction: "egress",
        securityGroup: "gatewayLb",
        fromPort: ENVOY_READY_PORT,
        toPort: ENVOY_READY_PORT,
        peer: { securityGroup: "cluster" },
        description: "NLB health checks to the gateway's /ready listener",
      },
      {
        name: "cluster-gateway-from-lb",
        direction: "ingress",
        securityGroup: "cluster",
        fromPort: GATEWAY_PORTS.http,
        toPort: GATEWAY_PORTS.grpc,
        peer: { securityGroup: "gatewayLb" },
        description: "Gateway pods from their NLB",
      },
      {
        name: "cluster-gateway-health-from-lb",
        direction: "ingress",
        securityGroup: "cluster",
        fromPort: ENVOY_READY_PORT,
        toPort: ENVOY_READY_PORT,
        peer: { securityGroup: "gatewayLb" },
        description: "Gateway /ready from NLB health checks",
      },
    );
  }
  if (r.efsSecurityGroupId !== undefined) {
    rules.push({
      name: "efs-nfs-from-gpu-nodes",
      direction: "ingress",
      securityGroup: "efs",
      fromPort: NFS_PORT,
      toPort: NFS_PORT,
      peer: { securityGroup: "gpuNodes" },
      description: "NFS from the GPU nodes only (model repository on EFS)",
    });
  }
  return rules;
}

/** The aws.vpc.SecurityGroup{Ingress,Egress}Rule arguments of a spec, given the real group ids. */
export function securityGroupRuleArgs(spec: SgRuleSpec, ids: Record<SgRef, pulumi.Input<string> | undefined>) {
  const peer =
    "cidr" in spec.peer
      ? parseCidr(spec.peer.cidr)!.family === 6
        ? { cidrIpv6: spec.peer.cidr }
        : { cidrIpv4: spec.peer.cidr }
      : { referencedSecurityGroupId: ids[spec.peer.securityGroup] };
  return {
    securityGroupId: ids[spec.securityGroup]!,
    ipProtocol: "tcp",
    fromPort: spec.fromPort,
    toPort: spec.toPort,
    description: spec.description,
    ...peer,
  };
}

export class Firewall extends pulumi.ComponentResource {
  readonly networkPolicies: k8s.networking.v1.NetworkPolicy[];
  /** The gateway NLB's frontend security group (only when client CIDRs are configured). */
  readonly gatewayLbSecurityGroupId?: pulumi.Output<string>;

  constructor(name: string, args: FirewallArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:firewall:Firewall", name, {}, opts);
    const r = resolveFirewallArgs(args);
    this.networkPolicies = networkPolicies(r).map((np) => new k8s.networking.v1.NetworkPolicy(`${name}-${np.metadata.name}`, np, { parent: this }));

    let lbSg: SecurityGroup | undefined;
    if (r.clientCidrs.length > 0) {
      // Rules live in separate resources (below), never inline: inline and standalone rules
      // on one group fight each other on every update.
      lbSg = new SecurityGroup(`${name}-gateway-lb`, { vpcId: r.vpcId, description: "Triton gateway NLB: client CIDRs to 8000/8001 only" }, { parent: this });
      this.gatewayLbSecurityGroupId = lbSg.id;
    }
    const ids: Record<SgRef, pulumi.Input<string> | undefined> = {
      gpuNodes: r.gpuNodeSecurityGroupId,
      cluster: r.clusterSecurityGroupId,
      gatewayLb: lbSg?.id,
      efs: r.efsSecurityGroupId,
    };
    for (const spec of securityGroupRules(r)) {
      const ruleArgs = securityGroupRuleArgs(spec, ids);
      if (spec.direction === "ingress") new SecurityGroupIngressRule(`${name}-${spec.name}`, ruleArgs, { parent: this });
      else new SecurityGroupEgressRule(`${name}-${spec.name}`, ruleArgs, { parent: this });
    }
    this.registerOutputs({ gatewayLbSecurityGroupId: this.gatewayLbSecurityGroupId });
  }
}
