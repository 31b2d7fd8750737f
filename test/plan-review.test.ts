// What a reviewer approves a pull request from: the plan diff matches what `pulumi up` will do
// (resource options honoured), list items are matched by identity, renames and deletes say
// what they mean, the stack-file keys come first, and policy violations are marked new, fixed
// or already on the base. Pure cases on crafted resources; the CLI on fixture stacks in a
// temporary git repository.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { fixtureYaml, git, recorded, runTool, tempProject } from "./helpers";
import type { RecordedResource } from "../tools/planner";
import {
  diffConfig,
  diffResources,
  displayPath,
  formatDiffText,
  identityField,
  policyDelta,
  countChanges,
  type StackDiff,
  type DeltaViolation,
} from "../tools/planner/diff";
import { planMarkdown } from "../tools/planner/markdown";
import { errorReport } from "../tools/planner/report";
import type { RecordedOptions } from "../tools/planner/options";

const STS = "kubernetes:apps/v1:StatefulSet";

function withOptions(r: RecordedResource, options: RecordedOptions): RecordedResource {
  return { ...r, options };
}

function sts(name: string, replicas: number, image = "nvcr.io/nvidia/tritonserver:25.01-py3", extra: Record<string, unknown> = {}): RecordedResource {
  return recorded(STS, name, {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, namespace: "triton" },
    spec: {
      replicas,
      serviceName: `${name}-headless`,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "triton", image, ...extra }] } },
    },
  });
}

const diffOf = (resources: StackDiff["resources"], config: StackDiff["config"] = []): StackDiff => ({
  stack: "prod",
  base: "main",
  counts: countChanges(resources),
  resources,
  config,
});

