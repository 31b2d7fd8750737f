import { strict as assert } from "node:assert";
import fc from "fast-check";
import { Region } from "@pulumi/aws/types/enums";
import { ConfigError, loadConfig } from "../config";
import { clusterArgsSettings, zonesNotOfRegion } from "../components/cluster/schema";
import { parseSettings } from "../lib/schema";
import { AWS_REGIONS, AWS_ZONES, AZ_IDS, isAwsRegion, regionOfZone, zonesOf } from "../components/upstream/aws-regions";
import { INVOKES } from "../tools/planner/fakes";
import { fixtureConfig, type Overrides } from "./support/stacks";

const US_EAST_1 = "us-east-1a, us-east-1b, us-east-1c, us-east-1d, us-east-1e, us-east-1f";
const REGION_RULE = `must be an AWS region (${Object.values(Region).sort().join(", ")})`;

function problems(shape: string, overrides: Overrides): string[] {
  try {
    loadConfig(fixtureConfig(shape, overrides), shape);
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${String(e)}`);
    return e.problems;
  }
  assert.fail("expected the configuration to be rejected");
}

/** prod (us-east-1, three zones) with zone `i` replaced. */
const prodWithZone =
  (i: number, zone: string): Overrides =>
  (s) =>
    (s.cluster.zones[i] = zone);

describe("regions and zones that exist", () => {
  describe("the facts (components/upstream/aws-regions.ts)", () => {
    it("takes its regions from @pulumi/aws's Region list", () => {
      assert.deepEqual(AWS_REGIONS, Object.values(Region).sort());
      for (const r of ["us-east-1", "eu-west-1", "ap-southeast-7", "us-gov-west-1"]) assert.ok(isAwsRegion(r), r);
      for (const r of ["us-east-9", "mars-1", "US-EAST-1", "us-east-1a", "", "__proto__"]) assert.ok(!isAwsRegion(r), r);
    });

    it("lists zones only for regions @pulumi/aws knows, each with its own AZ ID prefix and at least three AZ IDs", () => {
      for (const [region, ids] of Object.entries(AZ_IDS)) {
        assert.ok(isAwsRegion(region), `${region} is not in @pulumi/aws's Region list`);
        // AWS: "Each Region has at least three Availability Zones".
        assert.ok(ids.length >= 3, region);
        const prefixes = new Set(ids.map((id) => id.replace(/-az\d+$/, "")));
        assert.equal(prefixes.size, 1, `${region}: ${ids.join(", ")}`);
        for (const id of ids) assert.match(id, /^[a-z]+\d-az\d+$/);
        assert.equal(new Set(ids).size, ids.length, region);
      }
      // No two regions share an AZ ID prefix (the prefix names the region).
      const prefixOf = Object.values(AZ_IDS).map((ids) => ids[0].replace(/-az\d+$/, ""));
      assert.equal(new Set(prefixOf).size, prefixOf.length);
    });

    it("names a region's zones by its code and a letter up to its highest AZ ID number", () => {
      assert.equal(zonesOf("us-east-1").join(", "), US_EAST_1);
      assert.deepEqual(zonesOf("us-east-2"), ["us-east-2a", "us-east-2b", "us-east-2c"]);
      // cac1-az4 is the highest listed: its letter is d.
      assert.deepEqual(zonesOf("ca-central-1"), ["ca-central-1a", "ca-central-1b", "ca-central-1c", "ca-central-1d"]);
      // Sourced nowhere in the table: no zone at all rather than a guess.
      assert.deepEqual(zonesOf("us-gov-west-1"), []);
      assert.deepEqual(zonesOf("us-east-9"), []);
      assert.deepEqual(zonesOf("constructor"), []);
    });

    it("property: every zone of the table passes for its own region and fails for every other region", () => {
      // Exhaustively (the table is small) ...
      for (const zone of AWS_ZONES) {
        const own = regionOfZone(zone);
        assert.ok(own !== undefined && zone.startsWith(own), zone);
        for (const region of AWS_REGIONS) {
          assert.equal(zonesNotOfRegion([zone], region).length === 0, region === own, `${zone} in ${region}`);
        }
      }
      // ... and through loadConfig, the path a stack takes.
      fc.assert(
        fc.property(fc.constantFrom(...AWS_ZONES), fc.constantFrom(...AWS_REGIONS), (zone, region) => {
          const raw = fixtureConfig("dev", (s) => (s.cluster.zones = [zone]));
          raw["aws:region"] = region;
          let rejected: string[] = [];
          try {
            loadConfig(raw, "dev");
          } catch (e) {
            if (!(e instanceof ConfigError)) throw e;
            rejected = e.problems;
          }
          if (regionOfZone(zone) === region) assert.deepEqual(rejected, []);
          else assert.deepEqual(rejected, [`triton-platform:cluster.zones[0] ${zonesNotOfRegion([zone], region)[0].rule}, got "${zone}"`]);
        }),
        { numRuns: 300 },
      );
    });

    it("property: a string that is no region of the list is refused as a region", () => {
      fc.assert(
        fc.property(
          fc.string().filter((s) => !AWS_REGIONS.includes(s)),
          (s) => !isAwsRegion(s),
        ),
      );
    });
  });

  describe("the stack configuration", () => {
    it("refuses a zone of another region, naming the key, the region's zones and the value", () => {
      assert.deepEqual(problems("prod", prodWithZone(1, "us-west-2c")), [
        `triton-platform:cluster.zones[1] must be an availability zone of aws:region us-east-1 (${US_EAST_1}), got "us-west-2c"`,
      ]);
    });

    it("refuses a zone that does not exist", () => {
      assert.deepEqual(problems("prod", prodWithZone(2, "us-east-1z")), [
        `triton-platform:cluster.zones[2] must be an availability zone of aws:region us-east-1 (${US_EAST_1}), got "us-east-1z"`,
      ]);
      // A region's letters stop at its highest AZ ID: us-east-2 has three.
      const raw = fixtureConfig("dev", (s) => (s.cluster.zones = ["us-east-2d"]));
      raw["aws:region"] = "us-east-2";
      assert.throws(
        () => loadConfig(raw, "dev"),
        /triton-platform:cluster\.zones\[0\] must be an availability zone of aws:region us-east-2 \(us-east-2a, us-east-2b, us-east-2c\), got "us-east-2d"/,
      );
    });

    it("refuses a region that does not exist, and a zone of no region beside it", () => {
      assert.deepEqual(problems("prod", { "aws:region": "us-east-9" }), [`aws:region ${REGION_RULE}, got "us-east-9"`]);
      const p = problems("dev", (s) => {
        s["aws:region"] = "us-east-9";
        s.cluster.zones = ["us-east-9a"];
      });
      assert.equal(p.length, 2, p.join("\n"));
      assert.equal(p[0], `aws:region ${REGION_RULE}, got "us-east-9"`);
      assert.match(p[1], /^triton-platform:cluster\.zones\[0\] must be an availability zone of an AWS region .*, got "us-east-9a"$/);
      assert.deepEqual(
        problems("prod", (s) => delete s["aws:region"]),
        [`aws:region ${REGION_RULE}, got nothing`],
      );
    });

    it("refuses every zone of a region whose zones no source lists, saying so", () => {
      const p = problems("dev", (s) => {
        s["aws:region"] = "us-gov-west-1";
        s.cluster.zones = ["us-gov-west-1a"];
      });
      assert.deepEqual(p, [
        `triton-platform:cluster.zones[0] must be an availability zone of aws:region us-gov-west-1, and no zone of us-gov-west-1 is sourced in components/upstream/aws-regions.ts (add its zones there with their source), got "us-gov-west-1a"`,
      ]);
    });

    it("checks modelRepository.s3.bucketRegion with the same region rule", () => {
      assert.deepEqual(
        problems("prod", (s) => (s.modelRepository.s3.bucketRegion = "us-east-9")),
        [`triton-platform:modelRepository.s3.bucketRegion ${REGION_RULE}, got "us-east-9"`],
      );
      assert.equal(
        loadConfig(
          fixtureConfig("prod", (s) => (s.modelRepository.s3.bucketRegion = "eu-west-1")),
          "prod",
        ).modelRepository.s3?.bucketRegion,
        "eu-west-1",
      );
    });

    it("a direct caller of Cluster gets the same region rule", () => {
      // What the Cluster component parses its arguments with.
      assert.throws(
        () => parseSettings(clusterArgsSettings, { name: "ml", region: "us-east-9" }, 'invalid arguments of Cluster "c"'),
        (e: Error) => e.message.includes(`region ${REGION_RULE}, got "us-east-9"`),
      );
    });

    it("accepts the three example shapes' regions and zones", () => {
      for (const shape of ["dev", "staging", "prod"]) assert.doesNotThrow(() => loadConfig(fixtureConfig(shape), shape));
    });
  });

  describe("the planner's fake subnet lookup", () => {
    const getSubnets = INVOKES["aws:ec2/getSubnets:getSubnets"];
    const getSubnet = INVOKES["aws:ec2/getSubnet:getSubnet"];
    const query = (zones: string[]) => ({ filters: [{ name: "availability-zone", values: zones }] });

    it("answers only for zones of the region", () => {
      const r = getSubnets(query(["us-east-1a", "us-west-2c", "us-east-1z", "us-east-1f"]), "us-east-1");
      assert.deepEqual(r.ids, ["subnet-0a000000000000000a", "subnet-0f000000000000000f"]);
      assert.deepEqual(getSubnets(query(["us-east-1a"]), "us-gov-west-1").ids, []);
    });

    it("gives every subnet it is asked about a zone that exists in the region", () => {
      fc.assert(
        fc.property(fc.constantFrom(...Object.keys(AZ_IDS)), fc.stringMatching(/^subnet-[0-9a-f]{17}$/), (region, id) => {
          assert.ok(zonesOf(region).includes(getSubnet({ id }, region).availabilityZone));
        }),
      );
      // The ids getSubnets made keep their zone.
      assert.equal(getSubnet({ id: "subnet-0c000000000000000c" }, "us-east-1").availabilityZone, "us-east-1c");
      assert.throws(() => getSubnet({ id: "subnet-0a000000000000000a" }, "us-gov-west-1"), /no availability zone of us-gov-west-1/);
    });
  });
});
