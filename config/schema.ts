// The stack configuration: every `triton-platform:*` key, its rule and its default.
// Each top-level key is a section; later components add theirs to `sections` below.
import * as v from "valibot";
import { monitoringSettings } from "../components/monitoring/schema";
import { mapping, oneOf, pattern, refined, section, uniqueList } from "../lib/schema";
import { gpuCrossChecks, gpuSection } from "./gpu";
import { modelRepositorySection } from "./model-repository";
import { monitoringCrossChecks } from "./monitoring";
import { gatewayCrossChecks, gatewaySection } from "./gateway";
import { tritonCrossChecks, tritonSection } from "./triton";

export const ENVIRONMENTS = ["dev", "staging", "prod"] as const;

const awsZone = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/, "must be an AWS availability zone such as us-east-1a");
const TAGS_RULE = "must be a mapping of tag keys to values";
const tagValue = pattern(/^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u, "must be an AWS tag value (at most 256 letters, digits, spaces and _.:/=+-@)");

export const sections = {
  /** Which environment this stack is; drives policy levels and production defaults. */
  environment: oneOf(ENVIRONMENTS),
  /** The existing EKS cluster the platform is installed into. */
  cluster: section({
    /** EKS cluster name, looked up with aws.eks.getCluster. */
    name: pattern(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, "must be an EKS cluster name (letters, digits, '-' and '_', at most 100 characters)"),
    /** Availability zones the GPU capacity spans. */
    zones: uniqueList(awsZone, { min: 1, what: "zone" }, "must not repeat a zone"),
  }),
  /** Extra tags for every AWS resource (on top of the standard ones). */
  tags: v.optional(
    v.pipe(
      mapping(TAGS_RULE),
      v.record(
        pattern(/^(?!aws:)[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$/u, "must be an AWS tag key (1-128 characters, not starting with 'aws:')"),
        tagValue,
        TAGS_RULE,
      ),
    ),
    {},
  ),
  /** The Kubernetes side of the serving platform: namespace and serving groups (config/triton.ts). */
  triton: tritonSection,
  /** GPU node group and NVIDIA GPU Operator (config/gpu.ts). */
  gpu: gpuSection,
  /** Where Triton's models live and how it reads them (components/model-repository). */
  modelRepository: modelRepositorySection,
  /** Observability: kube-prometheus-stack, scrape, alert rules, dashboards, prometheus-adapter. */
  monitoring: v.optional(monitoringSettings, {}),
  /** The Envoy gateway (mirroring to canaries) and who may reach it (config/gateway.ts). */
  gateway: v.optional(gatewaySection, {}),
};

// Checks that span sections; each names the key it is about.
export const stackConfigSchema = refined(section(sections), gpuCrossChecks, monitoringCrossChecks, gatewayCrossChecks, tritonCrossChecks);

/** The validated, defaulted configuration that index.ts hands to the components. */
export type StackConfig = v.InferOutput<typeof stackConfigSchema> & {
  /** The Pulumi stack name (dev, staging, prod, …). */
  stack: string;
  /** aws:region of the stack. */
  region: string;
};

// Keys of other namespaces that this program reads (and so validates).
export const awsRegion = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, "must be an AWS region such as us-east-1");
