// Everything the offline planner makes up, in one table: provider invoke results and the
// computed outputs a real provider would return. Plausible, deterministic, and obviously
// fake (account 123456789012), so a plan never reads as a claim about a real account.

import { zonesOf } from "../../components/upstream/aws-regions";

export const FAKE_ACCOUNT_ID = "123456789012";
export const SECRET_PLACEHOLDER = "offline-plan-secret-placeholder";
/** What a secret value is written as in resources.json, manifests and outputs. */
export const MASK = "[secret]";

export type Invoke = (inputs: Record<string, any>, region: string) => Record<string, any>;

/** Provider functions (invokes) the program calls, answered without a cloud account. */
export const INVOKES: Record<string, Invoke> = {
  "aws:eks/getCluster:getCluster": (inputs, region) => {
    const oidcId = "0123456789ABCDEF0123456789ABCDEF";
    return {
      id: inputs.name,
      name: inputs.name,
      arn: `arn:aws:eks:${region}:${FAKE_ACCOUNT_ID}:cluster/${inputs.name}`,
      endpoint: `https://${oidcId}.gr7.${region}.eks.amazonaws.com`,
      // base64 of a PEM header: never a usable certificate.
      certificateAuthorities: [{ data: Buffer.from("-----BEGIN CERTIFICATE-----\nOFFLINE-PLAN\n-----END CERTIFICATE-----\n").toString("base64") }],
      identities: [{ oidcs: [{ issuer: `https://oidc.eks.${region}.amazonaws.com/id/${oidcId}` }] }],
      version: "1.33",
      platformVersion: "eks.9",
      status: "ACTIVE",
      region,
      roleArn: `arn:aws:iam::${FAKE_ACCOUNT_ID}:role/${inputs.name}-cluster`,
      vpcConfig: {
        vpcId: "vpc-0fa1e0000000000aa",
        clusterSecurityGroupId: "sg-0c1a5e0000000000c",
        securityGroupIds: [],
        subnetIds: ["subnet-0a00000000000000a", "subnet-0b00000000000000b", "subnet-0c00000000000000c"],
        endpointPrivateAccess: true,
        endpointPublicAccess: false,
        publicAccessCidrs: [],
      },
      tags: {},
    };
  },
  "aws:index/getCallerIdentity:getCallerIdentity": () => ({
    id: FAKE_ACCOUNT_ID,
    accountId: FAKE_ACCOUNT_ID,
    arn: `arn:aws:iam::${FAKE_ACCOUNT_ID}:user/offline-plan`,
    userId: "AIDAOFFLINEPLAN",
  }),
  "aws:index/getRegion:getRegion": (_inputs, region) => ({ id: region, name: region, region, endpoint: `ec2.${region}.amazonaws.com` }),
  // One private subnet per availability-zone filter value (components/gpu/node-group.ts) that is
  // a zone of the region (components/upstream/aws-regions.ts): a zone of another region, or of
  // none, matches no subnet, as in EC2, which filters rather than fails.
  "aws:ec2/getSubnets:getSubnets": (inputs, region) => {
    const zones: string[] = inputs.filters?.find((f: { name: string }) => f.name === "availability-zone")?.values ?? [];
    const real = new Set(zonesOf(inputs.region ?? region));
    const ids = zones.filter((z) => real.has(z)).map((z) => `subnet-0${z.slice(-1)}${"0".repeat(15)}${z.slice(-1)}`);
    return { id: ids.join(","), ids, filters: inputs.filters, region: inputs.region };
  },
  // The zone of a subnet: the fake ids above end in their zone's letter (region + letter). Any
  // other id (a subnetIds setting) gets a zone that exists, picked from its last character.
  "aws:ec2/getSubnet:getSubnet": (inputs, region) => {
    const id = String(inputs.id);
    const zones = zonesOf(region);
    if (zones.length === 0)
      throw new Error(`offline plan: no availability zone of ${region} is listed in components/upstream/aws-regions.ts, so subnet ${id} has none`);
    const own = `${region}${id.slice(-1)}`;
    const zone = zones.includes(own) ? own : zones[id.charCodeAt(id.length - 1) % zones.length];
    return { id, availabilityZone: zone, vpcId: "vpc-0fa1e0000000000aa", state: "available", tags: {} };
  },
  "aws:index/getPartition:getPartition": () => ({ id: "aws", partition: "aws", dnsSuffix: "amazonaws.com", reverseDnsPrefix: "com.amazonaws" }),
};

