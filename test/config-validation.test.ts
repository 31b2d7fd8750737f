import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ConfigError, loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";

const base = (): Record<string, string> => ({ ...fixtureConfig("prod") });

function problems(raw: Record<string, string>, secretKeys?: string[]): string[] {
  try {
    loadConfig(raw, "test", secretKeys);
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${String(e)}`);
    return e.problems;
  }
  assert.fail("expected the configuration to be rejected");
}

/** The prod config with one key's JSON object changed. */
function withObject(key: string, edit: (o: any) => void): Record<string, string> {
  const raw = base();
  const o = JSON.parse(raw[`triton-platform:${key}`]);
  edit(o);
  raw[`triton-platform:${key}`] = JSON.stringify(o);
  return raw;
}

describe("stack configuration", () => {
  for (const stack of ["dev", "staging", "prod"]) {
    it(`loads the ${stack} stack with defaults applied`, () => {
      const cfg = loadConfig(fixtureConfig(stack), stack);
      assert.equal(cfg.environment, stack);
      assert.equal(cfg.stack, stack);
      assert.match(cfg.region, /^[a-z]{2}-[a-z]+-\d$/);
      assert.equal(cfg.triton.namespace, "triton");
    });
  }

  it("prod spans three zones", () => {
    assert.equal(loadConfig(base(), "prod").cluster.zones.length, 3);
  });

  it("names the key, the rule and the value of a bad scalar", () => {
    const raw = base();
    raw["triton-platform:environment"] = "production";
    assert.deepEqual(problems(raw), ['triton-platform:environment must be one of "dev", "staging", "prod", got "production"']);
  });

  it("names nested keys with their path", () => {
    const p = problems(withObject("cluster", (c) => (c.zones = ["us-east-1a", "eu-nowhere"])));
    assert.deepEqual(p, ['triton-platform:cluster.zones[1] must be an AWS availability zone such as us-east-1a, got "eu-nowhere"']);
  });

  it("rejects unknown keys at the top level and inside sections (typos never fall back to defaults)", () => {
    const raw = withObject("cluster", (c) => (c.nmae = "x"));
    raw["triton-platform:clsuter"] = "{}";
    const p = problems(raw);
    assert.ok(
      p.includes("triton-platform:clsuter is not a known key (a typo would silently fall back to a default); did you mean triton-platform:cluster?"),
      p.join("\n"),
    );
    assert.ok(
      p.includes("triton-platform:cluster.nmae is not a known key (a typo would silently fall back to a default); did you mean triton-platform:cluster.name?"),
      p.join("\n"),
    );
  });

  it("reports every unknown key of a section, not only the first", () => {
    const p = problems(
      withObject("gpu", (g) => {
        g.rootVolumGiB = 300;
        g.maxUnavailabel = 1;
      }),
    );
    assert.deepEqual(
      p.filter((m) => m.includes("is not a known key")),
      [
        "triton-platform:gpu.rootVolumGiB is not a known key (a typo would silently fall back to a default); did you mean triton-platform:gpu.rootVolumeGiB?",
        "triton-platform:gpu.maxUnavailabel is not a known key (a typo would silently fall back to a default); did you mean triton-platform:gpu.maxUnavailable?",
      ],
    );
  });

  it("names no key when none is near enough to be the one meant", () => {
    assert.deepEqual(
      problems(withObject("gpu", (g) => (g.zzzzzzzz = 1))).filter((m) => m.includes("is not a known key")),
      ["triton-platform:gpu.zzzzzzzz is not a known key (a typo would silently fall back to a default)"],
    );
  });

  it("reports keys named like prototype members as unknown too", () => {
    assert.deepEqual(problems(withObject("monitoring", (m) => (m.constructor = 1))), [
      "triton-platform:monitoring.constructor is not a known key (a typo would silently fall back to a default)",
    ]);
    const raw = base();
    raw["triton-platform:__proto__"] = "{}";
    assert.deepEqual(problems(raw), ["triton-platform:__proto__ is not a known key (a typo would silently fall back to a default)"]);
  });

  it("names a missing required key with that key's own rule", () => {
    const p = problems(withObject("triton", (t) => delete t.groups[0].cpu));
    assert.deepEqual(p, ["triton-platform:triton.groups[0].cpu must be a Kubernetes quantity such as 16Gi, 500m or 4, got nothing"]);
  });

  it("refuses a number too large to be finite, and shows it as given", () => {
    const raw = withObject("monitoring", (m) => (m.thresholds = { ...m.thresholds, p99SloMs: "X" }));
    raw["triton-platform:monitoring"] = raw["triton-platform:monitoring"].replace('"X"', "1e999");
    assert.deepEqual(problems(raw), ["triton-platform:monitoring.thresholds.p99SloMs must be a number >= 0.001, got Infinity"]);
  });

  it("refuses a list where a mapping belongs (a section or the tags)", () => {
    const raw = base();
    raw["triton-platform:monitoring"] = "[]";
    raw["triton-platform:tags"] = '["team"]';
    assert.deepEqual(problems(raw), [
      'triton-platform:tags must be a mapping of tag keys to values, got ["team"]',
      "triton-platform:monitoring must be an object (a YAML mapping), got []",
    ]);
    assert.deepEqual(problems(withObject("monitoring", (m) => (m.thresholds = []))), [
      "triton-platform:monitoring.thresholds must be an object (a YAML mapping), got []",
    ]);
  });

  it("reports several errors together", () => {
    const raw = withObject("cluster", (c) => {
      c.name = "";
      c.zones = [];
    });
    raw["aws:region"] = "mars-1";
    const p = problems(raw);
    assert.equal(p.length, 3, p.join("\n"));
    assert.ok(p.some((m) => m.startsWith("aws:region must be an AWS region")));
    assert.ok(p.some((m) => m.startsWith("triton-platform:cluster.name must be an EKS cluster name")));
    assert.ok(p.some((m) => m.startsWith("triton-platform:cluster.zones must be a list of at least 1 zone(s)")));
  });

  it("requires the environment and the cluster", () => {
    const raw = base();
    delete raw["triton-platform:environment"];
    delete raw["triton-platform:cluster"];
    const p = problems(raw);
    assert.ok(
      p.some((m) => /^triton-platform:environment must be one of .*, got nothing$/.test(m)),
      p.join("\n"),
    );
    assert.ok(
      p.some((m) => /^triton-platform:cluster must be an object .*, got nothing$/.test(m)),
      p.join("\n"),
    );
  });

  it("refuses secrets for keys that would be written in plaintext", () => {
    const p = problems(base(), ["triton-platform:tags", "triton-platform:monitoring"]);
    assert.deepEqual(p, ["triton-platform:tags must not be a secret: no setting of triton-platform keeps it secret, so it would be written in plaintext"]);
  });

  it("rejects a repeated zone and a tag key in the aws: namespace", () => {
    const raw = withObject("cluster", (c) => (c.zones = ["us-east-1a", "us-east-1a"]));
    raw["triton-platform:tags"] = JSON.stringify({ "aws:owner": "me" });
    const p = problems(raw);
    assert.ok(
      p.some((m) => m.startsWith("triton-platform:cluster.zones must not repeat a zone")),
      p.join("\n"),
    );
    assert.ok(p.includes(`triton-platform:tags.aws:owner must be an AWS tag key (1-128 characters, not starting with 'aws:'), got "aws:owner"`), p.join("\n"));
  });

  it("property: random config values never crash with anything but a ConfigError", () => {
    const keys = ["environment", "cluster", "tags", "triton", "unknownKey"];
    const value = fc.oneof(
      fc.string(),
      fc.integer().map(String),
      fc.json(),
      fc.dictionary(fc.constantFrom("name", "zones", "namespace", "groups", "x"), fc.jsonValue()).map((o) => JSON.stringify(o)),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...keys), value), fc.option(fc.string(), { nil: undefined }), (cfg, region) => {
        const raw: Record<string, string> = {};
        for (const [k, v] of Object.entries(cfg)) raw[`triton-platform:${k}`] = v;
        if (region !== undefined) raw["aws:region"] = region;
        try {
          loadConfig(raw, "fuzz");
        } catch (e) {
          if (!(e instanceof ConfigError)) throw e;
          assert.ok(e.problems.length > 0);
          for (const p of e.problems) assert.match(p, /^(triton-platform:|aws:region)/);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("property: mutating one valid key keeps the other keys' values", () => {
    fc.assert(
      fc.property(fc.constantFrom("dev", "staging", "prod"), (env) => {
        const raw = base();
        raw["triton-platform:environment"] = env;
        assert.equal(loadConfig(raw, env).environment, env);
        assert.equal(loadConfig(raw, env).cluster.name, "ml-prod");
      }),
      { numRuns: 10 },
    );
  });
});