describe("plan review: resource options are honoured as pulumi up does", () => {
  const hpaOwned = (r: RecordedResource) => withOptions(r, { ignoreChanges: ["spec.replicas"] });

  it("shows a replicas change under ignoreChanges as ignored, with the reason, and counts no update", () => {
    const changes = diffResources([hpaOwned(sts("vision", 3))], [hpaOwned(sts("vision", 4))]);
    assert.equal(changes.length, 1);
    assert.equal(changes[0].op, "none");
    assert.deepEqual(
      changes[0].changes.map((c) => [c.path, c.old, c.new, c.ignored]),
      [["spec.replicas", 3, 4, "the HPA owns it (ignoreChanges)"]],
    );
    assert.deepEqual(countChanges(changes), { create: 0, update: 0, replace: 0, delete: 0 });
    const text = formatDiffText(diffOf(changes));
    assert.match(text, /spec\.replicas: 3 → 4 — ignored: the HPA owns it \(ignoreChanges\)/);
    assert.match(text, /0 to update.*\(1 with ignored changes only\)/);
    assert.match(planMarkdown([], new Map(), "main") + "", /Offline plan against/);
  });

  it("keeps the other changes of the same resource an update", () => {
    const [c] = diffResources([hpaOwned(sts("vision", 3))], [hpaOwned(sts("vision", 4, "nvcr.io/nvidia/tritonserver:25.03-py3"))]);
    assert.equal(c.op, "update");
    assert.deepEqual(
      c.changes.map((p) => [p.path, p.ignored ?? null]),
      [
        ["spec.replicas", "the HPA owns it (ignoreChanges)"],
        ["spec.template.spec.containers[name=triton].image", null],
      ],
    );
  });

  it("does not ignore what the option does not name (another path, or no option)", () => {
    for (const options of [{ ignoreChanges: ["spec.minReadySeconds"] }, {}] as RecordedOptions[]) {
      const [c] = diffResources([withOptions(sts("vision", 3), options)], [withOptions(sts("vision", 4), options)]);
      assert.equal(c.op, "update", JSON.stringify(options));
      assert.equal(c.changes[0].ignored, undefined);
    }
  });

  it("lets an ignored path not force a replacement, and names the node group's owner", () => {
    const ignoreSelector = (r: RecordedResource) => withOptions(r, { ignoreChanges: ["spec.selector"] });
    const a = sts("vision", 3);
    const b = structuredClone(a);
    b.props.spec.selector.matchLabels.app = "vision-v2";
    const [c] = diffResources([ignoreSelector(a)], [ignoreSelector(b)]);
    assert.equal(c.op, "none");
    assert.equal(c.changes[0].ignored, "ignoreChanges: spec.selector");

    const ng = (desiredSize: number) =>
      withOptions(recorded("aws:eks/nodeGroup:NodeGroup", "gpu", { scalingConfig: { desiredSize, minSize: 3, maxSize: 9 } }), {
        ignoreChanges: ["scalingConfig.desiredSize"],
      });
    const [n] = diffResources([ng(3)], [ng(4)]);
    assert.deepEqual([n.op, n.changes[0].ignored], ["none", "the cluster autoscaler owns it (ignoreChanges)"]);
  });

  it("honours ignoreChanges with list positions and wildcards", () => {
    const opt = (r: RecordedResource) => withOptions(r, { ignoreChanges: ["spec.template.spec.containers[*].image"] });
    const [c] = diffResources([opt(sts("vision", 3))], [opt(sts("vision", 3, "nvcr.io/nvidia/tritonserver:25.03-py3"))]);
    assert.equal(c.op, "none");
  });

  it("replaces on a replaceOnChanges path, and on any change with *", () => {
    const [c] = diffResources(
      [withOptions(sts("vision", 3), { replaceOnChanges: ["spec.replicas"] })],
      [withOptions(sts("vision", 4), { replaceOnChanges: ["spec.replicas"] })],
    );
    assert.deepEqual([c.op, c.replaceReasons], ["replace", ["spec.replicas (replaceOnChanges)"]]);
    assert.ok(c.changes[0].forcesReplacement);
    const [any] = diffResources([withOptions(sts("vision", 3), { replaceOnChanges: ["*"] })], [withOptions(sts("vision", 4), { replaceOnChanges: ["*"] })]);
    assert.equal(any.op, "replace");
    const [other] = diffResources(
      [withOptions(sts("vision", 3), { replaceOnChanges: ["spec.minReadySeconds"] })],
      [withOptions(sts("vision", 4), { replaceOnChanges: ["spec.minReadySeconds"] })],
    );
    assert.equal(other.op, "update");
  });

  it("says a protected resource blocks its delete or replacement, and a retained one stays", () => {
    const bucket = (name: string, options?: RecordedOptions) => ({
      ...recorded("aws:s3/bucket:Bucket", "models", { bucket: name }),
      ...(options ? { options } : {}),
    });
    const [del] = diffResources([bucket("a", { protect: true })], []);
    assert.ok(del.warnings?.some((w) => w.kind === "blocked" && /refuses to delete/.test(w.message)));
    assert.ok(del.warnings?.some((w) => w.kind === "data" && /every object in it/.test(w.message)));
    const [rep] = diffResources([bucket("a", { protect: true })], [bucket("b", { protect: true })]);
    assert.equal(rep.op, "replace");
    assert.ok(rep.warnings?.some((w) => w.kind === "blocked" && /refuses to replace/.test(w.message)));
    const [kept] = diffResources([bucket("a", { retainOnDelete: true })], []);
    assert.ok(kept.warnings?.some((w) => w.kind === "note" && /retainOnDelete/.test(w.message)));
    const [plain] = diffResources([bucket("a")], []);
    assert.ok(!plain.warnings?.some((w) => w.kind === "blocked"));
  });

  it("names deleteBeforeReplace on a replacement", () => {
    const a = withOptions(sts("vision", 3), { deleteBeforeReplace: true });
    const b = structuredClone(a);
    b.props.spec.serviceName = "other";
    const [c] = diffResources([a], [b]);
    assert.ok(c.deleteBeforeReplace);
    assert.match(formatDiffText(diffOf([c])), /deleted first: deleteBeforeReplace/);
  });
});

