// `npm run models -- lint DIR`: the publisher's CI lint over a model-repository folder, run
// in-process on fixture repositories this test writes to a temp folder (good models and each kind of
// break), against a fixture stack file for --stack; and Triton's own schema through protoc agrees
// with it: a config the lint cannot parse protoc refuses, a config it parses protoc accepts.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main, parseForLint } from "../tools/models";
import { runMain } from "../tools/planner/cli";
import { TRITON_MODEL_CONFIG_FIELD_NAMES, TRITON_MODEL_CONFIG_ONEOFS } from "../components/upstream/triton-model-config-names";
import { MODEL_CONFIG_MESSAGES, MODEL_CONFIG_PROTO_OF_RELEASE } from "../components/upstream/triton-model-config";
import { ROOT } from "./helpers";
import { fixtureYaml } from "./support/stacks";
import { HAVE_PROTOC, loadProto, MODEL_CONFIG_DIR, protocEncode, protoFiles } from "./support/model-config-proto";

type Model = { readonly config?: string; readonly versions?: readonly string[] };

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "models-lint-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
/** A model repository folder: model → its config.pbtxt text and version folders (default ["1"]). */
function repo(models: Readonly<Record<string, Model>>): string {
  const dir = path.join(tmp, `repo-${n++}`);
  for (const [name, m] of Object.entries(models)) {
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    for (const v of m.versions ?? ["1"]) fs.mkdirSync(path.join(dir, name, v));
    if (m.config !== undefined) fs.writeFileSync(path.join(dir, name, "config.pbtxt"), m.config);
  }
  return dir;
}

/** A project folder with one fixture stack file, `dev`: group vision, one GPU per pod, release 25.01, loading resnet50 and twogpu. */
const project = (() => {
  const dir = path.join(tmp, "project");
  fs.mkdirSync(dir);
  fs.copyFileSync(path.join(ROOT, "Pulumi.yaml"), path.join(dir, "Pulumi.yaml"));
  fs.writeFileSync(
    path.join(dir, "Pulumi.dev.yaml"),
    fixtureYaml("dev", (s) => {
      s.triton.groups[0].models = ["resnet50", "twogpu"];
      s.triton.groups[0].image = { tag: "25.01-py3" };
      s.triton.groups[0].gpu.count = 1;
    }),
  );
  return dir;
})();

async function lint(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: project, root: project };
  const status = await runMain(main, ["lint", ...args], io);
  return { status, stdout, stderr };
}

const GOOD = `name: "resnet50"
backend: "onnxruntime"
max_batch_size: 8
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
}
instance_group [ { kind: KIND_GPU, count: 2, gpus: [ 0 ] } ]
version_policy { latest { num_versions: 2 } }
`;
const ENSEMBLE = `name: "pipeline"\nplatform: "ensemble"\nmax_batch_size: 4\n`;
const WITH_OPTIMIZATION = `name: "tuned"
backend: "onnxruntime"
max_batch_size: 4
optimization { execution_accelerators { gpu_execution_accelerator : [ { name : "tensorrt", parameters { key: "precision_mode" value: "FP16" } } ] } }
instance_group [ { kind: KIND_GPU, host_policy: "numa0" } ]
`;
const SYNTAX_ERROR = `name: "broken"\nbackend: "onnxruntime"\nmax_batch_size: 8\ndynamic_batching {\n  preferred_batch_size: [ 4, 8 \n}\n`;
const TOO_BIG = `name: "toobig"\nbackend: "onnxruntime"\nmax_batch_size: 8\ndynamic_batching { preferred_batch_size: [ 4, 16 ] }\n`;
const TENSORFLOW = `name: "tf"\nbackend: "tensorflow"\nmax_batch_size: 8\n`;

