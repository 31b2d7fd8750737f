// The model repository: each hardening setting of the S3 bucket is planned, the IAM documents
// name only this bucket / prefix / key, the IRSA trust is exact, and the EFS backend plans the
// file system, mount targets, NFS rule and a read-only volume the EFS CSI driver can mount.
import { strict as assert } from "node:assert";
import { plan, planFixture, fixtureStack, one, ofType } from "./helpers";
import type { RecordedResource } from "../tools/planner";
import {
  resolveModelRepositoryArgs,
  modelReadPolicy,
  modelPublishPolicy,
  irsaTrustPolicy,
  tlsOnlyBucketPolicy,
  bucketHardening,
  s3ReaderEnv,
  efsPersistentVolume,
  efsClaim,
  type PolicyDocument,
} from "../components/model-repository";
import { EFS_CSI_CHART, EFS_CSI_DRIVER, EFS_SUPPORTED_FIRST_ACCESS_MODES, NFS_PORT } from "../components/upstream/aws-efs-csi";
import { IRSA_ROLE_ANNOTATION, oidcProviderArn } from "../components/upstream/aws-iam";
import { FAKE_ACCOUNT_ID } from "../tools/planner/fakes";
import { TRITON_GID, TRITON_UID } from "../components/contracts";
import { isSettingsError } from "../lib/errors";

const parse = (v: unknown): PolicyDocument => {
  assert.equal(typeof v, "string", "IAM documents reach AWS as JSON strings");
  return JSON.parse(v as string);
};
const resourcesOf = (doc: PolicyDocument) => doc.Statement.flatMap((s) => ([] as string[]).concat(s.Resource ?? []));
const dependsOn = (r: RecordedResource, target: RecordedResource) => r.dependencies.includes(target.urn);

