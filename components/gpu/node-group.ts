// GPU capacity: an EKS managed node group on an NVIDIA AMI type, with its own launch template
// (IMDSv2, encrypted volumes, host tuning), node role, and a dedicated security group that
// other components (EFS, firewall) add their rules to. Settings: ./schema.ts; resource
// arguments: ./builders.ts; this class only creates the resources.
import * as pulumi from "@pulumi/pulumi";
import { NodeGroup } from "@pulumi/aws/eks/nodeGroup";
import { LaunchTemplate } from "@pulumi/aws/ec2/launchTemplate";
import { SecurityGroup } from "@pulumi/aws/ec2/securityGroup";
import { getSubnetsOutput } from "@pulumi/aws/ec2/getSubnets";
import { getSubnet } from "@pulumi/aws/ec2/getSubnet";
import { Role } from "@pulumi/aws/iam/role";
import { RolePolicyAttachment } from "@pulumi/aws/iam/rolePolicyAttachment";
import { Tag } from "@pulumi/aws/autoscaling/tag";
import { Key } from "@pulumi/aws/kms/key";
import { Alias } from "@pulumi/aws/kms/alias";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import { getPartitionOutput } from "@pulumi/aws/getPartition";
import { GPU_TAINT, GPU_TOLERATION, type GpuNodesRef } from "../contracts";
import { PRIVATE_SUBNET_TAG } from "../upstream/eks";
import { resolveGpuNodeGroupArgs, type GpuNodeGroupArgs } from "./schema";
import {
  asgTagResourceName,
  autoscalerNodeTemplateTags,
  gpuLaunchTemplateArgs,
  gpuVolumeKeyArgs,
  gpuVolumeKeyPolicy,
  gpuNodeGroupArgs,
  gpuNodeLabels,
  gpuNodeRoleArgs,
  gpuNodeSecurityGroupArgs,
  nodeGroupZonesTag,
  nodeRolePolicyArns,
  privateSubnetQuery,
} from "./builders";

export class GpuNodeGroup extends pulumi.ComponentResource {
  readonly nodeGroup: NodeGroup;
  readonly launchTemplate: LaunchTemplate;
  /** The customer-managed key of the nodes' EBS volumes. */
  readonly volumeKeyArn: pulumi.Output<string>;
  readonly securityGroup: SecurityGroup;
  readonly role: Role;
  /** Cluster Autoscaler node-template tags on the node group's Auto Scaling group. */
  readonly asgTags: Tag[];
  /** Dedicated security group of the GPU nodes: other components add ingress rules to it. */
  readonly securityGroupId: pulumi.Output<string>;
  readonly nodeRoleArn: pulumi.Output<string>;
  readonly labels: Record<string, string>;
  readonly taint: typeof GPU_TAINT;
  /** What other components need of the GPU nodes (components/contracts.ts). */
  readonly ref: GpuNodesRef;

  constructor(name: string, args: GpuNodeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super("triton-platform:gpu:GpuNodeGroup", name, {}, opts);
    const r = resolveGpuNodeGroupArgs(args, name);

    this.securityGroup = new SecurityGroup(`${name}-nodes`, gpuNodeSecurityGroupArgs(`${name}-nodes`, r), { parent: this });
    this.role = new Role(`${name}-node`, gpuNodeRoleArgs(), { parent: this });
    const attachments = nodeRolePolicyArns(r.region).map(
      (policyArn) => new RolePolicyAttachment(`${name}-node-${policyArn.split("/").pop()}`, { role: this.role.name, policyArn }, { parent: this }),
    );

    // The volumes' customer-managed key: the given one, or one the stack creates with rotation on.
    let volumeKeyArn: pulumi.Output<string>;
    if (r.rootVolumeKmsKeyArn) volumeKeyArn = pulumi.output(r.rootVolumeKmsKeyArn);
    else {
      const partition = getPartitionOutput({}, { parent: this }).partition;
      const accountId = getCallerIdentityOutput({}, { parent: this }).accountId;
      const policy = pulumi.all([partition, accountId]).apply(([p, a]) => JSON.stringify(gpuVolumeKeyPolicy(p, a)));
      const key = new Key(`${name}-volumes`, gpuVolumeKeyArgs(policy), { parent: this });
      new Alias(`${name}-volumes`, { namePrefix: "alias/triton-gpu-volumes-", targetKeyId: key.keyId }, { parent: this });
      volumeKeyArn = key.arn;
    }
    this.volumeKeyArn = volumeKeyArn;

    this.launchTemplate = new LaunchTemplate(name, gpuLaunchTemplateArgs(r, [this.securityGroup.id, pulumi.output(r.clusterSecurityGroupId)], volumeKeyArn), {
      parent: this,
    });

    const subnetIds =
      r.subnetIds ??
      getSubnetsOutput(privateSubnetQuery(pulumi.output(r.vpcId), r.zones), { parent: this }).ids.apply((ids) => {
        if (ids.length === 0) {
          throw new Error(`no private subnets (tag ${PRIVATE_SUBNET_TAG.key}=${PRIVATE_SUBNET_TAG.value}) in zones ${r.zones.join(", ")} of the cluster VPC`);
        }
        return [...ids].sort();
      });

    // The zone of every subnet, looked up rather than assumed from `zones`: explicit subnetIds
    // (or a lookup that found subnets in fewer zones) must show up in the tag the policy reads.
    const zones = pulumi
      .output(subnetIds)
      .apply((ids) => Promise.all(ids.map((id) => getSubnet({ id }, { parent: this }).then((s) => s.availabilityZone))))
      .apply(nodeGroupZonesTag);

    this.nodeGroup = new NodeGroup(
      name,
      gpuNodeGroupArgs(r, {
        clusterName: r.clusterName,
        nodeRoleArn: this.role.arn,
        subnetIds,
        zones,
        launchTemplate: { id: this.launchTemplate.id, version: this.launchTemplate.latestVersion.apply((v) => String(v)) },
      }),
      {
        parent: this,
        // The node role must keep its policies until the nodes are gone, or they cannot drain.
        dependsOn: attachments,
        // A cluster autoscaler owns the desired size once the group exists.
        ignoreChanges: ["scalingConfig.desiredSize"],
      },
    );

    // EKS creates one Auto Scaling group per managed node group and copies none of the node
    // group's tags, labels or taints onto it: the autoscaler's node-template tags go on it here.
    const asgName = this.nodeGroup.resources.apply((rs) => {
      const n = rs?.[0]?.autoscalingGroups?.[0]?.name;
      if (n === undefined) throw new Error(`node group ${name} reports no Auto Scaling group (resources.autoscalingGroups)`);
      return n;
    });
    this.asgTags = autoscalerNodeTemplateTags(r.gpuType, r.gpusPerNode).map(
      (t) => new Tag(asgTagResourceName(name, t.key), { autoscalingGroupName: asgName, tag: { ...t, propagateAtLaunch: false } }, { parent: this }),
    );

    this.securityGroupId = this.securityGroup.id;
    this.nodeRoleArn = this.role.arn;
    this.labels = gpuNodeLabels(r.gpuType);
    this.taint = GPU_TAINT;
    this.ref = {
      securityGroupId: this.securityGroupId,
      nodeRoleArn: this.nodeRoleArn,
      nodeSelector: this.labels,
      taint: GPU_TAINT,
      toleration: GPU_TOLERATION,
    };
    this.registerOutputs({ securityGroupId: this.securityGroupId, nodeRoleArn: this.nodeRoleArn, labels: this.labels, taint: this.taint });
  }
}
