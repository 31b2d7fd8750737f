// Every persistent volume of every stack names a StorageClass, and that class exists: the
// encrypted gp3 class on the EBS CSI driver the stack creates, or the existing class a stack
// names. (EKS clusters created at 1.30+ have no default StorageClass: a claim without a
// class, or naming one nobody created, stays Pending.) Also the storage section's rules.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { plan, planFixture, ofType, validateManifest } from "./helpers";
import { fixtureConfig, fixtureStack, SHAPES } from "./support/stacks";
import type { RecordedResource } from "../tools/planner";
import { loadConfig, ConfigError } from "../config";
import { SettingsError } from "../lib/errors";
import { CREATED_STORAGE_CLASS, ebsStorageClass, resolveClusterStorageArgs, storageClassNameOf } from "../components/storage";
import { EBS_CSI_DRIVER } from "../components/upstream/aws-ebs-csi";
import { HELM_RELEASE } from "../policies/rules/types";

const STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass";
const KMS_KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";

/** Each place a claim is written in the plan: its path, and the class it names (undefined: none). */
function claims(resources: RecordedResource[]): { at: string; storageClassName: unknown }[] {
  const found: { at: string; storageClassName: unknown }[] = [];
  const walk = (x: unknown, at: string): void => {
    if (Array.isArray(x)) return x.forEach((e, i) => walk(e, `${at}[${i}]`));
    if (x === null || typeof x !== "object") return;
    const o = x as Record<string, any>;
    // A volumeClaimTemplate (prometheus-operator StorageSpec) or a StatefulSet's volumeClaimTemplates item.
    if (o.volumeClaimTemplate !== undefined) found.push({ at: `${at}.volumeClaimTemplate`, storageClassName: o.volumeClaimTemplate?.spec?.storageClassName });
    if (Array.isArray(o.volumeClaimTemplates))
      o.volumeClaimTemplates.forEach((t: any, i: number) =>
        found.push({ at: `${at}.volumeClaimTemplates[${i}]`, storageClassName: t?.spec?.storageClassName }),
      );
    for (const [k, v] of Object.entries(o)) walk(v, `${at}.${k}`);
  };
  for (const r of resources) {
    if (!r.custom) continue;
    if (r.type === "kubernetes:core/v1:PersistentVolumeClaim") found.push({ at: r.name, storageClassName: r.props.spec?.storageClassName });
    else walk(r.props, r.name);
  }
  return found;
}

const kpsValues = (rs: RecordedResource[]) => {
  const kps = ofType(rs, HELM_RELEASE).filter((r) => r.props.chart === "kube-prometheus-stack");
  assert.equal(kps.length, 1, "one kube-prometheus-stack release");
  return kps[0];
};

