// The existing EKS cluster: looked up by name, and the providers every component uses.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { Provider as AwsProvider } from "@pulumi/aws/provider";
import { getClusterOutput, type GetClusterResult } from "@pulumi/aws/eks/getCluster";
import { parseSettings } from "../../lib/schema";
import type * as v from "valibot";
import { sectionSpec, type ComponentDescriptor } from "../component";
import { standardLabels, standardTags } from "../naming";
import { list } from "../summary-text";
import { clusterArgsSettings, clusterSettings, environmentSetting, tagsSetting } from "./schema";

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

/** The part of aws.eks.getCluster's answer the stack reads. */
export type ClusterLookup = Pick<GetClusterResult, "endpoint" | "certificateAuthorities" | "identities" | "vpcConfig" | "status">;

/** What the stack needs of the existing cluster, each one present. */
export interface ClusterFacts {
  readonly endpoint: string;
  readonly caData: string;
  readonly oidcIssuerUrl: string;
  readonly vpcId: string;
  readonly clusterSecurityGroupId: string;
}

/**
 * A cluster that lacks something the stack relies on. Raised when the lookup answers, before
 * any resource takes the missing value (an IRSA trust policy with an empty issuer, a launch
 * template without the cluster security group): a failed preview, not a half-applied stack.
 */
export class ClusterPrerequisiteError extends Error {
  /** One line per missing piece: what is missing and how to provide it. */
  readonly problems: string[];
  constructor(
    readonly clusterName: string,
    problems: readonly string[],
  ) {
    super(`EKS cluster "${clusterName}" lacks what this stack needs (README, "Cluster prerequisites"):\n  - ${problems.join("\n  - ")}`);
    this.name = "ClusterPrerequisiteError";
    this.problems = [...problems];
  }
}

/** The facts the stack reads from the cluster lookup; every missing one named together. */
export function clusterFacts(clusterName: string, lookup: ClusterLookup): ClusterFacts {
  const problems: string[] = [];
  const endpoint = lookup.endpoint ?? "";
  const caData = lookup.certificateAuthorities?.[0]?.data ?? "";
  if (endpoint === "" || caData === "") {
    problems.push(
      `no API endpoint or certificate authority (status ${JSON.stringify(lookup.status ?? "unknown")}): wait until the cluster is ACTIVE, then run again`,
    );
  }
  const oidcIssuerUrl = lookup.identities?.[0]?.oidcs?.[0]?.issuer ?? "";
  if (oidcIssuerUrl === "") {
    // An IRSA trust policy needs the issuer, and the IAM OIDC provider for it must exist.
    problems.push(
      "no OIDC issuer: IRSA roles (model repository) trust the cluster's IAM OIDC provider; " +
        `create it with \`eksctl utils associate-iam-oidc-provider --cluster ${clusterName} --approve\` ` +
        "(or IAM console: Identity providers > Add provider > OpenID Connect, with the cluster's OpenID Connect provider URL and audience sts.amazonaws.com)",
    );
  }
  const vpcId = lookup.vpcConfig?.vpcId ?? "";
  if (vpcId === "") problems.push("no VPC in its vpcConfig: the GPU node group's subnet lookup and security groups are made in the cluster VPC");
  const clusterSecurityGroupId = lookup.vpcConfig?.clusterSecurityGroupId ?? "";
  if (clusterSecurityGroupId === "") {
    problems.push(
      "no cluster security group (vpcConfig.clusterSecurityGroupId, the one EKS creates with the cluster): the GPU nodes' launch template attaches it so they can reach the control plane",
    );
  }
  if (problems.length > 0) throw new ClusterPrerequisiteError(clusterName, problems);
  return { endpoint, caData, oidcIssuerUrl, vpcId, clusterSecurityGroupId };
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
    // Checked once, when the lookup answers: every output below comes from the checked facts.
    const facts = eks.apply((result) => clusterFacts(cfg.name, result));
    this.name = cfg.name;
    this.endpoint = facts.endpoint;
    this.oidcIssuerUrl = facts.oidcIssuerUrl;
    this.vpcId = facts.vpcId;
    this.clusterSecurityGroupId = facts.clusterSecurityGroupId;
    const kubeconfig = facts.apply((f) => eksKubeconfig({ name: cfg.name, endpoint: f.endpoint, caData: f.caData, region: cfg.region }));
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

// ---- the component's descriptor (components/registry.ts) --------------------------------
declare module "../component" {
  interface StackSettings {
    environment: v.InferOutput<typeof environmentSetting>;
    cluster: v.InferOutput<typeof clusterSettings>;
    tags: v.InferOutput<typeof tagsSetting>;
  }
  interface Produced {
    /** The existing cluster: its providers (aws, k8s) and facts (VPC, security group, OIDC issuer). */
    cluster: Cluster;
    /** The standard labels of every Kubernetes object of the stack (naming.ts). */
    labels: Record<string, string>;
    /** The standard tags of every AWS resource (naming.ts), also the AWS provider's defaultTags. */
    tags: Record<string, string>;
  }
}

/** The existing cluster and the stack's identity: the providers everything else is created against. */
export const clusterComponent: ComponentDescriptor = {
  name: "cluster",
  sections: {
    environment: sectionSpec<"environment">(environmentSetting),
    cluster: sectionSpec<"cluster">(clusterSettings),
    tags: sectionSpec<"tags">(tagsSetting),
  },
  policyDomains: ["foundation"],
  argumentKeys: { name: "cluster.name", region: "aws:region" },
  build({ settings, stack, region }) {
    const tags = standardTags({ environment: settings.environment, stack, tags: settings.tags });
    const cluster = new Cluster("cluster", { name: settings.cluster.name, region, tags });
    return { cluster, labels: standardLabels(settings), tags };
  },
  securityGroups: (ctx) => ({ cluster: ctx.need("cluster").clusterSecurityGroupId }),
  summary: [
    {
      at: 10,
      row: ({ stack, region, settings: s }) => {
        const env = s.environment !== stack ? ` (${s.environment})` : "";
        return { label: "stack", lines: [`${stack}${env} · ${region} · cluster ${s.cluster.name} · zones ${list(s.cluster.zones)}`] };
      },
    },
  ],
  outputs: (ctx) => ({ environment: ctx.settings.environment, clusterName: ctx.need("cluster").name, clusterEndpoint: ctx.need("cluster").endpoint }),
};
