// Rules the foundation makes enforceable: tagging, labelling, explicit providers, and one
// pinning rule for every Helm release.
import { STANDARD_LABEL_KEYS, STANDARD_TAG_KEYS } from "../../components/naming";
import { EFS_CSI_CHART } from "../../components/upstream/aws-efs-csi";
import { GPU_OPERATOR_CHART } from "../../components/upstream/gpu-operator";
import { KUBE_PROMETHEUS_STACK_CHART } from "../../components/upstream/kube-prometheus-stack";
import { PROMETHEUS_ADAPTER_CHART } from "../../components/upstream/prometheus-adapter";
import { EXACT_VERSION } from "../../lib/version";
import { propsOf, metadataOf } from "./props";
import { NONE, resourceRule, type Finding, type Rule } from "./rule";
import { AWS_PROVIDER, HELM_RELEASE } from "./types";
import { decodeJson, isK8sObject, show, usesDefaultProvider } from "./util";

export const k8sStandardLabels = resourceRule({
  name: "k8s-standard-labels",
  domain: "foundation",
  configKey: "tags",
  description: "Every Kubernetes object carries the stack's standard labels (part-of, managed-by, environment).",
  prevents: "Objects nobody can attribute to a stack or environment, which cost-allocation, clean-up and NetworkPolicy selectors then miss.",
  remediationSteps: "Build metadata.labels from standardLabels(config) in components/naming.ts.",
  check: (r) => {
    if (!isK8sObject(r.type, r.props)) return NONE;
    const meta = metadataOf(r);
    const labels = meta.labels ?? {};
    const missing = STANDARD_LABEL_KEYS.filter((k) => !labels[k]);
    if (!missing.length) return NONE;
    return [{ path: "metadata.labels", value: labels, message: `${r.props.kind} ${meta.name ?? r.name}: metadata.labels lacks ${missing.join(", ")}` }];
  },
});

export const awsProviderDefaultTags = resourceRule({
  name: "aws-provider-default-tags",
  domain: "foundation",
  configKey: "tags",
  description: "Every AWS provider applies the standard tags to all resources through defaultTags.",
  prevents: "Untagged GPU capacity and buckets: no cost allocation per environment, no owner to ask before deleting.",
  remediationSteps: "Create the AWS provider with defaultTags: { tags: standardTags(config) } (components/cluster/index.ts).",
  check: (r) => {
    const provider = propsOf(r, AWS_PROVIDER);
    if (!provider) return NONE;
    const tags: Record<string, string> = decodeJson(provider.defaultTags)?.tags ?? {};
    const missing = STANDARD_TAG_KEYS.filter((k) => !tags[k]);
    if (!missing.length) return NONE;
    return [{ path: "defaultTags.tags", value: tags, message: `AWS provider ${r.name}: defaultTags.tags lacks ${missing.join(", ")}` }];
  },
});

export const awsExplicitProvider = resourceRule({
  name: "aws-explicit-provider",
  domain: "foundation",
  description: "AWS resources are created through the stack's own provider, not the ambient default provider.",
  prevents: "Resources created in whatever account/region the shell's credentials point at, without the standard tags.",
  remediationSteps: "Pass { provider: cluster.aws } (or a parent that has it) when creating AWS resources.",
  check: (r) => {
    if (!r.type.startsWith("aws:") || !usesDefaultProvider(r.provider)) return NONE;
    const value = r.provider?.name ?? null;
    return [
      {
        path: "provider",
        value,
        message: `${r.type} ${r.name}: provider is ${JSON.stringify(value)}, the default AWS provider (ambient ` + `credentials and region)`,
      },
    ];
  },
});

export const k8sExplicitProvider = resourceRule({
  name: "k8s-explicit-provider",
  domain: "foundation",
  description: "Kubernetes resources are created through the provider for the stack's EKS cluster.",
  prevents: "Applying prod manifests to whichever cluster the local kubeconfig's current context names.",
  remediationSteps: "Pass { provider: cluster.k8s } (or a parent that has it) when creating Kubernetes resources.",
  check: (r) => {
    if (!r.type.startsWith("kubernetes:") || !usesDefaultProvider(r.provider)) return NONE;
    const value = r.provider?.name ?? null;
    return [
      {
        path: "provider",
        value,
        message: `${r.type} ${r.name}: provider is ${JSON.stringify(value)}, the default Kubernetes provider ` + `(ambient kubeconfig)`,
      },
    ];
  },
});

/** Charts whose repository the stack pins in an upstream module: a release of one must come from that repository. */
const KNOWN_CHARTS = [GPU_OPERATOR_CHART, KUBE_PROMETHEUS_STACK_CHART, PROMETHEUS_ADAPTER_CHART, EFS_CSI_CHART];

export const helmReleasePinned = resourceRule({
  name: "helm-release-pinned",
  domain: "foundation",
  description:
    "Every Helm release pins an exact chart version (1.2.3 or v1.2.3, no range, no latest) and names its https:// or oci:// repository; a chart " +
    "the stack knows (components/upstream) comes from its upstream repository.",
  prevents:
    "A chart that upgrades itself (new CRDs, renamed values, new driver or alert defaults) on the next `pulumi up`, or resolves from whatever repository a laptop has configured.",
  remediationSteps: "Create releases with components/helm.ts helmRelease() from the chart's upstream module, with an exact version setting.",
  check: (r) => {
    const release = propsOf(r, HELM_RELEASE);
    if (!release) return NONE;
    const out: Finding[] = [];
    const where = `Helm release ${r.name} (chart ${String(release.chart)})`;
    const chart = String(release.chart ?? "");
    // An OCI chart reference may carry its version as a tag: oci://registry/chart:1.2.3.
    const version = release.version ?? (chart.startsWith("oci://") ? chart.split(":").pop() : undefined);
    if (typeof version !== "string" || !EXACT_VERSION.test(version)) {
      out.push({
        path: "version",
        value: release.version,
        message: `${where}: version is ${show(release.version)}, must be an exact chart version such as 1.2.3`,
      });
    }
    const repo = release.repositoryOpts?.repo;
    const known = KNOWN_CHARTS.find((c) => c.chart === chart);
    if (!chart.startsWith("oci://")) {
      if (typeof repo !== "string" || !/^(https|oci):\/\/\S+$/.test(repo)) {
        out.push({
          path: "repositoryOpts.repo",
          value: repo,
          message: `${where}: repositoryOpts.repo is ${show(repo)}, must be the chart's https:// or oci:// repository`,
        });
      } else if (known && repo.replace(/\/+$/, "") !== known.repo.replace(/\/+$/, "")) {
        out.push({
          path: "repositoryOpts.repo",
          value: repo,
          message: `${where}: repositoryOpts.repo is ${show(repo)}, not the chart's upstream ${known.repo}`,
        });
      }
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [k8sStandardLabels, awsProviderDefaultTags, awsExplicitProvider, k8sExplicitProvider, helmReleasePinned];
