// The modelRepository section of the stack config: defaults, and named errors for the
// combinations that cannot work (an efs backend without subnets, a key alias, ...).
import { strict as assert } from "node:assert";
import * as fc from "fast-check";
import { ConfigError, loadConfig } from "../config";
import { checkSettings } from "../lib/schema";
import { modelRepositorySettings, resolveModelRepositoryArgs } from "../components/model-repository/schema";
import { fixtureConfig } from "./support/stacks";

// The dev stack's other sections (valid by the planner tests).
const BASE: Record<string, string> = fixtureConfig("dev");

function withRepo(mr: unknown): Record<string, string> {
  return { ...BASE, "triton-platform:modelRepository": JSON.stringify(mr) };
}

function problems(mr: unknown): string[] {
  try {
    loadConfig(withRepo(mr), "dev");
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.problems;
  }
  return [];
}

const KEY = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-4333-8444-555555555555";

describe("modelRepository config", () => {
  it("defaults to an s3 backend under models/ with 30 days of old versions", () => {
    const c = loadConfig(withRepo({}), "dev");
    assert.equal(c.modelRepository.backend, "s3");
    assert.equal(c.modelRepository.modelPrefix, "models");
    assert.equal(c.modelRepository.serviceAccountName, "triton");
    assert.equal(loadConfig(withRepo({ s3: {} }), "dev").modelRepository.s3?.noncurrentVersionDays, 30);
  });

  it("an efs backend without subnets is an error naming efs.subnetIds", () => {
    assert.deepEqual(problems({ backend: "efs" }), [
      'triton-platform:modelRepository.efs.subnetIds is required when backend is "efs" (one subnet per GPU zone for the mount targets), got nothing',
    ]);
    assert.match(problems({ backend: "efs", efs: { subnetIds: [] } })[0], /modelRepository\.efs\.subnetIds must be a list of at least 1 subnet/);
  });

  it("settings of the other backend are an error, not silently ignored", () => {
    assert.match(problems({ backend: "efs", efs: { subnetIds: ["subnet-0a1b2c3d"] }, s3: {} })[0], /modelRepository\.s3 applies only when backend is "s3"/);
    assert.match(problems({ efs: { subnetIds: ["subnet-0a1b2c3d"] } })[0], /modelRepository\.efs applies only when backend is "efs"/);
  });

  it("an existing bucket needs its KMS key, and excludes bucketPrefix", () => {
    assert.deepEqual(problems({ s3: { existingBucket: "models-bucket" } }), [
      "triton-platform:modelRepository.kmsKeyArn is required with s3.existingBucket (the reader role needs kms:Decrypt on the bucket's key), got nothing",
    ]);
    assert.match(
      problems({ kmsKeyArn: KEY, s3: { existingBucket: "models-bucket", bucketPrefix: "x-" } })[0],
      /s3\.existingBucket cannot be combined with s3\.bucketPrefix/,
    );
    assert.deepEqual(problems({ kmsKeyArn: KEY, s3: { existingBucket: "models-bucket" } }), []);
  });

  it("a KMS alias is refused: IAM cannot scope kms:Decrypt to an alias", () => {
    assert.match(
      problems({ kmsKeyArn: "arn:aws:kms:us-east-1:123456789012:alias/models" })[0],
      /kmsKeyArn must be a KMS key ARN.*got "arn:aws:kms:us-east-1:123456789012:alias\/models"/,
    );
  });

  it("a key in another region than the bucket is an error", () => {
    assert.match(problems({ kmsKeyArn: KEY, s3: { bucketRegion: "eu-west-1" } })[0], /kmsKeyArn must be a key in the bucket's region eu-west-1/);
  });

  it("typos are errors, not defaults", () => {
    assert.deepEqual(problems({ s3: { noncurrentVersionDay: 5 } }), [
      "triton-platform:modelRepository.s3.noncurrentVersionDay is not a known key (a typo would silently fall back to a default); did you mean triton-platform:modelRepository.s3.noncurrentVersionDays?",
    ]);
  });

  it("publisher principals without enabled: true is an error (no role would be created)", () => {
    assert.match(problems({ s3: { publisher: { trustedPrincipalArns: ["arn:aws:iam::123456789012:role/ci"] } } })[0], /s3\.publisher\.enabled must be true/);
  });

  it("a stack file and a direct caller of the component get the same defaults", () => {
    const refs = { namespace: "triton", labels: {}, clusterRegion: "us-west-2", oidcIssuerUrl: "https://oidc" };
    for (const mr of [{}, { s3: {} }, { backend: "efs", efs: { subnetIds: ["subnet-0a1b2c3d"] } }] as const) {
      const { namespace, labels, clusterRegion, oidcIssuerUrl, vpcId, nodeSecurityGroupId, dataRegion, ...direct } = resolveModelRepositoryArgs({
        ...mr,
        ...refs,
        vpcId: "vpc-1",
        nodeSecurityGroupId: "sg-1",
      });
      const fromStack = loadConfig(withRepo(mr), "dev").modelRepository;
      // The cluster's region is the only default that is not the schema's: the resolver derives it.
      const s3 = fromStack.s3 ? { s3: { ...fromStack.s3, bucketRegion: fromStack.s3.bucketRegion ?? clusterRegion } } : {};
      assert.deepEqual(direct, { ...fromStack, ...s3 }, JSON.stringify(mr));
      assert.equal(dataRegion, "us-west-2");
    }
    assert.equal(loadConfig(withRepo({}), "dev").modelRepository.s3?.bucketPrefix, "triton-models-");
  });

  it("a resolved section parses to itself, so index.ts can hand it to the component as is (property)", () => {
    const common = {
      modelPrefix: fc.constantFrom("models", "a/b.c"),
      serviceAccountName: fc.constantFrom("triton", "sa-1"),
      kmsKeyArn: fc.constant(KEY),
    };
    const s3 = fc.record(
      {
        bucketPrefix: fc.constantFrom("triton-models-", "x-"),
        existingBucket: fc.constant("models-bucket"),
        bucketRegion: fc.constant("us-east-1"),
        noncurrentVersionDays: fc.integer({ min: 1, max: 3650 }),
        publisher: fc.record({ enabled: fc.boolean(), trustedPrincipalArns: fc.constant(["arn:aws:iam::123456789012:role/ci"]) }, { requiredKeys: [] }),
      },
      { requiredKeys: [] },
    );
    const efs = fc.record(
      { subnetIds: fc.constant(["subnet-0a1b2c3d"]), throughputMode: fc.constantFrom("elastic", "bursting") },
      { requiredKeys: ["subnetIds"] },
    );
    // Mostly valid sections (the invalid ones, e.g. an existing bucket with a prefix, are skipped).
    const section = fc.oneof(
      fc.record({ backend: fc.constant("s3"), ...common, s3 }, { requiredKeys: [] }),
      fc.record({ backend: fc.constant("efs"), ...common, efs }, { requiredKeys: ["backend", "efs"] }),
    );
    let valid = 0;
    fc.assert(
      fc.property(section, (mr) => {
        const once = checkSettings(modelRepositorySettings, mr);
        if (!once.success) return true;
        valid++;
        const twice = checkSettings(modelRepositorySettings, once.output);
        assert.ok(twice.success, JSON.stringify(twice));
        assert.deepEqual(twice.output, once.output);
        return true;
      }),
      { numRuns: 300 },
    );
    assert.ok(valid > 100, `only ${valid} valid sections generated`);
  });

  it("accepts any valid retention and rejects any other (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: -100, max: 5000 }), (days) => {
        const ok = problems({ s3: { noncurrentVersionDays: days } }).length === 0;
        return ok === (days >= 1 && days <= 3650);
      }),
      { numRuns: 200 },
    );
  });

  it("accepts any set of distinct well-formed subnets for efs and rejects repeats (property)", () => {
    const subnet = fc.stringMatching(/^[0-9a-f]{17}$/).map((h) => `subnet-${h}`);
    fc.assert(
      fc.property(fc.array(subnet, { minLength: 1, maxLength: 6 }), (ids) => {
        const distinct = new Set(ids).size === ids.length;
        const ok = problems({ backend: "efs", efs: { subnetIds: ids } }).length === 0;
        return ok === distinct;
      }),
      { numRuns: 200 },
    );
  });
});
