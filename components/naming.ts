// Names and labels every component agrees on: the one place the platform's own
// conventions live (upstream names live in components/upstream/*).

/** The environments a stack can be; they pick production defaults and policy levels. */
export const ENVIRONMENTS = ["dev", "staging", "prod"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** What the standard labels and tags are made of. */
export interface StackIdentity {
  readonly environment: Environment;
  /** The Pulumi stack name. */
  readonly stack: string;
  /** Extra tags of the stack (config `tags`). */
  readonly tags: Readonly<Record<string, string>>;
}

export const PART_OF = "triton-platform";
/** Label carrying the stack's environment (dev | staging | prod); environment-specific policies read it. */
export const ENVIRONMENT_LABEL = "triton-platform/environment";

/** Labels on every Kubernetes object the stack creates (policy: k8s-standard-labels). */
export function standardLabels(cfg: Pick<StackIdentity, "environment">): Record<string, string> {
  return {
    "app.kubernetes.io/part-of": PART_OF,
    "app.kubernetes.io/managed-by": "pulumi",
    [ENVIRONMENT_LABEL]: cfg.environment,
  };
}

/** Tag carrying the stack's environment on AWS resources (provider defaultTags); environment-specific policies read it. */
export const ENVIRONMENT_TAG = "triton-platform:environment";

/** Tags on every AWS resource, applied through the AWS provider's defaultTags. */
export function standardTags(cfg: StackIdentity): Record<string, string> {
  return {
    ...cfg.tags,
    [ENVIRONMENT_TAG]: cfg.environment,
    "triton-platform:stack": cfg.stack,
    "managed-by": "pulumi",
  };
}

export const STANDARD_LABEL_KEYS = ["app.kubernetes.io/part-of", "app.kubernetes.io/managed-by", ENVIRONMENT_LABEL];
export const STANDARD_TAG_KEYS = [ENVIRONMENT_TAG, "triton-platform:stack", "managed-by"];
