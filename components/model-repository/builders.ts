// The resources both backends share, as plain data: the KMS key, the IAM roles, the Triton
// ServiceAccount and the network facts of the binding. Generic over the value type where the
// component passes Outputs, so tests call them with strings, without the Pulumi runtime.
// (The bucket's resources are in ./s3, the file system's in ./efs, IAM documents in ./policies.)
import { NFS_PORT } from "../upstream/aws-efs-csi";
import { IRSA_REGIONAL_STS_ANNOTATION, IRSA_ROLE_ANNOTATION, oidcProviderArn } from "../upstream/aws-iam";
import { irsaTrustPolicy, publisherTrustPolicy } from "./policies";
import type { ModelRepositoryBinding } from "../contracts";
import type { ModelRepositoryBackend } from "./schema";

/** aws v7 per-resource region: the data's resources are created in its region when that is not the provider's. */
export function regionalArgs(r: { dataRegion: string; clusterRegion: string }): { region?: string } {
  return r.dataRegion !== r.clusterRegion ? { region: r.dataRegion } : {};
}

/** The key the stack creates when no kmsKeyArn is given; `policy` is the JSON of policies.ts accountKeyPolicy. */
export function kmsKeyArgs<T>(backend: ModelRepositoryBackend, policy: T) {
  return {
    description: `Triton model repository (${backend})`,
    policy,
    // Rotation: a key leaked in year one no longer decrypts new data in year two.
    enableKeyRotation: true,
    // Longest window: deleting the key destroys every model it encrypted; 30 days to notice.
    deletionWindowInDays: 30,
  };
}

export function kmsAliasArgs<T>(targetKeyId: T) {
  return { namePrefix: "alias/triton-model-repository-", targetKeyId };
}

/** Trust policy (JSON) of the reader role: the cluster's OIDC provider, for exactly the Triton ServiceAccount. */
export function readerTrustPolicyJson(a: { partition: string; accountId: string; issuerUrl: string; namespace: string; serviceAccount: string }): string {
  const providerArn = oidcProviderArn(a.partition, a.accountId, a.issuerUrl);
  return JSON.stringify(
    irsaTrustPolicy({ sid: "TritonServiceAccountOnly", providerArn, issuerUrl: a.issuerUrl, namespace: a.namespace, serviceAccount: a.serviceAccount }),
  );
}

/** Principals that may assume the publisher role: the configured ones, or the account root (the account's IAM policies decide). */
export function publisherPrincipals(trustedPrincipalArns: readonly string[] | undefined, partition: string, accountId: string): string[] {
  return trustedPrincipalArns !== undefined ? [...trustedPrincipalArns] : [`arn:${partition}:iam::${accountId}:root`];
}

/** Trust policy (JSON) of the publisher role. */
export function publisherTrustPolicyJson(principalArns: string[]): string {
  return JSON.stringify(publisherTrustPolicy(principalArns));
}

/** Role Triton assumes through IRSA: read-only access to the model prefix. */
export function readerRoleArgs<T>(assumeRolePolicy: T) {
  return { description: "Triton: read-only access to the model repository prefix (IRSA)", assumeRolePolicy, maxSessionDuration: 3600 };
}

/** Role the CI assumes to publish models. */
export function publisherRoleArgs<T>(assumeRolePolicy: T) {
  return { description: "CI: publish models to the model repository prefix", assumeRolePolicy, maxSessionDuration: 3600 };
}

/** The Kubernetes ServiceAccount of the Triton pods (annotated with the IRSA role for S3). */
export function tritonServiceAccount<T>(args: { name: string; namespace: T; labels: Record<string, string>; roleArn?: T }) {
  return {
    metadata: {
      name: args.name,
      namespace: args.namespace,
      labels: args.labels,
      ...(args.roleArn !== undefined ? { annotations: { [IRSA_ROLE_ANNOTATION]: args.roleArn, [IRSA_REGIONAL_STS_ANNOTATION]: "true" } } : {}),
    },
    // Triton never talks to the Kubernetes API; the IRSA token is a separate projected volume.
    automountServiceAccountToken: false,
  };
}

/** Triton's egress to its models: 443 (S3, and STS for IRSA) or NFS (EFS). */
export function repositoryEgressPort(backend: ModelRepositoryBackend): ModelRepositoryBinding["egressPort"] {
  return backend === "s3" ? 443 : NFS_PORT;
}