describe("persistent volumes name a StorageClass that exists", () => {
  for (const shape of SHAPES) {
    describe(shape, () => {
      it("creates the encrypted gp3 class on the EBS CSI driver, valid against the Kubernetes schema", async () => {
        const { resources } = await plan(shape);
        const ebs = ofType(resources, STORAGE_CLASS).filter((r) => r.props.provisioner === EBS_CSI_DRIVER);
        assert.equal(ebs.length, 1, "one EBS StorageClass");
        const sc = ebs[0].props;
        assert.equal(sc.metadata.name, CREATED_STORAGE_CLASS);
        assert.deepEqual(sc.parameters, { type: "gp3", encrypted: "true", "csi.storage.k8s.io/fstype": "ext4" });
        assert.equal(sc.volumeBindingMode, "WaitForFirstConsumer");
        assert.equal(sc.allowVolumeExpansion, true);
        assert.equal(sc.reclaimPolicy, "Delete");
        assert.equal(sc.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"], undefined, "named by the claims, not the cluster default");
        await validateManifest({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", ...sc });
      });

      it("names it from the Prometheus and the Alertmanager volume, after it is created", async () => {
        const { resources } = await plan(shape);
        const kps = kpsValues(resources);
        const v = kps.props.values;
        assert.equal(v.prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.storageClassName, CREATED_STORAGE_CLASS);
        assert.equal(v.alertmanager.alertmanagerSpec.storage.volumeClaimTemplate.spec.storageClassName, CREATED_STORAGE_CLASS);
        const sc = ofType(resources, STORAGE_CLASS).find((r) => r.props.metadata.name === CREATED_STORAGE_CLASS)!;
        // The Monitoring component (whose children write the claims) waits for the class.
        const monitoring = resources.find((r) => r.urn === kps.parent)!;
        assert.ok(monitoring.dependencies.includes(sc.urn), `${monitoring.name} depends on ${sc.name}`);
      });

      it("has no claim in the plan without a class, or naming a class the plan does not create", async () => {
        const { resources } = await plan(shape);
        const classes = new Set(ofType(resources, STORAGE_CLASS).map((r) => r.props.metadata.name));
        const found = claims(resources);
        assert.ok(found.length >= 2, "finds the Prometheus and Alertmanager claims");
        for (const c of found)
          assert.ok(typeof c.storageClassName === "string" && classes.has(c.storageClassName), `${c.at} names ${String(c.storageClassName)}`);
      });

      it("with storage.existing, creates no EBS class and names the existing one from both volumes", async () => {
        const { resources } = await planFixture(fixtureStack(shape, { storage: { existing: "gp3" } }, `${shape}-existing`));
        assert.equal(ofType(resources, STORAGE_CLASS).filter((r) => r.props.provisioner === EBS_CSI_DRIVER).length, 0);
        const v = kpsValues(resources).props.values;
        assert.equal(v.prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec.storageClassName, "gp3");
        assert.equal(v.alertmanager.alertmanagerSpec.storage.volumeClaimTemplate.spec.storageClassName, "gp3");
        const classes = new Set([...ofType(resources, STORAGE_CLASS).map((r) => r.props.metadata.name), "gp3"]);
        for (const c of claims(resources))
          assert.ok(typeof c.storageClassName === "string" && classes.has(c.storageClassName), `${c.at} names ${String(c.storageClassName)}`);
      });
    });
  }

  it("encrypts with the configured KMS key", async () => {
    const { resources } = await planFixture(fixtureStack("prod", { storage: { kmsKeyId: KMS_KEY } }, "prod-kms"));
    const sc = ofType(resources, STORAGE_CLASS).find((r) => r.props.provisioner === EBS_CSI_DRIVER)!.props;
    assert.equal(sc.parameters.kmsKeyId, KMS_KEY);
    assert.equal(sc.parameters.encrypted, "true");
    await validateManifest({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", ...sc });
  });
});

describe("storage settings", () => {
  const raw = (storage: unknown): Record<string, string> => ({ ...fixtureConfig("dev"), "triton-platform:storage": JSON.stringify(storage) });
  const rejects = (storage: unknown, ...lines: RegExp[]) =>
    assert.throws(
      () => loadConfig(raw(storage), "s"),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        for (const re of lines) assert.match(e.message, re);
        return true;
      },
    );

  it("defaults to creating the class (no section, or an empty one)", () => {
    const { ["triton-platform:storage"]: _none, ...without } = raw({});
    assert.deepEqual(loadConfig(without, "s").storage, {});
    assert.deepEqual(loadConfig(raw({}), "s").storage, {});
    assert.equal(storageClassNameOf({}), CREATED_STORAGE_CLASS);
  });

  it("names the key, the rule and the value of each bad setting", () => {
    rejects({ existing: "GP3" }, /triton-platform:storage\.existing must be a StorageClass name .*, got "GP3"/);
    rejects({ kmsKeyId: "alias/aws/ebs" }, /triton-platform:storage\.kmsKeyId must be a KMS key ARN .*, got "alias\/aws\/ebs"/);
    rejects({ existing: "gp3", kmsKeyId: KMS_KEY }, /triton-platform:storage\.kmsKeyId must not be set with existing/);
    rejects({ class: "gp3" }, /triton-platform:storage\.class is not a known key/);
  });

  it("reports a direct caller's bad arguments naming the component", () => {
    assert.throws(
      () => resolveClusterStorageArgs({ labels: {}, region: "us-east-1", existing: "-x", kmsKeyId: "k" }, "st"),
      (e: unknown) => {
        assert.ok(e instanceof SettingsError, String(e));
        assert.equal(e.subject, 'invalid arguments of ClusterStorage "st"');
        assert.match(e.message, /existing must be a StorageClass name .*, got "-x"/);
        assert.match(e.message, /kmsKeyId must be a KMS key ARN .*, got "k"/);
        assert.match(e.message, /kmsKeyId must not be set with existing/);
        return true;
      },
    );
  });

  it("refuses a KMS key of another region than the cluster's, in the plan, naming the key", async () => {
    const west = KMS_KEY.replace("us-east-1", "us-west-2");
    assert.equal(resolveClusterStorageArgs({ labels: {}, region: "us-east-1", kmsKeyId: KMS_KEY }).kmsKeyId, KMS_KEY);
    await assert.rejects(planFixture(fixtureStack("prod", { storage: { kmsKeyId: west } }, "prod-west-key")), (e: unknown) => {
      assert.match(
        String(e),
        /kmsKeyId must be a key in the cluster's region us-east-1 \(EBS encrypts with a key of the volume's region\), got "arn:aws:kms:us-west-2:/,
      );
      return true;
    });
  });

  it("uses any valid existing class name as given and creates nothing (property)", () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 4 }), (labels) => {
        const existing = labels.join(".");
        const r = resolveClusterStorageArgs({ labels: {}, region: "us-east-1", existing });
        return storageClassNameOf(r) === existing && ebsStorageClass(r) === undefined;
      }),
    );
  });
});
