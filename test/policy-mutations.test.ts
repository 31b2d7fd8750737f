// Mutation test of the policy pack: take the prod plan's resources.json, break one safety
// setting at a time (one mutation per rule, in the table below), run `npm run policy` on it
// as a reviewer would, and assert that exactly the expected rule fires, at prod's level.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { rules } from "../policies/rules";
import type { RecordedResource } from "../tools/planner";
import type { Violation } from "../tools/planner/policy";
import { parseFlag } from "../components/upstream/tritonserver";
import { checkAtLevels, fixtureLevels, plan, ROOT } from "./helpers";

type Mutation = { rule: string; breaks: string; stack?: "prod" | "staging"; mutate: (rs: RecordedResource[]) => void };

const first = (rs: RecordedResource[], type: string, where: (r: RecordedResource) => boolean = () => true): RecordedResource => {
  const r = rs.find((x) => x.type === type && where(x));
  if (!r) throw new Error(`the prod plan has no ${type} to mutate`);
  return r;
};

/** Edit the Envoy bootstrap held in the gateway's ConfigMap. */
const editEnvoy = (rs: RecordedResource[], edit: (c: Record<string, any>) => void) => {
  const cm = first(rs, "kubernetes:core/v1:ConfigMap", (r) => typeof r.props.data?.["envoy.json"] === "string");
  const c = JSON.parse(cm.props.data["envoy.json"]) as Record<string, any>;
  edit(c);
  cm.props.data["envoy.json"] = JSON.stringify(c, null, 2);
};
const walk = (v: unknown, visit: (o: Record<string, any>) => void): void => {
  if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (v && typeof v === "object") {
    visit(v as Record<string, any>);
    Object.values(v).forEach((x) => walk(x, visit));
  }
};
const tritonSts = (rs: RecordedResource[]) => first(rs, "kubernetes:apps/v1:StatefulSet", (r) => r.name === "vision");
const tritonContainer = (rs: RecordedResource[]) => tritonSts(rs).props.spec.template.spec.containers[0];

const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const SERVICE = "kubernetes:core/v1:Service";
const NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
const servingNamespace = (rs: RecordedResource[]) => first(rs, "kubernetes:core/v1:Namespace", (r) => r.props.metadata.name === "triton");

/** A Kubernetes object on the stack's provider with the standard labels (so only the rule under test can fire). */
const k8sObject = (rs: RecordedResource[], type: string, name: string, props: Record<string, any>): RecordedResource => {
  const ns = servingNamespace(rs);
  return {
    urn: `urn:pulumi:prod::triton-platform::${type}::${name}`,
    type,
    name,
    custom: true,
    parent: rs[0].urn,
    provider: ns.provider,
    dependencies: [],
    props: { ...props, metadata: { ...props.metadata, labels: { ...ns.props.metadata.labels } } },
  };
};

/** Edit a JSON document held in a resource property. */
const editDoc = (rs: RecordedResource[], type: string, name: string, field: string, edit: (d: Record<string, any>) => void) => {
  const r = first(rs, type, (x) => x.name === name);
  const d = JSON.parse(r.props[field]);
  edit(d);
  r.props[field] = JSON.stringify(d);
};

