// The pull-request view of a change: `npm run plan -- --base REF` compared with crafted
// changes in a temporary git repository (a copy of the project), and the pure diff on
// crafted resources where the program has no such resource yet.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { fixtureYaml, git, recorded, runTool, spawnTool, tempProject } from "./helpers";
import { planStack, type PlanResult, type RecordedResource } from "../tools/planner";
import { recordAtRef, type RecordedPlan } from "../tools/planner/base";
import {
  countChanges,
  diffProps,
  diffResources,
  diffSecureConfig,
  formatDiffText,
  lineDiff,
  mergeRepeated,
  type ResourceChange,
  type StackDiff,
} from "../tools/planner/diff";
import { planMarkdown } from "../tools/planner/markdown";
import { MASK } from "../tools/planner/fakes";
import { replacePaths } from "../tools/planner/replacement";

const STACK = "dev";

// A stand-in for a component whose object holds embedded YAML: one ConfigMap per serving
// group, its data read from a file the tests edit. Only stable contracts are used
// (loadStackConfig, standardLabels, triton.groups), so components landing in parallel
// do not break it.
const FIXTURE = `import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import { loadStackConfig } from "./config";
import { standardLabels } from "./components/naming";

const config = loadStackConfig();
const provider = new k8s.Provider("fixture-k8s", { kubeconfig: "fixture" });
const data = fs.readFileSync(path.join(__dirname, "fixture-data.yaml"), "utf8");
for (const g of config.triton.groups) {
  new k8s.core.v1.ConfigMap(\`group-\${g.name}\`, {
    metadata: { name: \`group-\${g.name}\`, namespace: config.triton.namespace, labels: standardLabels(config) },
    data: { "model-config.yaml": data },
  }, { provider });
}
`;
const FIXTURE_DATA = [
  "models:",
  "  - name: resnet50",
  "    max_batch_size: 8",
  "    instances: 1",
  "  - name: bert",
  "    max_batch_size: 4",
  "    instances: 1",
  "",
].join("\n");

/**
 * The base stack: the dev-shaped fixture plus a secure: value in another namespace
 * (triton-platform's own keys refuse secrets: none of them would stay secret).
 */
function baseStack(): string {
  return fixtureYaml(STACK, { "fixture:token": { secure: "v1:AAAAbase==" } });
}

