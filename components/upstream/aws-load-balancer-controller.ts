// AWS Load Balancer Controller: the Service annotations the gateway uses to get an NLB
// (kubernetes-sigs/aws-load-balancer-controller docs, guide/service/annotations and
// deploy/security_groups). Values are strings, as annotations must be.
import type * as pulumi from "@pulumi/pulumi";

export const LBC_ANNOTATION = {
  type: "service.beta.kubernetes.io/aws-load-balancer-type",
  targetType: "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type",
  scheme: "service.beta.kubernetes.io/aws-load-balancer-scheme",
  securityGroups: "service.beta.kubernetes.io/aws-load-balancer-security-groups",
  manageBackendSecurityGroupRules: "service.beta.kubernetes.io/aws-load-balancer-manage-backend-security-group-rules",
  targetGroupAttributes: "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes",
  healthcheckProtocol: "service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol",
  healthcheckPort: "service.beta.kubernetes.io/aws-load-balancer-healthcheck-port",
  healthcheckPath: "service.beta.kubernetes.io/aws-load-balancer-healthcheck-path",
} as const;

export interface NlbAnnotationArgs {
  /** internal | internet-facing */
  readonly scheme: "internal" | "internet-facing";
  /** The frontend security group that admits only the client CIDRs. */
  readonly securityGroupId: pulumi.Input<string>;
  /** HTTP health check target on the pods (the ready listener). */
  readonly healthCheck: { readonly port: number; readonly path: string };
}

/** Annotations for an NLB with IP targets, our own frontend SG, and client IPs preserved. */
export function nlbAnnotations(args: NlbAnnotationArgs): Record<string, pulumi.Input<string>> {
  return {
    [LBC_ANNOTATION.type]: "external",
    // ip targets: the NLB sends straight to pod IPs, so the pods' NetworkPolicy and the
    // load balancer see the same clients (no extra kube-proxy hop through every node).
    [LBC_ANNOTATION.targetType]: "ip",
    [LBC_ANNOTATION.scheme]: args.scheme,
    // Our own frontend SG: without it the controller creates one from
    // loadBalancerSourceRanges, which defaults to 0.0.0.0/0 when the list is empty.
    [LBC_ANNOTATION.securityGroups]: args.securityGroupId,
    // Backend rules (load balancer SG → node SG) are ours, in components/firewall, so the
    // plan shows every opening; the controller must not add its own.
    [LBC_ANNOTATION.manageBackendSecurityGroupRules]: "false",
    // Client IPs reach the pods, so the gateway's NetworkPolicy can admit client CIDRs only.
    [LBC_ANNOTATION.targetGroupAttributes]: "preserve_client_ip.enabled=true",
    [LBC_ANNOTATION.healthcheckProtocol]: "http",
    [LBC_ANNOTATION.healthcheckPort]: String(args.healthCheck.port),
    [LBC_ANNOTATION.healthcheckPath]: args.healthCheck.path,
  };
}
