import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { evaluatePolicies, checkPolicyConfig, policyResources } from "../tools/planner/policy";
import { checkResources, type RecordedResource } from "../tools/planner";
import { rules } from "../policies/rules";
import { rules as foundationRules } from "../policies/rules/foundation";
import { fixtureYaml, runTool, SHAPES, spawnTool, tempProject } from "./helpers";
import { declareMutations, first } from "./support/mutations";

const STACK = "urn:pulumi:t::triton-platform::pulumi:pulumi:Stack::triton-platform-t";
const K8S_PROVIDER = "urn:pulumi:t::triton-platform::pulumi:providers:kubernetes::cluster-k8s";
const AWS_PROVIDER = "urn:pulumi:t::triton-platform::pulumi:providers:aws::cluster-aws";

const labels = { "app.kubernetes.io/part-of": "triton-platform", "app.kubernetes.io/managed-by": "pulumi", "triton-platform/environment": "prod" };

/** A small compliant plan: stack, providers, one namespace, one bucket. */
function compliant(): RecordedResource[] {
  return [
    { urn: STACK, type: "pulumi:pulumi:Stack", name: "triton-platform-t", custom: false, parent: null, provider: null, dependencies: [], props: {} },
    {
      urn: K8S_PROVIDER,
      type: "pulumi:providers:kubernetes",
      name: "cluster-k8s",
      custom: true,
      parent: STACK,
      provider: null,
      dependencies: [],
      props: { kubeconfig: "[secret]" },
    },
    {
      urn: AWS_PROVIDER,
      type: "pulumi:providers:aws",
      name: "cluster-aws",
      custom: true,
      parent: STACK,
      provider: null,
      dependencies: [],
      props: {
        region: "us-east-1",
        defaultTags: JSON.stringify({ tags: { "triton-platform:environment": "prod", "triton-platform:stack": "prod", "managed-by": "pulumi" } }),
      },
    },
    {
      urn: "urn:pulumi:t::triton-platform::kubernetes:core/v1:Namespace::triton",
      type: "kubernetes:core/v1:Namespace",
      name: "triton",
      custom: true,
      parent: STACK,
      provider: `${K8S_PROVIDER}::id`,
      dependencies: [],
      props: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: "triton",
          labels: {
            ...labels,
            ...Object.fromEntries(
              ["enforce", "warn", "audit"].flatMap((m) => [
                [`pod-security.kubernetes.io/${m}`, "restricted"],
                [`pod-security.kubernetes.io/${m}-version`, "v1.33"],
              ]),
            ),
          },
        },
      },
    },
    {
      urn: "urn:pulumi:t::triton-platform::aws:iam/role:Role::r",
      type: "aws:iam/role:Role",
      name: "r",
      custom: true,
      parent: STACK,
      provider: `${AWS_PROVIDER}::id`,
      dependencies: [],
      props: { assumeRolePolicy: "{}" },
    },
  ];
}

const names = (vs: { policy: string }[]) => vs.map((v) => v.policy).sort();

