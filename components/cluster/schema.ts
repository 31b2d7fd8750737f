// Settings of the existing EKS cluster the platform is installed into, and of the stack as a
// whole (environment, extra tags): the keys every other component's resources depend on.
import * as v from "valibot";
import { doc, mapping, oneOf, pattern, section, uniqueList } from "../../lib/schema";
import { AWS_REGIONS, isAwsRegion, zonesOf } from "../upstream/aws-regions";

import { ENVIRONMENTS } from "../naming";

export { ENVIRONMENTS, type Environment } from "../naming";

const AWS_REGION_RULE = `must be an AWS region (${AWS_REGIONS.join(", ")})`;

/**
 * An AWS region: one of @pulumi/aws's Region list (components/upstream/aws-regions.ts). aws:region
 * and every other region-valued key (modelRepository.s3.bucketRegion) use this one schema.
 */
export const awsRegion = v.pipe(
  v.string(AWS_REGION_RULE),
  v.check((x: string) => isAwsRegion(x), AWS_REGION_RULE),
);

// The shape of a zone name only; whether it is a zone of aws:region is the rule below, which
// needs the region (config/cross-section.ts runs it with aws:region).
const awsZone = pattern(/^[a-z]{2,4}(-[a-z]+)+-\d[a-z]$/, "must be an AWS availability zone such as us-east-1a");

/** The rule a zone of `region` must meet, with the zones it accepts (components/upstream/aws-regions.ts). */
export function zoneOfRegionRule(region: string): string {
  const zones = zonesOf(region);
  return zones.length > 0
    ? `must be an availability zone of aws:region ${region} (${zones.join(", ")})`
    : `must be an availability zone of aws:region ${region}, and no zone of ${region} is sourced in components/upstream/aws-regions.ts (add its zones there with their source)`;
}

/** Problems of `zones` against `region`: each zone not of that region, with its index. */
export function zonesNotOfRegion(zones: readonly string[], region: string): { index: number; rule: string }[] {
  const own = new Set(zonesOf(region));
  return zones.flatMap((z, index) => (own.has(z) ? [] : [{ index, rule: zoneOfRegionRule(region) }]));
}
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
