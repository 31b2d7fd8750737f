// The rules stated as properties (issue 17): each fires on its property's breaks in more than one
// resource shape (a Deployment as well as a StatefulSet, a Job, a CronJob, a Pod, an initContainer,
// a CIDR set that covers the internet without a /0, a list-form condition, ...) and stays silent on
// reasonable variants. Breaks are mutations of recorded resources of the fixture plans.
import { strict as assert } from "node:assert";
import type { RecordedResource } from "../tools/planner";
import { plan, recorded, ruleViolations } from "./helpers";
import {
  declareMutations,
  first,
  tritonSts,
  tritonContainer,
  DEPLOYMENT,
  SERVICE,
  NETWORK_POLICY,
  servingNamespace,
  k8sObject,
  editDoc,
} from "./support/mutations";

type Edit = (rs: RecordedResource[]) => void;
interface Case {
  rule: string;
  base?: "prod" | "staging";
  fires: Record<string, Edit>;
  silent: Record<string, Edit>;
}

const STS = "kubernetes:apps/v1:StatefulSet";
const DEP = "kubernetes:apps/v1:Deployment";
const find = (rs: RecordedResource[], type: string, where: (r: RecordedResource) => boolean = () => true) => {
  const r = rs.find((x) => x.type === type && where(x));
  if (!r) throw new Error(`no ${type}`);
  return r;
};
const triton = (rs: RecordedResource[]) => find(rs, STS, (r) => r.name === "vision");
const tritonPod = (rs: RecordedResource[]) => triton(rs).props.spec.template.spec;
const gatewayPod = (rs: RecordedResource[]) => find(rs, DEP).props.spec.template.spec;
const doc = (r: RecordedResource, field: string, edit: (d: Record<string, any>) => void) => {
  const d = JSON.parse(r.props[field]);
  edit(d);
  r.props[field] = JSON.stringify(d);
};

/** The Triton StatefulSet re-shaped as another workload kind (same pod template), added to the plan in `namespace`. */
function tritonAs(
  rs: RecordedResource[],
  kind: "Deployment" | "Job" | "CronJob" | "Pod" | "DaemonSet",
  namespace = "triton",
  edit?: (pod: any) => void,
): RecordedResource {
  const sts = structuredClone(triton(rs));
  const template = sts.props.spec.template;
  if (edit) edit(template.spec);
  const meta = { ...sts.props.metadata, name: `vision-${kind.toLowerCase()}`, namespace };
  const apiVersion = { Deployment: "apps/v1", DaemonSet: "apps/v1", Job: "batch/v1", CronJob: "batch/v1", Pod: "v1" }[kind];
  const spec =
    kind === "Pod"
      ? template.spec
      : kind === "CronJob"
        ? { schedule: "0 * * * *", jobTemplate: { spec: { template } } }
        : kind === "Job"
          ? { template }
          : { selector: sts.props.spec.selector, template };
  const r = recorded(`kubernetes:${apiVersion === "v1" ? "core/v1" : apiVersion}:${kind}`, meta.name, {
    apiVersion,
    kind,
    metadata: kind === "Pod" ? { ...meta, labels: template.metadata.labels } : meta,
    spec,
  });
  rs.push(r);
  return r;
}

const pushK8s = (rs: RecordedResource[], type: string, props: Record<string, any>) => rs.push(recorded(type, props.metadata.name, props));
const anySg = (rs: RecordedResource[]) => String(find(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").props.securityGroupId);
const ingress = (rs: RecordedResource[], name: string, props: Record<string, any>) =>
  rs.push(recorded("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", name, { ipProtocol: "tcp", securityGroupId: anySg(rs), ...props }));
const np = (rs: RecordedResource[], name: string, spec: Record<string, any>) =>
  pushK8s(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace: "triton" },
    spec,
  });
const TRITON_SEL = { matchLabels: { "app.kubernetes.io/name": "triton" } };
const readerPolicy = (rs: RecordedResource[]) => find(rs, "aws:iam/rolePolicy:RolePolicy", (r) => r.name === "model-repository-reader");
const addStatement = (rs: RecordedResource[], st: Record<string, any>) => doc(readerPolicy(rs), "policy", (d) => d.Statement.push(st));
const readerTrust = (rs: RecordedResource[]) => find(rs, "aws:iam/role:Role", (r) => r.name === "model-repository-reader");
const trustCondition = (rs: RecordedResource[], edit: (c: Record<string, any>, sub: string, aud: string) => Record<string, any>) =>
  doc(readerTrust(rs), "assumeRolePolicy", (d) => {
    const c = d.Statement[0].Condition.StringEquals;
    const sub = Object.keys(c).find((k) => k.endsWith(":sub"))!;
    d.Statement[0].Condition = edit(c, sub, sub.replace(/:sub$/, ":aud"));
  });
const kps = (rs: RecordedResource[]) => find(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "kube-prometheus-stack");
const envoy = (rs: RecordedResource[], edit: (c: Record<string, any>) => void) => {
  const cm = find(rs, "kubernetes:core/v1:ConfigMap", (r) => typeof r.props.data?.["envoy.json"] === "string");
  const c = JSON.parse(cm.props.data["envoy.json"]);
  edit(c);
  cm.props.data["envoy.json"] = JSON.stringify(c);
};
const httpRoutes = (c: Record<string, any>) => c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes;
const metricsRoute = (c: Record<string, any>) =>
  c.static_resources.listeners.find((l: { name: string }) => l.name === "metrics").filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0]
    .routes[0];
