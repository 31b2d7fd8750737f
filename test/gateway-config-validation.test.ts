// The `gateway` stack config: mirror percentages within 0–100 (Envoy-representable), client
// CIDRs validated as IPv4/IPv6 networks and never /0, prod must name its clients; errors
// name the key, the rule and the value.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ConfigError, loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";

function raw(gateway: unknown, environment = "staging"): Record<string, string> {
  // The real stack file of that environment (its serving group "vision" has a canary) and the gateway section under test.
  return fixtureConfig(environment, { gateway });
}
function problems(gateway: unknown, environment = "staging"): string[] {
  try {
    loadConfig(raw(gateway, environment), environment);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
}

describe("gateway config", () => {
  it("defaults: no mirroring, no client CIDRs (so no load balancer)", () => {
    const cfg = loadConfig(raw(undefined), "staging");
    assert.equal(cfg.gateway.mirrorPercent, 0);
    assert.deepEqual(cfg.gateway.clientCidrs, []);
    assert.deepEqual(cfg.gateway.clientNamespaces, []);
  });

  it("accepts every percentage from 0 to 100 with at most 4 decimal places", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (n) => {
        const pct = n / 10_000;
        return loadConfig(raw({ mirrorPercent: pct }), "staging").gateway.mirrorPercent === pct;
      }),
      { numRuns: 200 },
    );
  });

  it("rejects percentages outside 0–100, naming the key and the value", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.double({ max: -1e-9, noNaN: true, noDefaultInfinity: true }), fc.double({ min: 100.0001, noNaN: true, noDefaultInfinity: true })),
        (pct) => {
          const ps = problems({ mirrorPercent: pct });
          return ps.some((p) => p.startsWith("triton-platform:gateway.mirrorPercent must be a number from 0 to 100"));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("rejects a percentage finer than Envoy's 1/MILLION", () => {
    assert.match(problems({ mirrorPercent: 0.00001 }).join("\n"), /gateway\.mirrorPercent must have at most 4 decimal places.*got 0\.00001/);
  });

  it("accepts IPv4 and IPv6 client CIDRs", () => {
    assert.deepEqual(problems({ clientCidrs: ["10.0.0.0/8", "192.168.4.0/24", "2001:db8::/32", "fd00:1:2::/48", "203.0.113.7/32"] }), []);
  });

  for (const [bad, rule] of [
    ["10.0.0.1/8", /must be a CIDR such as 10\.0\.0\.0\/16/],
    ["10.0.0.0/33", /must be a CIDR/],
    ["10.0.0.0", /must be a CIDR/],
    ["2001:db8::1/32", /must be a CIDR/],
    ["example.com/24", /must be a CIDR/],
    ["0.0.0.0/0", /must not be a world-open range/],
    ["::/0", /must not be a world-open range/],
  ] as const) {
    it(`rejects client CIDR ${bad}`, () => {
      const ps = problems({ clientCidrs: [bad] });
      assert.ok(
        ps.some((p) => p.startsWith("triton-platform:gateway.clientCidrs[0]") && rule.test(p) && p.includes(JSON.stringify(bad))),
        ps.join("\n"),
      );
    });
  }

  it("prod must list client CIDRs; other stacks need not", () => {
    assert.deepEqual(problems({}, "staging"), []);
    assert.match(problems({}, "prod").join("\n"), /triton-platform:gateway\.clientCidrs must list at least one client CIDR in prod/);
    assert.deepEqual(problems({ clientCidrs: ["10.0.0.0/16"] }, "prod"), []);
  });

  it("a default group must be one of the serving groups", () => {
    assert.deepEqual(problems({ defaultGroup: "vision" }), []);
    assert.match(
      problems({ defaultGroup: "audio" }).join("\n"),
      /triton-platform:gateway\.defaultGroup must name one of triton\.groups \(vision\), got "audio"/,
    );
  });

  it("an unknown key is an error, not a silent default", () => {
    assert.match(problems({ mirrorPercentage: 5 }).join("\n"), /triton-platform:gateway\.mirrorPercentage is not a known key/);
  });

  it("image tags are exact releases", () => {
    assert.deepEqual(problems({ imageTag: "v1.37.1" }), []);
    assert.match(problems({ imageTag: "latest" }).join("\n"), /gateway\.imageTag must be an exact Envoy release tag/);
  });
});