describe("model repository", () => {
  describe("S3 backend (prod plan)", () => {
    let rs: RecordedResource[];
    let bucket: RecordedResource;
    let bucketArn: string;
    let keyArn: string;
    before(async () => {
      rs = (await plan("prod")).resources;
      bucket = one(rs, "aws:s3/bucket:Bucket");
      bucketArn = `arn:aws:s3:::${bucket.props.bucketPrefix}00000000000000000000000000`;
      keyArn = one(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").props.rules[0]
        .applyServerSideEncryptionByDefault.kmsMasterKeyId;
    });

    it("creates the bucket with a prefix and refuses to delete it with its models", () => {
      assert.equal(bucket.props.bucketPrefix, "triton-models-prod-");
      assert.equal(bucket.props.forceDestroy, false);
    });

    it("attaches every hardening setting to that bucket", () => {
      const setting = (type: string) => {
        const r = one(rs, type);
        assert.ok(dependsOn(r, bucket), `${type} depends on the bucket`);
        return r.props;
      };
      assert.deepEqual(setting("aws:s3/bucketVersioning:BucketVersioning").versioningConfiguration, { status: "Enabled" });
      const sse = setting("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration").rules[0];
      assert.equal(sse.applyServerSideEncryptionByDefault.sseAlgorithm, "aws:kms");
      assert.match(sse.applyServerSideEncryptionByDefault.kmsMasterKeyId, /^arn:aws:kms:us-east-1:\d{12}:key\//);
      assert.equal(sse.bucketKeyEnabled, true);
      const pab = setting("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock");
      for (const f of ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"]) assert.equal(pab[f], true, f);
      assert.deepEqual(setting("aws:s3/bucketOwnershipControls:BucketOwnershipControls").rule, { objectOwnership: "BucketOwnerEnforced" });
      const lc = setting("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration").rules[0];
      assert.equal(lc.status, "Enabled");
      assert.deepEqual(lc.noncurrentVersionExpiration, { noncurrentDays: 90 }, "prod's noncurrentVersionDays");
    });

    it("creates the KMS key with rotation and the longest deletion window", () => {
      const key = one(rs, "aws:kms/key:Key", "model-repository-key");
      assert.equal(key.props.enableKeyRotation, true);
      assert.equal(key.props.deletionWindowInDays, 30);
    });

    it("applies the lifecycle rule only after versioning is on", () => {
      const lc = one(rs, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration");
      assert.ok(dependsOn(lc, one(rs, "aws:s3/bucketVersioning:BucketVersioning")));
    });

    it("denies non-TLS requests to the bucket and its objects", () => {
      const doc = parse(one(rs, "aws:s3/bucketPolicy:BucketPolicy").props.policy);
      const deny = doc.Statement.find((s) => s.Condition?.Bool?.["aws:SecureTransport"] === "false");
      assert.ok(deny, "a statement on aws:SecureTransport");
      assert.equal(deny.Effect, "Deny");
      assert.equal(deny.Principal, "*");
      assert.deepEqual(deny.Resource, [bucketArn, `${bucketArn}/*`]);
      assert.ok(
        doc.Statement.every((s) => s.Effect === "Deny"),
        "the bucket policy grants nothing",
      );
    });

    it("gives the reader role list/get on the model prefix and decrypt on the key, nothing else", () => {
      const doc = parse(one(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-reader").props.policy);
      const actions = doc.Statement.flatMap((s) => ([] as string[]).concat(s.Action)).sort();
      assert.deepEqual(actions, ["kms:Decrypt", "s3:GetObject", "s3:ListBucket", "s3:ListBucket"]);
      for (const r of resourcesOf(doc)) assert.ok(r === bucketArn || r === `${bucketArn}/models/*` || r === keyArn, `unexpected resource ${r}`);
      // Listing: the prefix's folders, and HeadBucket (no s3:prefix); what the requests get is in model-repository-iam-simulated.test.ts.
      const lists = doc.Statement.filter((s) => s.Action === "s3:ListBucket").map((s) => s.Condition);
      assert.deepEqual(lists, [{ StringLike: { "s3:prefix": "models/*" } }, { Null: { "s3:prefix": "true" } }]);
    });

    it("trusts exactly the triton ServiceAccount through the cluster's OIDC provider", () => {
      const trust = parse(one(rs, "aws:iam/role:Role", "model-repository-reader").props.assumeRolePolicy);
      assert.equal(trust.Statement.length, 1);
      const [s] = trust.Statement;
      const issuer = "oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF";
      assert.deepEqual(s.Principal, { Federated: `arn:aws:iam::${FAKE_ACCOUNT_ID}:oidc-provider/${issuer}` });
      assert.equal(s.Action, "sts:AssumeRoleWithWebIdentity");
      assert.deepEqual(s.Condition, { StringEquals: { [`${issuer}:sub`]: "system:serviceaccount:triton:triton", [`${issuer}:aud`]: "sts.amazonaws.com" } });
    });

    it("annotates the Triton ServiceAccount with the reader role", () => {
      const sa = one(rs, "kubernetes:core/v1:ServiceAccount", "model-repository-sa");
      assert.equal(sa.props.metadata.namespace, "triton");
      assert.match(sa.props.metadata.annotations[IRSA_ROLE_ANNOTATION], new RegExp(`^arn:aws:iam::${FAKE_ACCOUNT_ID}:role/model-repository-reader`));
      assert.ok(sa.dependencies.includes(one(rs, "aws:iam/role:Role", "model-repository-reader").urn));
      assert.equal(sa.props.automountServiceAccountToken, false);
    });

    it("creates the publisher role for the configured CI principal only, writing to the prefix only", () => {
      const trust = parse(one(rs, "aws:iam/role:Role", "model-repository-publisher").props.assumeRolePolicy);
      assert.deepEqual(trust.Statement[0].Principal, { AWS: [`arn:aws:iam::${FAKE_ACCOUNT_ID}:role/ml-model-publisher-ci`] });
      const doc = parse(one(rs, "aws:iam/rolePolicy:RolePolicy", "model-repository-publisher").props.policy);
      for (const r of resourcesOf(doc)) assert.ok(r === bucketArn || r === `${bucketArn}/models/*` || r === keyArn, `unexpected resource ${r}`);
      assert.ok(
        !doc.Statement.some((s) => ([] as string[]).concat(s.Action).some((a) => /Bucket(Policy|Acl)|s3:\*/.test(a))),
        "no bucket configuration rights",
      );
    });

    it("exports the s3:// URI Triton reads", async () => {
      const p = await plan("prod");
      assert.equal(p.outputs.modelRepositoryUri, "s3://triton-models-prod-00000000000000000000000000/models");
    });

    it("creates no publisher role where it is not enabled (dev)", async () => {
      const dev = (await plan("dev")).resources;
      assert.deepEqual(
        ofType(dev, "aws:iam/role:Role")
          .map((r) => r.name)
          .filter((n) => n.startsWith("model-repository")),
        ["model-repository-reader"],
      );
    });
  });

  describe("S3 backend variants", function () {
    this.timeout(60_000);
    it("reads an existing bucket in another region: no bucket or key created, the read policy names that bucket and key", async () => {
      const p = await planFixture(
        fixtureStack("dev", {
          modelRepository: {
            kmsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-4333-8444-555555555555",
            s3: { existingBucket: "shared-models.example", bucketRegion: "eu-west-1" },
          },
        }),
      );
      assert.equal(ofType(p.resources, "aws:s3/bucket:Bucket").length, 0);
      assert.equal(ofType(p.resources, "aws:kms/key:Key").filter((k) => k.name === "model-repository-key").length, 0, "the given key is used");
      const doc = parse(one(p.resources, "aws:iam/rolePolicy:RolePolicy", "model-repository-reader").props.policy);
      assert.deepEqual(resourcesOf(doc), [
        "arn:aws:s3:::shared-models.example",
        "arn:aws:s3:::shared-models.example",
        "arn:aws:s3:::shared-models.example/models/*",
        "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-4333-8444-555555555555",
      ]);
      assert.deepEqual(doc.Statement.find((s) => s.Sid === "DecryptModels")?.Condition, { StringEquals: { "kms:ViaService": "s3.eu-west-1.amazonaws.com" } });
      assert.equal(p.outputs.modelRepositoryUri, "s3://shared-models.example/models");
    });
  });

  describe("pure builders", () => {
    const access = { bucketArn: "arn:aws:s3:::b", prefix: "m/v1", kmsKeyArn: "arn:aws:kms:us-east-1:123456789012:key/k", region: "us-east-1" };

    it("never grant a wildcard resource", () => {
      for (const doc of [modelReadPolicy(access), modelPublishPolicy(access)]) {
        const json = JSON.parse(JSON.stringify(doc)) as PolicyDocument;
        for (const r of resourcesOf(json)) assert.ok(!r.includes("*") || r === "arn:aws:s3:::b/m/v1/*", r);
      }
    });

    it("put the exact subject in the trust policy, for any namespace and name", () => {
      const doc = irsaTrustPolicy({
        sid: "TritonServiceAccountOnly",
        providerArn: "p",
        issuerUrl: "https://oidc.example/id/X/",
        namespace: "ns-a",
        serviceAccount: "sa-b",
      });
      assert.deepEqual(doc.Statement[0].Condition!.StringEquals, {
        "oidc.example/id/X:sub": "system:serviceaccount:ns-a:sa-b",
        "oidc.example/id/X:aud": "sts.amazonaws.com",
      });
      assert.equal(oidcProviderArn("aws-cn", "1", "https://oidc.example/id/X"), "arn:aws-cn:iam::1:oidc-provider/oidc.example/id/X");
    });

    it("set AWS_DEFAULT_REGION only for a bucket in another region", () => {
      assert.deepEqual(s3ReaderEnv("us-east-1", "us-east-1"), []);
      assert.deepEqual(s3ReaderEnv("eu-west-1", "us-east-1"), [{ name: "AWS_DEFAULT_REGION", value: "eu-west-1" }]);
    });

    it("harden whatever bucket they are given", () => {
      const h = bucketHardening("b", "k", 5);
      assert.equal(h.lifecycle.rules[0].noncurrentVersionExpiration.noncurrentDays, 5);
      assert.equal(JSON.stringify(tlsOnlyBucketPolicy("arn:aws:s3:::b")).includes("aws:SecureTransport"), true);
    });
  });

  describe("EFS backend (staging plan)", () => {
    let rs: RecordedResource[];
    before(async () => {
      rs = (await plan("staging")).resources;
    });

    it("creates an encrypted file system and no bucket", () => {
      const fs = one(rs, "aws:efs/fileSystem:FileSystem");
      assert.equal(fs.props.encrypted, true);
      assert.match(fs.props.kmsKeyId, /^arn:aws:kms:/);
      assert.equal(ofType(rs, "aws:s3/bucket:Bucket").length, 0);
      assert.deepEqual(
        ofType(rs, "aws:iam/role:Role").filter((r) => r.name.startsWith("model-repository")),
        [],
        "EFS needs no IAM role for Triton",
      );
    });

    it("puts a mount target in every configured subnet, behind the NFS security group", () => {
      const sg = one(rs, "aws:ec2/securityGroup:SecurityGroup", "model-repository-nfs");
      const mts = ofType(rs, "aws:efs/mountTarget:MountTarget");
      assert.deepEqual(mts.map((m) => m.props.subnetId).sort(), ["subnet-0a00000000000000a", "subnet-0b00000000000000b"]);
      for (const m of mts) {
        assert.equal(m.props.fileSystemId, "fs-0e1f5000000000000");
        assert.deepEqual(m.props.securityGroups, ["model-repository-nfs-id"]);
        assert.ok(m.dependencies.includes(sg.urn));
      }
    });

    it("admits only TCP 2049 from the node security group", () => {
      assert.equal(one(rs, "aws:ec2/securityGroup:SecurityGroup", "model-repository-nfs").props.ingress, undefined, "no inline rules");
      const rule = one(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "model-repository-nfs-from-gpu-nodes");
      assert.deepEqual(
        {
          proto: rule.props.ipProtocol,
          from: rule.props.fromPort,
          to: rule.props.toPort,
          src: rule.props.referencedSecurityGroupId,
          cidr: rule.props.cidrIpv4,
        },
        { proto: "tcp", from: NFS_PORT, to: NFS_PORT, src: "gpu-nodes-id", cidr: undefined },
      );
      assert.ok(
        rule.dependencies.includes(one(rs, "aws:ec2/securityGroup:SecurityGroup", "gpu-nodes").urn),
        "the source is the GPU node group's security group",
      );
    });

    it("roots the access point at the model folder, owned by Triton's uid/gid", () => {
      const ap = one(rs, "aws:efs/accessPoint:AccessPoint").props;
      assert.deepEqual(ap.posixUser, { uid: TRITON_UID, gid: TRITON_GID });
      assert.equal(ap.rootDirectory.path, "/models");
      assert.deepEqual(ap.rootDirectory.creationInfo, { ownerUid: 1000, ownerGid: 1000, permissions: "0755" });
    });

    it("binds a read-only claim to a static PV of the EFS CSI driver that the driver can mount", () => {
      const sc = one(rs, "kubernetes:storage.k8s.io/v1:StorageClass", "model-repository-efs").props;
      const pv = one(rs, "kubernetes:core/v1:PersistentVolume").props;
      const pvc = one(rs, "kubernetes:core/v1:PersistentVolumeClaim").props;
      assert.equal(sc.provisioner, EFS_CSI_DRIVER);
      assert.equal(pv.spec.csi.driver, EFS_CSI_DRIVER);
      assert.equal(pv.spec.csi.volumeHandle, "fs-0e1f5000000000000::fsap-0e1f5a00000000000");
      assert.equal(pv.spec.csi.readOnly, true);
      assert.ok((EFS_SUPPORTED_FIRST_ACCESS_MODES as readonly string[]).includes(pv.spec.accessModes[0]), "kubelet sends the first mode to the driver");
      assert.ok(pv.spec.accessModes.includes("ReadOnlyMany"));
      assert.deepEqual(pvc.spec.accessModes, ["ReadOnlyMany"]);
      assert.equal(pvc.spec.volumeName, pv.metadata.name);
      assert.deepEqual(pv.spec.claimRef, { namespace: pvc.metadata.namespace, name: pvc.metadata.name });
      assert.equal(pvc.spec.storageClassName, sc.metadata.name);
      assert.equal(pv.spec.persistentVolumeReclaimPolicy, "Retain");
    });

    it("creates the PV only after the mount targets exist", () => {
      const pv = one(rs, "kubernetes:core/v1:PersistentVolume");
      for (const mt of ofType(rs, "aws:efs/mountTarget:MountTarget")) assert.ok(pv.dependencies.includes(mt.urn), mt.name);
    });

    it("installs the EFS CSI driver from its pinned chart, tolerating the GPU taint", () => {
      const rel = one(rs, "kubernetes:helm.sh/v3:Release", "model-repository-efs-csi").props;
      assert.equal(rel.chart, EFS_CSI_CHART.chart);
      assert.match(rel.version, /^\d+\.\d+\.\d+$/);
      assert.equal(rel.repositoryOpts.repo, EFS_CSI_CHART.repo);
      assert.deepEqual(rel.values.node.tolerations, [{ operator: "Exists" }]);
    });

    it("exports the mount path as the repository URI", async () => {
      assert.equal((await plan("staging")).outputs.modelRepositoryUri, "/models");
    });

    it("the pure PV/PVC builders keep ReadOnlyMany off the PV's first position", () => {
      const pv = efsPersistentVolume({
        name: "v",
        storageClass: "s",
        claim: { namespace: "n", name: "c" },
        fileSystemId: "fs-1",
        accessPointId: "fsap-1",
        labels: {},
      });
      assert.notEqual(pv.spec!.accessModes![0], "ReadOnlyMany");
      assert.deepEqual(efsClaim({ name: "c", namespace: "n", volume: "v", storageClass: "s", labels: {} }).spec!.accessModes, ["ReadOnlyMany"]);
    });
  });

  describe("argument rules", () => {
    const base = { namespace: "triton", labels: {}, clusterRegion: "us-east-1", oidcIssuerUrl: "https://oidc" };
    const errorsOf = (f: () => unknown): string[] => {
      try {
        f();
      } catch (e) {
        assert.ok(isSettingsError(e), String(e));
        return e.details.map((x) => x.key);
      }
      assert.fail("expected a SettingsError");
    };

    it("an efs backend without subnets, VPC or node security group is an error naming each", () => {
      assert.deepEqual(
        errorsOf(() => resolveModelRepositoryArgs({ ...base, backend: "efs" })),
        ["efs.subnetIds", "vpcId", "nodeSecurityGroupId"],
      );
    });

    it("an existing bucket without its KMS key is an error", () => {
      assert.deepEqual(
        errorsOf(() => resolveModelRepositoryArgs({ ...base, s3: { existingBucket: "models-bucket" } })),
        ["kmsKeyArn"],
      );
    });

    it("a key in another region than the bucket is an error", () => {
      const kmsKeyArn = "arn:aws:kms:us-west-2:123456789012:key/11111111-2222-4333-8444-555555555555";
      assert.deepEqual(
        errorsOf(() => resolveModelRepositoryArgs({ ...base, kmsKeyArn })),
        ["kmsKeyArn"],
      );
      assert.equal(resolveModelRepositoryArgs({ ...base, kmsKeyArn, s3: { bucketRegion: "us-west-2" } }).s3?.bucketRegion, "us-west-2");
    });

    it("defaults: s3, prefix models, ServiceAccount triton, 30 days, no publisher", () => {
      const r = resolveModelRepositoryArgs(base);
      assert.deepEqual(
        [r.backend, r.modelPrefix, r.serviceAccountName, r.s3?.noncurrentVersionDays, r.s3?.publisher.enabled, r.s3?.bucketRegion, r.s3?.bucketPrefix],
        ["s3", "models", "triton", 30, false, "us-east-1", "triton-models-"],
      );
    });

    it("an existing bucket gets no bucket prefix, not even the default one", () => {
      const kmsKeyArn = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-4333-8444-555555555555";
      const r = resolveModelRepositoryArgs({ ...base, kmsKeyArn, s3: { existingBucket: "models-bucket" } });
      assert.deepEqual([r.s3?.existingBucket, r.s3?.bucketPrefix], ["models-bucket", undefined]);
    });

    it("an unknown argument is an error, not ignored (a typo would fall back to a default)", () => {
      assert.deepEqual(
        errorsOf(() => resolveModelRepositoryArgs({ ...base, modelPrefx: "m" } as never)),
        ["modelPrefx"],
      );
    });

    it("reports the references an efs backend needs together with broken settings, under the component's name", () => {
      try {
        resolveModelRepositoryArgs({ ...base, backend: "efs", modelPrefix: "/models" }, "repo");
        assert.fail("expected a SettingsError");
      } catch (e) {
        assert.ok(isSettingsError(e), String(e));
        assert.equal(e.subject, 'invalid arguments of ModelRepository "repo"');
        assert.deepEqual(
          e.details.map((x) => x.key),
          ["modelPrefix", "efs.subnetIds", "vpcId", "nodeSecurityGroupId"],
        );
      }
    });

    it("an efs backend with a key of another region than the cluster is an error naming the file system's region", () => {
      const efs = { ...base, backend: "efs" as const, efs: { subnetIds: ["subnet-0a1b2c3d"] }, vpcId: "vpc-1", nodeSecurityGroupId: "sg-1" };
      assert.equal(resolveModelRepositoryArgs(efs).dataRegion, "us-east-1");
      try {
        resolveModelRepositoryArgs({ ...efs, kmsKeyArn: "arn:aws:kms:us-west-2:123456789012:key/11111111-2222-4333-8444-555555555555" });
        assert.fail("expected a SettingsError");
      } catch (e) {
        assert.ok(isSettingsError(e), String(e));
        assert.deepEqual(e.problems, [
          "kmsKeyArn must be a key in the file system's region us-east-1 (EFS encrypts with a key of its own region), " +
            'got "arn:aws:kms:us-west-2:123456789012:key/11111111-2222-4333-8444-555555555555"',
        ]);
      }
    });
  });
});
