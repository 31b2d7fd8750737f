// Triton's control APIs (model repository, model config, shared memory, logging, trace,
// statistics) answer only requests carrying the admin header with the value of a generated
// Secret, on every Triton command line of every stack shape (primary and canary); health,
// metadata and inference stay open; the Secret's value is nowhere in clear in the plan.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { TRITON_ADMIN_GRPC_METADATA, TRITON_ADMIN_HEADER } from "../components/contracts";
import { ADMIN_KEY_ENV, tritonAdminSecretName, tritonGroupWarnings, resolveTritonServer, type TritonServerArgs } from "../components/triton";
import { ADMIN_ONLY_APIS, GRPC_RESTRICTED_KEY_PREFIX, RESTRICTED_CATEGORIES, parseTritonServerArgs } from "../components/upstream/tritonserver";
import { MASK, SECRET_PLACEHOLDER } from "../tools/planner/fakes";
import { isTritonPodLabels } from "../policies/rules/util";
import { ofType, plan, planFixture, fixtureStack, SHAPES } from "./helpers";

const STS = "kubernetes:apps/v1:StatefulSet";
const SECRET = "kubernetes:core/v1:Secret";

/** `$(VAR)` references Kubernetes expands in a container's args. */
const refs = (args: readonly string[]) => args.flatMap((a) => [...a.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)].map((m) => m[1]));

describe("Triton's control APIs need the admin key", () => {
  for (const shape of SHAPES) {
    describe(shape, () => {
      it("every Triton container restricts exactly the control APIs, over HTTP and gRPC, to the admin header", async () => {
        const p = await plan(shape);
        const triton = ofType(p.resources, STS).filter((r) => isTritonPodLabels(r.props.spec.template.metadata.labels));
        assert.ok(triton.length >= 1);
        for (const sts of triton) {
          const c = sts.props.spec.template.spec.containers[0];
          const release = /:(\d{2}\.\d{2})-/.exec(c.image)![1];
          const opts = parseTritonServerArgs(c.args, release); // both flags present, same apis, same key and value
          assert.equal(opts.admin.header, TRITON_ADMIN_HEADER, sts.name);
          assert.deepEqual([...ADMIN_ONLY_APIS].sort(), ["logging", "model-config", "model-repository", "shared-memory", "statistics", "trace"]);
          const open = RESTRICTED_CATEGORIES.filter((x) => !(ADMIN_ONLY_APIS as readonly string[]).includes(x));
          assert.deepEqual(open, ["health", "metadata", "inference"], "health, metadata and inference stay open");
          // The value is a reference to the container's env, which comes from the group's Secret.
          assert.equal(opts.admin.value, `$(${ADMIN_KEY_ENV})`);
          const env = c.env.find((e: { name: string }) => e.name === ADMIN_KEY_ENV);
          const group = sts.props.spec.template.metadata.labels["app.kubernetes.io/instance"];
          assert.deepEqual(env.valueFrom, { secretKeyRef: { name: tritonAdminSecretName(group), key: "key" } });
          for (const v of refs(c.args))
            assert.ok(
              c.env.some((e: { name: string }) => e.name === v),
              `$(${v}) is defined, or the kubelet passes it literally`,
            );
          // Explicit model control stays (the repository API is what the key guards).
          assert.equal(opts.modelControlMode, "explicit");
          assert.equal(opts.headerForwardPattern, "x-request-id");
        }
      });

      it("the group's Secret exists in the pods' namespace, is created before them, and its value is never in clear", async () => {
        const p = await plan(shape);
        for (const sts of ofType(p.resources, STS).filter((r) => isTritonPodLabels(r.props.spec.template.metadata.labels))) {
          const group = sts.props.spec.template.metadata.labels["app.kubernetes.io/instance"];
          const secret = ofType(p.resources, SECRET).find((s) => s.props.metadata.name === tritonAdminSecretName(group))!;
          assert.ok(secret, `Secret ${tritonAdminSecretName(group)}`);
          assert.equal(secret.props.metadata.namespace, sts.props.metadata.namespace);
          assert.equal(secret.props.stringData.key, MASK);
          assert.ok(sts.dependencies.includes(secret.urn), `${sts.name} waits for the Secret`);
        }
        const files = [
          path.join(p.outRoot, shape, "resources.json"),
          ...fs.readdirSync(path.join(p.outRoot, shape, "manifests")).map((f) => path.join(p.outRoot, shape, "manifests", f)),
        ];
        for (const f of files) assert.ok(!fs.readFileSync(f, "utf8").includes(SECRET_PLACEHOLDER), `${path.basename(f)} holds the secret's value`);
        assert.ok(fs.readFileSync(files[0], "utf8").includes("random:index/randomPassword:RandomPassword"), "the value is generated, not configured");
      });
    });
  }

  it("the gRPC metadata key the gateway strips is the one Triton checks", () => {
    assert.equal(TRITON_ADMIN_GRPC_METADATA, GRPC_RESTRICTED_KEY_PREFIX + TRITON_ADMIN_HEADER);
  });
});

describe("a canary older than its primary is a warning", () => {
  const base: TritonServerArgs = {
    name: "vision",
    namespace: "triton",
    labels: {},
    modelRepository: { uri: "s3://b/p", serviceAccountName: "triton", env: [], egressPort: 443 },
    priorityClassName: "triton-serving",
    zoneCount: 2,
    longestRequestSeconds: 60,
    models: ["resnet50"],
    image: { tag: "26.08-py3" },
    replicas: 2,
    gpu: { type: "nvidia-l4" },
    cpu: "4",
    memory: "16Gi",
    canary: { replicas: 1, image: { tag: "26.02-py3" } },
  };

  it("names both releases and the key; a newer, equal or absent canary image warns of nothing", () => {
    const [w, ...more] = tritonGroupWarnings(resolveTritonServer(base));
    assert.equal(more.length, 0);
    assert.match(w, /serving group vision: the canary runs Triton 26\.02 .* older than the primary's 26\.08 .*canary\.image\.tag/);
    for (const canary of [{ replicas: 1, image: { tag: "26.08-py3-min" } }, { replicas: 1 }, { replicas: 1, image: { tag: "25.07-py3" } }]) {
      const primaryOlder = canary.image?.tag === "25.07-py3" ? { image: { tag: "25.02-py3" } } : {};
      assert.deepEqual(tritonGroupWarnings(resolveTritonServer({ ...base, ...primaryOlder, canary })), []);
    }
    assert.deepEqual(tritonGroupWarnings(resolveTritonServer({ ...base, canary: undefined })), []);
  });

  it("the plan reports it and still plans", async () => {
    const p = await planFixture(
      fixtureStack("staging", (s) => {
        s.triton.groups[0].image = { tag: "26.08-py3" };
        s.triton.groups[0].canary.image = { tag: "25.10-py3" };
      }),
    );
    // The report also carries the capacity plan's warnings: look at the release ones.
    const releases = (w: string[]) => w.filter((x) => /the canary runs Triton/.test(x));
    assert.equal(releases(p.report.warnings).length, 1, JSON.stringify(p.report.warnings));
    assert.match(releases(p.report.warnings)[0], /canary runs Triton 25\.10 .* older than the primary's 26\.08/);
    const quiet = await planFixture(fixtureStack("staging", (s) => (s.triton.groups[0].canary.image = { tag: "26.08-py3" })));
    assert.deepEqual(releases(quiet.report.warnings), []);
  });
});