describe("npm run models -- lint: the publisher's CI lint of a model repository", function () {
  this.timeout(60_000);

  it("passes good models (exit 0), in text, JSON and Markdown", async () => {
    const dir = repo({ resnet50: { config: GOOD, versions: ["1", "2"] }, pipeline: { config: ENSEMBLE } });
    const text = await lint([dir]);
    assert.equal(text.status, 0, text.stdout + text.stderr);
    assert.match(text.stdout, /resnet50: ok/);
    assert.match(text.stdout, /pipeline: ok/);
    const json = await lint([dir, "--format", "json"]);
    assert.equal(json.status, 0);
    const doc = JSON.parse(json.stdout) as { models: { model: string; status: string }[] };
    assert.deepEqual(
      doc.models.map((m) => [m.model, m.status]),
      [
        ["pipeline", "ok"],
        ["resnet50", "ok"],
      ],
    );
    const md = await lint([dir, "--format", "markdown"]);
    assert.equal(md.status, 0);
    assert.match(md.stdout, /^### model repository/);
  });

  it("a syntax error is unreadable input: exit 2 with file:line:column, never a stack trace", async () => {
    const dir = repo({ resnet50: { config: GOOD }, broken: { config: SYNTAX_ERROR } });
    const r = await lint([dir]);
    assert.equal(r.status, 2);
    assert.match(r.stdout, /broken: unreadable/);
    assert.match(r.stdout, /broken\/config\.pbtxt:6:1: expected "," or "\]" in the list of preferred_batch_size/);
    assert.doesNotMatch(r.stdout + r.stderr, /\n\s+at /, "no stack trace");
  });

  for (const [what, models, expected] of [
    [
      "a config whose name is not its folder",
      { renamed: { config: GOOD } },
      /renamed\/config\.pbtxt name: must be the model's folder name "renamed", got "resnet50"/,
    ],
    ["a non-numeric version folder", { resnet50: { config: GOOD, versions: ["1", "v2"] } }, /resnet50\/v2\/: version folder "v2" must be a positive integer/],
    ["no version folder", { resnet50: { config: GOOD, versions: [] } }, /resnet50\/: has no version folder/],
    ["no config.pbtxt", { resnet50: {} }, /resnet50\/config\.pbtxt: is missing/],
    [
      "a preferred batch size above max_batch_size",
      { toobig: { config: TOO_BIG } },
      /toobig\/config\.pbtxt dynamic_batching\.preferred_batch_size\[1\]: must be at most maxBatchSize \(8\), got 16/,
    ],
  ] as const) {
    it(`${what} is a rule violation: exit 1 naming it`, async () => {
      const r = await lint([repo(models)]);
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stdout, expected);
    });
  }

  it("a backend the release does not ship is a violation with --release, not on a release that ships it", async () => {
    const dir = repo({ tf: { config: TENSORFLOW } });
    const r = await lint([dir, "--release", "26.07"]);
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stdout, /tf\/config\.pbtxt backend: must be a backend the image\.tag release 26\.07 ships \(.*\), got "tensorflow"/);
    assert.equal((await lint([dir, "--release", "25.01"])).status, 0);
  });

  it("--stack checks each model against the group that loads it: its GPU count and release; --release overrides the release", async () => {
    const twogpu = GOOD.replace('"resnet50"', '"twogpu"').replace("gpus: [ 0 ]", "gpus: [ 1 ]");
    const dir = repo({ resnet50: { config: GOOD }, twogpu: { config: twogpu } });
    const r = await lint([dir, "--stack", "dev"]);
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stdout, /twogpu\/config\.pbtxt instance_group\[0\]\.gpus\[0\]: must be below gpu\.count \(1\).*got 1 \(stack dev group vision/);
    assert.match(r.stdout, /resnet50: ok/);
    // The group's release (25.01) ships tensorflow; 26.07 does not.
    const tf = repo({ resnet50: { config: TENSORFLOW.replace('"tf"', '"resnet50"') } });
    assert.equal((await lint([tf, "--stack", "dev"])).status, 0);
    const over = await lint([tf, "--stack", "dev", "--release", "26.07"]);
    assert.equal(over.status, 1);
    assert.match(over.stdout, /backend: must be a backend the image\.tag release 26\.07 ships/);
    // A model no group loads: the group checks are said not to have run.
    const other = await lint([repo({ pipeline: { config: ENSEMBLE } }), "--stack", "dev"]);
    assert.equal(other.status, 0);
    assert.match(other.stdout, /warning: pipeline\/config\.pbtxt: no serving group of stack dev loads pipeline/);
  });

  it("a field Triton has but the stack's table lacks is a warning (not checked), not a parse error", async () => {
    const r = await lint([repo({ tuned: { config: WITH_OPTIMIZATION } })]);
    assert.equal(r.status, 0, r.stdout);
    assert.match(r.stdout, /warning: tuned\/config\.pbtxt:4:1 ModelConfig\.optimization: not checked by this lint \(field ModelConfig\.optimization is not in/);
    assert.match(r.stdout, /warning: tuned\/config\.pbtxt:5:36 ModelInstanceGroup\.host_policy: not checked/);
    const unknown = await lint([repo({ x: { config: `name: "x"\nbackend: "python"\nmax_batch_sizes: 8\n` } })]);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stdout, /x\/config\.pbtxt:3:1: unknown field "max_batch_sizes" of inference\.ModelConfig/);
  });

  it("usage errors exit 2 with a message", async () => {
    for (const [args, expected] of [
      [[path.join(tmp, "nothing-here")], /no such model repository folder/],
      [[repo({}), "--release", "19.01"], /--release must be a Triton release the stack supports/],
      [[repo({}), "--stack", "nosuch"], /no stack file Pulumi\.nosuch\.yaml/],
      [[repo({}), "--format", "xml"], /--format must be one of/],
    ] as const) {
      const r = await lint([...args]);
      assert.equal(r.status, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stderr, /internal error/);
    }
  });
});