describe("plan review: list items are matched by identity", () => {
  const envoy = (clusters: { name: string; connect_timeout: string }[]) =>
    recorded("kubernetes:core/v1:ConfigMap", "gateway-config", {
      metadata: { name: "gw" },
      data: { "envoy.json": JSON.stringify({ static_resources: { clusters } }) },
    });
  const a = { name: "triton-vision", connect_timeout: "1s" };
  const b = { name: "triton-vision-canary", connect_timeout: "1s" };

  it("shows an added Envoy cluster as one add, whole, named by its name (not fields of every later position)", () => {
    const [c] = diffResources([envoy([a, b])], [envoy([{ name: "triton-text", connect_timeout: "2s" }, a, b])]);
    assert.deepEqual(
      c.changes.map((p) => [p.path, p.kind, p.new]),
      [['data["envoy.json"].static_resources.clusters[name=triton-text]', "add", { name: "triton-text", connect_timeout: "2s" }]],
    );
    const text = formatDiffText(diffOf([c]));
    assert.match(text, /clusters\[name=triton-text\]: added[^\n]*\n\s+\{\n\s+"name": "triton-text",\n\s+"connect_timeout": "2s"\n\s+\}/);
  });

  it("names a changed and a removed item by identity", () => {
    const [c] = diffResources([envoy([a, b])], [envoy([{ ...b, connect_timeout: "5s" }])]);
    assert.deepEqual(
      c.changes.map((p) => [p.path, p.kind]),
      [
        ['data["envoy.json"].static_resources.clusters[name=triton-vision-canary].connect_timeout', "change"],
        ['data["envoy.json"].static_resources.clusters[name=triton-vision]', "remove"],
      ],
    );
  });

  it("picks the identity field every item has, unique, and falls back to positions", () => {
    assert.equal(identityField([{ name: "a" }], [{ name: "b" }]), "name");
    assert.equal(identityField([{ containerPort: 8000 }, { containerPort: 8001 }], [{ containerPort: 8002 }]), "containerPort");
    assert.equal(identityField([{ key: "nvidia.com/gpu", effect: "NoSchedule" }], []), "key");
    assert.equal(identityField([{ name: "a" }, { name: "a" }], [{ name: "a" }]), undefined, "duplicate names");
    assert.equal(identityField([{ name: "a" }, { other: 1 }], []), undefined, "an item without the field");
    assert.equal(identityField(["a"], ["b"]), undefined);
    const [c] = diffResources(
      [sts("v", 1, "i", { ports: [{ containerPort: 8000 }] })],
      [sts("v", 1, "i", { ports: [{ containerPort: 8002 }, { containerPort: 8000 }] })],
    );
    assert.deepEqual(
      c.changes.map((p) => p.path),
      ["spec.template.spec.containers[name=triton].ports[containerPort=8002]"],
    );
  });

  it("shortens a long path to its root, outermost and innermost items (the JSON keeps it whole)", () => {
    const long =
      'data["envoy.json"].static_resources.listeners[name=http].filter_chains[0].filters[name=envoy.filters.network.http_connection_manager]' +
      ".typed_config.route_config.virtual_hosts[name=triton].routes[name=vision-http].route.timeout";
    assert.equal(displayPath(long), 'data["envoy.json"] … listeners[name=http] … routes[name=vision-http].route.timeout');
    for (const p of ["spec.template.spec.containers[name=triton].image", 'data["envoy.json"].static_resources.clusters[name=triton-text]'])
      assert.equal(displayPath(p), p, "short paths stay whole");
  });

  it("shows a flag added to a command line as one + line", () => {
    const [c] = diffResources([sts("v", 1, "i", { args: ["--a", "--b", "--c"] })], [sts("v", 1, "i", { args: ["--a", "--x", "--b", "--c"] })]);
    assert.equal(c.changes.length, 1);
    assert.deepEqual(
      c.changes[0].lines?.filter((l) => /^[-+] /.test(l)),
      ['+ "--x"'],
    );
  });
});