const svc = (rs: RecordedResource[], name: string) => find(rs, "kubernetes:core/v1:Service", (r) => r.props.metadata.name === name);
/** The GPU nodes' own security group, as the stack's rules reference it. */
const gpuSg = (rs: RecordedResource[]) =>
  String(find(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", (r) => r.props.fromPort === 8002).props.securityGroupId);
/** An ingress rule on the GPU nodes' group, depending on it as a rule written with its id would. */
const gpuIngress = (rs: RecordedResource[], name: string, props: Record<string, any>) => {
  const gpu = find(rs, "aws:ec2/securityGroup:SecurityGroup", (r) => r.name === "gpu-nodes");
  rs.push({
    ...recorded("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", name, { ipProtocol: "tcp", securityGroupId: gpuSg(rs), ...props }),
    dependencies: [gpu.urn],
  });
};

const CASES: Case[] = [
  {
    rule: "pod-security-restricted",
    fires: {
      "a privileged initContainer in the gateway Deployment": (rs) =>
        (gatewayPod(rs).initContainers = [
          { name: "init", image: "busybox:1.37.0", securityContext: { privileged: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } },
        ]),
      "runAsUser 0 in the Triton StatefulSet's container": (rs) => (tritonPod(rs).containers[0].securityContext.runAsUser = 0),
      "a Triton Job with hostPID, even in a privileged namespace": (rs) => tritonAs(rs, "Job", "gpu-operator", (p) => (p.hostPID = true)),
      "an ephemeral container without allowPrivilegeEscalation in a CronJob": (rs) =>
        tritonAs(
          rs,
          "CronJob",
          "triton",
          (p) => (p.ephemeralContainers = [{ name: "debug", image: "busybox:1.37.0", securityContext: { capabilities: { drop: ["ALL"] } } }]),
        ),
      "a hostPath volume in a Pod": (rs) => tritonAs(rs, "Pod", "triton", (p) => p.volumes.push({ name: "host", hostPath: { path: "/" } })),
      "an unsafe sysctl, Unconfined seccomp, SYS_ADMIN, Unmasked procMount, Unconfined AppArmor, an SELinux user, hostProcess, hostPort": (rs) => {
        const p = gatewayPod(rs);
        p.securityContext.sysctls = [{ name: "kernel.msgmax", value: "1" }];
        p.securityContext.seccompProfile = { type: "Unconfined" };
        p.securityContext.windowsOptions = { hostProcess: true };
        const c = p.containers[0];
        c.securityContext.capabilities.add = ["SYS_ADMIN"];
        c.securityContext.procMount = "Unmasked";
        c.securityContext.appArmorProfile = { type: "Unconfined" };
        c.securityContext.seLinuxOptions = { user: "system_u" };
        c.ports[0].hostPort = 8000;
      },
    },
    silent: {
      "a privileged node-agent DaemonSet in gpu-operator (no tritonserver)": (rs) =>
        pushK8s(rs, "kubernetes:apps/v1:DaemonSet", {
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          metadata: { name: "agent", namespace: "gpu-operator" },
          spec: {
            template: {
              metadata: { labels: { app: "agent" } },
              spec: { hostPID: true, containers: [{ name: "a", image: "nvcr.io/nvidia/agent:1.0", securityContext: { privileged: true } }] },
            },
          },
        }),
      "NET_BIND_SERVICE added, Localhost seccomp, a safe sysctl, csi/ephemeral volumes, runAsNonRoot at pod level only": (rs) => {
        const p = tritonPod(rs);
        p.containers[0].securityContext.capabilities.add = ["NET_BIND_SERVICE"];
        p.containers[0].securityContext.seccompProfile = { type: "Localhost", localhostProfile: "triton.json" };
        delete p.containers[0].securityContext.runAsNonRoot;
        p.securityContext.sysctls = [{ name: "net.ipv4.tcp_keepalive_time", value: "60" }];
        p.volumes.push({ name: "c", csi: { driver: "efs.csi.aws.com" } }, { name: "e", ephemeral: { volumeClaimTemplate: { spec: {} } } });
      },
    },
  },
  {
    rule: "namespace-pod-security-restricted",
    fires: {
      "enforce-version latest": (rs) =>
        (find(rs, "kubernetes:core/v1:Namespace", (r) => r.name === "triton" || r.props.metadata.name === "triton").props.metadata.labels[
          "pod-security.kubernetes.io/enforce-version"
        ] = "latest"),
      "no audit label on a new namespace": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Namespace", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: {
            name: "serving-b",
            labels: {
              "pod-security.kubernetes.io/enforce": "restricted",
              "pod-security.kubernetes.io/enforce-version": "v1.33",
              "pod-security.kubernetes.io/warn": "restricted",
              "pod-security.kubernetes.io/warn-version": "v1.33",
            },
          },
        }),
      "the GPU Operator's namespace renamed kube-system (a privileged namespace, still refused)": (rs) =>
        (find(rs, "kubernetes:core/v1:Namespace", (r) => r.props.metadata.name === "gpu-operator").props.metadata.name = "kube-system"),
      "the serving namespace renamed default": (rs) =>
        (find(rs, "kubernetes:core/v1:Namespace", (r) => r.props.metadata.name === "triton").props.metadata.name = "default"),
    },
    silent: {
      "a namespace whose name only contains kube (kubeflow-serving)": (rs) =>
        (find(rs, "kubernetes:core/v1:Namespace", (r) => r.props.metadata.name === "triton").props.metadata.name = "kubeflow-serving"),
      "the monitoring namespace (privileged node agents) keeps its labels": () => undefined,
      "a newer pinned version": (rs) => {
        const labels = find(rs, "kubernetes:core/v1:Namespace", (r) => r.props.metadata.name === "triton").props.metadata.labels;
        for (const m of ["enforce", "warn", "audit"]) labels[`pod-security.kubernetes.io/${m}-version`] = "v1.34";
      },
    },
  },
  {
    rule: "container-images-pinned",
    fires: {
      "an untagged initContainer image in a Job": (rs) =>
        tritonAs(rs, "Job", "triton", (p) => (p.initContainers = [{ ...p.containers[0], name: "fetch", image: "busybox" }])),
      "a branch tag (main) on the gateway": (rs) => (gatewayPod(rs).containers[0].image = "envoyproxy/envoy:main"),
      "a channel tag with a suffix (nightly-2024) on Triton": (rs) => (tritonPod(rs).containers[0].image = "nvcr.io/nvidia/tritonserver:nightly-2024"),
      "a malformed digest": (rs) => (tritonPod(rs).containers[0].image = "nvcr.io/nvidia/tritonserver@sha256:abc"),
    },
    silent: {
      "a digest": (rs) => (tritonPod(rs).containers[0].image = `nvcr.io/nvidia/tritonserver@sha256:${"c".repeat(64)}`),
      "a registry with a port and a release tag": (rs) => (gatewayPod(rs).containers[0].image = "registry.internal:5000/envoyproxy/envoy:v1.37.1"),
    },
  },
  {
    rule: "image-pull-always-with-tag",
    fires: {
      "Always with a tag on Triton": (rs) => (tritonPod(rs).containers[0].imagePullPolicy = "Always"),
      "Always with a tag in a CronJob": (rs) => tritonAs(rs, "CronJob", "triton", (p) => (p.containers[0].imagePullPolicy = "Always")),
    },
    silent: {
      "Always with a digest": (rs) => {
        tritonPod(rs).containers[0].imagePullPolicy = "Always";
        tritonPod(rs).containers[0].image = `nvcr.io/nvidia/tritonserver:25.01-py3@sha256:${"d".repeat(64)}`;
      },
      IfNotPresent: (rs) => (gatewayPod(rs).containers[0].imagePullPolicy = "IfNotPresent"),
    },
  },
  {
    rule: "service-account-token-not-mounted",
    fires: {
      "Triton pods with automount true": (rs) => (tritonPod(rs).automountServiceAccountToken = true),
      "a Deployment without the setting on the default ServiceAccount": (rs) =>
        tritonAs(rs, "Deployment", "triton", (p) => delete p.automountServiceAccountToken && delete p.serviceAccountName),
    },
    silent: {
      "the pod unset, its ServiceAccount false": (rs) => delete tritonPod(rs).automountServiceAccountToken,
      "a workload in a privileged namespace": (rs) => tritonAs(rs, "Deployment", "kube-system", (p) => (p.automountServiceAccountToken = true)),
    },
  },
  {
    rule: "triton-reachable-only-through-gateway",
    fires: {
      "a LoadBalancer Service selecting Triton pods by a subset of their labels": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "direct", namespace: "triton" },
          spec: { type: "LoadBalancer", selector: { "app.kubernetes.io/name": "triton" }, ports: [{ port: 8000 }] },
        }),
      "externalIPs on the group's Service": (rs) => (svc(rs, "vision").props.spec.externalIPs = ["203.0.113.10"]),
      "an Ingress whose backend is the group's Service": (rs) =>
        pushK8s(rs, "kubernetes:networking.k8s.io/v1:Ingress", {
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          metadata: { name: "direct", namespace: "triton" },
          spec: { rules: [{ http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "vision", port: { number: 8000 } } } }] } }] },
        }),
      "an HTTPRoute from another namespace naming the canary's Service": (rs) =>
        pushK8s(rs, "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute", {
          apiVersion: "gateway.networking.k8s.io/v1",
          kind: "HTTPRoute",
          metadata: { name: "direct", namespace: "edge" },
          spec: { rules: [{ backendRefs: [{ name: "vision-canary", namespace: "triton", port: 8000 }] }] },
        }),
    },
    silent: {
      "an Ingress to the gateway's Service": (rs) =>
        pushK8s(rs, "kubernetes:networking.k8s.io/v1:Ingress", {
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          metadata: { name: "gw", namespace: "triton" },
          spec: { defaultBackend: { service: { name: "triton-gateway", port: { number: 8000 } } } },
        }),
      "a NodePort Service named like Triton but selecting other pods": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "vision-debug", namespace: "triton" },
          spec: { type: "NodePort", selector: { app: "debug" }, ports: [{ port: 80 }] },
        }),
    },
  },
  {
    rule: "load-balancer-sources-restricted",
    fires: {
      "no source ranges": (rs) => delete svc(rs, "triton-gateway").props.spec.loadBalancerSourceRanges,
      "source ranges by annotation covering the internet": (rs) => {
        const s = svc(rs, "triton-gateway").props;
        delete s.spec.loadBalancerSourceRanges;
        s.metadata.annotations["service.beta.kubernetes.io/load-balancer-source-ranges"] = "0.0.0.0/2, 64.0.0.0/2, 128.0.0.0/1";
      },
      "an internet-facing ALB Ingress without inbound-cidrs": (rs) =>
        pushK8s(rs, "kubernetes:networking.k8s.io/v1:Ingress", {
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          metadata: { name: "alb", namespace: "triton", annotations: { "alb.ingress.kubernetes.io/scheme": "internet-facing" } },
          spec: { defaultBackend: { service: { name: "triton-gateway", port: { number: 8000 } } } },
        }),
    },
    silent: {
      "public client ranges (a few /16s)": (rs) => (svc(rs, "triton-gateway").props.spec.loadBalancerSourceRanges = ["52.94.0.0/16", "198.51.100.0/24"]),
      "an internal ALB": (rs) =>
        pushK8s(rs, "kubernetes:networking.k8s.io/v1:Ingress", {
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          metadata: { name: "alb", namespace: "triton", annotations: { "alb.ingress.kubernetes.io/scheme": "internal" } },
          spec: {},
        }),
    },
  },
  {
    rule: "rbac-serving-accounts-least-privilege",
    fires: {
      "a RoleBinding of the Triton ServiceAccount to edit": (rs) =>
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "b", namespace: "triton" },
          roleRef: { kind: "ClusterRole", name: "edit" },
          subjects: [{ kind: "ServiceAccount", name: "triton" }],
        }),
      "the namespace's ServiceAccounts group given a Role that reads secrets": (rs) => {
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:Role", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "reader", namespace: "triton" },
          rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }],
        });
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "g", namespace: "triton" },
          roleRef: { kind: "Role", name: "reader" },
          subjects: [{ kind: "Group", name: "system:serviceaccounts:triton" }],
        });
      },
      "a ClusterRole with wildcard verbs bound cluster-wide": (rs) => {
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "all" },
          rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["*"] }],
        });
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "all" },
          roleRef: { kind: "ClusterRole", name: "all" },
          subjects: [{ kind: "ServiceAccount", name: "triton", namespace: "triton" }],
        });
      },
    },
    silent: {
      "cluster-admin for a kube-system controller": (rs) =>
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "ctrl" },
          roleRef: { kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ kind: "ServiceAccount", name: "cluster-autoscaler", namespace: "kube-system" }],
        }),
      "a Role reading configmaps for the Triton ServiceAccount": (rs) => {
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:Role", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "cm", namespace: "triton" },
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
        });
        pushK8s(rs, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "cm", namespace: "triton" },
          roleRef: { kind: "Role", name: "cm" },
          subjects: [{ kind: "ServiceAccount", name: "triton" }],
        });
      },
    },
  },
  {
    rule: "firewall-no-world-ingress-on-triton-ports",
    fires: {
      "two /1s on two rules of one group": (rs) => {
        ingress(rs, "lo", { fromPort: 8000, toPort: 8001, cidrIpv4: "0.0.0.0/1" });
        ingress(rs, "hi", { fromPort: 8001, toPort: 8001, cidrIpv4: "128.0.0.0/1" });
      },
      "a stack-defined prefix list whose entries cover the internet": (rs) => {
        const pl = recorded("aws:ec2/managedPrefixList:ManagedPrefixList", "everyone", {
          name: "everyone",
          entries: [{ cidr: "0.0.0.0/1" }, { cidr: "128.0.0.0/1" }],
        });
        rs.push(pl);
        ingress(rs, "pl", { fromPort: 8000, toPort: 8000, prefixListId: "pl-everyone" });
        rs[rs.length - 1].dependencies = [pl.urn];
      },
      "an inline group rule with a list of /2s": (rs) =>
        rs.push(
          recorded("aws:ec2/securityGroup:SecurityGroup", "inline", {
            ingress: [{ protocol: "-1", fromPort: 0, toPort: 0, cidrBlocks: ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"] }],
          }),
        ),
    },
    silent: {
      "client networks' public /16s on 8000 and 8001": (rs) => {
        ingress(rs, "lo", { fromPort: 8000, toPort: 8000, cidrIpv4: "52.94.0.0/16" });
        ingress(rs, "hi", { fromPort: 8001, toPort: 8001, cidrIpv4: "198.51.100.0/24" });
      },
      "every private range": (rs) => ingress(rs, "private", { fromPort: 8000, toPort: 8002, cidrIpv4: "10.0.0.0/8" }),
    },
  },
  {
    rule: "firewall-no-ssh-from-internet",
    fires: {
      "::/0 on 22": (rs) => ingress(rs, "ssh6", { fromPort: 22, toPort: 22, cidrIpv6: "::/0" }),
      "all protocols from 0.0.0.0/1 + 128.0.0.0/1 (legacy rules)": (rs) => {
        rs.push(
          recorded("aws:ec2/securityGroupRule:SecurityGroupRule", "a", {
            type: "ingress",
            securityGroupId: "sg-x",
            protocol: "-1",
            fromPort: 0,
            toPort: 0,
            cidrBlocks: ["0.0.0.0/1"],
          }),
        );
        rs.push(
          recorded("aws:ec2/securityGroupRule:SecurityGroupRule", "b", {
            type: "ingress",
            securityGroupId: "sg-x",
            protocol: "tcp",
            fromPort: 20,
            toPort: 30,
            cidrBlocks: ["128.0.0.0/1"],
          }),
        );
      },
    },
    silent: {
      "SSH from the VPC": (rs) => ingress(rs, "ssh", { fromPort: 22, toPort: 22, cidrIpv4: "10.0.0.0/16" }),
      "HTTPS from the internet": (rs) => ingress(rs, "https", { fromPort: 443, toPort: 443, cidrIpv4: "0.0.0.0/0" }),
    },
  },
  {
    rule: "firewall-no-allow-all-to-triton",
    fires: {
      "ipBlocks whose union is the internet on 8000": (rs) =>
        np(rs, "x", {
          podSelector: TRITON_SEL,
          policyTypes: ["Ingress"],
          ingress: [{ from: [{ ipBlock: { cidr: "0.0.0.0/1" } }, { ipBlock: { cidr: "128.0.0.0/1" } }], ports: [{ port: 8000 }] }],
        }),
      "an empty namespaceSelector on the grpc port by name": (rs) =>
        np(rs, "y", { podSelector: {}, ingress: [{ from: [{ namespaceSelector: {}, podSelector: {} }], ports: [{ port: "grpc" }] }] }),
      "a rule without peers on every port": (rs) => np(rs, "z", { podSelector: TRITON_SEL, ingress: [{}] }),
      "Triton egress to everything": (rs) => np(rs, "out", { podSelector: TRITON_SEL, policyTypes: ["Egress"], egress: [{}] }),
    },
    silent: {
      "an ipBlock of the VPC": (rs) =>
        np(rs, "x", { podSelector: TRITON_SEL, ingress: [{ from: [{ ipBlock: { cidr: "10.0.0.0/8" } }], ports: [{ port: 8000 }] }] }),
      "the internet minus most of it by except": (rs) =>
        np(rs, "x", {
          podSelector: TRITON_SEL,
          ingress: [{ from: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["0.0.0.0/1", "128.0.0.0/1"] } }], ports: [{ port: 8000 }] }],
        }),
      "egress to anywhere on 443 only": (rs) => np(rs, "out", { podSelector: TRITON_SEL, policyTypes: ["Egress"], egress: [{ ports: [{ port: 443 }] }] }),
    },
  },
  {
    rule: "iam-statements-least-privilege",
    fires: {
      NotAction: (rs) => addStatement(rs, { Effect: "Allow", NotAction: "iam:*", Resource: "arn:aws:s3:::x/*" }),
      NotResource: (rs) => addStatement(rs, { Effect: "Allow", Action: "s3:GetObject", NotResource: "arn:aws:s3:::x/*" }),
      "a bucket pattern that matches other buckets": (rs) =>
        addStatement(rs, { Effect: "Allow", Action: ["s3:GetObject"], Resource: ["arn:aws:s3:::triton-models-*/models/*"] }),
      "every key of the account": (rs) => addStatement(rs, { Effect: "Allow", Action: "kms:Decrypt", Resource: "arn:aws:kms:us-east-1:123456789012:key/*" }),
      "Action * in a Policy resource": (rs) =>
        rs.push(
          recorded("aws:iam/policy:Policy", "p", {
            name: "triton-x",
            policy: JSON.stringify({ Statement: { Effect: "Allow", Action: "*", Resource: "arn:aws:s3:::x" } }),
          }),
        ),
    },
    silent: {
      "s3:ListAllMyBuckets on *": (rs) => addStatement(rs, { Effect: "Allow", Action: "s3:ListAllMyBuckets", Resource: "*" }),
      "a Deny of everything": (rs) => addStatement(rs, { Effect: "Deny", NotAction: "s3:GetObject", Resource: "*" }),
      "object wildcards inside a named bucket": (rs) =>
        addStatement(rs, { Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::triton-models-prod-x/models/*/1/*" }),
    },
  },
  {
    rule: "iam-no-public-principal",
    fires: {
      'a trust to {AWS: ["*"]}': (rs) =>
        doc(
          find(rs, "aws:iam/role:Role", (r) => r.name === "model-repository-publisher"),
          "assumeRolePolicy",
          (d) => (d.Statement[0].Principal = { AWS: ["*"] }),
        ),
      "a bucket policy allowing * to GetObject": (rs) =>
        doc(find(rs, "aws:s3/bucketPolicy:BucketPolicy"), "policy", (d) =>
          d.Statement.push({ Effect: "Allow", Principal: "*", Action: "s3:GetObject", Resource: "arn:aws:s3:::b/*" }),
        ),
      "a key policy granting kms:* to *": (rs) => doc(find(rs, "aws:kms/key:Key"), "policy", (d) => (d.Statement[0].Principal = "*")),
      "NotPrincipal with Allow": (rs) =>
        doc(find(rs, "aws:kms/key:Key"), "policy", (d) =>
          d.Statement.push({ Effect: "Allow", NotPrincipal: { AWS: "arn:aws:iam::1:root" }, Action: "kms:Decrypt", Resource: "*" }),
        ),
    },
    silent: {
      "a bucket policy allowing * within the organisation": (rs) =>
        doc(find(rs, "aws:s3/bucketPolicy:BucketPolicy"), "policy", (d) =>
          d.Statement.push({
            Effect: "Allow",
            Principal: "*",
            Action: "s3:GetObject",
            Resource: "arn:aws:s3:::b/*",
            Condition: { StringEquals: { "AWS:PrincipalOrgID": ["o-abc123"] } },
          }),
        ),
      "a service principal": (rs) =>
        doc(find(rs, "aws:kms/key:Key"), "policy", (d) =>
          d.Statement.push({ Effect: "Allow", Principal: { Service: "logs.amazonaws.com" }, Action: "kms:Encrypt", Resource: "*" }),
        ),
    },
  },
  {
    rule: "iam-irsa-trust-exact",
    fires: {
      "a StringLike sub with a wildcard and no aud": (rs) => trustCondition(rs, (_c, sub) => ({ StringLike: { [sub]: "system:serviceaccount:*" } })),
      "StringEqualsIfExists (an absent sub passes)": (rs) => trustCondition(rs, (c) => ({ StringEqualsIfExists: c })),
      "a wrong audience in list form": (rs) =>
        trustCondition(rs, (c, sub, aud) => ({ StringEquals: { [sub]: c[sub], [aud]: ["sts.amazonaws.com", "other"] } })),
    },
    silent: {
      "StringLike without wildcards, upper-case keys, list values": (rs) =>
        trustCondition(rs, (c, sub, aud) => ({ StringLike: { [sub.toUpperCase()]: [c[sub]], [aud.toUpperCase()]: c[aud] } })),
      "two exact service accounts": (rs) =>
        trustCondition(rs, (c, sub, aud) => ({ StringEquals: { [sub]: [c[sub], "system:serviceaccount:triton:triton-canary"], [aud]: c[aud] } })),
    },
  },
  {
    rule: "iam-no-admin-managed-policies",
    fires: {
      "PowerUserAccess in a Role's managedPolicyArns": (rs) => (readerTrust(rs).props.managedPolicyArns = ["arn:aws:iam::aws:policy/PowerUserAccess"]),
      "AdministratorAccess by a PolicyAttachment": (rs) =>
        rs.push(recorded("aws:iam/policyAttachment:PolicyAttachment", "a", { policyArn: "arn:aws:iam::aws:policy/AdministratorAccess", roles: ["x"] })),
    },
    silent: {
      "the worker node policies": () => undefined,
      "a read-only managed policy": (rs) => (readerTrust(rs).props.managedPolicyArns = ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"]),
    },
  },
  {
    rule: "iam-no-aws-managed-policy-names",
    fires: {
      "name AWSLoadBalancerControllerIAMPolicy": (rs) =>
        rs.push(recorded("aws:iam/policy:Policy", "p", { name: "AWSLoadBalancerControllerIAMPolicy", policy: "{}" })),
      "namePrefix AdministratorAccess-": (rs) => rs.push(recorded("aws:iam/policy:Policy", "q", { namePrefix: "AdministratorAccess-", policy: "{}" })),
    },
    silent: {
      "a stack-named policy": (rs) => rs.push(recorded("aws:iam/policy:Policy", "p", { name: "triton-platform-prod-model-reader", policy: "{}" })),
      "an autonamed policy": (rs) => rs.push(recorded("aws:iam/policy:Policy", "cluster-autoscaler", { policy: "{}" })),
    },
  },
  {
    rule: "kms-key-rotation",
    fires: {
      "rotation unset": (rs) => delete find(rs, "aws:kms/key:Key").props.enableKeyRotation,
      "a rotation period above a year": (rs) => (find(rs, "aws:kms/key:Key").props.rotationPeriodInDays = 730),
    },
    silent: {
      "an asymmetric signing key (AWS cannot rotate it)": (rs) =>
        rs.push(recorded("aws:kms/key:Key", "sign", { keySpec: "ECC_NIST_P256", keyUsage: "SIGN_VERIFY" })),
      "a 90-day rotation": (rs) => (find(rs, "aws:kms/key:Key").props.rotationPeriodInDays = 90),
    },
  },
  {
    rule: "helm-values-no-credentials",
    fires: {
      "grafana.ini security.admin_password": (rs) => (kps(rs).props.values.grafana["grafana.ini"] = { security: { admin_password: "s3cret" } }),
      "anonymous Admin": (rs) => (kps(rs).props.values.grafana["grafana.ini"] = { "auth.anonymous": { enabled: true, org_role: "Admin" } }),
      "a token in another chart's values": (rs) =>
        (find(rs, "kubernetes:helm.sh/v3:Release", (r) => r.props.chart === "gpu-operator").props.values.operator.ngcApiToken = "nvapi-xyz"),
    },
    silent: {
      "a $__file{} reference": (rs) => (kps(rs).props.values.grafana["grafana.ini"] = { security: { admin_password: "$__file{/etc/secrets/admin}" } }),
      "anonymous viewers": (rs) => (kps(rs).props.values.grafana["grafana.ini"] = { "auth.anonymous": { enabled: "true", org_role: "Viewer" } }),
    },
  },
  {
    rule: "no-plaintext-credentials",
    fires: {
      "a literal DB_PASSWORD in a Deployment's initContainer": (rs) =>
        (gatewayPod(rs).initContainers = [{ name: "i", image: "x:1.0", env: [{ name: "DB_PASSWORD", value: "hunter2" }] }]),
      "an access key id in a Secret's base64 data": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Secret", {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "s", namespace: "triton" },
          data: { key: Buffer.from("AKIAIOSFODNN7EXAMPLE").toString("base64") },
        }),
      "a secret-key entry in a Secret's stringData": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Secret", {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "k", namespace: "triton" },
          stringData: { "secret-key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
        }),
      "a password in a ConfigMap": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:ConfigMap", {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "c", namespace: "triton" },
          data: { "db-password": "x" },
        }),
    },
    silent: {
      "a password from a secretKeyRef": (rs) =>
        tritonPod(rs).containers[0].env.push({ name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: "db", key: "password" } } }),
      "the generated Grafana admin Secret": () => undefined,
    },
  },
  {
    rule: "gateway-envoy-admin-not-exposed",
    fires: {
      "a tcp_proxy listener to the admin cluster": (rs) =>
        envoy(rs, (c) =>
          c.static_resources.listeners.push({
            name: "tcp",
            address: { socket_address: { address: "0.0.0.0", port_value: 9000 } },
            filter_chains: [
              {
                filters: [
                  {
                    name: "envoy.filters.network.tcp_proxy",
                    typed_config: {
                      "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                      stat_prefix: "t",
                      cluster: "envoy-admin",
                    },
                  },
                ],
              },
            ],
          }),
        ),
      "weighted_clusters with an admin share": (rs) =>
        envoy(
          rs,
          (c) =>
            (httpRoutes(c)[0].route = {
              weighted_clusters: {
                clusters: [
                  { name: "vision-primary-http", weight: 99 },
                  { name: "envoy-admin", weight: 1 },
                ],
              },
            }),
        ),
      "a prefix_rewrite on the allowed metrics path": (rs) => envoy(rs, (c) => (metricsRoute(c).route.prefix_rewrite = "/")),
      "a cluster under another name whose endpoint is the admin address": (rs) =>
        envoy(rs, (c) => {
          const admin = structuredClone(c.static_resources.clusters.find((x: { name: string }) => x.name === "envoy-admin"));
          c.static_resources.clusters.push({ ...admin, name: "vision-debug", load_assignment: { ...admin.load_assignment, cluster_name: "vision-debug" } });
          httpRoutes(c)[0].route.cluster = "vision-debug";
        }),
      "a mirror to the admin cluster": (rs) => envoy(rs, (c) => (httpRoutes(c)[0].route.request_mirror_policies = [{ cluster: "envoy-admin" }])),
    },
    silent: {
      "the planned gateway": () => undefined,
      "a tcp_proxy to a Triton cluster": (rs) =>
        envoy(rs, (c) =>
          c.static_resources.listeners.push({
            name: "tcp",
            address: { socket_address: { address: "0.0.0.0", port_value: 9000 } },
            filter_chains: [{ filters: [{ name: "envoy.filters.network.tcp_proxy", typed_config: { stat_prefix: "t", cluster: "vision-primary-grpc" } }] }],
          }),
        ),
    },
  },
  {
    rule: "helm-release-pinned",
    fires: {
      "version latest": (rs) => (kps(rs).props.version = "latest"),
      "a plain-http repository": (rs) => (kps(rs).props.repositoryOpts.repo = "http://charts.example.com"),
      "an OCI chart without a version": (rs) =>
        rs.push(recorded("kubernetes:helm.sh/v3:Release", "oci", { chart: "oci://public.ecr.aws/x/chart", values: {} })),
    },
    silent: {
      "an OCI chart with an exact version": (rs) =>
        rs.push(recorded("kubernetes:helm.sh/v3:Release", "oci", { chart: "oci://public.ecr.aws/x/chart", version: "1.2.3", values: {} })),
      "a v-prefixed exact version from another repository of an unknown chart": (rs) =>
        rs.push(
          recorded("kubernetes:helm.sh/v3:Release", "ca", {
            chart: "cluster-autoscaler",
            version: "9.59.0",
            repositoryOpts: { repo: "https://kubernetes.github.io/autoscaler" },
            values: {},
          }),
        ),
    },
  },
  {
    rule: "s3-bucket-owner-enforced",
    fires: {
      ObjectWriter: (rs) => (find(rs, "aws:s3/bucketOwnershipControls:BucketOwnershipControls").props.rule.objectOwnership = "ObjectWriter"),
      "no ownership controls": (rs) => rs.splice(rs.indexOf(find(rs, "aws:s3/bucketOwnershipControls:BucketOwnershipControls")), 1),
    },
    silent: {
      "the planned bucket": () => undefined,
      "controls matched by dependency": (rs) => (find(rs, "aws:s3/bucketOwnershipControls:BucketOwnershipControls").props.bucket = undefined),
    },
  },
  {
    rule: "s3-noncurrent-versions-expire",
    fires: {
      "a disabled rule": (rs) => (find(rs, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration").props.rules[0].status = "Disabled"),
      "a rule without noncurrent expiration": (rs) =>
        delete find(rs, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration").props.rules[0].noncurrentVersionExpiration,
    },
    silent: {
      "the planned lifecycle": () => undefined,
      "a second, unrelated rule": (rs) =>
        find(rs, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration").props.rules.push({
          id: "x",
          status: "Enabled",
          filter: {},
          expiration: { days: 3650 },
        }),
    },
  },
  {
    rule: "s3-bucket-encrypted",
    fires: {
      "SSE-KMS without the bucket key": (rs) =>
        (find(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules[0].bucketKeyEnabled = false),
      "SSE-S3 on a bucket that is no log target": (rs) =>
        (find(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules = [
          { applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } },
        ]),
    },
    silent: {
      "SSE-S3 on a bucket whose policy admits the log delivery service": (rs) => {
        find(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules = [
          { applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } },
        ];
        doc(find(rs, "aws:s3/bucketPolicy:BucketPolicy"), "policy", (d) =>
          d.Statement.push({ Effect: "Allow", Principal: { Service: "logging.s3.amazonaws.com" }, Action: "s3:PutObject", Resource: "arn:aws:s3:::b/*" }),
        );
      },
      "DSSE-KMS with the bucket key": (rs) =>
        (find(
          rs,
          "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        ).props.rules[0].applyServerSideEncryptionByDefault.sseAlgorithm = "aws:kms:dsse"),
    },
  },
  {
    rule: "efs-encrypted",
    base: "staging",
    fires: {
      "encrypted false": (rs) => (find(rs, "aws:efs/fileSystem:FileSystem").props.encrypted = false),
      "a second file system without the setting": (rs) => rs.push(recorded("aws:efs/fileSystem:FileSystem", "fs2", {})),
    },
    silent: {
      "the planned file system": () => undefined,
      "a second encrypted one": (rs) => rs.push(recorded("aws:efs/fileSystem:FileSystem", "fs2", { encrypted: true })),
    },
  },
  {
    rule: "efs-nfs-only-from-gpu-nodes",
    base: "staging",
    fires: {
      "NFS from a private CIDR": (rs) =>
        ingress(rs, "nfs-cidr", { securityGroupId: "model-repository-nfs-id", fromPort: 2049, toPort: 2049, cidrIpv4: "10.0.0.0/8" }),
      "all protocols from the cluster security group": (rs) =>
        ingress(rs, "nfs-all", { securityGroupId: "model-repository-nfs-id", ipProtocol: "-1", referencedSecurityGroupId: "sg-other" }),
    },
    silent: {
      "the planned rule": () => undefined,
      "other ports of the mount targets' group stay out of scope": (rs) =>
        ingress(rs, "x", { securityGroupId: "model-repository-nfs-id", fromPort: 443, toPort: 443, cidrIpv4: "10.0.0.0/8" }),
    },
  },
  {
    rule: "efs-access-point-confined",
    base: "staging",
    fires: {
      "gid 0": (rs) => (find(rs, "aws:efs/accessPoint:AccessPoint").props.posixUser.gid = 0),
      "rooted at // (still /)": (rs) => (find(rs, "aws:efs/accessPoint:AccessPoint").props.rootDirectory.path = "//"),
      "no posix user": (rs) => delete find(rs, "aws:efs/accessPoint:AccessPoint").props.posixUser,
    },
    silent: {
      "the planned access point": () => undefined,
      "a deeper root": (rs) => (find(rs, "aws:efs/accessPoint:AccessPoint").props.rootDirectory.path = "/models/vision/"),
    },
  },
  {
    rule: "serving-volumes-read-only",
    base: "staging",
    fires: {
      "the StatefulSet's model mount read-write": (rs) =>
        delete tritonPod(rs).containers[0].volumeMounts.find((m: { name: string }) => m.name === "model-repository").readOnly,
      "a Triton Deployment mounting a CSI volume read-write": (rs) =>
        tritonAs(rs, "Deployment", "triton", (p) => {
          p.volumes.push({ name: "scratch", csi: { driver: "efs.csi.aws.com" } });
          p.containers[0].volumeMounts.push({ name: "scratch", mountPath: "/scratch" });
        }),
    },
    silent: {
      "the planned mounts": () => undefined,
      "a read-write emptyDir cache": (rs) => (tritonPod(rs).containers[0].volumeMounts.find((m: { name: string }) => m.name === "tmp").readOnly = false),
    },
  },
  {
    rule: "triton-gpu-limits-equal-requests",
    fires: {
      "a Triton Deployment without a GPU limit": (rs) => tritonAs(rs, "Deployment", "triton", (p) => delete p.containers[0].resources.limits["nvidia.com/gpu"]),
      "a Triton Job requesting more GPUs than its limit": (rs) =>
        tritonAs(rs, "Job", "triton", (p) => (p.containers[0].resources.requests["nvidia.com/gpu"] = "2")),
    },
    silent: {
      "a Triton CronJob with equal GPUs": (rs) => tritonAs(rs, "CronJob"),
      "a Pod with the limit only": (rs) => tritonAs(rs, "Pod", "triton", (p) => delete p.containers[0].resources.requests["nvidia.com/gpu"]),
    },
  },
  {
    rule: "triton-real-flags",
    fires: {
      "a made-up flag in a Triton Pod": (rs) => tritonAs(rs, "Pod", "triton", (p) => p.containers[0].args.push("--log-format=json")),
      "a typo in a Deployment": (rs) => tritonAs(rs, "Deployment", "triton", (p) => p.containers[0].args.push("--model-contrl-mode=explicit")),
    },
    silent: { "the planned flags in a Job": (rs) => tritonAs(rs, "Job"), "the planned flags in a DaemonSet": (rs) => tritonAs(rs, "DaemonSet") },
  },
  // ---- the pack as properties (issue item 4): each channel, each spelling, each shape ----
  {
    rule: "aws-keys-never-reach-containers",
    fires: {
      "envFrom a Secret whose keys, with the prefix, are AWS key names, in a Triton Job": (rs) => {
        pushK8s(rs, "kubernetes:core/v1:Secret", {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "keys", namespace: "triton" },
          stringData: { KEY_ID: "x", TOKEN: "y" },
        });
        tritonAs(rs, "Job", "triton", (p) => (p.containers[0].envFrom = [{ prefix: "AWS_ACCESS_", secretRef: { name: "keys" } }]));
      },
      "envFrom a ConfigMap holding AWS_SECRET_ACCESS_KEY in the gateway's initContainer": (rs) => {
        pushK8s(rs, "kubernetes:core/v1:ConfigMap", {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "settings", namespace: "triton" },
          data: { AWS_SECRET_ACCESS_KEY: "z" },
        });
        gatewayPod(rs).initContainers = [{ name: "i", image: "x:1.0", envFrom: [{ configMapRef: { name: "settings" } }] }];
      },
      "a secret volume item named aws_secret_access_key (Secret outside the plan) in a CronJob": (rs) =>
        tritonAs(rs, "CronJob", "triton", (p) => {
          p.volumes.push({ name: "creds", secret: { secretName: "external", items: [{ key: "k", path: "aws_secret_access_key" }] } });
          p.containers[0].volumeMounts.push({ name: "creds", mountPath: "/var/run/creds", readOnly: true });
        }),
      "a projected volume that puts .aws/credentials in a Pod": (rs) =>
        tritonAs(rs, "Pod", "triton", (p) => {
          p.volumes.push({ name: "aws", projected: { sources: [{ secret: { name: "external", items: [{ key: "ini", path: "credentials" }] } }] } });
          p.containers[0].volumeMounts.push({ name: "aws", mountPath: "/home/triton-server/.aws", readOnly: true });
        }),
      "a whole stack Secret mounted in a Deployment, one of its keys named accessKeyId": (rs) => {
        pushK8s(rs, "kubernetes:core/v1:Secret", {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "s3", namespace: "triton" },
          stringData: { accessKeyId: "x" },
        });
        tritonAs(rs, "Deployment", "triton", (p) => {
          p.volumes.push({ name: "s3", secret: { secretName: "s3" } });
          p.containers[0].volumeMounts.push({ name: "s3", mountPath: "/etc/s3", readOnly: true });
        });
      },
    },
    silent: {
      "envFrom a ConfigMap of settings (keys not AWS key names), with a prefix": (rs) => {
        pushK8s(rs, "kubernetes:core/v1:ConfigMap", {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "settings", namespace: "triton" },
          data: { REGION: "us-east-1", LOG_LEVEL: "info" },
        });
        tritonAs(rs, "Deployment", "triton", (p) => (p.containers[0].envFrom = [{ prefix: "AWS_", configMapRef: { name: "settings" } }]));
      },
      "envFrom a Secret outside the plan (its keys unknown)": (rs) =>
        tritonAs(rs, "Job", "triton", (p) => (p.containers[0].envFrom = [{ secretRef: { name: "made-elsewhere" } }])),
      "a projected service-account token and a CA bundle": (rs) =>
        tritonAs(rs, "Pod", "triton", (p) => {
          p.volumes.push({
            name: "tok",
            projected: {
              sources: [
                { serviceAccountToken: { path: "token", audience: "sts.amazonaws.com" } },
                { configMap: { name: "ca", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              ],
            },
          });
          p.containers[0].volumeMounts.push({ name: "tok", mountPath: "/var/run/secrets/tokens", readOnly: true });
        }),
      "a Secret volume with AWS-named items that no container mounts at that subPath": (rs) =>
        tritonAs(rs, "Deployment", "triton", (p) => {
          p.volumes.push({
            name: "mixed",
            secret: {
              secretName: "external",
              items: [
                { key: "cfg", path: "app.yaml" },
                { key: "cert", path: "tls.crt" },
              ],
            },
          });
          p.containers[0].volumeMounts.push({ name: "mixed", mountPath: "/etc/app/app.yaml", subPath: "app.yaml", readOnly: true });
        }),
    },
  },
  {
    rule: "triton-explicit-model-control",
    fires: {
      "poll mode in a Triton Deployment": (rs) =>
        tritonAs(rs, "Deployment", "triton", (p) => {
          p.containers[0].args = p.containers[0].args
            .filter((a: string) => !a.startsWith("--load-model="))
            .map((a: string) => (a === "--model-control-mode=explicit" ? "--model-control-mode=POLL" : a));
        }),
      "explicit with --load-model=* in a Pod": (rs) =>
        tritonAs(rs, "Pod", "triton", (p) => {
          p.containers[0].args = [...p.containers[0].args.filter((a: string) => !a.startsWith("--load-model=")), "--load-model=*"];
        }),
      "explicit and poll both written in the StatefulSet": (rs) => tritonPod(rs).containers[0].args.push("--model-control-mode=poll"),
    },
    silent: {
      "model-control-mode=none (no load API; the repository as it is at start) in the StatefulSet": (rs) => {
        const c = tritonPod(rs).containers[0];
        c.args = c.args
          .filter((a: string) => !a.startsWith("--load-model="))
          .map((a: string) => (a.startsWith("--model-control-mode=") ? "--model-control-mode=none" : a));
      },
      "no --model-control-mode at all (upstream default none) in a Job": (rs) =>
        tritonAs(rs, "Job", "triton", (p) => {
          p.containers[0].args = p.containers[0].args.filter((a: string) => !a.startsWith("--load-model=") && !a.startsWith("--model-control-mode="));
        }),
      "EXPLICIT in capitals with named models in a CronJob": (rs) =>
        tritonAs(rs, "CronJob", "triton", (p) => {
          p.containers[0].args = p.containers[0].args.map((a: string) => (a === "--model-control-mode=explicit" ? "--model-control-mode=EXPLICIT" : a));
        }),
    },
  },
  {
    rule: "gpu-node-role-least-privilege",
    fires: {
      "a customer managed policy named AmazonEKSWorkerNodePolicy on the node role": (rs) =>
        (find(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").props.policyArn = "arn:aws:iam::123456789012:policy/AmazonEKSWorkerNodePolicy"),
      "a hand-written attachment of AmazonS3FullAccess to the node role, outside the component": (rs) => {
        const a = structuredClone(find(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment"));
        rs.push({
          ...a,
          urn: `${a.urn}-extra`,
          name: "node-s3",
          parent: rs[0].urn,
          props: { ...a.props, policyArn: "arn:aws:iam::aws:policy/AmazonS3FullAccess" },
        });
      },
      "a managed policy by path trickery (service-role/AmazonEKSWorkerNodePolicy)": (rs) =>
        (find(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment").props.policyArn = "arn:aws:iam::aws:policy/service-role/AmazonEKSWorkerNodePolicy"),
      "managedPolicyArns on the node role itself": (rs) =>
        (find(rs, "aws:iam/role:Role", (r) => r.name === "gpu-node").props.managedPolicyArns = ["arn:aws:iam::aws:policy/AmazonEC2FullAccess"]),
    },
    silent: {
      "AmazonSSMManagedInstanceCore (Session Manager, AWS's alternative to SSH) on the node role": (rs) => {
        const a = structuredClone(find(rs, "aws:iam/rolePolicyAttachment:RolePolicyAttachment"));
        rs.push({ ...a, urn: `${a.urn}-ssm`, name: "gpu-node-ssm", props: { ...a.props, policyArn: "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore" } });
      },
      "the worker policies in the aws-us-gov partition": (rs) => {
        for (const r of rs.filter((x) => x.type === "aws:iam/rolePolicyAttachment:RolePolicyAttachment"))
          r.props.policyArn = String(r.props.policyArn).replace("arn:aws:", "arn:aws-us-gov:");
      },
      "a policy of another role that names the node role (iam:PassRole)": (rs) => {
        const node = find(rs, "aws:iam/role:Role", (r) => r.name === "gpu-node");
        const other = find(rs, "aws:iam/role:Role", (r) => r.name === "model-repository-publisher");
        const p = structuredClone(find(rs, "aws:iam/rolePolicy:RolePolicy", (r) => r.name === "model-repository-publisher"));
        rs.push({ ...p, urn: `${p.urn}-pass`, name: "publisher-pass", parent: rs[0].urn, dependencies: [other.urn, node.urn] });
      },
    },
  },
  {
    rule: "gateway-envoy-admin-no-service",
    fires: {
      "a Service whose named targetPort resolves to the gateway's admin container port": (rs) => {
        find(rs, DEP).props.spec.template.spec.containers[0].ports.push({ name: "admin", containerPort: 9901, protocol: "TCP" });
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "gw-admin", namespace: "triton" },
          spec: { selector: { "app.kubernetes.io/name": "triton-gateway" }, ports: [{ name: "web", port: 80, targetPort: "admin" }] },
        });
      },
      "a Service port 9901 without targetPort (it defaults to the port)": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "gw-admin", namespace: "triton" },
          spec: { selector: { "app.kubernetes.io/name": "triton-gateway" }, ports: [{ port: 9901 }] },
        }),
      "a Service by number on another Envoy (its image) in a DaemonSet, the admin moved to 19000 in the bootstrap": (rs) => {
        envoy(rs, (c) => (c.admin.address.socket_address.port_value = 19000));
        pushK8s(rs, "kubernetes:apps/v1:DaemonSet", {
          apiVersion: "apps/v1",
          kind: "DaemonSet",
          metadata: { name: "edge", namespace: "triton" },
          spec: {
            template: { metadata: { labels: { app: "edge" } }, spec: { containers: [{ name: "e", image: "docker.io/envoyproxy/envoy-distroless:v1.37.1" }] } },
          },
        });
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "edge", namespace: "triton" },
          spec: { selector: { app: "edge" }, ports: [{ port: 80, targetPort: 19000 }] },
        });
      },
    },
    silent: {
      "a Service on the gateway's envoy-metrics port by name": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "gw-metrics", namespace: "triton" },
          spec: { selector: { "app.kubernetes.io/name": "triton-gateway" }, ports: [{ name: "metrics", port: 9902, targetPort: "envoy-metrics" }] },
        }),
      "a Service targeting 9901 on pods that are not Envoy's": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "other", namespace: "triton" },
          spec: { selector: { app: "something-else" }, ports: [{ port: 9901 }] },
        }),
      "a gateway Service in another namespace than the gateway": (rs) =>
        pushK8s(rs, "kubernetes:core/v1:Service", {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "gw-admin", namespace: "elsewhere" },
          spec: { selector: { "app.kubernetes.io/name": "triton-gateway" }, ports: [{ port: 9901 }] },
        }),
    },
  },
  {
    rule: "triton-metrics-enabled",
    fires: {
      "--allow-metrics=false in the StatefulSet": (rs) => tritonPod(rs).containers[0].args.push("--allow-metrics=false"),
      "--allow-metrics=OFF in a Deployment": (rs) => tritonAs(rs, "Deployment", "triton", (p) => p.containers[0].args.push("--allow-metrics=OFF")),
      "a --metrics-port other than the metrics container port, in a Pod": (rs) =>
        tritonAs(
          rs,
          "Pod",
          "triton",
          (p) => (p.containers[0].args = p.containers[0].args.map((a: string) => (a === "--metrics-port=8002" ? "--metrics-port=9002" : a))),
        ),
      "a loopback --metrics-address in a Job": (rs) => tritonAs(rs, "Job", "triton", (p) => p.containers[0].args.push("--metrics-address=127.0.0.1")),
      "a loopback --http-address the metrics endpoint defaults to, in a CronJob": (rs) =>
        tritonAs(rs, "CronJob", "triton", (p) => p.containers[0].args.push("--http-address=127.0.0.1")),
      "counter_latencies=false (the HPA's queue time) in a DaemonSet": (rs) =>
        tritonAs(rs, "DaemonSet", "triton", (p) => p.containers[0].args.push("--metrics-config=counter_latencies=false")),
      "summary_latencies off (the p99 alert's series) in the StatefulSet": (rs) => {
        const c = tritonPod(rs).containers[0];
        c.args = c.args.filter((a: string) => a !== "--metrics-config=summary_latencies=true");
      },
    },
    silent: {
      "--allow-gpu-metrics=false and --allow-cpu-metrics=false (dcgm-exporter has the GPU's)": (rs) =>
        tritonPod(rs).containers[0].args.push("--allow-cpu-metrics=false"),
      "another metrics port declared as the metrics container port": (rs) => {
        const c = tritonPod(rs).containers[0];
        c.args = c.args.map((a: string) => (a === "--metrics-port=8002" ? "--metrics-port=9002" : a));
        c.ports.find((p: { name: string }) => p.name === "metrics").containerPort = 9002;
      },
      "--metrics-address=0.0.0.0 and a longer --metrics-interval-ms": (rs) =>
        tritonPod(rs).containers[0].args.push("--metrics-address=0.0.0.0", "--metrics-interval-ms=5000"),
      "a dev workload with metrics off (environments: staging, prod)": (rs) =>
        (tritonAs(rs, "Deployment", "triton", (p) => p.containers[0].args.push("--allow-metrics=false")).props.metadata.labels["triton-platform/environment"] =
          "dev"),
    },
  },
  {
    rule: "triton-metrics-enabled",
    base: "staging",
    fires: { "--allow-metrics=false in the staging StatefulSet": (rs) => tritonPod(rs).containers[0].args.push("--allow-metrics=false") },
    silent: { "the planned staging stack's Triton Job copy": (rs) => tritonAs(rs, "Job") },
  },
  {
    rule: "firewall-triton-ports-only-from-stack-groups",
    fires: {
      "a customer-managed prefix list on the GPU nodes' group, port 8000": (rs) =>
        gpuIngress(rs, "from-pl", { fromPort: 8000, toPort: 8000, prefixListId: "pl-0123456789abcdef0" }),
      "a foreign security group on the metrics port": (rs) =>
        gpuIngress(rs, "from-sg", { fromPort: 8002, toPort: 8002, referencedSecurityGroupId: "sg-0feedface0000001" }),
      "a private CIDR to every port (protocol -1)": (rs) => gpuIngress(rs, "from-vpc", { ipProtocol: "-1", cidrIpv4: "10.0.0.0/8" }),
      "an inline ingress of the GPU SecurityGroup from a foreign group": (rs) =>
        (find(rs, "aws:ec2/securityGroup:SecurityGroup", (r) => r.name === "gpu-nodes").props.ingress = [
          { protocol: "tcp", fromPort: 8000, toPort: 8001, securityGroups: ["sg-0feedface0000002"] },
        ]),
      "a legacy SecurityGroupRule on the cluster security group from a prefix list": (rs) =>
        rs.push(
          recorded("aws:ec2/securityGroupRule:SecurityGroupRule", "legacy", {
            type: "ingress",
            protocol: "tcp",
            fromPort: 8000,
            toPort: 8002,
            securityGroupId: "sg-0c1a5e0000000000c",
            prefixListIds: ["pl-0aaaaaaaaaaaaaaaa"],
          }),
        ),
    },
    silent: {
      "a SecurityGroup the stack creates, admitted to 8000": (rs) => {
        const gpu = find(rs, "aws:ec2/securityGroup:SecurityGroup", (r) => r.name === "gpu-nodes");
        const mine = recorded("aws:ec2/securityGroup:SecurityGroup", "batch-clients", { vpcId: "vpc-0fa1e0000000000aa" });
        rs.push(mine);
        rs.push({
          ...recorded("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "from-batch", {
            ipProtocol: "tcp",
            fromPort: 8000,
            toPort: 8000,
            securityGroupId: gpuSg(rs),
            referencedSecurityGroupId: "batch-clients-id",
          }),
          dependencies: [gpu.urn, mine.urn],
        });
      },
      "a prefix list on the GPU nodes' group for another port (node-exporter 9100)": (rs) =>
        gpuIngress(rs, "pl-9100", { fromPort: 9100, toPort: 9100, prefixListId: "pl-0123456789abcdef0" }),
      "a CIDR on the gateway load balancer's 8000 (the gateway's port, not Triton's)": () => undefined,
    },
  },
  {
    rule: "firewall-triton-metrics-only-from-monitoring",
    fires: {
      "a namespaceSelector In with two namespaces": (rs) =>
        (find(
          rs,
          "kubernetes:networking.k8s.io/v1:NetworkPolicy",
          (r) => r.props.metadata.name === "triton-metrics-from-prometheus",
        ).props.spec.ingress[0].from[0].namespaceSelector = {
          matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["monitoring", "default"] }],
        }),
      "a namespaceSelector with only Exists": (rs) =>
        (find(
          rs,
          "kubernetes:networking.k8s.io/v1:NetworkPolicy",
          (r) => r.props.metadata.name === "triton-metrics-from-prometheus",
        ).props.spec.ingress[0].from[0].namespaceSelector = {
          matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "Exists" }],
        }),
      "a podSelector NotIn (everything but one app)": (rs) =>
        (find(
          rs,
          "kubernetes:networking.k8s.io/v1:NetworkPolicy",
          (r) => r.props.metadata.name === "triton-metrics-from-prometheus",
        ).props.spec.ingress[0].from[0].podSelector = {
          matchExpressions: [{ key: "app.kubernetes.io/name", operator: "NotIn", values: ["grafana"] }],
        }),
    },
    silent: {
      "the namespace and pod selectors written with matchExpressions In one value": (rs) => {
        const peer = find(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", (r) => r.props.metadata.name === "triton-metrics-from-prometheus").props.spec
          .ingress[0].from[0];
        peer.namespaceSelector = { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["monitoring"] }] };
        peer.podSelector = { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: ["prometheus"] }] };
      },
      "matchLabels narrowed further by an Exists expression": (rs) => {
        const peer = find(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", (r) => r.props.metadata.name === "triton-metrics-from-prometheus").props.spec
          .ingress[0].from[0];
        peer.namespaceSelector.matchExpressions = [{ key: "kubernetes.io/metadata.name", operator: "Exists" }];
        peer.podSelector.matchExpressions = [{ key: "app.kubernetes.io/instance", operator: "Exists" }];
      },
      "a policy whose podSelector cannot select Triton (NotIn triton)": (rs) =>
        np(rs, "others", {
          podSelector: { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "NotIn", values: ["triton"] }] },
          policyTypes: ["Ingress"],
          ingress: [{ ports: [{ port: 8002 }] }],
        }),
    },
  },
  {
    rule: "firewall-no-allow-all-to-triton",
    fires: {
      "an allow-all rule whose podSelector selects Triton by In": (rs) =>
        np(rs, "all-in", {
          podSelector: { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: ["triton", "other"] }] },
          policyTypes: ["Ingress"],
          ingress: [{ ports: [{ port: 8000 }] }],
        }),
    },
    silent: {
      "an allow-all rule whose podSelector excludes Triton (DoesNotExist on a Triton label)": (rs) =>
        np(rs, "not-triton", {
          podSelector: { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "DoesNotExist" }] },
          policyTypes: ["Ingress"],
          ingress: [{ ports: [{ port: 8000 }] }],
        }),
    },
  },
];

describe("rules stated as properties: fire in every shape, silent on reasonable variants", function () {
  this.timeout(60_000);
  for (const c of CASES) {
    describe(c.rule, () => {
      const base = async () => structuredClone((await plan(c.base ?? "prod")).resources);
      it(`is silent on the planned ${c.base ?? "prod"} stack`, async () =>
        assert.deepEqual(
          (await ruleViolations(c.rule, await base())).map((v) => v.message),
          [],
        ));
      for (const [what, edit] of Object.entries(c.fires)) {
        it(`fires on ${what}`, async () => {
          const rs = await base();
          edit(rs);
          const vs = await ruleViolations(c.rule, rs);
          assert.ok(vs.length > 0, `${c.rule} stayed silent`);
          for (const v of vs) assert.ok(v.path && v.message.includes(v.path) && !/hunter2|s3cret|nvapi-xyz/.test(v.message), JSON.stringify(v));
        });
      }
      for (const [what, edit] of Object.entries(c.silent)) {
        it(`stays silent on ${what}`, async () => {
          const rs = await base();
          edit(rs);
          assert.deepEqual(
            (await ruleViolations(c.rule, rs)).map((v) => v.message),
            [],
          );
        });
      }
    });
  }
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
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
]);