/** One mutation per rule: the smallest change to the prod plan (or the staging plan, for EFS) that the rule must catch. */
export const MUTATIONS: Mutation[] = [
  {
    rule: "k8s-standard-labels",
    breaks: "drops the environment label from the Triton namespace",
    mutate: (rs) => delete first(rs, "kubernetes:core/v1:Namespace").props.metadata.labels["triton-platform/environment"],
  },
  {
    rule: "aws-provider-default-tags",
    breaks: "removes the standard tags from the AWS provider",
    mutate: (rs) => (first(rs, "pulumi:providers:aws").props.defaultTags = JSON.stringify({ tags: {} })),
  },
  {
    rule: "aws-explicit-provider",
    breaks: "adds an AWS resource on the default provider",
    mutate: (rs) =>
      rs.push({
        // Not a bucket: a bare bucket would (rightly) also fail the s3-* rules of model-repository.
        urn: "urn:pulumi:prod::triton-platform::aws:ec2/securityGroup:SecurityGroup::stray",
        type: "aws:ec2/securityGroup:SecurityGroup",
        name: "stray",
        custom: true,
        parent: rs[0].urn,
        provider: "urn:pulumi:prod::triton-platform::pulumi:providers:aws::default_7_48_0::id",
        dependencies: [],
        props: {},
      }),
  },
  {
    rule: "k8s-explicit-provider",
    breaks: "moves the Triton namespace to the default Kubernetes provider",
    mutate: (rs) => (first(rs, "kubernetes:core/v1:Namespace").provider = null),
  },
  {
    rule: "gpu-nodegroup-tainted",
    breaks: "removes the nvidia.com/gpu taint from the GPU node group",
    mutate: (rs) => (first(rs, "aws:eks/nodeGroup:NodeGroup").props.taints = []),
  },
  {
    rule: "gpu-nodegroup-max-unavailable",
    breaks: "lets a GPU node group rollout take two nodes out at once",
    mutate: (rs) => (first(rs, "aws:eks/nodeGroup:NodeGroup").props.updateConfig = { maxUnavailable: 2 }),
  },
  {
    rule: "launch-template-imdsv2",
    breaks: "makes IMDSv2 tokens optional on the GPU launch template",
    mutate: (rs) => (first(rs, "aws:ec2/launchTemplate:LaunchTemplate").props.metadataOptions.httpTokens = "optional"),
  },
  {
    rule: "launch-template-encrypted-volumes",
    breaks: "turns off encryption of the GPU nodes' data volume",
    mutate: (rs) => (first(rs, "aws:ec2/launchTemplate:LaunchTemplate").props.blockDeviceMappings[0].ebs.encrypted = "false"),
  },
  {
    rule: "gpu-operator-matches-node-image",
    breaks: "has the GPU Operator install a driver on AL2023 NVIDIA nodes that ship one",
    mutate: (rs) =>
      (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "gpu-operator").props.values.driver = { enabled: true, version: "580.105.08" }),
  },
  {
    rule: "firewall-no-world-ingress-on-triton-ports",
    breaks: "opens the gateway load balancer's 8000-8001 to 0.0.0.0/1 + 128.0.0.0/1 (the internet without a /0)",
    mutate: (rs) => {
      const r = first(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (x) => x.props.cidrIpv4 !== undefined);
      r.props.cidrIpv4 = "0.0.0.0/1";
      rs.push({ ...structuredClone(r), urn: `${r.urn}-upper`, name: `${r.name}-upper`, props: { ...structuredClone(r.props), cidrIpv4: "128.0.0.0/1" } });
    },
  },
  {
    rule: "firewall-triton-metrics-only-from-monitoring",
    breaks: "admits any source to Triton's metrics port",
    mutate: (rs) =>
      delete first(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", (r) => r.props.metadata.name === "triton-metrics-from-prometheus").props.spec.ingress[0]
        .from,
  },
  {
    rule: "gateway-mirror-percent-within-max",
    breaks: "mirrors half of production traffic to the canary (prod cap 25 %)",
    mutate: (rs) =>
      editEnvoy(rs, (c) =>
        walk(c, (o) => {
          if (o.request_mirror_policies)
            for (const m of o.request_mirror_policies) m.runtime_fraction.default_value = { numerator: 50, denominator: "HUNDRED" };
        }),
      ),
  },
  {
    rule: "gateway-canary-traffic-within-max",
    breaks: "sends 30 % of a model's real traffic to the canary (prod cap 10 %)",
    mutate: (rs) =>
      editEnvoy(rs, (c) =>
        walk(c, (o) => {
          if (!Array.isArray(o.routes)) return;
          const r = o.routes.find((x: Record<string, any>) => x.route?.request_mirror_policies);
          if (r)
            o.routes.unshift({
              ...r,
              name: `${r.name}-canary`,
              match: { ...r.match, runtime_fraction: { default_value: { numerator: 30, denominator: "HUNDRED" } } },
              route: { ...r.route, cluster: r.route.request_mirror_policies[0].cluster, request_mirror_policies: undefined },
            });
        }),
      ),
  },
  {
    rule: "gateway-envoy-admin-not-exposed",
    breaks: "binds Envoy's admin interface to 0.0.0.0",
    mutate: (rs) => editEnvoy(rs, (c) => (c.admin.address.socket_address.address = "0.0.0.0")),
  },
  {
    rule: "gpu-node-role-least-privilege",
    breaks: "attaches AmazonS3FullAccess to the GPU node role",
    mutate: (rs) => (first(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").props.policyArn = "arn:aws:iam::aws:policy/AmazonS3FullAccess"),
  },
  // ---- model-repository --------------------------------------------------------------
  {
    rule: "s3-bucket-encrypted",
    breaks: "switches the model bucket's default encryption to SSE-S3 (AES256)",
    mutate: (rs) =>
      (first(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules[0].applyServerSideEncryptionByDefault = {
        sseAlgorithm: "AES256",
      }),
  },
  {
    rule: "s3-bucket-versioned",
    breaks: "suspends versioning of the model bucket",
    mutate: (rs) => (first(rs, "aws:s3/bucketVersioning:BucketVersioning").props.versioningConfiguration.status = "Suspended"),
  },
  {
    rule: "s3-public-access-blocked",
    breaks: "turns off blockPublicPolicy on the model bucket",
    mutate: (rs) => (first(rs, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock").props.blockPublicPolicy = false),
  },
  {
    rule: "s3-tls-only",
    breaks: "drops the aws:SecureTransport deny from the bucket policy",
    mutate: (rs) => {
      const p = first(rs, "aws:s3/bucketPolicy:BucketPolicy");
      const doc = JSON.parse(p.props.policy);
      doc.Statement = doc.Statement.filter((st: { Sid?: string }) => st.Sid !== "DenyInsecureTransport");
      p.props.policy = JSON.stringify(doc);
    },
  },
  {
    rule: "helm-values-no-credentials",
    breaks: "gives Grafana the chart's literal admin password",
    mutate: (rs) =>
      (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.grafana.adminPassword = "prom-operator"),
  },
  {
    rule: "monitoring-alerting-in-prod",
    breaks: "turns Alertmanager off in prod",
    mutate: (rs) => (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.alertmanager.enabled = false),
  },
  {
    rule: "monitoring-critical-alerts-notify",
    breaks: "drops every notifier of the critical receiver, so critical alerts reach nobody",
    mutate: (rs) => {
      const config = first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.alertmanager.config;
      config.receivers = config.receivers.map((r: { name: string }) => (r.name === "critical" ? { name: "critical" } : r));
    },
  },
  // Triton serving groups (policies/rules/triton.ts): each breaks the primary StatefulSet
  // (or its PDB/HPA) of the prod group.
  {
    rule: "triton-gpu-limits-equal-requests",
    breaks: "requests two GPUs but limits one",
    mutate: (rs) => (tritonContainer(rs).resources.requests["nvidia.com/gpu"] = "2"),
  },
  {
    rule: "triton-shm-sized",
    breaks: "drops the /dev/shm sizeLimit",
    mutate: (rs) => delete tritonSts(rs).props.spec.template.spec.volumes.find((v: { name: string }) => v.name === "dshm").emptyDir.sizeLimit,
  },
  {
    rule: "triton-startup-probe",
    breaks: "removes the startupProbe",
    mutate: (rs) => delete tritonContainer(rs).startupProbe,
  },
  {
    rule: "triton-real-flags",
    breaks: "adds a log format tritonserver does not have",
    mutate: (rs) => tritonContainer(rs).args.push("--log-format=json"),
  },
  {
    rule: "triton-pdb-exists",
    breaks: "drops the primary's PodDisruptionBudget",
    mutate: (rs) => rs.splice(rs.indexOf(first(rs, "kubernetes:policy/v1:PodDisruptionBudget", (r) => r.name === "vision")), 1),
  },
  {
    rule: "triton-min-replicas",
    breaks: "runs the primary with two replicas",
    mutate: (rs) => (tritonSts(rs).props.spec.replicas = 2),
  },
  {
    rule: "triton-zone-spread",
    breaks: "removes the zone spread",
    mutate: (rs) => {
      const spec = tritonSts(rs).props.spec.template.spec;
      spec.topologySpreadConstraints = spec.topologySpreadConstraints.filter((t: { topologyKey: string }) => t.topologyKey !== "topology.kubernetes.io/zone");
    },
  },
  {
    rule: "triton-explicit-model-control",
    breaks: "switches to poll mode without --load-model",
    mutate: (rs) => {
      const c = tritonContainer(rs);
      c.args = c.args
        .filter((a: string) => !a.startsWith("--load-model="))
        .map((a: string) => (a === "--model-control-mode=explicit" ? "--model-control-mode=poll" : a));
    },
  },
  // Rules that join resources of two components: each breaks the link between two components.
  {
    rule: "triton-metrics-scraped",
    breaks: "narrows the Triton ServiceMonitor's keep regex to the canary, so the primary's metrics Service is never scraped",
    mutate: (rs) => (first(rs, "kubernetes:monitoring.coreos.com/v1:ServiceMonitor").props.spec.endpoints[0].relabelings[0].regex = "vision-canary-metrics"),
  },
  {
    rule: "gateway-canary-mirrored",
    breaks: "removes every mirror policy from the gateway, so the canary gets no traffic",
    mutate: (rs) => editEnvoy(rs, (c) => walk(c, (o) => delete o.request_mirror_policies)),
  },
  {
    rule: "gateway-clusters-defined",
    breaks: "misspells the mirror cluster of one route",
    mutate: (rs) =>
      editEnvoy(
        rs,
        (c) =>
          (c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes.find(
            (r: Record<string, any>) => r.route?.request_mirror_policies,
          ).route.request_mirror_policies[0].cluster = "vision-canary-htp"),
      ),
  },
  {
    rule: "hpa-target-exists",
    breaks: "points the primary's autoscaler at a StatefulSet that does not exist",
    mutate: (rs) => (first(rs, "kubernetes:autoscaling/v2:HorizontalPodAutoscaler").props.spec.scaleTargetRef.name = "vison"),
  },
  {
    rule: "crd-objects-depend-on-release",
    breaks: "drops the PrometheusRule's dependency on kube-prometheus-stack",
    mutate: (rs) => (first(rs, "kubernetes:monitoring.coreos.com/v1:PrometheusRule").dependencies = []),
  },
  {
    rule: "gpu-nodes-span-zones",
    breaks: "puts the GPU node group in two zones' subnets",
    mutate: (rs) => {
      const ng = first(rs, "aws:eks/nodeGroup:NodeGroup");
      ng.props.subnetIds = ng.props.subnetIds.slice(0, 2);
      ng.props.tags["triton-platform:zones"] = "us-east-1a us-east-1b";
    },
  },
  {
    rule: "autoscaler-present-for-scaling-node-groups",
    breaks: "removes the Cluster Autoscaler release while the GPU node group may grow from 3 to 9",
    mutate: (rs) => {
      rs.splice(rs.indexOf(first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "cluster-autoscaler")), 1);
    },
  },
  // ---- rules stated as properties (issue 17): each breaks one property in a shape the stack does not render ----
  {
    rule: "helm-release-pinned",
    breaks: "adds the EFS CSI driver's release on a version range",
    mutate: (rs) => {
      const r = structuredClone(first(rs, "kubernetes:helm.sh/v3:Release", (x) => x.props.chart === "gpu-operator"));
      rs.push({
        ...r,
        urn: `${r.urn}-efs`,
        name: "efs-csi",
        props: {
          chart: "aws-efs-csi-driver",
          version: "~3.2",
          namespace: "kube-system",
          repositoryOpts: { repo: "https://kubernetes-sigs.github.io/aws-efs-csi-driver/" },
          values: {},
        },
      });
    },
  },
  {
    rule: "pod-security-restricted",
    breaks: "puts the Envoy gateway Deployment on the host network",
    mutate: (rs) => (first(rs, DEPLOYMENT).props.spec.template.spec.hostNetwork = true),
  },
  {
    rule: "namespace-pod-security-restricted",
    breaks: "sets the serving namespace's Pod Security enforce level to privileged",
    mutate: (rs) => (servingNamespace(rs).props.metadata.labels["pod-security.kubernetes.io/enforce"] = "privileged"),
  },
  {
    rule: "container-images-pinned",
    breaks: "runs the gateway's Envoy as envoyproxy/envoy:latest",
    mutate: (rs) => (first(rs, DEPLOYMENT).props.spec.template.spec.containers[0].image = "envoyproxy/envoy:latest"),
  },
  {
    rule: "image-pull-always-with-tag",
    breaks: "pulls the Triton image Always by tag (advisory in prod)",
    mutate: (rs) => (tritonContainer(rs).imagePullPolicy = "Always"),
  },
  {
    rule: "service-account-token-not-mounted",
    breaks: "mounts the API token into Triton pods",
    mutate: (rs) => (tritonSts(rs).props.spec.template.spec.automountServiceAccountToken = true),
  },
  {
    rule: "triton-reachable-only-through-gateway",
    breaks: "makes the Triton group's Service a NodePort",
    mutate: (rs) => (first(rs, SERVICE, (r) => r.props.metadata.name === "vision").props.spec.type = "NodePort"),
  },
  {
    rule: "load-balancer-sources-restricted",
    breaks: "opens the gateway load balancer to 0.0.0.0/1 + 128.0.0.0/1",
    mutate: (rs) => (first(rs, SERVICE, (r) => r.props.spec?.type === "LoadBalancer").props.spec.loadBalancerSourceRanges = ["0.0.0.0/1", "128.0.0.0/1"]),
  },
  {
    rule: "rbac-serving-accounts-least-privilege",
    breaks: "binds the Triton ServiceAccount to cluster-admin",
    mutate: (rs) =>
      rs.push(
        k8sObject(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "triton-admin", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "triton-admin" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ kind: "ServiceAccount", name: "triton", namespace: "triton" }],
        }),
      ),
  },
  {
    rule: "iam-statements-least-privilege",
    breaks: "widens the reader's s3:GetObject to arn:aws:s3:::*/* (every bucket's objects)",
    mutate: (rs) =>
      editDoc(
        rs,
        "aws:iam/rolePolicy:RolePolicy",
        "model-repository-reader",
        "policy",
        (d) => (d.Statement.find((st: { Action: unknown }) => st.Action === "s3:GetObject").Resource = "arn:aws:s3:::*/*"),
      ),
  },
  {
    rule: "iam-no-public-principal",
    breaks: 'lets Principal "*" assume the publisher role',
    mutate: (rs) => editDoc(rs, "aws:iam/role:Role", "model-repository-publisher", "assumeRolePolicy", (d) => (d.Statement[0].Principal = "*")),
  },
  {
    rule: "iam-irsa-trust-exact",
    breaks: "trusts every ServiceAccount of the namespace (StringLike sub, no aud)",
    mutate: (rs) =>
      editDoc(rs, "aws:iam/role:Role", "model-repository-reader", "assumeRolePolicy", (d) => {
        const c = d.Statement[0].Condition.StringEquals;
        const sub = Object.keys(c).find((k) => k.endsWith(":sub"))!;
        d.Statement[0].Condition = { StringLike: { [sub]: "system:serviceaccount:triton:*" } };
      }),
  },
  {
    rule: "iam-no-admin-managed-policies",
    // Not the GPU node role: gpu-node-role-least-privilege (rightly) catches any attachment to that role, from wherever.
    breaks: "attaches AdministratorAccess to the cluster autoscaler's IRSA role from outside its component",
    mutate: (rs) => {
      const a = structuredClone(first(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment"));
      const role = first(rs, "aws:iam/role:Role", (r) => r.name === "cluster-autoscaler");
      rs.push({
        ...a,
        urn: `${a.urn}-admin`,
        name: "autoscaler-admin",
        parent: rs[0].urn,
        dependencies: [role.urn],
        props: { role: "cluster-autoscaler-0000000", policyArn: "arn:aws:iam::aws:policy/AdministratorAccess" },
      });
    },
  },
  {
    rule: "iam-no-aws-managed-policy-names",
    breaks: "adds a customer policy named AmazonS3ReadOnlyAccess",
    mutate: (rs) => {
      const p = structuredClone(first(rs, "aws:iam/rolePolicy:RolePolicy", (r) => r.name === "model-repository-reader"));
      rs.push({
        ...p,
        urn: "urn:pulumi:prod::triton-platform::aws:iam/policy:Policy::lookalike",
        type: "aws:iam/policy:Policy",
        name: "lookalike",
        props: { name: "AmazonS3ReadOnlyAccess", policy: p.props.policy },
      });
    },
  },
  {
    rule: "kms-key-rotation",
    breaks: "turns key rotation off",
    mutate: (rs) => (first(rs, "aws:kms/key:Key").props.enableKeyRotation = false),
  },
  {
    rule: "no-plaintext-credentials",
    breaks: "adds a plaintext Secret holding AWS keys",
    mutate: (rs) =>
      rs.push(
        k8sObject(rs, "kubernetes:core/v1:Secret", "aws-keys", {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "aws-keys", namespace: "triton" },
          stringData: {
            credentials: "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
          },
        }),
      ),
  },
  {
    rule: "firewall-no-ssh-from-internet",
    breaks: "admits SSH to the GPU nodes from ::/0",
    mutate: (rs) => {
      const r = structuredClone(first(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (x) => x.props.referencedSecurityGroupId !== undefined));
      rs.push({
        ...r,
        urn: `${r.urn}-ssh`,
        name: "ssh",
        props: { securityGroupId: r.props.securityGroupId, ipProtocol: "tcp", fromPort: 22, toPort: 22, cidrIpv6: "::/0" },
      });
    },
  },
  {
    rule: "firewall-default-deny",
    breaks: "drops the serving namespace's default-deny egress",
    mutate: (rs) => rs.splice(rs.indexOf(first(rs, NETWORK_POLICY, (r) => r.props.metadata.name === "default-deny-egress")), 1),
  },
  {
    rule: "firewall-no-allow-all-to-triton",
    breaks: "admits every pod of every namespace to Triton's 8000/8001",
    mutate: (rs) =>
      (first(rs, NETWORK_POLICY, (r) => r.props.metadata.name === "triton-serving-from-gateway").props.spec.ingress[0].from = [{ namespaceSelector: {} }]),
  },
  {
    rule: "s3-bucket-owner-enforced",
    breaks: "lets object writers own their objects",
    mutate: (rs) => (first(rs, "aws:s3/bucketOwnershipControls:BucketOwnershipControls").props.rule.objectOwnership = "ObjectWriter"),
  },
  {
    rule: "s3-noncurrent-versions-expire",
    breaks: "removes the lifecycle configuration",
    mutate: (rs) => rs.splice(rs.indexOf(first(rs, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")), 1),
  },
  {
    rule: "s3-access-logging",
    breaks: "removes the bucket's access logging (advisory)",
    mutate: (rs) => rs.splice(rs.indexOf(first(rs, "aws:s3/bucketLogging:BucketLogging")), 1),
  },
  // EFS: on the staging plan (the EFS backend), at staging's levels.
  {
    stack: "staging",
    rule: "efs-encrypted",
    breaks: "creates the model file system unencrypted",
    mutate: (rs) => (first(rs, "aws:efs/fileSystem:FileSystem").props.encrypted = false),
  },
  {
    stack: "staging",
    rule: "efs-nfs-only-from-gpu-nodes",
    breaks: "admits NFS from 0.0.0.0/0",
    mutate: (rs) => {
      const r = first(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (x) => x.props.fromPort === 2049);
      delete r.props.referencedSecurityGroupId;
      r.props.cidrIpv4 = "0.0.0.0/0";
    },
  },
  {
    stack: "staging",
    rule: "efs-access-point-confined",
    breaks: "roots the access point at / as uid 0",
    mutate: (rs) => {
      const ap = first(rs, "aws:efs/accessPoint:AccessPoint");
      ap.props.posixUser.uid = 0;
      ap.props.rootDirectory.path = "/";
    },
  },
  {
    stack: "staging",
    rule: "serving-volumes-read-only",
    breaks: "mounts the model volume read-write",
    mutate: (rs) => (tritonContainer(rs).volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/models").readOnly = false),
  },
  {
    rule: "aws-keys-never-reach-containers",
    breaks: "hands Triton AWS_SESSION_TOKEN through envFrom (prefix AWS_SESSION_ + a Secret key TOKEN)",
    mutate: (rs) => {
      rs.push(
        k8sObject(rs, "kubernetes:core/v1:Secret", "session", {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "session", namespace: "triton" },
          stringData: { TOKEN: "x" },
        }),
      );
      tritonContainer(rs).envFrom = [{ prefix: "AWS_SESSION_", secretRef: { name: "session" } }];
    },
  },
  {
    rule: "triton-metrics-enabled",
    breaks: "turns Triton's metrics off (--allow-metrics=false)",
    mutate: (rs) => {
      const c = tritonContainer(rs);
      c.args = c.args.map((a: string) => (a === "--allow-metrics=true" ? "--allow-metrics=false" : a));
    },
  },
  {
    rule: "gateway-envoy-admin-no-service",
    breaks: "publishes Envoy's admin port through a Service by a named targetPort",
    mutate: (rs) => {
      first(rs, DEPLOYMENT).props.spec.template.spec.containers[0].ports.push({ name: "admin", containerPort: 9901, protocol: "TCP" });
      rs.push(
        k8sObject(rs, SERVICE, "gateway-admin", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "gateway-admin", namespace: "triton" },
          spec: { selector: { "app.kubernetes.io/name": "triton-gateway" }, ports: [{ name: "web", port: 80, targetPort: "admin", protocol: "TCP" }] },
        }),
      );
    },
  },
  {
    rule: "firewall-triton-ports-only-from-stack-groups",
    breaks: "opens Triton's HTTP port on the GPU nodes to a customer-managed prefix list",
    mutate: (rs) => {
      const r = structuredClone(
        first(
          rs,
          "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
          (x) => x.props.fromPort === 8000 && x.props.referencedSecurityGroupId !== undefined,
        ),
      );
      delete r.props.referencedSecurityGroupId;
      rs.push({ ...r, urn: `${r.urn}-pl`, name: `${r.name}-pl`, props: { ...r.props, prefixListId: "pl-0123456789abcdef0" } });
    },
  },
];

function runPolicy(file: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--require", path.join(ROOT, "tools", "register.cjs"), path.join(ROOT, "tools", "policy.ts"), "--resources", file, "--stack", "prod", "--json"],
      { cwd: ROOT },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** The fixture plan a mutation starts from; prod gets access logging for its bucket, so its baseline has no advisory either. */
async function baseline(stack: "prod" | "staging"): Promise<RecordedResource[]> {
  const rs = structuredClone((await plan(stack)).resources);
  const bucket = rs.find((r) => r.type === "aws:s3/bucket:Bucket");
  const settings = rs.find((r) => r.type === "aws:s3/bucketVersioning:BucketVersioning");
  if (bucket && settings)
    rs.push({
      ...structuredClone(settings),
      urn: `${settings.urn}-logging`,
      type: "aws:s3/bucketLogging:BucketLogging",
      name: "model-repository-logging",
      dependencies: [bucket.urn],
      props: { bucket: settings.props.bucket, targetBucket: "central-access-logs", targetPrefix: "triton/" },
    });
  return rs;
}

/** Reasonable variants that must pass at prod levels (false alarms of the old pack among them). */
export const VARIANTS: { accepts: string; mutate: (rs: RecordedResource[]) => void; pendingUnless?: () => boolean }[] = [
  {
    accepts: "Triton's restriction flags --http-restricted-api / --grpc-restricted-protocol (the security fix)",
    pendingUnless: () => {
      try {
        parseFlag("--http-restricted-api=model-repository:x-triton-admin=k");
        return true;
      } catch {
        return false; // the flags land in components/upstream/tritonserver.ts with the restriction-flags branch
      }
    },
    mutate: (rs) =>
      tritonContainer(rs).args.push(
        "--http-restricted-api=model-repository,model-config:x-triton-admin=k",
        "--grpc-restricted-protocol=model-repository,model-config:x-triton-admin=k",
      ),
  },
  {
    accepts: "a list-form, lower-case aws:SecureTransport condition",
    mutate: (rs) =>
      editDoc(rs, "aws:s3/bucketPolicy:BucketPolicy", "model-repository-tls-only", "policy", (d) => {
        const st = d.Statement.find((x: { Sid?: string }) => x.Sid === "DenyInsecureTransport");
        st.Condition = { Bool: { "aws:securetransport": ["false"] } };
        st.Principal = { AWS: ["*"] };
      }),
  },
  {
    accepts: 's3:ListAllMyBuckets and ec2:Describe* on "*", and tag-scoped autoscaling writes on "*"',
    mutate: (rs) =>
      editDoc(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-reader", "policy", (d) =>
        d.Statement.push(
          { Effect: "Allow", Action: ["s3:ListAllMyBuckets", "ec2:DescribeInstances"], Resource: "*" },
          {
            Effect: "Allow",
            Action: ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
            Resource: "*",
            Condition: { StringEquals: { "aws:ResourceTag/k8s.io/cluster-autoscaler/ml-prod": "owned" } },
          },
        ),
      ),
  },
  {
    accepts: "an IRSA trust with list-form values and upper-case condition keys",
    mutate: (rs) =>
      editDoc(rs, "aws:iam/role:Role", "model-repository-reader", "assumeRolePolicy", (d) => {
        const c = d.Statement[0].Condition.StringEquals;
        d.Statement[0].Condition = { StringEquals: Object.fromEntries(Object.entries(c).map(([k, v]) => [k.replace(/:sub$/, ":SUB"), [v]])) };
      }),
  },
  {
    accepts: "SSE-S3 on an access-log bucket (log delivery supports nothing else)",
    mutate: (rs) => {
      const bucket = first(rs, "aws:s3/bucket:Bucket");
      const logBucket: RecordedResource = {
        ...structuredClone(bucket),
        urn: `${bucket.urn}-logs`,
        name: "access-logs",
        props: { bucket: "triton-access-logs" },
      };
      rs.push(logBucket);
      const modelBucket = String(first(rs, "aws:s3/bucketVersioning:BucketVersioning").props.bucket);
      for (const s of rs.filter((r) => r.type.startsWith("aws:s3/bucket") && r.props.bucket === modelBucket && !r.type.includes("Logging"))) {
        const props: Record<string, any> = { ...structuredClone(s.props), bucket: "triton-access-logs" };
        if (s.type.includes("ServerSideEncryption")) props.rules = [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }];
        if (s.type.includes("BucketPolicy")) props.policy = String(props.policy).split(modelBucket).join("triton-access-logs");
        rs.push({ ...structuredClone(s), urn: `${s.urn}-logs`, name: `${s.name}-logs`, dependencies: [logBucket.urn], props });
      }
      first(rs, "aws:s3/bucketLogging:BucketLogging").props.targetBucket = "triton-access-logs";
    },
  },
  {
    accepts: "a digest-pinned Triton image pulled Always, and an initContainer under the pod's security context",
    mutate: (rs) => {
      const c = tritonContainer(rs);
      c.image = `nvcr.io/nvidia/tritonserver@sha256:${"a".repeat(64)}`;
      c.imagePullPolicy = "Always";
      const gw = first(rs, DEPLOYMENT).props.spec.template.spec;
      gw.initContainers = [
        {
          name: "init",
          image: "public.ecr.aws/docker/library/busybox:1.37.0",
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] } },
        },
      ];
    },
  },
  {
    accepts: "an internet-facing gateway load balancer restricted to client ranges, and SSH from a private range",
    mutate: (rs) => {
      const svc = first(rs, SERVICE, (r) => r.props.spec?.type === "LoadBalancer");
      svc.props.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] = "internet-facing";
      svc.props.spec.loadBalancerSourceRanges = ["198.51.100.0/24", "203.0.113.0/24", "52.94.0.0/16"];
      const r = structuredClone(first(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (x) => x.props.referencedSecurityGroupId !== undefined));
      rs.push({
        ...r,
        urn: `${r.urn}-ssh`,
        name: "ssh-admin",
        props: { securityGroupId: r.props.securityGroupId, ipProtocol: "tcp", fromPort: 22, toPort: 22, cidrIpv4: "10.0.0.0/8" },
      });
    },
  },
  {
    accepts: 'a key policy letting "*" use the key only from the account through S3, and anonymous Grafana viewers',
    mutate: (rs) => {
      editDoc(rs, "aws:kms/key:Key", "model-repository-key", "policy", (d) =>
        d.Statement.push({
          Effect: "Allow",
          Principal: { AWS: "*" },
          Action: ["kms:Decrypt"],
          Resource: "*",
          Condition: { StringEquals: { "kms:CallerAccount": "123456789012", "kms:ViaService": "s3.us-east-1.amazonaws.com" } },
        }),
      );
      first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack").props.values.grafana["grafana.ini"] = {
        "auth.anonymous": { enabled: true, org_role: "Viewer" },
      };
    },
  },
  {
    accepts: "Triton with --model-control-mode=none (no load API), and Session Manager's policy on the GPU node role",
    mutate: (rs) => {
      const c = tritonContainer(rs);
      c.args = c.args
        .filter((a: string) => !a.startsWith("--load-model="))
        .map((a: string) => (a.startsWith("--model-control-mode=") ? "--model-control-mode=none" : a));
      const a = structuredClone(first(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment"));
      rs.push({ ...a, urn: `${a.urn}-ssm`, name: "gpu-node-ssm", props: { ...a.props, policyArn: "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore" } });
    },
  },
  {
    accepts: "the Prometheus peer of Triton's metrics policy written with matchExpressions (In one value)",
    mutate: (rs) => {
      const peer = first(rs, NETWORK_POLICY, (r) => r.props.metadata.name === "triton-metrics-from-prometheus").props.spec.ingress[0].from[0];
      peer.namespaceSelector = { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["monitoring"] }] };
      peer.podSelector = { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: ["prometheus"] }] };
    },
  },
];

