// Rules the foundation makes enforceable: tagging, labelling, and explicit providers.
import { STANDARD_LABEL_KEYS, STANDARD_TAG_KEYS } from "../../components/naming";
import { decodeJson, isK8sObject, reportAt, usesDefaultProvider, type Rule } from "./util";

export const foundationRules: Rule[] = [
  {
    name: "k8s-standard-labels",
    domain: "foundation",
    description: "Every Kubernetes object carries the stack's standard labels (part-of, managed-by, environment).",
    prevents: "Objects nobody can attribute to a stack or environment, which cost-allocation, clean-up and NetworkPolicy selectors then miss.",
    remediationSteps: "Build metadata.labels from standardLabels(config) in components/naming.ts.",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!isK8sObject(args.type, args.props)) return;
      const labels: Record<string, string> = args.props.metadata?.labels ?? {};
      const missing = STANDARD_LABEL_KEYS.filter((k) => !labels[k]);
      if (missing.length) {
        reportAt(report, { path: "metadata.labels", value: labels }, `${args.props.kind} ${args.props.metadata?.name ?? args.name}: metadata.labels lacks ${missing.join(", ")}`);
      }
    },
  },
  {
    name: "aws-provider-default-tags",
    domain: "foundation",
    description: "Every AWS provider applies the standard tags to all resources through defaultTags.",
    prevents: "Untagged GPU capacity and buckets: no cost allocation per environment, no owner to ask before deleting.",
    remediationSteps: "Create the AWS provider with defaultTags: { tags: standardTags(config) } (components/cluster.ts).",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (args.type !== "pulumi:providers:aws") return;
      const tags: Record<string, string> = decodeJson(args.props.defaultTags)?.tags ?? {};
      const missing = STANDARD_TAG_KEYS.filter((k) => !tags[k]);
      if (missing.length) reportAt(report, { path: "defaultTags.tags", value: tags }, `AWS provider ${args.name}: defaultTags.tags lacks ${missing.join(", ")}`);
    },
  },
  {
    name: "aws-explicit-provider",
    domain: "foundation",
    description: "AWS resources are created through the stack's own provider, not the ambient default provider.",
    prevents: "Resources created in whatever account/region the shell's credentials point at, without the standard tags.",
    remediationSteps: "Pass { provider: cluster.aws } (or a parent that has it) when creating AWS resources.",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!args.type.startsWith("aws:")) return;
      if (usesDefaultProvider(args.provider)) {
        const value = args.provider?.name ?? null;
        reportAt(report, { path: "provider", value }, `${args.type} ${args.name}: provider is ${JSON.stringify(value)}, the default AWS provider (ambient credentials and region)`);
      }
    },
  },
  {
    name: "k8s-explicit-provider",
    domain: "foundation",
    description: "Kubernetes resources are created through the provider for the stack's EKS cluster.",
    prevents: "Applying prod manifests to whichever cluster the local kubeconfig's current context names.",
    remediationSteps: "Pass { provider: cluster.k8s } (or a parent that has it) when creating Kubernetes resources.",
    enforcementLevel: "advisory",
    validateResource: (args, report) => {
      if (!args.type.startsWith("kubernetes:")) return;
      if (usesDefaultProvider(args.provider)) {
        const value = args.provider?.name ?? null;
        reportAt(report, { path: "provider", value }, `${args.type} ${args.name}: provider is ${JSON.stringify(value)}, the default Kubernetes provider (ambient kubeconfig)`);
      }
    },
  },
];
