// AWS IAM / EKS names the stack relies on for IAM roles for service accounts (IRSA), in
// one place. Checked against the EKS user guide (IRSA) and amazon-eks-pod-identity-webhook.

/** ServiceAccount annotation the EKS pod identity webhook reads to inject web-identity credentials. */
export const IRSA_ROLE_ANNOTATION = "eks.amazonaws.com/role-arn";
/** ServiceAccount annotation: use the regional STS endpoint (no dependency on us-east-1's global endpoint). */
export const IRSA_REGIONAL_STS_ANNOTATION = "eks.amazonaws.com/sts-regional-endpoints";
/** Audience of the projected token the webhook mounts; the trust policy must require it. */
export const STS_AUDIENCE = "sts.amazonaws.com";
export const IAM_POLICY_VERSION = "2012-10-17";

/** The `sub` claim Kubernetes puts in a ServiceAccount token. */
export function serviceAccountSubject(namespace: string, serviceAccount: string): string {
  return `system:serviceaccount:${namespace}:${serviceAccount}`;
}

/** "https://oidc.eks.<region>.amazonaws.com/id/<ID>" → "oidc.eks.<region>.amazonaws.com/id/<ID>" (the IAM condition key prefix). */
export function issuerHostPath(issuerUrl: string): string {
  return issuerUrl.replace(/^https:\/\//, "").replace(/\/+$/, "");
}

/** ARN of the cluster's IAM OIDC identity provider (it exists once per cluster; the stack does not create it). */
export function oidcProviderArn(partition: string, accountId: string, issuerUrl: string): string {
  return `arn:${partition}:iam::${accountId}:oidc-provider/${issuerHostPath(issuerUrl)}`;
}

/** Environment variables that carry static AWS credentials: never in a pod (IRSA provides web identity). */
export const STATIC_AWS_CREDENTIAL_ENV = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"] as const;

/** One IAM policy statement, as the stack writes them (identity, resource and trust policies). */
export interface PolicyStatement {
  Sid?: string;
  Effect: "Allow" | "Deny";
  Principal?: "*" | Record<string, string | string[]>;
  Action: string | string[];
  /** Absent in a trust policy (IAM refuses Resource there). */
  Resource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export interface PolicyDocument {
  Version: typeof IAM_POLICY_VERSION;
  Statement: PolicyStatement[];
}

/**
 * Trust policy of an IRSA role: only the cluster's OIDC provider, only tokens minted for
 * exactly one ServiceAccount (StringEquals, not StringLike: no wildcard namespaces or names),
 * only with the STS audience.
 */
export function irsaTrustPolicy(args: { sid: string; providerArn: string; issuerUrl: string; namespace: string; serviceAccount: string }): PolicyDocument {
  const host = issuerHostPath(args.issuerUrl);
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      {
        Sid: args.sid,
        Effect: "Allow",
        Principal: { Federated: args.providerArn },
        Action: "sts:AssumeRoleWithWebIdentity",
        Condition: {
          StringEquals: {
            [`${host}:sub`]: serviceAccountSubject(args.namespace, args.serviceAccount),
            [`${host}:aud`]: STS_AUDIENCE,
          },
        },
      },
    ],
  };
}