describe("policy pack mutation test (prod and staging plans, at their levels)", function () {
  this.timeout(120_000);

  it("has exactly one mutation per rule of the pack", () => {
    assert.deepEqual(MUTATIONS.map((m) => m.rule).sort(), rules.map((r) => r.name).sort());
  });

  it("each mutation fires exactly its rule, at the stack's level for it, located (type, name, path in the message, value, remediation)", async () => {
    const base = { prod: await baseline("prod"), staging: await baseline("staging") };
    for (const stack of ["prod", "staging"] as const)
      assert.deepEqual(
        (await checkAtLevels(structuredClone(base[stack]), stack)).map((v) => v.policy),
        [],
        `${stack} baseline`,
      );
    const wrong: string[] = [];
    for (const m of MUTATIONS) {
      const stack = m.stack ?? "prod";
      const rs = structuredClone(base[stack]);
      m.mutate(rs);
      const vs = await checkAtLevels(rs, stack);
      const levels = fixtureLevels(stack) as Record<string, unknown>;
      const expected = levels[m.rule] === "advisory" ? "advisory" : levels.all;
      const fired = [...new Set(vs.map((v) => v.policy))];
      const unlocated = vs.filter((v) => !(v.type && v.name && v.path && "value" in v && v.message.includes(v.path) && v.remediation));
      if (fired.length !== 1 || fired[0] !== m.rule || vs.some((v) => v.level !== expected) || unlocated.length)
        wrong.push(
          `${m.rule} (${m.breaks}): fired [${fired.join(", ")}] at [${vs.map((v) => v.level).join(", ")}], expected ${String(expected)}${unlocated.length ? `; unlocated ${JSON.stringify(unlocated)}` : ""}`,
        );
    }
    assert.deepEqual(wrong, []);
  });

  for (const v of VARIANTS) {
    it(`accepts ${v.accepts}`, async function () {
      if (v.pendingUnless && !v.pendingUnless()) this.skip();
      const rs = await baseline("prod");
      v.mutate(rs);
      assert.deepEqual(
        (await checkAtLevels(rs, "prod")).map((x) => `${x.policy}: ${x.message}`),
        [],
      );
    });
  }

  it("npm run policy --stack prod: exit 0 on the baseline and on the variants, exit 1 on mutations, each naming its rule", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mutations-"));
    const write = (name: string, rs: RecordedResource[]) => {
      const file = path.join(dir, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify(rs));
      return file;
    };
    const variants = await baseline("prod");
    for (const v of VARIANTS) if (!v.pendingUnless || v.pendingUnless()) v.mutate(variants);
    const picked = [
      "pod-security-restricted",
      "firewall-no-world-ingress-on-triton-ports",
      "iam-statements-least-privilege",
      "gateway-envoy-admin-not-exposed",
    ];
    const jobs = [
      { expect: 0, rule: undefined as string | undefined, file: write("baseline", await baseline("prod")) },
      { expect: 0, rule: undefined, file: write("variants", variants) },
      ...(await Promise.all(
        picked.map(async (rule) => {
          const rs = await baseline("prod");
          MUTATIONS.find((m) => m.rule === rule)!.mutate(rs);
          return { expect: 1, rule: rule, file: write(rule, rs) };
        }),
      )),
    ];
    for (let i = 0; i < jobs.length; i += 2) {
      const results = await Promise.all(jobs.slice(i, i + 2).map(async (j) => ({ j, r: await runPolicy(j.file) })));
      for (const { j, r } of results) {
        const vs: Violation[] = r.stdout ? JSON.parse(r.stdout).stacks[0].violations : [];
        assert.equal(r.status, j.expect, `${j.rule ?? path.basename(j.file)}: ${vs.map((v) => v.policy).join(", ")} ${r.stderr}`);
        assert.deepEqual([...new Set(vs.map((v) => v.policy))], j.rule ? [j.rule] : []);
      }
    }
  });
});

