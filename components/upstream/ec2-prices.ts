// On-demand prices of the GPU instance types of ec2-gpu-instances.ts: USD per instance-hour,
// Linux, shared tenancy, per region. Pure data; the cost estimate (config/cost.ts) multiplies
// node counts by them. A type or region that is not below has no price we could source: the
// plan says "price unknown" for it rather than guessing.
//
// Source, read 2026-12-01: AWS's Price List API (AmazonEC2 offer, OnDemand terms) as published by
// instances.vantage.sh (vantage-sh/ec2instances.info, which builds its `instances.json` from the
// `pricing` API: its README's IAM policy grants pricing:*), field pricing.<region>.linux.ondemand,
// in the per-family extract of tsaol/aws-gpu `data/<family>_instances.js` (`onDemand`, converted by
// scripts/utils.py convert_pricing from that field):
// - every family at commit 77fcd9fe (2026-01-21; "Last updated: 2026-01-21"), read with git and
//   extracted by a script, not by hand;
// - g7e from the 2026-08-26 refresh (commit 299375be), which added ap-northeast-1, eu-central-1
//   and us-west-2 for it; its us-east values equal the January ones. At that refresh g4dn, g6,
//   g6e, p5, p5en and p6-b200 were read again and agree for every region below.
// AWS's own pricing page (https://aws.amazon.com/ec2/pricing/on-demand/) renders its table with
// JavaScript and has no stored copy here; one independent check: g5.xlarge in us-east-1 at
// $1.006/h, as a June 2026 FinOps article (factualminds.com, "Amazon EC2 On-Demand Pricing")
// states it.
// Regions: those of the example stacks (us-east-1, us-west-2) and the common GPU regions. A type
// missing in a region is not offered on demand there in the source (g6, g6e, gr6 and p5 are not
// in eu-west-1 in it; p5e.48xlarge has no on-demand price at all: Capacity Blocks only).

/** The regions this table covers (a region not listed has no prices: "price unknown"). */
export const PRICED_REGIONS = ["us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"] as const;
export type PricedRegion = (typeof PRICED_REGIONS)[number];

/**
 * Hours in a month for a monthly price: 730 = 24 × 365 / 12, an average month. The convention of cost tools (infracost's
 * HourlyQuantity × 730, cycloidio/terracost issue #10: "730 hours in a month"); a 31-day month bills 744 h, February 672 h.
 */
export const HOURS_PER_MONTH = 730;

/** Where the prices come from and when they were read: printed beside every cost. */
export const EC2_PRICES_SOURCE = {
  what: "EC2 on-demand, Linux, shared tenancy, USD",
  source: "AWS Price List API via instances.vantage.sh",
  asOf: "2026-01-21 (g7e 2026-08-26)",
} as const;

