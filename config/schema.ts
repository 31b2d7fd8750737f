// The stack configuration: every `triton-platform:*` key, its rule and its default.
// Each top-level key is a section; later components add theirs to `sections` below.
import { z } from "zod";
import { dnsLabel, list, oneOf, pattern, section } from "./rules";
import { gpuCrossChecks, gpuSection } from "./gpu";
import { modelRepositorySection } from "./model-repository";

export const ENVIRONMENTS = ["dev", "staging", "prod"] as const;

const awsZone = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/, "must be an AWS availability zone such as us-east-1a");
const tagValue = pattern(/^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u, "must be an AWS tag value (at most 256 letters, digits, spaces and _.:/=+-@)");

export const sections = {
  /** Which environment this stack is; drives policy levels and production defaults. */
  environment: oneOf(ENVIRONMENTS),
  /** The existing EKS cluster the platform is installed into. */
  cluster: section({
    /** EKS cluster name, looked up with aws.eks.getCluster. */
    name: pattern(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, "must be an EKS cluster name (letters, digits, '-' and '_', at most 100 characters)"),
    /** Availability zones the GPU capacity spans. */
    zones: list(awsZone, { min: 1, what: "zone" }).refine((zs) => new Set(zs).size === zs.length, {
      error: "must not repeat a zone",
    }),
  }),
  /** Extra tags for every AWS resource (on top of the standard ones). */
  tags: z.record(
    pattern(/^(?!aws:)[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$/u, "must be an AWS tag key (1-128 characters, not starting with 'aws:')"),
    tagValue,
    { error: "must be a mapping of tag keys to values" },
  ).default({}),
  /** The Kubernetes side of the serving platform. */
  triton: section({
    /** Namespace the Triton serving groups run in. @default "triton" */
    namespace: dnsLabel.default("triton"),
    /**
     * Serving groups. Skeleton: the serving component owns the full schema of a group;
     * other components rely only on `name` and on whether `canary` is set.
     */
    groups: list(z.looseObject({ name: dnsLabel, canary: z.looseObject({}).optional() }), { min: 1, what: "serving group" }),
  }),
  /** GPU node group and NVIDIA GPU Operator (config/gpu.ts). */
  gpu: gpuSection,
  /** Where Triton's models live and how it reads them (components/model-repository). */
  modelRepository: modelRepositorySection,
};

// Checks that span sections; each names the key it is about.
export const stackConfigSchema = z.strictObject(sections).superRefine(gpuCrossChecks);

/** The validated, defaulted configuration that index.ts hands to the components. */
export type StackConfig = z.output<typeof stackConfigSchema> & {
  /** The Pulumi stack name (dev, staging, prod, …). */
  stack: string;
  /** aws:region of the stack. */
  region: string;
};

// Keys of other namespaces that this program reads (and so validates).
export const awsRegion = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, "must be an AWS region such as us-east-1");
