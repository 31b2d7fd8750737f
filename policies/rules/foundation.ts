// Rules the foundation makes enforceable: tagging, labelling, and explicit providers.
import { STANDARD_LABEL_KEYS, STANDARD_TAG_KEYS } from "../../components/naming";
import { propsOf, metadataOf } from "./props";
import { NONE, resourceRule, type Rule } from "./rule";
import { AWS_PROVIDER } from "./types";
import { decodeJson, isK8sObject, usesDefaultProvider } from "./util";

export const k8sStandardLabels = resourceRule({
  name: "k8s-standard-labels",
  domain: "foundation",
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

export const foundationRules: Rule[] = [k8sStandardLabels, awsProviderDefaultTags, awsExplicitProvider, k8sExplicitProvider];
