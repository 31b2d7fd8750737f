// The model repository's policy rules: each stays silent on the planned (compliant) prod
// stack and fires when one property of it is broken, naming the resource and the value.
import { strict as assert } from "node:assert";
import { plan } from "./helpers";
import { rules } from "../policies/rules";
import { evaluatePolicies, type Violation } from "../tools/planner/policy";
import type { RecordedResource } from "../tools/planner";
import { BUCKET_ENCRYPTION as SSE, BUCKET_VERSIONING as VERSIONING, BUCKET_PUBLIC_ACCESS_BLOCK as PAB, BUCKET_POLICY } from "../policies/rules/types";
import { declareMutations, first, k8sObject, editDoc } from "./support/mutations";

type Mutate = (rs: RecordedResource[]) => RecordedResource[] | void;

let compliant: RecordedResource[];

async function violations(policy: string, mutate?: Mutate): Promise<Violation[]> {
  let rs: RecordedResource[] = JSON.parse(JSON.stringify(compliant));
  if (mutate) rs = mutate(rs) ?? rs;
  const found = await evaluatePolicies(rules, rs, { all: "mandatory" });
  return found.filter((v) => v.policy === policy);
}

const byType = (rs: RecordedResource[], type: string, name?: string) => {
  const r = rs.find((x) => x.type === type && (name === undefined || x.name === name));
  assert.ok(r, `${type} ${name ?? ""} in the plan`);
  return r;
};
const without =
  (type: string): Mutate =>
  (rs) =>
    rs.filter((r) => r.type !== type);

function workload(kind: string, env: { name: string; value?: string }[]): RecordedResource {
  const pod = { containers: [{ name: "tritonserver", image: "nvcr.io/nvidia/tritonserver:25.01-py3", env }] };
  const spec =
    kind === "Pod"
      ? pod
      : kind === "CronJob"
        ? { schedule: "@daily", jobTemplate: { spec: { template: { spec: pod } } } }
        : { selector: {}, template: { spec: pod } };
  return {
    urn: `urn:pulumi:prod::triton-platform::kubernetes:x:${kind}::w`,
    type: `kubernetes:x:${kind}`,
    name: "w",
    custom: true,
    parent: null,
    provider: null,
    dependencies: [],
    props: { apiVersion: "apps/v1", kind, metadata: { name: "vision" }, spec },
  };
}

