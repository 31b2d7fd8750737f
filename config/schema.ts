// The stack configuration: every `triton-platform:*` key, its rule and its default.
// Each top-level key is a section; later components add theirs to `sections` below.
import * as v from "valibot";
import { refined, section } from "../lib/schema";
import { clusterSettings, environmentSetting, tagsSetting } from "../components/cluster/schema";
import { monitoringSettings } from "../components/monitoring/schema";
import { gpuSettings } from "../components/gpu/schema";
import { modelRepositorySettings } from "../components/model-repository/schema";
import { gatewaySettings } from "../components/gateway/schema";
import { tritonSection } from "../components/triton/schema";
import { storageSettings } from "../components/storage/schema";
import { autoscalerSettings } from "../components/autoscaler/schema";
import { CROSS_SECTION_RULES } from "./cross-section";

export { ENVIRONMENTS } from "../components/cluster/schema";

export const sections = {
  environment: environmentSetting,
  cluster: clusterSettings,
  tags: tagsSetting,
  triton: tritonSection,
  gpu: gpuSettings,
  autoscaler: v.optional(autoscalerSettings, {}),
  modelRepository: modelRepositorySettings,
  storage: v.optional(storageSettings, {}),
  /** Observability: kube-prometheus-stack, scrape, alert rules, dashboards, prometheus-adapter. */
  monitoring: v.optional(monitoringSettings, {}),
  gateway: v.optional(gatewaySettings, {}),
};

/** Every section, each checked by its own component's schema. */
export const sectionsSchema = section(sections);

// Then the rules that span sections (config/cross-section.ts); each names the key it is about.
export const stackConfigSchema = refined(sectionsSchema, ...CROSS_SECTION_RULES.map((r) => r.check));

/** The validated, defaulted configuration that index.ts hands to the components. */
export type StackConfig = v.InferOutput<typeof stackConfigSchema> & {
  /** The Pulumi stack name (dev, staging, prod, …). */
  stack: string;
  /** aws:region of the stack. */
  region: string;
};

// Keys of other namespaces that this program reads (and so validates).
export { awsRegion } from "../components/cluster/schema";

/** The docs page of each section (its key table is generated there by npm run docs); "" for none. */
export const SECTION_PAGES: Record<keyof typeof sections, string> = {
  environment: "",
  cluster: "",
  tags: "",
  triton: "docs/triton-serving.md",
  gpu: "docs/gpu-nodes.md",
  autoscaler: "docs/autoscaler.md",
  modelRepository: "docs/model-repository.md",
  storage: "docs/storage.md",
  monitoring: "docs/monitoring.md",
  gateway: "docs/gateway-and-firewall.md",
};