describe("plan review: renames and deletes say what they mean", () => {
  const group = (name: string): RecordedResource[] => {
    const component: RecordedResource = { ...recorded("triton-platform:triton:TritonServer", name, {}), custom: false };
    const child = { ...sts(name, 3), parent: component.urn, urn: `urn:pulumi:test::triton-platform::triton-platform:triton:TritonServer$${STS}::${name}` };
    return [component, child];
  };

  it("flags a renamed serving group: downtime, and the aliases hint naming both", () => {
    const changes = diffResources(group("vision"), group("vision2"));
    assert.deepEqual(
      changes.map((c) => [c.op, c.name]),
      [
        ["create", "vision2"],
        ["create", "vision2"],
        ["delete", "vision"],
        ["delete", "vision"],
      ],
    );
    const del = changes.filter((c) => c.op === "delete");
    const groupWarning = del.find((c) => c.type === "triton-platform:triton:TritonServer")?.warnings?.[0];
    assert.equal(groupWarning?.kind, "downtime");
    assert.match(groupWarning.message, /serving group `vision` is deleted/);
    assert.match(groupWarning.message, /aliases: \[\{ name: "vision" \}\]/);
    assert.match(groupWarning.message, /renamed to `vision2`/);
    const stsWarning = del.find((c) => c.type === STS)?.warnings?.[0];
    assert.match(stsWarning?.message ?? "", /StatefulSet `vision` is deleted: every pod of it stops/);
    const md = planMarkdown(
      [{ stack: "prod", resources: 2, countsByType: {}, violations: [], mandatory: 0, advisory: 0, warnings: [] }],
      new Map([["prod", diffOf(changes)]]),
      "main",
    );
    assert.match(md, /⛔ downtime/);
  });

  it("flags a plain delete without a rename hint when nothing of its kind is created", () => {
    const [c] = diffResources([recorded("aws:s3/bucket:Bucket", "models", { bucket: "b", forceDestroy: true })], []);
    assert.equal(c.warnings?.length, 1);
    assert.doesNotMatch(c.warnings[0].message, /aliases/);
    assert.doesNotMatch(c.warnings[0].message, /forceDestroy/);
  });

  it("matches a resource renamed with aliases to its old URN: an update, no delete", () => {
    const old = recorded("aws:s3/bucket:Bucket", "models", { bucket: "b" });
    const renamed = withOptions(recorded("aws:s3/bucket:Bucket", "model-repository", { bucket: "b" }), { aliases: [{ name: "models" }] });
    const changes = diffResources([old], [renamed]);
    assert.deepEqual(
      changes.map((c) => [c.op, c.renamedFrom]),
      [["update", old.urn]],
    );
    assert.match(formatDiffText(diffOf(changes)), /renamed from models through its aliases/);
  });

  it("gives a child the aliases its renamed parent has (the engine's inherited aliases)", () => {
    const [oldParent, oldChild] = group("vision");
    const parent = withOptions({ ...recorded("triton-platform:triton:TritonServer", "vision-v2", {}), custom: false }, { aliases: [{ name: "vision" }] });
    // The child keeps its resource name; only its parent's name changed.
    const child = { ...oldChild, parent: parent.urn };
    const changes = diffResources([oldParent, oldChild], [parent, child]);
    assert.ok(
      changes.every((c) => c.op !== "delete" && c.op !== "create"),
      JSON.stringify(changes.map((c) => [c.op, c.name])),
    );
  });

  it("shows a content-hashed ConfigMap replacement as its consumers rolling, not as a danger", () => {
    const cm = (hash: string) =>
      recorded("kubernetes:core/v1:ConfigMap", "gateway-config", {
        metadata: { name: `triton-gateway-config-${hash}` },
        data: { "envoy.json": hash },
        immutable: true,
      });
    const deploy = (hash: string) =>
      recorded("kubernetes:apps/v1:Deployment", "gateway", {
        spec: { template: { spec: { volumes: [{ name: "config", configMap: { name: `triton-gateway-config-${hash}` } }] } } },
      });
    const changes = diffResources([cm("82e13d77a9"), deploy("82e13d77a9")], [cm("fb6d895637"), deploy("fb6d895637")]);
    const c = changes.find((x) => x.name === "gateway-config")!;
    assert.equal(c.op, "replace");
    assert.deepEqual(c.contentHashed, { from: "triton-gateway-config-82e13d77a9", to: "triton-gateway-config-fb6d895637", consumers: ["Deployment gateway"] });
    assert.equal(c.warnings, undefined);
    const text = formatDiffText(diffOf(changes));
    assert.match(text, /Deployment gateway rolls onto it; routine/);
    assert.doesNotMatch(text, /forces replacement/);
    const md = planMarkdown(
      [{ stack: "prod", resources: 2, countsByType: {}, violations: [], mandatory: 0, advisory: 0, warnings: [] }],
      new Map([["prod", diffOf(changes)]]),
      "main",
    );
    assert.match(md, /🔁 replace \(content-hashed\)/);
    assert.doesNotMatch(md, /forces replacement/);
    // A ConfigMap renamed to an unrelated name is a plain replacement.
    const other = recorded("kubernetes:core/v1:ConfigMap", "gateway-config", { metadata: { name: "something-else" }, data: { "envoy.json": "x" } });
    const [plain] = diffResources([cm("82e13d77a9")], [other]);
    assert.equal(plain.contentHashed, undefined);
  });
});