describe("the lint's field names and parser agree with Triton's model_config.proto (protobufjs, protoc)", function () {
  this.timeout(60_000);
  before(function () {
    if (MODEL_CONFIG_DIR === undefined) this.skip(); // no shared/ reference folder beside the clone: pending
  });

  it("the skip list is exactly the union of every release's proto fields, and holds every field of the stack's table", () => {
    for (const [message, names] of Object.entries(TRITON_MODEL_CONFIG_FIELD_NAMES)) {
      const union = new Set<string>();
      for (const file of protoFiles()) Object.keys(loadProto(file).lookupType(`inference.${message}`).fields).forEach((f) => union.add(f));
      assert.deepEqual([...names].sort(), [...union].sort(), message);
    }
    for (const file of protoFiles()) {
      const oneofs = loadProto(file).lookupType("inference.ModelConfig").oneofs ?? {};
      assert.deepEqual(
        Object.fromEntries(Object.entries(oneofs).map(([k, o]) => [k, [...o.oneof].sort()])),
        Object.fromEntries(Object.entries(TRITON_MODEL_CONFIG_ONEOFS).map(([k, m]) => [k, [...m].sort()])),
        file,
      );
    }
    for (const [message, fields] of Object.entries(MODEL_CONFIG_MESSAGES))
      for (const f of fields) assert.ok(TRITON_MODEL_CONFIG_FIELD_NAMES[message]?.includes(f.name), `${message}.${f.name}`);
  });

  const NEWEST = MODEL_CONFIG_PROTO_OF_RELEASE["26.08"];
  const CASES: [string, string][] = [
    ["good", GOOD],
    ["ensemble", ENSEMBLE],
    ["a field outside the table (optimization, host_policy)", WITH_OPTIMIZATION],
    ["a rule violation (still well-formed)", TOO_BIG],
    ["a syntax error", SYNTAX_ERROR],
    ["a misspelt field", `max_batch_sizes: 8\n`],
    ["a string for an integer", `max_batch_size: "8"\n`],
    ["an unknown enum value", `instance_group [ { kind: KIND_TPU } ]\n`],
    ["an int32 out of range", `max_batch_size: 4294967296\n`],
    ["a field set twice", `name: "a"\nname: "b"\n`],
    ["both of a oneof", `version_policy { latest { num_versions: 1 } all { } }\n`],
    ["an unclosed block", `dynamic_batching {\n`],
    ["a skipped field and a table field of one oneof", `dynamic_batching { }\nsequence_batching { max_sequence_idle_microseconds: 5 }\n`],
    ["a skipped field of a oneof alone", `sequence_batching { max_sequence_idle_microseconds: 5 }\n`],
  ];
  for (const [what, text] of CASES) {
    it(`${what}: the lint parses it exactly when protoc --encode accepts it`, function () {
      if (!HAVE_PROTOC) this.skip(); // apt-get install protobuf-compiler: pending
      let lintOk = true;
      let reason = "";
      try {
        parseForLint(text, "config.pbtxt");
      } catch (e) {
        lintOk = false;
        reason = (e as Error).message;
        assert.match(reason, /^config\.pbtxt:\d+:\d+: /, "a refusal names file:line:column");
      }
      const protoc = protocEncode(NEWEST, text);
      assert.equal(
        lintOk,
        protoc.ok,
        `lint ${lintOk ? "accepts" : `refuses (${reason})`}, protoc ${protoc.ok ? "accepts" : `refuses: ${protoc.error}`}\n${text}`,
      );
    });
  }
});