/** USD per instance-hour, on demand, Linux. */
export const EC2_ON_DEMAND_USD_PER_HOUR: Readonly<Record<string, Readonly<Partial<Record<PricedRegion, number>>>>> = {
  "g4dn.xlarge": { "us-east-1": 0.526, "us-east-2": 0.526, "us-west-2": 0.526, "eu-west-1": 0.587, "eu-central-1": 0.658, "ap-northeast-1": 0.71 },
  "g4dn.2xlarge": { "us-east-1": 0.752, "us-east-2": 0.752, "us-west-2": 0.752, "eu-west-1": 0.838, "eu-central-1": 0.94, "ap-northeast-1": 1.015 },
  "g4dn.4xlarge": { "us-east-1": 1.204, "us-east-2": 1.204, "us-west-2": 1.204, "eu-west-1": 1.342, "eu-central-1": 1.505, "ap-northeast-1": 1.625 },
  "g4dn.8xlarge": { "us-east-1": 2.176, "us-east-2": 2.176, "us-west-2": 2.176, "eu-west-1": 2.426, "eu-central-1": 2.72, "ap-northeast-1": 2.938 },
  "g4dn.12xlarge": { "us-east-1": 3.912, "us-east-2": 3.912, "us-west-2": 3.912, "eu-west-1": 4.362, "eu-central-1": 4.89, "ap-northeast-1": 5.281 },
  "g4dn.16xlarge": { "us-east-1": 4.352, "us-east-2": 4.352, "us-west-2": 4.352, "eu-west-1": 4.853, "eu-central-1": 5.44, "ap-northeast-1": 5.875 },
  "g4dn.metal": { "us-east-1": 7.824, "us-east-2": 7.824, "us-west-2": 7.824, "eu-west-1": 8.724, "eu-central-1": 9.78, "ap-northeast-1": 10.562 },
  "g5.xlarge": { "us-east-1": 1.006, "us-east-2": 1.006, "us-west-2": 1.006, "eu-west-1": 1.123, "eu-central-1": 1.258, "ap-northeast-1": 1.459 },
  "g5.2xlarge": { "us-east-1": 1.212, "us-east-2": 1.212, "us-west-2": 1.212, "eu-west-1": 1.35296, "eu-central-1": 1.5156, "ap-northeast-1": 1.75776 },
  "g5.4xlarge": { "us-east-1": 1.624, "us-east-2": 1.624, "us-west-2": 1.624, "eu-west-1": 1.81287, "eu-central-1": 2.03081, "ap-northeast-1": 2.35528 },
  "g5.8xlarge": { "us-east-1": 2.448, "us-east-2": 2.448, "us-west-2": 2.448, "eu-west-1": 2.73271, "eu-central-1": 3.06122, "ap-northeast-1": 3.55033 },
  "g5.12xlarge": { "us-east-1": 5.672, "us-east-2": 5.672, "us-west-2": 5.672, "eu-west-1": 6.33167, "eu-central-1": 7.09282, "ap-northeast-1": 8.22609 },
  "g5.16xlarge": { "us-east-1": 4.096, "us-east-2": 4.096, "us-west-2": 4.096, "eu-west-1": 4.57237, "eu-central-1": 5.12204, "ap-northeast-1": 5.94042 },
  "g5.24xlarge": { "us-east-1": 8.144, "us-east-2": 8.144, "us-west-2": 8.144, "eu-west-1": 9.09117, "eu-central-1": 10.18405, "ap-northeast-1": 11.81123 },
  "g5.48xlarge": { "us-east-1": 16.288, "us-east-2": 16.288, "us-west-2": 16.288, "eu-west-1": 18.18233, "eu-central-1": 20.3681, "ap-northeast-1": 23.62246 },
  "g6.xlarge": { "us-east-1": 0.8048, "us-east-2": 0.8048, "us-west-2": 0.8048, "eu-central-1": 1.0064, "ap-northeast-1": 1.1672 },
  "g6.2xlarge": { "us-east-1": 0.9776, "us-east-2": 0.9776, "us-west-2": 0.9776, "eu-central-1": 1.22249, "ap-northeast-1": 1.41781 },
  "g6.4xlarge": { "us-east-1": 1.3232, "us-east-2": 1.3232, "us-west-2": 1.3232, "eu-central-1": 1.65466, "ap-northeast-1": 1.91903 },
  "g6.8xlarge": { "us-east-1": 2.0144, "us-east-2": 2.0144, "us-west-2": 2.0144, "eu-central-1": 2.519, "ap-northeast-1": 2.92148 },
  "g6.12xlarge": { "us-east-1": 4.6016, "us-east-2": 4.6016, "us-west-2": 4.6016, "eu-central-1": 5.75429, "ap-northeast-1": 6.67369 },
  "g6.16xlarge": { "us-east-1": 3.3968, "us-east-2": 3.3968, "us-west-2": 3.3968, "eu-central-1": 4.24769, "ap-northeast-1": 4.92637 },
  "g6.24xlarge": { "us-east-1": 6.6752, "us-east-2": 6.6752, "us-west-2": 6.6752, "eu-central-1": 8.34732, "ap-northeast-1": 9.68103 },
  "g6.48xlarge": { "us-east-1": 13.3504, "us-east-2": 13.3504, "us-west-2": 13.3504, "eu-central-1": 16.69464, "ap-northeast-1": 19.36206 },
  "gr6.4xlarge": { "us-east-1": 1.5392, "us-east-2": 1.5392, "us-west-2": 1.5392, "eu-central-1": 1.9248, "ap-northeast-1": 2.2323 },
  "gr6.8xlarge": { "us-east-1": 2.4464, "us-east-2": 2.4464, "us-west-2": 2.4464, "eu-central-1": 3.05927, "ap-northeast-1": 3.54801 },
  "g6e.xlarge": { "us-east-1": 1.861, "us-east-2": 1.861, "us-west-2": 1.861, "eu-central-1": 2.327, "ap-northeast-1": 2.699 },
  "g6e.2xlarge": { "us-east-1": 2.24208, "us-east-2": 2.24208, "us-west-2": 2.24208, "eu-central-1": 2.8035, "ap-northeast-1": 3.25168 },
  "g6e.4xlarge": { "us-east-1": 3.00424, "us-east-2": 3.00424, "us-west-2": 3.00424, "eu-central-1": 3.75651, "ap-northeast-1": 4.35703 },
  "g6e.8xlarge": { "us-east-1": 4.52856, "us-east-2": 4.52856, "us-west-2": 4.52856, "eu-central-1": 5.66252, "ap-northeast-1": 6.56775 },
  "g6e.12xlarge": { "us-east-1": 10.49264, "us-east-2": 10.49264, "us-west-2": 10.49264, "eu-central-1": 13.12002, "ap-northeast-1": 15.21742 },
  "g6e.16xlarge": { "us-east-1": 7.57719, "us-east-2": 7.57719, "us-west-2": 7.57719, "eu-central-1": 9.47454, "ap-northeast-1": 10.98917 },
  "g6e.24xlarge": { "us-east-1": 15.06559, "us-east-2": 15.06559, "us-west-2": 15.06559, "eu-central-1": 18.83806, "ap-northeast-1": 21.84956 },
  "g6e.48xlarge": { "us-east-1": 30.13118, "us-east-2": 30.13118, "us-west-2": 30.13118, "eu-central-1": 37.67612, "ap-northeast-1": 43.69912 },
  "g7e.2xlarge": { "us-east-1": 3.36312, "us-east-2": 3.36312, "us-west-2": 3.36312, "eu-central-1": 5.71915, "ap-northeast-1": 4.87752 },
  "g7e.4xlarge": { "us-east-1": 3.99816, "us-east-2": 3.99816, "us-west-2": 3.99816, "eu-central-1": 6.79907, "ap-northeast-1": 5.79852 },
  "g7e.8xlarge": { "us-east-1": 5.26824, "us-east-2": 5.26824, "us-west-2": 5.26824, "eu-central-1": 8.9589, "ap-northeast-1": 7.64051 },
  "g7e.12xlarge": { "us-east-1": 8.28608, "us-east-2": 8.28608, "us-west-2": 8.28608, "eu-central-1": 14.09088, "ap-northeast-1": 12.01727 },
  "g7e.24xlarge": { "us-east-1": 16.57216, "us-east-2": 16.57216, "us-west-2": 16.57216, "eu-central-1": 28.18177, "ap-northeast-1": 24.03454 },
  "g7e.48xlarge": { "us-east-1": 33.14432, "us-east-2": 33.14432, "us-west-2": 33.14432, "eu-central-1": 56.36354, "ap-northeast-1": 48.06908 },
  "p4d.24xlarge": {
    "us-east-1": 21.957642,
    "us-east-2": 21.95764,
    "us-west-2": 21.95764,
    "eu-west-1": 23.71569,
    "eu-central-1": 27.43298,
    "ap-northeast-1": 30.09784,
  },
  "p4de.24xlarge": { "us-east-1": 27.44705, "us-west-2": 27.44705, "eu-central-1": 34.29122, "ap-northeast-1": 37.6223 },
  "p5.4xlarge": { "us-east-1": 6.88, "us-east-2": 6.88, "us-west-2": 6.88, "ap-northeast-1": 8.6 },
  "p5.48xlarge": { "us-east-1": 55.04, "us-east-2": 55.04, "us-west-2": 55.04, "ap-northeast-1": 68.8 },
  "p5en.48xlarge": { "us-east-1": 63.296, "us-east-2": 63.296, "us-west-2": 63.296, "ap-northeast-1": 79.12 },
  "p6-b200.48xlarge": { "us-east-1": 113.9328, "us-east-2": 113.9328, "us-west-2": 113.9328 },
  "p6-b300.48xlarge": { "us-west-2": 142.416 },
};

/** The on-demand price of an instance type in a region, USD per hour; undefined when the table has none. */
export function onDemandHourlyUsd(instanceType: string, region: string): number | undefined {
  // Own keys only: "toString" or "__proto__" is no instance type and no region.
  const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
  if (!own(EC2_ON_DEMAND_USD_PER_HOUR, instanceType)) return undefined;
  const byRegion = EC2_ON_DEMAND_USD_PER_HOUR[instanceType] as Record<string, number | undefined>;
  return own(byRegion, region) ? byRegion[region] : undefined;
}

/** The same per month (HOURS_PER_MONTH hours); undefined when the table has no price. */
export function onDemandMonthlyUsd(instanceType: string, region: string): number | undefined {
  const h = onDemandHourlyUsd(instanceType, region);
  return h === undefined ? undefined : h * HOURS_PER_MONTH;
}