describe("the pack as properties, end to end: npm run policy --stack prod on each break and on the variants", function () {
  this.timeout(120_000);
  const BREAKS: { rule: string; mutate: (rs: RecordedResource[]) => void }[] = [
    {
      rule: "gpu-node-role-least-privilege",
      mutate: (rs) =>
        (first(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").props.policyArn = "arn:aws:iam::123456789012:policy/AmazonEKSWorkerNodePolicy"),
    },
    {
      rule: "triton-explicit-model-control",
      mutate: (rs) => {
        const c = tritonContainer(rs);
        c.args = c.args
          .filter((a: string) => !a.startsWith("--load-model="))
          .map((a: string) => (a.startsWith("--model-control-mode=") ? "--model-control-mode=poll" : a));
      },
    },
    ...["aws-keys-never-reach-containers", "firewall-triton-ports-only-from-stack-groups", "gateway-envoy-admin-no-service", "triton-metrics-enabled"].map(
      (rule) => ({
        rule,
        mutate: MUTATIONS.find((m) => m.rule === rule)!.mutate,
      }),
    ),
  ];
  const VARIANT_NAMES = [
    "Triton with --model-control-mode=none (no load API), and Session Manager's policy on the GPU node role",
    "the Prometheus peer of Triton's metrics policy written with matchExpressions (In one value)",
  ];

  it("exits 1 naming only the broken rule for each break, 0 for the variants together", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pack-properties-"));
    const variants = await baseline("prod");
    for (const v of VARIANTS.filter((x) => VARIANT_NAMES.includes(x.accepts))) v.mutate(variants);
    const jobs = [{ expect: 0, rule: undefined as string | undefined, rs: variants }];
    for (const b of BREAKS) {
      const rs = await baseline("prod");
      b.mutate(rs);
      jobs.push({ expect: 1, rule: b.rule, rs });
    }
    for (let i = 0; i < jobs.length; i += 2) {
      const results = await Promise.all(
        jobs.slice(i, i + 2).map(async (j, k) => {
          const file = path.join(dir, `${i + k}.json`);
          fs.writeFileSync(file, JSON.stringify(j.rs));
          return { j, r: await runPolicy(file) };
        }),
      );
      for (const { j, r } of results) {
        const vs: Violation[] = r.stdout ? JSON.parse(r.stdout).stacks[0].violations : [];
        assert.equal(r.status, j.expect, `${j.rule ?? "variants"}: ${vs.map((v) => `${v.policy}: ${v.message}`).join("; ")} ${r.stderr}`);
        assert.deepEqual([...new Set(vs.map((v) => v.policy))], j.rule ? [j.rule] : []);
      }
    }
  });
});