describe("plan diff against a base revision", function () {
  this.timeout(60_000);
  let dir: string;
  let base: RecordedPlan;

  before(async () => {
    dir = tempProject({ [STACK]: baseStack() });
    fs.writeFileSync(path.join(dir, "fixture.ts"), FIXTURE);
    fs.writeFileSync(path.join(dir, "fixture-data.yaml"), FIXTURE_DATA);
    fs.appendFileSync(path.join(dir, "index.ts"), '\nimport "./fixture";\n');
    fs.writeFileSync(path.join(dir, ".gitignore"), "node_modules\nout/\n");
    git(dir, "init", "-q");
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", "base");
    // Recorded once through the real path: temporary worktree, shared node_modules.
    const plans = await recordAtRef(dir, "HEAD", [STACK]);
    base = plans.get(STACK) as RecordedPlan;
    assert.ok(base && base.resources.length > 0, "the base stack was planned");
  });

  afterEach(() => git(dir, "checkout", "-q", "--", "."));

  /** Plan the working tree of the temp repo and diff it with the base. */
  async function changes(): Promise<{ resources: ResourceChange[]; config: ReturnType<typeof diffSecureConfig>; head: PlanResult }> {
    const head = await planStack(STACK, { root: dir });
    return {
      head,
      resources: diffResources(base.resources, head.resources, { base: base.secretFingerprints, head: head.secretFingerprints }),
      config: diffSecureConfig(base.secureFingerprints, head.secureFingerprints),
    };
  }

  function edit(file: string, from: string | RegExp, to: string) {
    const p = path.join(dir, file);
    const text = fs.readFileSync(p, "utf8");
    const next = text.replace(from, to);
    assert.notEqual(next, text, `edit of ${file} applied`);
    fs.writeFileSync(p, next);
  }

  it("removes its temporary worktree", () => {
    const list = git(dir, "worktree", "list", "--porcelain");
    assert.equal(list.split("\n").filter((l) => l.startsWith("worktree ")).length, 1, list);
  });

  it("shows no changes for an unchanged tree", async () => {
    const c = await changes();
    assert.deepEqual(c.resources, []);
    assert.deepEqual(c.config, []);
  });

  it("shows creates, and nothing else, when a serving group is added", async () => {
    // A complete group: the serving component's schema requires models, image, size and GPU.
    const added = [
      "      - name: added",
      "        models: [resnet50]",
      "        image: {tag: 25.01-py3}",
      "        replicas: 1",
      "        gpu: {type: nvidia-t4}",
      '        cpu: "2"',
      "        memory: 8Gi",
      "",
    ];
    edit(`Pulumi.${STACK}.yaml`, /( {4}groups:\n)/, `$1${added.join("\n")}`);
    // A GPU node for its pod: the capacity plan refuses a second one-GPU group on a one-node group.
    edit(`Pulumi.${STACK}.yaml`, /(scaling:\n +min: 1\n +desired: 1\n +)max: 1/, "$1max: 2");
    const c = await changes();
    const creates = c.resources.filter((r) => r.op === "create");
    assert.ok(
      creates.some((r) => r.type === "kubernetes:core/v1:ConfigMap" && r.name === "group-added"),
      JSON.stringify(creates.map((r) => r.name)),
    );
    // The gateway routes the new group: its content-addressed Envoy ConfigMap is replaced
    // (a new name, created before the old one is deleted) and its Deployment rolls onto it.
    // Nothing else is replaced or deleted.
    const replaced = c.resources.filter((r) => r.op === "delete" || r.op === "replace");
    assert.deepEqual(
      replaced.map((r) => [r.op, r.type, r.name]),
      [["replace", "kubernetes:core/v1:ConfigMap", "gateway-config"]],
    );
  });

  it("shows one update with its property path when a tag value changes", async () => {
    edit(`Pulumi.${STACK}.yaml`, "team: ml-platform", "team: ml-inference");
    const c = await changes();
    // The provider's defaultTags, and the GPU launch template's instance/volume tags (which
    // defaultTags do not reach): two in-place updates, nothing else.
    assert.deepEqual(
      c.resources.map((r) => [r.op, r.type]),
      [
        ["update", "pulumi:providers:aws"],
        ["update", "aws:ec2/launchTemplate:LaunchTemplate"],
      ],
      JSON.stringify(c.resources, null, 1),
    );
    const [u] = c.resources;
    assert.deepEqual(
      u.changes.map((p) => [p.path, p.old, p.new]),
      [["defaultTags.tags.team", "ml-platform", "ml-inference"]],
    );
  });

  it("shows a changed secret as changed but masked, in resources and in secure: config", async () => {
    // The cluster name is inside the kubeconfig, which the program wraps as a secret.
    edit(`Pulumi.${STACK}.yaml`, "name: ml-dev", "name: ml-dev-2");
    edit(`Pulumi.${STACK}.yaml`, "v1:AAAAbase==", "v1:BBBBhead==");
    const c = await changes();
    const provider = c.resources.find((r) => r.type === "pulumi:providers:kubernetes");
    assert.ok(provider, "the kubernetes provider is updated");
    const kubeconfig = provider.changes.find((p) => p.path === "kubeconfig");
    assert.deepEqual(kubeconfig && { old: kubeconfig.old, new: kubeconfig.new, secret: kubeconfig.secret }, { old: MASK, new: MASK, secret: true });
    assert.deepEqual(c.config, [{ key: "fixture:token", secret: true, kind: "change" }]);
    const d: StackDiff = { stack: STACK, base: "HEAD", counts: countChanges(c.resources), resources: c.resources, config: c.config };
    const md = planMarkdown([c.head.report], new Map([[STACK, d]]), "HEAD");
    assert.match(md, /`kubeconfig`: \[secret\] changed \(secret, value not shown\)/);
    assert.match(md, /`fixture:token: secret changed \(value not shown\)`/);
    const text = JSON.stringify(c.resources) + md + formatDiffText(d);
    for (const plain of ["get-token", "BBBBhead", "AAAAbase"]) assert.ok(!text.includes(plain), `${plain} is not shown`);
  });

  it("shows an embedded YAML change as a line diff, and ConfigMap data as a replacement", async () => {
    edit("fixture-data.yaml", "max_batch_size: 4", "max_batch_size: 16");
    const c = await changes();
    const cm = c.resources.find((r) => r.name === "group-vision");
    assert.ok(cm, JSON.stringify(c.resources.map((r) => r.name)));
    assert.equal(cm.op, "replace");
    assert.deepEqual(cm.replaceReasons, ["data"]);
    const p = cm.changes.find((x) => x.path === 'data["model-config.yaml"]');
    assert.ok(p?.lines && p.forcesReplacement, JSON.stringify(cm.changes));
    assert.deepEqual(
      p.lines.filter((l) => /^[-+] /.test(l)),
      ["-     max_batch_size: 4", "+     max_batch_size: 16"],
    );
    assert.ok(p.lines.includes("    - name: bert"), "context lines around the change");
  });

  it("command line: --base with a ref that does not exist exits 2 with a clear message", async () => {
    const r = await runTool(dir, "plan", ["--stack", STACK, "--base", "no-such-branch"]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--base no-such-branch: no such commit/);
  });

  it("command line: --base HEAD --format markdown prints the comment body for a change", () => {
    edit(`Pulumi.${STACK}.yaml`, "team: ml-platform", "team: ml-inference");
    const out = path.join(dir, "out-md");
    // End to end: --base and --format markdown in a real process (its exit status, git run from it).
    const r = spawnTool(dir, "plan", ["--stack", STACK, "--out", out, "--base", "HEAD", "--format", "markdown"]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^<!-- triton-platform offline plan -->\n## Offline plan against `HEAD`/);
    assert.match(r.stdout, /### `dev`: 0 to create, 2 to update, 0 to replace, 0 to delete; /);
    assert.match(
      r.stdout,
      /\| 🟡 update \| `cluster-aws`<br><sub>pulumi:providers:aws<\/sub> \| `defaultTags\.tags\.team`: `"ml-platform"` → `"ml-inference"` \|/,
    );
    assert.ok(!r.stdout.includes("get-token"));
  });
});

describe("plan diff of crafted resources (pure)", () => {
  const res = (type: string, name: string, props: Record<string, unknown>): RecordedResource => recorded(type, name, props, "prod");

  const sts = (selector: Record<string, string>, replicas: number) =>
    res("kubernetes:apps/v1:StatefulSet", "vision", {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "vision", namespace: "triton" },
      spec: { replicas, serviceName: "vision-headless", selector: { matchLabels: selector }, template: { metadata: { labels: selector } } },
    });

  it("flags a StatefulSet selector change as a replacement, naming the path", () => {
    const [c] = diffResources([sts({ "app.kubernetes.io/instance": "vision" }, 3)], [sts({ "app.kubernetes.io/instance": "vision-v2" }, 3)]);
    assert.equal(c.op, "replace");
    assert.deepEqual(c.replaceReasons, ["spec.selector"]);
    const sel = c.changes.find((p) => p.path === 'spec.selector.matchLabels["app.kubernetes.io/instance"]');
    assert.ok(sel?.forcesReplacement);
    const tpl = c.changes.find((p) => p.path.startsWith("spec.template"));
    assert.ok(tpl && !tpl.forcesReplacement, "the template's labels change in place");
  });

  it("matches every list by identity: PrometheusRule rules by alert or record, containers, env and ports by name, never by position", () => {
    const rule = (alert: string, severity: string) => ({ alert, expr: `up{job="${alert}"} == 0`, labels: { severity } });
    const rules = (extra: unknown[]) => ({
      spec: {
        groups: [
          {
            name: "triton",
            rules: [...extra, rule("TritonDown", "critical"), { record: "job:queue:rate5m", expr: "rate(q[5m])" }, rule("TritonSlow", "warning")],
          },
        ],
      },
    });
    // A new group's alert and recording rule inserted first; one severity changed.
    const before = rules([]);
    const after = rules([rule("DetectDown", "critical"), { record: "detect:queue:rate5m", expr: "rate(d[5m])" }]);
    after.spec.groups[0].rules[4] = rule("TritonSlow", "critical");
    assert.deepEqual(
      diffProps(before, after).map((c) => [c.path, c.kind]),
      [
        ["spec.groups[name=triton].rules[alert=DetectDown]", "add"],
        ["spec.groups[name=triton].rules[record=detect:queue:rate5m]", "add"],
        ["spec.groups[name=triton].rules[alert=TritonSlow].labels.severity", "change"],
      ],
    );
    // One alert of a name per serving group: the same name twice, the new one wherever it is inserted.
    const perGroup = (group: string) => ({ alert: "TritonTargetDown", expr: `up{serving_group="${group}"} == 0`, labels: { severity: "critical" } });
    for (const head of [
      [perGroup("vision"), perGroup("detect")],
      [perGroup("detect"), perGroup("vision")],
    ])
      assert.deepEqual(
        diffProps({ rules: [perGroup("vision")] }, { rules: head }).map((c) => [c.path, c.kind, (c.new as { expr?: string })?.expr]),
        [[`rules[alert=TritonTargetDown#${head.indexOf(head.find((r) => r.expr.includes("detect"))!) + 1}]`, "add", perGroup("detect").expr]],
      );
    const pod = (env: { name: string; value: string }[], ports: { name: string; containerPort: number }[]) => ({
      spec: {
        containers: [
          { name: "sidecar", image: "s:1" },
          { name: "triton", image: "t:1", env, ports },
        ],
      },
    });
    const changes = diffProps(
      pod(
        [
          { name: "A", value: "1" },
          { name: "B", value: "2" },
        ],
        [{ name: "http", containerPort: 8000 }],
      ),
      {
        spec: {
          containers: [
            {
              name: "triton",
              image: "t:1",
              env: [
                { name: "B", value: "3" },
                { name: "A", value: "1" },
              ],
              ports: [{ name: "http", containerPort: 8080 }],
            },
            { name: "sidecar", image: "s:1" },
          ],
        },
      },
    );
    assert.deepEqual(
      changes.map((c) => c.path),
      ["spec.containers[name=triton].env[name=B].value", "spec.containers[name=triton].ports[name=http].containerPort"],
    );
  });

  it("reads identical changes that differ only in list items once, with the items and their count", () => {
    const route = (name: string, numerator: number) => ({
      name,
      route: { request_mirror_policies: [{ cluster: "mirror", runtime_fraction: { default_value: { numerator } } }] },
    });
    const names = ["a", "b", "c", "d", "e", "f"];
    const cfg = (n: number) => ({
      listeners: [
        { name: "http", routes: names.slice(0, 4).map((x) => route(x, n)) },
        { name: "grpc", routes: names.slice(4).map((x) => route(x, n)) },
      ],
      timeout: n,
    });
    const merged = mergeRepeated(diffProps(cfg(5), cfg(10)));
    assert.deepEqual(
      merged.map((c) => [c.path, c.old, c.new, c.over?.values]),
      [
        ["listeners[name=*].routes[name=*].route.request_mirror_policies[cluster=mirror].runtime_fraction.default_value.numerator", 5, 10, names],
        ["timeout", 5, 10, undefined],
      ],
    );
    assert.equal(merged[0].over?.list, "routes");
    // Different values at those paths stay apart.
    const mixed = cfg(5);
    mixed.listeners[1].routes[0].route.request_mirror_policies[0].runtime_fraction.default_value.numerator = 7;
    assert.equal(mergeRepeated(diffProps(mixed, cfg(10))).length, 3);
  });

  it("keeps a replicas change an in-place update", () => {
    const [c] = diffResources([sts({ a: "b" }, 3)], [sts({ a: "b" }, 5)]);
    assert.equal(c.op, "update");
    assert.deepEqual(c.changes, [{ path: "spec.replicas", kind: "change", old: 3, new: 5 }]);
  });

  it("flags an EKS node group's AMI type and subnets as replacements, and its scaling as an update", () => {
    const ng = (amiType: string, subnetIds: string[], desiredSize: number) =>
      res("aws:eks/nodeGroup:NodeGroup", "gpu", { amiType, subnetIds, scalingConfig: { desiredSize, minSize: 1, maxSize: 4 } });
    const [ami] = diffResources([ng("AL2023_x86_64_NVIDIA", ["subnet-a"], 2)], [ng("BOTTLEROCKET_x86_64_NVIDIA", ["subnet-a"], 2)]);
    assert.deepEqual([ami.op, ami.replaceReasons], ["replace", ["amiType"]]);
    const [subnets] = diffResources([ng("AL2023_x86_64_NVIDIA", ["subnet-a"], 2)], [ng("AL2023_x86_64_NVIDIA", ["subnet-a", "subnet-b"], 2)]);
    assert.deepEqual([subnets.op, subnets.replaceReasons], ["replace", ["subnetIds"]]);
    const [scale] = diffResources([ng("AL2023_x86_64_NVIDIA", ["subnet-a"], 2)], [ng("AL2023_x86_64_NVIDIA", ["subnet-a"], 3)]);
    assert.equal(scale.op, "update");
  });

  it("sees a masked Secret's data change only through fingerprints, and never shows it", () => {
    const secret = res("kubernetes:core/v1:Secret", "creds", { apiVersion: "v1", kind: "Secret", metadata: { name: "creds" }, data: MASK });
    const urn = secret.urn;
    const same = diffResources([secret], [secret], { base: { [urn]: { '["data"]': "f1" } }, head: { [urn]: { '["data"]': "f1" } } });
    assert.deepEqual(same, []);
    const [c] = diffResources([secret], [secret], { base: { [urn]: { '["data"]': "f1" } }, head: { [urn]: { '["data"]': "f2" } } });
    assert.equal(c.op, "replace");
    assert.deepEqual(c.changes, [{ path: "data", kind: "change", old: MASK, new: MASK, secret: true, forcesReplacement: true }]);
  });

  it("reports creates and deletes by URN, and metadata.name as replace-forcing for every kind", () => {
    const a = res("kubernetes:core/v1:Service", "svc", { metadata: { name: "a" } });
    const b = res("kubernetes:core/v1:Service", "other", { metadata: { name: "b" } });
    assert.deepEqual(
      diffResources([a], [b]).map((c) => [c.op, c.name]),
      [
        ["create", "other"],
        ["delete", "svc"],
      ],
    );
    assert.ok(replacePaths("kubernetes:networking.k8s.io/v1:NetworkPolicy").includes("metadata.name"));
    assert.ok(!replacePaths("pulumi:providers:kubernetes").includes("metadata.name"));
  });

  it("diffs base64 of text (a launch template's user data) as the decoded documents' lines; other base64 stays as it is", () => {
    const doc = (grace: string) => `MIME-Version: 1.0\n\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: ${grace}\n${"# tuning line\n".repeat(12)}`;
    const b64 = (t: string | Buffer) => Buffer.from(t).toString("base64");
    const [c] = diffProps({ userData: b64(doc("45s")) }, { userData: b64(doc("160s")) });
    assert.equal(c.decoded, "base64");
    assert.deepEqual(
      c.lines?.filter((l) => /^[-+] /.test(l)),
      ["-       shutdownGracePeriod: 45s", "+       shutdownGracePeriod: 160s"],
    );
    assert.match(
      formatDiffText({
        stack: "s",
        base: "b",
        counts: countChanges([]),
        config: [],
        resources: [{ op: "update", type: "aws:ec2/launchTemplate:LaunchTemplate", name: "gpu", urn: "u", changes: [c] } as ResourceChange],
      }),
      /userData: \(base64, decoded\)/,
    );
    // Binary (gzip, random bytes) and a base64-looking token are not text: shown as they are.
    const binary = (seed: number) => b64(Buffer.from(Array.from({ length: 120 }, (_, i) => (i * 37 + seed) % 256)));
    const [bin] = diffProps({ v: binary(1) }, { v: binary(2) });
    assert.equal(bin.decoded, undefined);
  });

  it("line-diffs embedded JSON pretty-printed", () => {
    const d = lineDiff(
      JSON.stringify({ Statement: [{ Effect: "Allow", Action: "s3:GetObject" }] }),
      JSON.stringify({ Statement: [{ Effect: "Allow", Action: "s3:*" }] }),
    );
    assert.deepEqual(
      d.filter((l) => /^[-+] /.test(l)),
      ['-       "Action": "s3:GetObject"', '+       "Action": "s3:*"'],
    );
  });
});