/** The name AWS gives a bucket: `bucket` as given, else `bucketPrefix` plus a suffix. */
function fakeBucketName(name: string, inputs: Record<string, any>): string {
  return inputs.bucket ?? (inputs.bucketPrefix ? `${inputs.bucketPrefix}00000000000000000000000000` : `${name}-0000000`);
}

/** AWS service of a type token, for fake ARNs: "aws:s3/bucket:Bucket" → "s3". */
function awsService(type: string): string {
  return type.split(":")[1]?.split("/")[0] ?? "unknown";
}

/**
 * Computed outputs a provider would add to a resource's state. Inputs pass through
 * unchanged; only what the cloud assigns is invented here.
 */
export function computedOutputs(type: string, name: string, inputs: Record<string, any>, region: string): Record<string, any> {
  if (type.startsWith("aws:")) {
    const service = awsService(type);
    const global = service === "iam";
    const out: Record<string, any> = {
      arn: `arn:aws:${service}:${global ? "" : region}:${FAKE_ACCOUNT_ID}:${type.split(":")[2]?.toLowerCase()}/${name}`,
    };
    if (type === "aws:iam/role:Role") {
      // The engine auto-names a role created without `name`; stand in for it, as for Kubernetes objects.
      out.name = inputs.name ?? `${name}-0000000`;
      out.arn = `arn:aws:iam::${FAKE_ACCOUNT_ID}:role/${out.name}`;
    }
    if (type === "aws:ec2/launchTemplate:LaunchTemplate") out.latestVersion = 1;
    if (type === "aws:eks/nodeGroup:NodeGroup") {
      out.nodeGroupName = inputs.nodeGroupName ?? `${name}-0000000`;
      // EKS names the node group's Auto Scaling group eks-<node group name>-<uuid>.
      out.resources = [{ autoscalingGroups: [{ name: `eks-${out.nodeGroupName}-00000000-0000-4000-8000-000000000000` }], remoteAccessSecurityGroupId: "" }];
    }
    if (type === "aws:kms/key:Key") {
      Object.assign(out, {
        keyId: "00000000-0000-4000-8000-000000000000",
        arn: `arn:aws:kms:${inputs.region ?? region}:${FAKE_ACCOUNT_ID}:key/00000000-0000-4000-8000-000000000000`,
      });
    }
    if (type === "aws:s3/bucket:Bucket") {
      const bucket = fakeBucketName(name, inputs);
      Object.assign(out, { bucket, arn: `arn:aws:s3:::${bucket}`, bucketRegionalDomainName: `${bucket}.s3.${region}.amazonaws.com` });
    }
    return out;
  }
  if (type === "random:index/randomPassword:RandomPassword") {
    // The provider generates `result` (a secret output); the SDK keeps it secret, so plans show MASK.
    return { result: SECRET_PLACEHOLDER, bcryptHash: SECRET_PLACEHOLDER };
  }
  if (type.startsWith("kubernetes:") && inputs.metadata && !inputs.metadata.name) {
    // The Kubernetes provider auto-names objects without metadata.name.
    return { metadata: { ...inputs.metadata, name: `${name}-0000000` } };
  }
  return {};
}

/** The id a provider would assign. */
export function fakeId(type: string, name: string, inputs: Record<string, any>): string {
  if (type.startsWith("kubernetes:") && inputs.metadata?.name) {
    return inputs.metadata.namespace ? `${inputs.metadata.namespace}/${inputs.metadata.name}` : inputs.metadata.name;
  }
  if (type === "aws:efs/fileSystem:FileSystem") return "fs-0e1f5000000000000";
  if (type === "aws:efs/accessPoint:AccessPoint") return "fsap-0e1f5a00000000000";
  // A bucket's id is its name (the settings resources take bucket.id as the bucket name).
  if (type === "aws:s3/bucket:Bucket") return fakeBucketName(name, inputs);
  return `${name}-id`;
}