describe("policy evaluation (offline)", () => {
  it("a compliant plan has no violations", async () => {
    assert.deepEqual(await evaluatePolicies(foundationRules, compliant(), { all: "mandatory" }), []);
  });

  const cases: [string, (rs: RecordedResource[]) => void][] = [
    ["k8s-standard-labels", (rs) => delete rs[3].props.metadata.labels["triton-platform/environment"]],
    ["aws-provider-default-tags", (rs) => (rs[2].props.defaultTags = JSON.stringify({ tags: { "managed-by": "pulumi" } }))],
    ["aws-explicit-provider", (rs) => (rs[4].provider = "urn:pulumi:t::triton-platform::pulumi:providers:aws::default_7_48_0::id")],
    ["k8s-explicit-provider", (rs) => (rs[3].provider = null)],
  ];
  for (const [policy, breakIt] of cases) {
    it(`${policy} fires on its broken resource, and only it`, async () => {
      const rs = compliant();
      breakIt(rs);
      const vs = await evaluatePolicies(foundationRules, rs, { all: "mandatory" });
      assert.deepEqual(names(vs), [policy]);
      assert.equal(vs[0].level, "mandatory");
      assert.ok(vs[0].remediation, "carries remediation steps");
    });
  }

  it("applies levels: all, then per policy, and skips disabled policies", async () => {
    const rs = compliant();
    rs[3].provider = null;
    delete rs[3].props.metadata.labels["app.kubernetes.io/part-of"];
    const vs = await evaluatePolicies(foundationRules, rs, {
      all: "advisory",
      "k8s-explicit-provider": { enforcementLevel: "mandatory" },
      "k8s-standard-labels": "disabled",
    });
    assert.deepEqual(
      vs.map((v) => [v.policy, v.level]),
      [["k8s-explicit-provider", "mandatory"]],
    );
  });

  it("names the resource of a violation by type and name", async () => {
    const rs = compliant();
    rs[3].provider = null;
    const [v] = await evaluatePolicies(foundationRules, rs, {});
    assert.equal(v.resource, "kubernetes:core/v1:Namespace triton");
    assert.equal(v.urn, rs[3].urn);
  });

  it("links providers, parents and dependencies for stack policies", () => {
    const views = policyResources(compliant());
    assert.equal(views[3].provider?.type, "pulumi:providers:kubernetes");
    assert.equal(views[3].parent?.type, "pulumi:pulumi:Stack");
  });

  it("rejects a policy config naming an unknown policy, level or setting", () => {
    assert.throws(() => checkPolicyConfig(rules, { "no-such-rule": "mandatory" }, "x.json"), /"no-such-rule" is not a policy of the pack/);
    assert.throws(() => checkPolicyConfig(rules, { all: "fatal" as never }, "x.json"), /enforcement level "fatal"/);
    assert.throws(
      () => checkPolicyConfig(rules, { "k8s-standard-labels": { enforcementLevel: "mandatory", threshold: 3 } }, "x.json"),
      /not in the policy's configSchema/,
    );
  });

  it("evaluates at a stack's levels file: the fixture shapes' levels, prod and staging mandatory, dev advisory", async () => {
    const dir = tempProject(Object.fromEntries(SHAPES.map((s) => [s, fixtureYaml(s)])));
    const levels: Record<string, string> = {};
    for (const stack of SHAPES) {
      const rs = compliant();
      rs[3].provider = null;
      levels[stack] = (await checkResources(rs, stack, path.join(dir, "policies")))[0].level;
    }
    assert.deepEqual(levels, { dev: "advisory", staging: "mandatory", prod: "mandatory" });
  });

  describe("npm run policy", function () {
    this.timeout(60_000);
    it("exits 0 on a compliant file, 1 on a mandatory violation, 2 on a malformed file", async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "policy-"));
      const good = path.join(dir, "good.json");
      const bad = path.join(dir, "bad.json");
      const broken = path.join(dir, "broken.json");
      fs.writeFileSync(good, JSON.stringify(compliant()));
      const rs = compliant();
      rs[3].provider = null;
      fs.writeFileSync(bad, JSON.stringify(rs));
      fs.writeFileSync(broken, JSON.stringify([{ urn: 1 }]));
      const project = tempProject({ dev: fixtureYaml("dev"), prod: fixtureYaml("prod") });
      const ok = await runTool(project, "policy", ["--resources", good, "--stack", "prod"]);
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(ok.stdout, /no violations/);
      // End to end: a real process, its exit status and its stdout.
      const v = spawnTool(project, "policy", ["--resources", bad, "--stack", "prod", "--json"]);
      assert.equal(v.status, 1, v.stderr);
      const report = JSON.parse(v.stdout);
      assert.deepEqual(
        report.stacks[0].violations.map((x: { policy: string; level: string }) => [x.policy, x.level]),
        [["k8s-explicit-provider", "mandatory"]],
      );
      const advisory = await runTool(project, "policy", ["--resources", bad, "--stack", "dev"]);
      assert.equal(advisory.status, 0, "advisory violations do not fail");
      assert.match(advisory.stdout, /\[advisory\] k8s-explicit-provider/);
      const m = await runTool(project, "policy", ["--resources", broken, "--stack", "prod"]);
      assert.equal(m.status, 2);
      assert.match(m.stderr, /\[0\]\.urn must be a string, got 1/);
    });
  });
});

// Each rule of this file broken on a fixture plan (prod unless `stack` says): exactly it must fire, at the stack's level
// (test/support/mutations.ts; test/policy-mutations.test.ts checks that every rule of the pack has one).
declareMutations([
  {
    rule: "k8s-standard-labels",
    breaks: "drops the environment label from the Triton namespace",
    mutate: (rs) => delete first(rs, "kubernetes:core/v1:Namespace").props.metadata.labels["triton-platform/environment"],
  },
  {
    rule: "aws-provider-default-tags",
    breaks: "removes the standard tags from the AWS provider",
    mutate: (rs) => (first(rs, "pulumi:providers:aws").props.defaultTags = JSON.stringify({ tags: {} })),
  },
  {
    rule: "aws-explicit-provider",
    breaks: "adds an AWS resource on the default provider",
    mutate: (rs) =>
      rs.push({
        // Not a bucket: a bare bucket would (rightly) also fail the s3-* rules of model-repository.
        urn: "urn:pulumi:prod::triton-platform::aws:ec2/securityGroup:SecurityGroup::stray",
        type: "aws:ec2/securityGroup:SecurityGroup",
        name: "stray",
        custom: true,
        parent: rs[0].urn,
        provider: "urn:pulumi:prod::triton-platform::pulumi:providers:aws::default_7_48_0::id",
        dependencies: [],
        props: {},
      }),
  },
  {
    rule: "k8s-explicit-provider",
    breaks: "moves the Triton namespace to the default Kubernetes provider",
    mutate: (rs) => (first(rs, "kubernetes:core/v1:Namespace").provider = null),
  },
]);
