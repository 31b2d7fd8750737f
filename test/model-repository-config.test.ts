// The modelRepository section of the stack config: defaults, and named errors for the
// combinations that cannot work (an efs backend without subnets, a key alias, ...).
import { strict as assert } from "node:assert";
import * as fc from "fast-check";
import { ConfigError, loadConfig } from "../config";
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
    assert.match(problems({ kmsKeyArn: KEY, s3: { existingBucket: "models-bucket", bucketPrefix: "x-" } })[0], /s3\.existingBucket cannot be combined with s3\.bucketPrefix/);
    assert.deepEqual(problems({ kmsKeyArn: KEY, s3: { existingBucket: "models-bucket" } }), []);
  });

  it("a KMS alias is refused: IAM cannot scope kms:Decrypt to an alias", () => {
    assert.match(problems({ kmsKeyArn: "arn:aws:kms:us-east-1:123456789012:alias/models" })[0], /kmsKeyArn must be a KMS key ARN.*got "arn:aws:kms:us-east-1:123456789012:alias\/models"/);
  });

  it("a key in another region than the bucket is an error", () => {
    assert.match(problems({ kmsKeyArn: KEY, s3: { bucketRegion: "eu-west-1" } })[0], /kmsKeyArn must be a key in the bucket's region eu-west-1/);
  });

  it("typos are errors, not defaults", () => {
    assert.deepEqual(problems({ s3: { noncurrentVersionDay: 5 } }), [
      "triton-platform:modelRepository.s3.noncurrentVersionDay is not a known key (a typo would silently fall back to a default)",
    ]);
  });

  it("publisher principals without enabled: true is an error (no role would be created)", () => {
    assert.match(problems({ s3: { publisher: { trustedPrincipalArns: ["arn:aws:iam::123456789012:role/ci"] } } })[0], /s3\.publisher\.enabled must be true/);
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
