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
import { plan, ROOT } from "./helpers";

type Mutation = { rule: string; breaks: string; mutate: (rs: RecordedResource[]) => void };

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

/** One mutation per rule: the smallest change to the prod plan that the rule must catch. */
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
    rule: "gpu-operator-chart-pinned",
    breaks: "unpins the GPU Operator chart version",
    mutate: (rs) => delete first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "gpu-operator").props.version,
  },
  {
    rule: "gpu-operator-matches-node-image",
    breaks: "has the GPU Operator install a driver on AL2023 NVIDIA nodes that ship one",
    mutate: (rs) =>
      (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "gpu-operator").props.values.driver = { enabled: true, version: "580.105.08" }),
  },
  {
    rule: "firewall-no-world-ingress-on-triton-ports",
    breaks: "opens the gateway load balancer's 8000-8001 to 0.0.0.0/0",
    mutate: (rs) =>
      (first(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (r) => r.props.cidrIpv4 !== undefined).props.cidrIpv4 = "0.0.0.0/0"),
  },
  {
    rule: "firewall-triton-metrics-only-from-monitoring",
    breaks: "admits any source to Triton's metrics port",
    mutate: (rs) =>
      delete first(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", (r) => r.props.metadata.name === "triton-metrics-from-prometheus").props.spec.ingress[0]
        .from,
  },
  {
    rule: "firewall-networkpolicy-selects-every-triton-pod",
    breaks: "adds Triton pods in a namespace without NetworkPolicies",
    mutate: (rs) => {
      const d = structuredClone(first(rs, "kubernetes:apps/v1:Deployment"));
      d.urn = `${d.urn}-stray`;
      d.name = "stray-triton";
      d.props.metadata = { ...d.props.metadata, name: "stray-triton", namespace: "stray" };
      d.props.spec.template.metadata.labels = { ...d.props.spec.template.metadata.labels, "app.kubernetes.io/name": "triton" };
      rs.push(d);
    },
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
    rule: "iam-no-wildcard-s3-resource",
    breaks: 'widens the Triton reader\'s s3:GetObject to Resource "*"',
    mutate: (rs) => {
      const p = first(rs, "aws:iam/rolePolicy:RolePolicy", (r) => r.name === "model-repository-reader");
      const doc = JSON.parse(p.props.policy);
      doc.Statement.find((st: { Action: unknown }) => st.Action === "s3:GetObject").Resource = "*";
      p.props.policy = JSON.stringify(doc);
    },
  },
  {
    rule: "no-static-aws-keys-in-pod-env",
    breaks: "adds a pod that carries AWS_SECRET_ACCESS_KEY in its env",
    mutate: (rs) =>
      rs.push({
        urn: "urn:pulumi:prod::triton-platform::kubernetes:core/v1:Pod::static-keys",
        type: "kubernetes:core/v1:Pod",
        name: "static-keys",
        custom: true,
        parent: rs[0].urn,
        provider: first(rs, "kubernetes:core/v1:Namespace").provider,
        dependencies: [],
        props: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "static-keys", namespace: "triton", labels: { ...first(rs, "kubernetes:core/v1:Namespace").props.metadata.labels } },
          spec: { containers: [{ name: "c", image: "busybox", env: [{ name: "AWS_SECRET_ACCESS_KEY", value: "x" }] }] },
        },
      }),
  },
  {
    rule: "monitoring-grafana-admin-secret",
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
  {
    rule: "monitoring-chart-version-pinned",
    breaks: "lets prometheus-adapter float on a version range",
    mutate: (rs) => (first(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "prometheus-adapter").props.version = "^5.0.0"),
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
    rule: "triton-image-pinned",
    breaks: "runs tritonserver:latest",
    mutate: (rs) => (tritonContainer(rs).image = "nvcr.io/nvidia/tritonserver:latest"),
  },
  {
    rule: "triton-non-root",
    breaks: "allows privilege escalation",
    mutate: (rs) => (tritonContainer(rs).securityContext.allowPrivilegeEscalation = true),
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

describe("policy pack mutation test (prod plan, npm run policy)", function () {
  this.timeout(120_000);

  it("has exactly one mutation per rule of the pack", () => {
    assert.deepEqual(MUTATIONS.map((m) => m.rule).sort(), rules.map((r) => r.name).sort());
  });

  it("passes the unmutated prod plan and fires exactly the mutated rule, mandatory, for each mutation", async () => {
    const { resources } = await plan("prod");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mutations-"));
    const jobs = [{ rule: "(none)", breaks: "nothing", mutate: () => undefined } as Mutation, ...MUTATIONS].map((m, i) => {
      const rs = structuredClone(resources);
      m.mutate(rs);
      const file = path.join(dir, `${i}.json`);
      fs.writeFileSync(file, JSON.stringify(rs));
      return { m, file };
    });
    // Two at a time: the machine has two cores.
    const results: { m: Mutation; status: number | null; fired: string[]; levels: string[]; unlocated: string[]; stderr: string }[] = [];
    for (let i = 0; i < jobs.length; i += 2) {
      const batch = await Promise.all(
        jobs.slice(i, i + 2).map(async ({ m, file }) => {
          const r = await runPolicy(file);
          const vs: Violation[] = r.stdout ? JSON.parse(r.stdout).stacks[0].violations : [];
          // A person can act on it: resource type and name, property path (named in the message) and value, remediation.
          const unlocated = vs
            .filter((v) => !(v.type && v.name && v.path && "value" in v && v.message.includes(v.path) && v.remediation))
            .map((v) => JSON.stringify(v));
          return { m, status: r.status, fired: [...new Set<string>(vs.map((v) => v.policy))], levels: vs.map((v) => v.level), unlocated, stderr: r.stderr };
        }),
      );
      results.push(...batch);
    }
    const [clean, ...mutated] = results;
    assert.equal(clean.status, 0, `unmutated prod plan: ${clean.fired.join(", ")} ${clean.stderr}`);
    assert.deepEqual(clean.fired, []);
    const wrong = mutated.filter(
      (r) => r.status !== 1 || r.fired.length !== 1 || r.fired[0] !== r.m.rule || r.levels.some((l) => l !== "mandatory") || r.unlocated.length > 0,
    );
    assert.deepEqual(
      wrong.map(
        (r) =>
          `${r.m.rule} (${r.m.breaks}): exit ${r.status}, fired [${r.fired.join(", ")}] ${r.unlocated.length ? `without path/value: ${r.unlocated.join(" ")}` : ""} ${r.stderr}`,
      ),
      [],
    );
  });
});
