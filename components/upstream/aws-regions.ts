// AWS regions and the availability zones of each: the facts aws:region, cluster.zones and
// every other region-valued key are checked against.
//
// Regions: the @pulumi/aws package's own `Region` enum (types/enums/index.js of the installed
// @pulumi/aws, 7.48.0), so the list moves with the provider the program deploys through.
//
// Zones: AWS's table of AZ IDs per region, "AWS Availability Zones",
// https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.md
// (as stored on 2026-12-01; the page's text dates from after November 2025). AWS documents AZ
// *IDs* (use1-az1), one physical place in every account, and that an AZ *name* is "its Region
// code followed by a letter identifier" (us-east-2a = use2-az1 in its own example). It lists no
// names. So each region below keeps its AZ IDs as AWS lists them, and the names accepted are
// the region code plus the letters a to the N-th, N being the highest AZ ID number listed.
//
// What the check can guarantee: a zone of another region (us-west-2c in us-east-1) and a
// letter beyond any zone AWS lists for the region (us-east-1z) are rejected, and a region the
// provider does not know (us-east-9) is. What it cannot: in AWS's oldest regions, accounts
// created before November 2025 get their own mapping of names to AZ IDs, and a constrained AZ
// may be missing from an account altogether (the same page, "Constrained Availability Zones"),
// so a name that passes may still be absent from, or a different place in, a given account
// (us-west-1: "Newer accounts can access two Availability Zones"). A letter can also pass where
// AWS skips an AZ ID number: ca-central-1 lists cac1-az1, cac1-az2 and cac1-az4, so
// ca-central-1c passes though no listed ID is its obvious match. Only the account knows:
// `aws ec2 describe-availability-zones --region <r>`; the subnet lookup of the GPU node group
// is where a real `pulumi up` finds out.
//
// Regions of @pulumi/aws's list that the page does not cover (the China, GovCloud, ISO and
// European Sovereign Cloud partitions) have no sourced zones here: they are valid regions for
// region-valued keys, but no zone of theirs is accepted for cluster.zones until a source for
// their zones is added to AZ_IDS (a zone made up from the region code would be the guess this
// module exists to avoid).
import { Region } from "@pulumi/aws/types/enums";

/** Every region @pulumi/aws knows (its `Region` enum), sorted. */
export const AWS_REGIONS: readonly string[] = Object.values(Region).sort();

const REGIONS = new Set(AWS_REGIONS);

export function isAwsRegion(x: unknown): x is string {
  return typeof x === "string" && REGIONS.has(x);
}

/** The page's AZ IDs per region (its North America, Africa, Asia Pacific, Europe, Middle East and South America tables). */
export const AZ_IDS: Readonly<Record<string, readonly string[]>> = {
  // North America ("Coming in 2026 | us-east-1 | Maryland" has no AZ ID yet, so no zone).
  "us-east-1": ["use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6"],
  "us-east-2": ["use2-az1", "use2-az2", "use2-az3"],
  "us-west-1": ["usw1-az1", "usw1-az2", "usw1-az3"],
  "us-west-2": ["usw2-az1", "usw2-az2", "usw2-az3", "usw2-az4"],
  "ca-central-1": ["cac1-az1", "cac1-az2", "cac1-az4"],
  "ca-west-1": ["caw1-az1", "caw1-az2", "caw1-az3"],
  "mx-central-1": ["mxc1-az1", "mxc1-az2", "mxc1-az3"],
  // Africa
  "af-south-1": ["afs1-az1", "afs1-az2", "afs1-az3"],
  // Asia Pacific
  "ap-east-1": ["ape1-az1", "ape1-az2", "ape1-az3"],
  "ap-east-2": ["ape2-az1", "ape2-az2", "ape2-az3"],
  "ap-northeast-1": ["apne1-az1", "apne1-az2", "apne1-az3", "apne1-az4"],
  "ap-northeast-2": ["apne2-az1", "apne2-az2", "apne2-az3", "apne2-az4"],
  "ap-northeast-3": ["apne3-az1", "apne3-az2", "apne3-az3"],
  "ap-south-1": ["aps1-az1", "aps1-az2", "aps1-az3"],
  "ap-south-2": ["aps2-az1", "aps2-az2", "aps2-az3"],
  "ap-southeast-1": ["apse1-az1", "apse1-az2", "apse1-az3"],
  "ap-southeast-2": ["apse2-az1", "apse2-az2", "apse2-az3"],
  "ap-southeast-3": ["apse3-az1", "apse3-az2", "apse3-az3"],
  "ap-southeast-4": ["apse4-az1", "apse4-az2", "apse4-az3"],
  "ap-southeast-5": ["apse5-az1", "apse5-az2", "apse5-az3"],
  "ap-southeast-6": ["apse6-az1", "apse6-az2", "apse6-az3"],
  "ap-southeast-7": ["apse7-az1", "apse7-az2", "apse7-az3"],
  // Europe
  "eu-central-1": ["euc1-az1", "euc1-az2", "euc1-az3"],
  "eu-central-2": ["euc2-az1", "euc2-az2", "euc2-az3"],
  "eu-north-1": ["eun1-az1", "eun1-az2", "eun1-az3"],
  "eu-south-1": ["eus1-az1", "eus1-az2", "eus1-az3"],
  "eu-south-2": ["eus2-az1", "eus2-az2", "eus2-az3"],
  "eu-west-1": ["euw1-az1", "euw1-az2", "euw1-az3"],
  "eu-west-2": ["euw2-az1", "euw2-az2", "euw2-az3", "euw2-az4"],
  "eu-west-3": ["euw3-az1", "euw3-az2", "euw3-az3"],
  // Middle East
  "il-central-1": ["ilc1-az1", "ilc1-az2", "ilc1-az3"],
  "me-central-1": ["mec1-az1", "mec1-az2", "mec1-az3"],
  "me-south-1": ["mes1-az1", "mes1-az2", "mes1-az3"],
  // South America
  "sa-east-1": ["sae1-az1", "sae1-az2", "sae1-az3"],
};

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** The zone names accepted for `region`: its code plus a letter up to its highest AZ ID number ([] when none are sourced). */
export function zonesOf(region: string): readonly string[] {
  const ids = Object.hasOwn(AZ_IDS, region) ? AZ_IDS[region] : [];
  const highest = Math.max(0, ...ids.map((id) => Number(id.slice(id.lastIndexOf("az") + 2))));
  return [...LETTERS.slice(0, highest)].map((letter) => region + letter);
}

const ZONE_REGION = new Map(Object.keys(AZ_IDS).flatMap((r) => zonesOf(r).map((z) => [z, r] as const)));

/** The region whose zone `zone` is, if it is a zone of the table. */
export function regionOfZone(zone: string): string | undefined {
  return ZONE_REGION.get(zone);
}

/** Every zone name of the table, sorted. */
export const AWS_ZONES: readonly string[] = [...ZONE_REGION.keys()].sort();