describe("model repository policies", () => {
  before(async () => {
    compliant = (await plan("prod")).resources;
  });

  describe("s3-bucket-encrypted", () => {
    it("is silent on the planned bucket", async () => assert.deepEqual(await violations("s3-bucket-encrypted"), []));
    it("fires when the bucket has no encryption configuration", async () => {
      const [v] = await violations("s3-bucket-encrypted", without(SSE));
      assert.match(v.message, /S3 bucket model-repository-bucket has no BucketServerSideEncryptionConfiguration/);
    });
    it("fires on SSE-S3 (AES256) instead of KMS, naming the value", async () => {
      const [v] = await violations("s3-bucket-encrypted", (rs) => {
        byType(rs, SSE).props.rules[0].applyServerSideEncryptionByDefault.sseAlgorithm = "AES256";
      });
      assert.match(v.message, /sseAlgorithm is \["AES256"\], expected "aws:kms"/);
    });
  });

  describe("s3-bucket-versioned", () => {
    it("is silent on the planned bucket", async () => assert.deepEqual(await violations("s3-bucket-versioned"), []));
    it("fires when versioning is suspended", async () => {
      const [v] = await violations("s3-bucket-versioned", (rs) => {
        byType(rs, VERSIONING).props.versioningConfiguration.status = "Suspended";
      });
      assert.match(v.message, /versioningConfiguration\.status is "Suspended", expected "Enabled"/);
    });
    it("fires when there is no versioning resource", async () => assert.equal((await violations("s3-bucket-versioned", without(VERSIONING))).length, 1));
  });

  describe("s3-public-access-blocked", () => {
    it("is silent on the planned bucket", async () => assert.deepEqual(await violations("s3-public-access-blocked"), []));
    it("fires when one of the four blocks is off, naming it", async () => {
      const [v] = await violations("s3-public-access-blocked", (rs) => {
        byType(rs, PAB).props.restrictPublicBuckets = false;
      });
      assert.match(v.message, /restrictPublicBuckets is false; all four must be true/);
    });
    it("fires when the block is missing", async () => assert.equal((await violations("s3-public-access-blocked", without(PAB))).length, 1));
  });

  describe("s3-tls-only", () => {
    it("is silent on the planned bucket", async () => assert.deepEqual(await violations("s3-tls-only"), []));
    it("fires when the bucket policy does not deny insecure transport", async () => {
      const [v] = await violations("s3-tls-only", (rs) => {
        const p = byType(rs, BUCKET_POLICY);
        const doc = JSON.parse(p.props.policy);
        doc.Statement = doc.Statement.filter((s: { Sid: string }) => s.Sid !== "DenyInsecureTransport");
        p.props.policy = JSON.stringify(doc);
      });
      assert.match(v.message, /no statement of model-repository-tls-only policy denies .*aws:SecureTransport/);
    });
    it("fires when there is no bucket policy", async () => assert.equal((await violations("s3-tls-only", without(BUCKET_POLICY))).length, 1));
  });

  describe("iam-statements-least-privilege (S3 resources)", () => {
    it("is silent on the planned reader and publisher roles", async () => assert.deepEqual(await violations("iam-statements-least-privilege"), []));
    it('fires on an S3 action allowed on Resource "*", naming the statement', async () => {
      let at = -1;
      const [v] = await violations("iam-statements-least-privilege", (rs) => {
        const p = byType(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-reader");
        const doc = JSON.parse(p.props.policy);
        at = doc.Statement.findIndex((s: { Sid?: string }) => s.Sid === "ReadModels");
        doc.Statement[at].Resource = "*";
        p.props.policy = JSON.stringify(doc);
      });
      assert.ok(at >= 0, "the reader has a ReadModels statement");
      assert.match(
        v.message,
        new RegExp(`model-repository-reader: policy\\.Statement\\[${at}\\]\\.Resource \\("ReadModels"\\) is "\\*": allows s3:GetObject on "\\*"`),
      );
    });
    it("fires on a role's inline policy granting s3:* on every bucket", async () => {
      const found = await violations("iam-statements-least-privilege", (rs) => {
        byType(rs, "aws:iam/role:Role", "model-repository-reader").props.inlinePolicies = [
          { name: "x", policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "s3:*", Resource: "arn:aws:s3:::*" }] }) },
        ];
      });
      assert.equal(found.length, 2, "s3:* is every action of S3, and arn:aws:s3:::* every bucket");
      assert.match(found[0].message, /inlinePolicies\[0\]\.policy/);
    });
    it('stays silent for non-S3 actions on "*" and for Deny statements', async () => {
      const found = await violations("iam-statements-least-privilege", (rs) => {
        const p = byType(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-reader");
        const doc = JSON.parse(p.props.policy);
        doc.Statement.push({ Effect: "Allow", Action: "ec2:DescribeInstances", Resource: "*" }, { Effect: "Deny", Action: "s3:*", Resource: "*" });
        p.props.policy = JSON.stringify(doc);
      });
      assert.deepEqual(found, []);
    });
  });

  describe("no-plaintext-credentials (static AWS keys in env)", () => {
    it("is silent on the plan and on a workload that only sets AWS_DEFAULT_REGION", async () => {
      assert.deepEqual(await violations("no-plaintext-credentials"), []);
      assert.deepEqual(
        await violations("no-plaintext-credentials", (rs) => [...rs, workload("StatefulSet", [{ name: "AWS_DEFAULT_REGION", value: "eu-west-1" }])]),
        [],
      );
    });
    for (const kind of ["StatefulSet", "Deployment", "Pod", "CronJob"]) {
      it(`fires on AWS_SECRET_ACCESS_KEY in a ${kind}`, async () => {
        const [v] = await violations("no-plaintext-credentials", (rs) => [...rs, workload(kind, [{ name: "AWS_SECRET_ACCESS_KEY", value: "x" }])]);
        assert.match(
          v.message,
          new RegExp(`${kind} vision: [a-zA-Z.]*\\.containers\\[0\\]\\.env\\[0\\]\\.name \\(container tritonserver\\) is AWS_SECRET_ACCESS_KEY`),
        );
      });
    }
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "s3-bucket-encrypted",
    breaks: "switches the model bucket's default encryption to SSE-S3 (AES256)",
    mutate: (rs) =>
      (first(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules[0].applyServerSideEncryptionByDefault = {
        sseAlgorithm: "AES256",
      }),
  },
  {
    rule: "s3-bucket-versioned",
    breaks: "suspends versioning of the model bucket",
    mutate: (rs) => (first(rs, "aws:s3/bucketVersioning:BucketVersioning").props.versioningConfiguration.status = "Suspended"),
  },
  {
    rule: "s3-public-access-blocked",
    breaks: "turns off blockPublicPolicy on the model bucket",
    mutate: (rs) => (first(rs, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock").props.blockPublicPolicy = false),
  },
  {
    rule: "s3-tls-only",
    breaks: "drops the aws:SecureTransport deny from the bucket policy",
    mutate: (rs) => {
      const p = first(rs, "aws:s3/bucketPolicy:BucketPolicy");
      const doc = JSON.parse(p.props.policy);
      doc.Statement = doc.Statement.filter((st: { Sid?: string }) => st.Sid !== "DenyInsecureTransport");
      p.props.policy = JSON.stringify(doc);
    },
  },
  {
    rule: "iam-statements-least-privilege",
    breaks: "widens the reader's s3:GetObject to arn:aws:s3:::*/* (every bucket's objects)",
    mutate: (rs) =>
      editDoc(
        rs,
        "aws:iam/rolePolicy:RolePolicy",
        "model-repository-reader",
        "policy",
        (d) => (d.Statement.find((st: { Action: unknown }) => st.Action === "s3:GetObject").Resource = "arn:aws:s3:::*/*"),
      ),
  },
  {
    rule: "no-plaintext-credentials",
    breaks: "adds a plaintext Secret holding AWS keys",
    mutate: (rs) =>
      rs.push(
        k8sObject(rs, "kubernetes:core/v1:Secret", "aws-keys", {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "aws-keys", namespace: "triton" },
          stringData: {
            credentials: "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
          },
        }),
      ),
  },
  {
    rule: "s3-access-logging",
    breaks: "removes the bucket's access logging (advisory)",
    mutate: (rs) => rs.splice(rs.indexOf(first(rs, "aws:s3/bucketLogging:BucketLogging")), 1),
  },
]);
