// Settings of the existing EKS cluster the platform is installed into, and of the stack as a
// whole (environment, extra tags): the keys every other component's resources depend on.
import * as v from "valibot";
import { doc, mapping, oneOf, pattern, section, uniqueList } from "../../lib/schema";

/** The environments a stack can be; they pick production defaults and policy levels. */
export const ENVIRONMENTS = ["dev", "staging", "prod"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** aws:region (a key of the aws namespace this program reads, and so validates). */
export const awsRegion = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, "must be an AWS region such as us-east-1");
const awsZone = pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/, "must be an AWS availability zone such as us-east-1a");
const clusterName = pattern(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, "must be an EKS cluster name (letters, digits, '-' and '_', at most 100 characters)");

export const environmentSetting = doc(oneOf(ENVIRONMENTS), "Which environment this stack is; drives policy levels and production defaults.");

export const clusterSettings = doc(
  section({
    name: doc(clusterName, "The existing EKS cluster's name, looked up with aws.eks.getCluster."),
    zones: doc(
      uniqueList(awsZone, { min: 1, what: "zone" }, "must not repeat a zone"),
      "Availability zones the GPU capacity spans (a private subnet is looked up in each); prod uses three.",
    ),
  }),
  "The existing EKS cluster the platform is installed into.",
);

const TAGS_RULE = "must be a mapping of tag keys to values";
const tagKey = pattern(/^(?!aws:)[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$/u, "must be an AWS tag key (1-128 characters, not starting with 'aws:')");
const tagValue = pattern(/^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u, "must be an AWS tag value (at most 256 letters, digits, spaces and _.:/=+-@)");

export const tagsSetting = doc(
  v.optional(v.pipe(mapping(TAGS_RULE), v.record(tagKey, tagValue, TAGS_RULE)), {}),
  "Extra AWS tags on every resource, on top of triton-platform:environment, triton-platform:stack and managed-by; never secure:.",
);

/** What the Cluster component itself resolves (a direct caller gets the same rules). */
export const clusterArgsSettings = section({ name: clusterName, region: awsRegion });