describe("plan review: stack-file keys and policy violations against the base", () => {
  it("lists each changed key old → new, by identity in lists, secure values as changed only", () => {
    const base = {
      "aws:region": "us-east-1",
      "triton-platform:gateway": { mirrorPercent: 5 },
      "triton-platform:triton": { groups: [{ name: "vision", image: { tag: "25.01-py3" } }] },
      "fixture:token": { secure: "v1:AAAA" },
    };
    const head = {
      "aws:region": "us-east-1",
      "triton-platform:gateway": { mirrorPercent: 10 },
      "triton-platform:triton": {
        groups: [
          { name: "text", image: { tag: "25.03-py3" } },
          { name: "vision", image: { tag: "25.03-py3" } },
        ],
      },
      "fixture:token": { secure: "v1:BBBB" },
    };
    const c = diffConfig(base, head, "triton-platform");
    assert.deepEqual(
      c.map((x) => [x.key, x.kind, x.old, x.new, x.secret]),
      [
        ["gateway.mirrorPercent", "change", 5, 10, undefined],
        ["triton.groups[name=text]", "add", undefined, { name: "text", image: { tag: "25.03-py3" } }, undefined],
        ["triton.groups[name=vision].image.tag", "change", "25.01-py3", "25.03-py3", undefined],
        ["fixture:token", "change", undefined, undefined, true],
      ],
    );
    assert.ok(!JSON.stringify(c).includes("BBBB") && !JSON.stringify(c).includes("AAAA"), "no ciphertext shown");
    assert.deepEqual(diffConfig(base, base, "triton-platform"), []);
    assert.deepEqual(
      diffConfig(base, { ...base, "aws:region": "eu-west-1" }, "triton-platform").map((x) => x.key),
      ["aws:region"],
    );
  });

  it("marks violations new, fixed and already on the base", () => {
    const v = (policy: string, urn: string, p?: string): DeltaViolation => ({
      policy,
      level: "mandatory",
      resource: urn,
      urn,
      ...(p ? { path: p } : {}),
      message: "m",
    });
    const d = policyDelta([v("a", "u1"), v("b", "u1", "spec.x")], [v("b", "u1", "spec.x"), v("c", "u2"), v("a", "u3")]);
    assert.deepEqual(
      d.new.map((x) => [x.policy, x.urn]),
      [
        ["c", "u2"],
        ["a", "u3"],
      ],
    );
    assert.deepEqual(
      d.fixed.map((x) => [x.policy, x.urn]),
      [["a", "u1"]],
    );
    assert.deepEqual(
      d.unchanged.map((x) => x.policy),
      ["b"],
    );
    // The same rule on the same resource at another property is another violation.
    assert.equal(policyDelta([v("b", "u1", "spec.x")], [v("b", "u1", "spec.y")]).new.length, 1);
  });

  it("renders a stack with a configuration error with its error, beside the planned ones", () => {
    const md = planMarkdown(
      [
        errorReport("prod", "invalid stack configuration:\n  - triton-platform:cluster.zones[1] must be an AWS availability zone"),
        { stack: "dev", resources: 3, countsByType: {}, violations: [], mandatory: 0, advisory: 0, warnings: [] },
      ],
      undefined,
      undefined,
    );
    assert.match(md, /### `prod`: ❌ configuration error: not planned/);
    assert.match(md, /- `triton-platform:cluster\.zones\[1\]` must be an AWS availability zone/, "each problem a list item, its key as code");
    assert.match(md, /### `dev`: 3 resources; ✅ policies pass/);
    assert.match(md, /`prod`: configuration error \(exit 2\); every other stack is planned below/);
  });
});

describe("plan review on the command line (fixture stacks in a temporary git repository)", function () {
  this.timeout(120_000);
  let dir: string;
  const prod = (mirrorPercent: number, zones = ["us-east-1a", "us-east-1b", "us-east-1c"]) =>
    fixtureYaml("prod", (s) => {
      s.gateway.mirrorPercent = mirrorPercent;
      s.cluster.zones = zones;
      // HA replicas run one per zone: fewer zones, as many Alertmanagers (else a config error, not a policy one).
      s.monitoring.alerting.replicas = Math.min(s.monitoring.alerting.replicas, zones.length);
    });

  before(() => {
    dir = tempProject({ prod: prod(30), dev: fixtureYaml("dev") });
    fs.writeFileSync(path.join(dir, ".gitignore"), "node_modules\nout/\n");
    git(dir, "init", "-q");
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", "base: prod mirrors 30 % (over its maximum of 25)");
  });

  async function planJson(args: string[]): Promise<{ status: number | null; doc: any; stdout: string; stderr: string }> {
    const out = path.join(dir, "out-review.json");
    fs.rmSync(out, { force: true });
    const argv = [...args, "--out", path.join(dir, "out"), "--output", out];
    const r = await runTool(dir, "plan", argv);
    return { ...r, doc: fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, "utf8")) : undefined };
  }

  it("marks a violation fixed when the change removes it, and the config key old → new", async () => {
    fs.writeFileSync(path.join(dir, "Pulumi.prod.yaml"), prod(10));
    const r = await planJson(["--stack", "prod", "--base", "HEAD"]);
    assert.equal(r.status, 0, r.stderr);
    const diff = r.doc.stacks[0].diff;
    assert.deepEqual(
      diff.config.map((c: any) => [c.key, c.old, c.new]),
      [["gateway.mirrorPercent", 30, 10]],
    );
    assert.deepEqual([...new Set(diff.policy.fixed.map((v: any) => v.policy))], ["gateway-mirror-percent-within-max"]);
    assert.deepEqual(diff.policy.new, []);
    assert.match(r.stdout, /^stack prod against HEAD: /);
    assert.match(r.stdout, /gateway\.mirrorPercent: 30 → 10/);
    // Whatever else the fixture carries (an advisory on the bucket) stays "already on the base", and the mirror is not among it.
    assert.ok(
      diff.policy.unchanged.every((v: any) => v.policy !== "gateway-mirror-percent-within-max"),
      JSON.stringify(diff.policy.unchanged),
    );
    assert.match(r.stdout, new RegExp(`policies: 0 new, [1-9]\\d* fixed, ${diff.policy.unchanged.length} already on the base`));
  });

  it("marks a violation already on the base when the change keeps it, and new when it adds one", async () => {
    fs.writeFileSync(path.join(dir, "Pulumi.prod.yaml"), prod(40));
    const kept = await planJson(["--stack", "prod", "--base", "HEAD", "--format", "markdown"]);
    assert.equal(kept.status, 1, kept.stderr);
    assert.ok(kept.doc.stacks[0].diff.policy.unchanged.some((v: any) => v.policy === "gateway-mirror-percent-within-max"));
    assert.deepEqual(kept.doc.stacks[0].diff.policy.new, []);
    assert.match(kept.stdout, /already on the base: \*\*mandatory\*\* `gateway-mirror-percent-within-max`/);
    // Two zones where the levels ask for three: a new violation.
    fs.writeFileSync(path.join(dir, "Pulumi.prod.yaml"), prod(30, ["us-east-1a", "us-east-1b"]));
    const added = await planJson(["--stack", "prod", "--base", "HEAD", "--format", "markdown"]);
    assert.ok(
      added.doc.stacks[0].diff.policy.new.some((v: any) => v.policy === "gpu-nodes-span-zones"),
      JSON.stringify(added.doc.stacks[0].diff.policy),
    );
    assert.match(added.stdout, /🆕 new \*\*mandatory\*\* `gpu-nodes-span-zones`/);
  });

  it("keeps planning the other stacks after one has a configuration error, and says so", async () => {
    fs.writeFileSync(path.join(dir, "Pulumi.prod.yaml"), prod(10, ["us-east-1a", "eu-nowhere"]));
    const r = await planJson(["--base", "HEAD", "--format", "markdown"]);
    assert.equal(r.status, 2, r.stderr);
    const byStack = Object.fromEntries(r.doc.stacks.map((s: any) => [s.stack, s]));
    assert.match(byStack.prod.error, /cluster\.zones\[1\]/);
    assert.ok(byStack.dev.resources > 0, "dev was planned");
    assert.ok(byStack.dev.diff, "and compared with the base");
    assert.match(r.stdout, /### `prod`: ❌ configuration error: not planned/);
    assert.match(r.stdout, /Unchanged: `dev` \(/); // an unchanged stack is one line of the overview
    assert.match(r.stderr, /1 of 2 stacks have a configuration error \(exit 2\); the others were planned/);
  });

  afterEach(() => git(dir, "checkout", "-q", "--", "."));
});

describe("plan review: a whole added mapping in the pull-request body", () => {
  it("indents every line of its JSON block under the list item (Markdown ends the item at an unindented line)", () => {
    const group = { name: "text", models: ["bert"], hpa: { min: 2, max: 4 } };
    const md = planMarkdown(
      [{ stack: "prod", resources: 2, countsByType: {}, violations: [], mandatory: 0, advisory: 0, warnings: [] }],
      new Map([["prod", diffOf([], [{ key: "triton.groups[name=text]", kind: "add", new: group }])]]),
    );
    const lines = md.split("\n");
    const item = lines.findIndex((l) => l.startsWith("- `triton.groups[name=text]`: added"));
    assert.ok(item >= 0, md);
    const open = lines.findIndex((l, i) => i > item && l.trim().startsWith("```"));
    const close = lines.findIndex((l, i) => i > open && l.trim().startsWith("```"));
    assert.ok(close > open + 3, md);
    for (const l of lines.slice(open, close + 1)) assert.match(l, /^ {2}/, `not indented under the item: ${JSON.stringify(l)}`);
    assert.deepEqual(JSON.parse(lines.slice(open + 1, close).join("\n")), group);
  });
});
