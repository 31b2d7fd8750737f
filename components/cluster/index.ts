// The existing EKS cluster: looked up by name, and the providers every component uses.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { Provider as AwsProvider } from "@pulumi/aws/provider";
import { getClusterOutput } from "@pulumi/aws/eks/getCluster";
import { parseSettings } from "../../lib/schema";
import { clusterArgsSettings } from "./schema";

export * from "./schema";

/** A kubeconfig that authenticates with `aws eks get-token` (no long-lived credentials). */
export function eksKubeconfig(args: { name: string; endpoint: string; caData: string; region: string }): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: args.name, cluster: { server: args.endpoint, "certificate-authority-data": args.caData } }],
    contexts: [{ name: args.name, context: { cluster: args.name, user: args.name } }],
    "current-context": args.name,
    users: [
      {
        name: args.name,
        user: {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1beta1",
            command: "aws",
            args: ["eks", "get-token", "--cluster-name", args.name, "--region", args.region, "--output", "json"],
          },
        },
      },
    ],
  });
}

export interface ClusterArgs {
  /** Name of the existing EKS cluster (looked up with aws.eks.getCluster). */
  readonly name: string;
  /** AWS region of the cluster and of the stack's provider. */
  readonly region: string;
  /** Tags every AWS resource gets through the provider's defaultTags (naming.ts standardTags). */
  readonly tags: Readonly<Record<string, string>>;
}

/** Providers and facts of the existing cluster; everything else is created against these. */
export class Cluster extends pulumi.ComponentResource {
  readonly aws: AwsProvider;
  readonly k8s: k8s.Provider;
  readonly name: string;
  readonly endpoint: pulumi.Output<string>;
  readonly oidcIssuerUrl: pulumi.Output<string>;
  readonly vpcId: pulumi.Output<string>;
  readonly clusterSecurityGroupId: pulumi.Output<string>;

  constructor(name: string, args: ClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:cluster:Cluster", name, {}, opts);
    const cfg = parseSettings(clusterArgsSettings, { name: args.name, region: args.region }, `invalid arguments of Cluster "${name}"`);
    // defaultTags: every AWS resource gets the standard tags without each component
    // having to remember them (policy: aws-provider-default-tags).
    this.aws = new AwsProvider(`${name}-aws`, { region: cfg.region as never, defaultTags: { tags: { ...args.tags } } }, { parent: this });
    const eks = getClusterOutput({ name: cfg.name }, { provider: this.aws, parent: this });
    this.name = cfg.name;
    this.endpoint = eks.endpoint;
    this.oidcIssuerUrl = eks.identities.apply((ids) => ids[0]?.oidcs[0]?.issuer ?? "");
    this.vpcId = eks.vpcConfig.vpcId;
    this.clusterSecurityGroupId = eks.vpcConfig.clusterSecurityGroupId;
    const kubeconfig = pulumi
      .all([eks.endpoint, eks.certificateAuthorities.apply((cas) => cas[0]?.data ?? "")])
      .apply(([endpoint, caData]) => eksKubeconfig({ name: cfg.name, endpoint, caData, region: cfg.region }));
    // An explicit provider: resources never land in whatever cluster the ambient
    // kubeconfig happens to point at (policy: k8s-explicit-provider).
    this.k8s = new k8s.Provider(
      `${name}-k8s`,
      { kubeconfig: pulumi.secret(kubeconfig), enableServerSideApply: true, deleteUnreachable: false },
      { parent: this },
    );
    this.registerOutputs({ endpoint: this.endpoint, oidcIssuerUrl: this.oidcIssuerUrl });
  }
}
