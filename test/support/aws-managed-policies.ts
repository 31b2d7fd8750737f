// The AWS managed policies the GPU node role attaches (components/upstream/eks.ts
// WORKER_NODE_MANAGED_POLICIES), as documents the IAM simulator can evaluate: the simulator ships
// no AWS managed policy documents, and a plan has only their ARNs. Each is the default version's
// document as recorded by zoph-io/MAMIP (which tracks AWS managed policies), policies/<name> at
// commit 24b649d3de6c701785bb4af34462aa8ee26f1528, read 2026-12-01; version and date as AWS gives
// them there. A newer default version AWS publishes later is not reflected here.
import type { WORKER_NODE_MANAGED_POLICIES } from "../../components/upstream/eks";

interface ManagedPolicy {
  readonly versionId: string;
  readonly createDate: string;
  readonly document: { Version: "2012-10-17"; Statement: { Sid?: string; Effect: "Allow"; Action: string[]; Resource: string | string[] }[] };
}

export const AWS_MANAGED_POLICIES: Record<(typeof WORKER_NODE_MANAGED_POLICIES)[number], ManagedPolicy> = {
  AmazonEKSWorkerNodePolicy: {
    versionId: "v3",
    createDate: "2023-11-27T00:06:13+00:00",
    document: {
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "WorkerNodePermissions",
          Effect: "Allow",
          Action: [
            "ec2:DescribeInstances",
            "ec2:DescribeInstanceTypes",
            "ec2:DescribeRouteTables",
            "ec2:DescribeSecurityGroups",
            "ec2:DescribeSubnets",
            "ec2:DescribeVolumes",
            "ec2:DescribeVolumesModifications",
            "ec2:DescribeVpcs",
            "eks:DescribeCluster",
            "eks-auth:AssumeRoleForPodIdentity",
          ],
          Resource: "*",
        },
      ],
    },
  },
  AmazonEKS_CNI_Policy: {
    versionId: "v5",
    createDate: "2024-03-04T20:20:55+00:00",
    document: {
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "AmazonEKSCNIPolicy",
          Effect: "Allow",
          Action: [
            "ec2:AssignPrivateIpAddresses",
            "ec2:AttachNetworkInterface",
            "ec2:CreateNetworkInterface",
            "ec2:DeleteNetworkInterface",
            "ec2:DescribeInstances",
            "ec2:DescribeTags",
            "ec2:DescribeNetworkInterfaces",
            "ec2:DescribeInstanceTypes",
            "ec2:DescribeSubnets",
            "ec2:DetachNetworkInterface",
            "ec2:ModifyNetworkInterfaceAttribute",
            "ec2:UnassignPrivateIpAddresses",
          ],
          Resource: "*",
        },
        { Sid: "AmazonEKSCNIPolicyENITag", Effect: "Allow", Action: ["ec2:CreateTags"], Resource: ["arn:aws:ec2:*:*:network-interface/*"] },
      ],
    },
  },
  AmazonEC2ContainerRegistryReadOnly: {
    versionId: "v3",
    createDate: "2019-12-10T20:56:32+00:00",
    document: {
      Version: "2012-10-17",
      Statement: [
        {
          Effect: "Allow",
          Action: [
            "ecr:GetAuthorizationToken",
            "ecr:BatchCheckLayerAvailability",
            "ecr:GetDownloadUrlForLayer",
            "ecr:GetRepositoryPolicy",
            "ecr:DescribeRepositories",
            "ecr:ListImages",
            "ecr:DescribeImages",
            "ecr:BatchGetImage",
            "ecr:GetLifecyclePolicy",
            "ecr:GetLifecyclePolicyPreview",
            "ecr:ListTagsForResource",
            "ecr:DescribeImageScanFindings",
          ],
          Resource: "*",
        },
      ],
    },
  },
};
