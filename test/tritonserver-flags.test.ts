import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import {
  FLAGS,
  OWNED_FLAGS,
  TritonFlagError,
  extraArgsErrors,
  parseFlag,
  parseFlags,
  parseTritonServerArgs,
  tritonServerArgs,
  type TritonServerOptions,
} from "../components/upstream/tritonserver";
import { ROOT } from "./helpers";

// Flags that circulate in blog posts but tritonserver does not have (facts file, last
// section). Only tests may spell them.
const FALSE_FLAGS = [
  "--memory-percentage=50",
  "--allow-gpu-memory-growth=true",
  "--log-rotate-after=100",
  "--log-rotate-count=5",
  "--http-header-forwarding=x-request-id",
  "--dryrun",
  "--gpus=all",
  "--log-format=json",
];
const DEPRECATED = [
  ["--strict-model-config=false", "--disable-auto-complete-config"],
  ["--response-cache-byte-size=1048576", "--cache-config"],
] as const;

const BASE: TritonServerOptions = {
  release: "26.08",
  modelRepository: "s3://ml-prod-models/triton",
  modelControlMode: "explicit",
  models: ["resnet50", "efficientnet_b0"],
  exitTimeoutSecs: 30,
  gpuCount: 2,
  cudaMemoryPoolByteSize: 268435456,
  pinnedMemoryPoolByteSize: 268435456,
  headerForwardPattern: "x-request-id",
  admin: { header: "triton-admin-key", value: "$(TRITON_PLATFORM_ADMIN_KEY)" },
  logVerbose: 0,
  extraArgs: [],
};

describe("tritonserver flag builder", () => {
  it("emits every production default with its exact spelling", () => {
    const args = tritonServerArgs(BASE);
    for (const expected of [
      "--model-repository=s3://ml-prod-models/triton",
      "--model-control-mode=explicit",
      "--load-model=resnet50",
      "--load-model=efficientnet_b0",
      "--strict-readiness=true",
      "--exit-on-error=true",
      "--exit-timeout-secs=30",
      "--log-verbose=0",
      "--log-format=ISO8601",
      "--allow-metrics=true",
      "--allow-gpu-metrics=false",
      "--metrics-port=8002",
      "--metrics-config=summary_latencies=true",
      "--cuda-memory-pool-byte-size=0:268435456",
      "--cuda-memory-pool-byte-size=1:268435456",
      "--pinned-memory-pool-byte-size=268435456",
      "--http-header-forward-pattern=x-request-id",
      "--grpc-header-forward-pattern=x-request-id",
      "--http-restricted-api=shared-memory,model-config,model-repository,statistics,trace,logging:triton-admin-key=$(TRITON_PLATFORM_ADMIN_KEY)",
      "--grpc-restricted-protocol=shared-memory,model-config,model-repository,statistics,trace,logging:triton-admin-key=$(TRITON_PLATFORM_ADMIN_KEY)",
    ]) {
      assert.ok(args.includes(expected), `${expected} in ${args.join(" ")}`);
    }
    assert.equal(args.filter((a) => a.startsWith("--cuda-memory-pool-byte-size=")).length, 2, "one CUDA pool per GPU");
  });

  it("appends valid extra flags after its own", () => {
    const extra = ["--model-load-thread-count=2", "--metrics-config=summary_quantiles=0.5:0.05,0.99:0.001", "--disable-auto-complete-config"];
    const args = tritonServerArgs({ ...BASE, extraArgs: extra });
    assert.deepEqual(args.slice(-3), extra);
  });

  for (const bad of FALSE_FLAGS) {
    it(`rejects the false flag ${bad}, naming it`, () => {
      const name = bad.split("=")[0];
      assert.throws(
        () => parseFlag(bad),
        (e: Error) => e instanceof TritonFlagError && e.message.includes(name),
      );
      assert.throws(
        () => tritonServerArgs({ ...BASE, extraArgs: [bad] }),
        (e: Error) => e.message.includes(name),
      );
      assert.equal(extraArgsErrors([bad]).length, 1);
    });
  }

  it("suggests the real flag for a near miss", () => {
    assert.throws(() => parseFlag("--http-header-forwarding=x"), /did you mean --http-header-forward-pattern/);
  });

  for (const [flag, replacement] of DEPRECATED) {
    it(`rejects the deprecated ${flag.split("=")[0]} and names ${replacement}`, () => {
      assert.throws(
        () => tritonServerArgs({ ...BASE, extraArgs: [flag] }),
        (e: Error) => e.message.includes(flag.split("=")[0]) && e.message.includes(replacement),
      );
    });
  }

  it("rejects malformed values, repeats and flags the typed options own", () => {
    assert.throws(() => parseFlag("--rate-limit=sometimes"), /--rate-limit: value "sometimes" must be one of off, execution_count/);
    assert.throws(() => parseFlag("--model-load-thread-count=two"), /--model-load-thread-count.*integer/);
    assert.throws(() => parseFlag("--disable-auto-complete-config=true"), /takes no value/);
    assert.throws(() => parseFlag("--metrics-config=buckets=1"), /--metrics-config/);
    assert.throws(() => parseFlag("model-load-thread-count=2"), /not a --flag/);
    assert.throws(() => tritonServerArgs({ ...BASE, extraArgs: ["--id=a", "--id=b"] }), /--id: is given more than once/);
    for (const owned of ["--model-control-mode=poll", "--load-model=other", "--exit-timeout-secs=5", "--model-store=/models"]) {
      assert.throws(() => tritonServerArgs({ ...BASE, extraArgs: [owned] }), new RegExp(`${owned.split("=")[0]}: is set from the group's typed settings`));
    }
    const errors = extraArgsErrors(["--id=ok", "--gpus=1", "--log-verbose=1"]);
    assert.deepEqual(
      errors.map((e) => e.index),
      [1, 2],
    );
  });

  it("refuses --load-model outside explicit mode and explicit mode without models", () => {
    assert.throws(() => tritonServerArgs({ ...BASE, modelControlMode: "poll" }), /--load-model: only works with --model-control-mode=explicit/);
    assert.throws(() => tritonServerArgs({ ...BASE, models: [] }), /needs at least one model/);
    assert.ok(tritonServerArgs({ ...BASE, modelControlMode: "none", models: [] }).includes("--model-control-mode=none"));
  });

  it("knows the false flags only as unknown: none is in its table", () => {
    const names = new Set(FLAGS.map((f) => f.name));
    for (const bad of FALSE_FLAGS.filter((f) => !f.startsWith("--log-format="))) assert.ok(!names.has(bad.split("=")[0]), bad);
    const logFormat = FLAGS.find((f) => f.name === "--log-format")!;
    assert.ok(logFormat.value.kind === "enum" && !logFormat.value.values.includes("json"));
    for (const owned of OWNED_FLAGS) assert.ok(names.has(owned), `${owned} is a real flag`);
  });

  it("no source outside test/ spells a false flag", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (["node_modules", "out", "test", ".git"].includes(e.name)) continue;
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.(ts|yaml|json)$/.test(e.name) && e.name !== "package-lock.json") {
          const text = fs.readFileSync(p, "utf8");
          for (const bad of FALSE_FLAGS) {
            const name = bad.startsWith("--log-format=") ? bad : bad.split("=")[0];
            if (new RegExp(`${name}(?![-\\w])`).test(text)) offenders.push(`${path.relative(ROOT, p)}: ${name}`);
          }
        }
      }
    };
    walk(ROOT);
    assert.deepEqual(offenders, []);
  });

  describe("round trip (fast-check)", () => {
    const modelName = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}$/);
    // Valid extra flags the builder does not own, with well-formed values.
    const extraFlag = fc.oneof(
      fc.integer({ min: 1, max: 16 }).map((n) => `--model-load-thread-count=${n}`),
      fc.integer({ min: 0, max: 8 }).map((n) => `--buffer-manager-thread-count=${n}`),
      fc.integer({ min: 1, max: 100_000 }).map((n) => `--metrics-interval-ms=${n}`),
      fc.constantFrom("true", "false").map((b) => `--allow-cpu-metrics=${b}`),
      fc.constantFrom("off", "execution_count").map((v) => `--rate-limit=${v}`),
      fc.integer({ min: 1, max: 1 << 30 }).map((n) => `--cache-config=local,size=${n}`),
      fc.constantFrom("histogram_latencies=true", "counter_latencies=false", "summary_quantiles=0.5:0.05,0.99:0.001").map((s) => `--metrics-config=${s}`),
      fc.constant("--disable-auto-complete-config"),
      fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/).map((id) => `--id=${id}`),
    );
    // Non-repeatable flags at most once: keep the first occurrence of each name.
    const repeatable = new Set(FLAGS.filter((f) => f.repeatable).map((f) => f.name));
    const extras = fc.array(extraFlag, { maxLength: 6 }).map((xs) => {
      const seen = new Set<string>();
      return xs.filter((x) => {
        const n = x.split("=")[0];
        if (!repeatable.has(n) && seen.has(n)) return false;
        seen.add(n);
        return true;
      });
    });
    const options: fc.Arbitrary<TritonServerOptions> = fc
      .record({
        modelRepository: fc.oneof(
          fc.stringMatching(/^[a-z0-9][a-z0-9-]{2,20}$/).map((b) => `s3://${b}/triton`),
          fc.constant("/mnt/models"),
        ),
        explicit: fc.boolean(),
        otherMode: fc.constantFrom<"none" | "poll">("none", "poll"),
        models: fc.uniqueArray(modelName, { minLength: 1, maxLength: 5 }),
        exitTimeoutSecs: fc.integer({ min: 0, max: 3600 }),
        gpuCount: fc.integer({ min: 1, max: 8 }),
        cudaMemoryPoolByteSize: fc.integer({ min: 0, max: 2 ** 34 }),
        pinnedMemoryPoolByteSize: fc.integer({ min: 0, max: 2 ** 34 }),
        release: fc.constantFrom("25.01", "25.07", "26.02", "26.08"),
        headerForwardPattern: fc.constantFrom("x-request-id", "x-.*", "traceparent|x-request-id"),
        admin: fc.record({ header: fc.constantFrom("triton-admin-key", "x-admin"), value: fc.constantFrom("$(KEY)", "s3cr3t=:,x") }).map((a) => ({ ...a })),
        logVerbose: fc.integer({ min: 0, max: 3 }),
        extraArgs: extras,
      })
      .map(({ explicit, otherMode, models, ...o }) => ({
        ...o,
        modelControlMode: explicit ? "explicit" : otherMode,
        models: explicit ? models : [],
      }));

    it("random valid options produce arguments the parser turns back into the same options", () => {
      fc.assert(
        fc.property(options, (o) => {
          const args = tritonServerArgs(o);
          parseFlags(args, o.release); // every emitted argument is a real flag of the release
          assert.deepEqual(parseTritonServerArgs(args, o.release), o);
        }),
        { numRuns: 300 },
      );
    });
  });
});

describe("tritonserver values as the release's parser accepts them (src/command_line_parser.cc Parse*)", () => {
  const ok = (arg: string, release?: string) => assert.doesNotThrow(() => parseFlag(arg, { release }), arg);
  const bad = (arg: string, re: RegExp, release?: string) => assert.throws(() => parseFlag(arg, { release }), re, arg);

  it("--trace-config: [mode,]setting=value, the settings the parser reads, hyphenated triton settings", () => {
    for (const a of ["triton,log-frequency=50", "triton,file=/tmp/trace.json", "level=TIMESTAMPS", "level=off", "rate=100", "count=-1", "mode=opentelemetry"]) {
      ok(`--trace-config=${a}`);
    }
    ok("--trace-config=opentelemetry,url=http://otel:4318/v1/traces");
    ok("--trace-config=OpenTelemetry,bsp_max_queue_size=2048");
    bad("--trace-config=jaeger,url=x", /trace mode "jaeger" must be triton or opentelemetry/);
    bad("--trace-config=,level=off", /must be \[<mode>,\]<setting>=<value>/);
    bad("--trace-config=level=", /must be \[<mode>,\]<setting>=<value>/);
    bad("--trace-config=level=loud", /level must be OFF, TIMESTAMPS or TENSORS/);
    bad("--trace-config=triton,log-frequency=often", /log-frequency must be an integer/);
    bad("--trace-config=sample=1", /global setting "sample" is not one the parser reads/);
    bad("--trace-config=opentelemetry,bsp_schedule_delay=-5", /bsp_schedule_delay must be an integer/);
  });

  it("--backend-config: per backend or global, never an empty setting or value, name ends at the first comma", () => {
    for (const a of ["python,shm-default-byte-size=1048576", "tensorflow,version=2", "default-max-batch-size=8", "onnxruntime,enable-global-threadpool=1"])
      ok(`--backend-config=${a}`);
    bad("--backend-config=python,shm-default-byte-size=", /setting and value not empty/);
    bad("--backend-config=default-max-batch-size=", /setting and value not empty/);
    bad("--backend-config=python,=1", /setting and value not empty/);
    bad("--backend-config=,x=1", /must be <backend>,<setting>=<value>/);
    bad("--backend-config=python", /must be <backend>,<setting>=<value>/);
    // The parser splits at the first comma: a global value cannot hold one.
    bad("--backend-config=a=1,2", /must be <backend>,<setting>=<value>/);
  });

  it("--cache-config needs a cache name; --host-policy all three parts; --metrics-config no comma before '='", () => {
    ok("--cache-config=local,size=1048576");
    bad("--cache-config=size=1048576", /must be <cache>,<setting>=<value>/);
    ok("--host-policy=gpu_0,numa-node=0");
    bad("--host-policy=gpu_0,numa-node=", /must be <policy>,<setting>=<value>/);
    ok("--metrics-config=summary_quantiles=0.5:0.05,0.99:0.001");
    bad("--metrics-config=summary_latencies=", /--metrics-config/);
  });

  it("booleans and enums fold case as the parser does; --log-format does not; --log-verbose takes true/false too", () => {
    for (const a of [
      "--exit-on-error=TRUE",
      "--allow-cpu-metrics=Off",
      "--strict-readiness=1",
      "--model-control-mode=EXPLICIT",
      "--rate-limit=Execution_Count",
    ])
      ok(a);
    ok("--grpc-infer-response-compression-level=High");
    bad("--exit-on-error=yes", /must be true or false/);
    bad("--log-format=iso8601", /must be one of default, ISO8601/);
    ok("--log-verbose=true");
    ok("--log-verbose=2");
    bad("--log-verbose=loud", /must be an integer/);
  });

  it("ranges the parser enforces: gRPC infer threads 2..128, pools and input size > 0", () => {
    ok("--grpc-infer-thread-count=2", "25.04");
    bad("--grpc-infer-thread-count=1", /must be >= 2/);
    bad("--grpc-infer-thread-count=129", /must be <= 128/);
    bad("--grpc-max-response-pool-size=0", /must be >= 1/);
    bad("--http-max-input-size=0", /must be >= 1/);
    ok("--http-max-input-size=134217728", "25.06");
    bad("--metrics-interval-ms=1500.5", /must be an integer/);
  });

  it("an option of a later release is refused for an earlier one, and every release knows its own", () => {
    bad("--allow-client-shm=false", /not a flag of tritonserver 26\.02: its parser has it from 26\.04 on/, "26.02");
    ok("--allow-client-shm=false", "26.04");
    bad("--grpc-infer-thread-count=4", /from 25\.04 on/, "25.03");
    bad("--http-max-input-size=1", /from 25\.06 on/, "25.05");
    bad("--http-thread-count=4", /release 24\.10 is not in the option table/, "24.10");
    ok("--http-thread-count=4", "25.01");
    assert.equal(extraArgsErrors(["--grpc-infer-thread-count=4"], ["26.08", "25.02"]).length, 1, "checked against the canary's release too");
    assert.equal(extraArgsErrors(["--grpc-infer-thread-count=4"], ["26.08", "25.04"]).length, 0);
  });

  it("knows the deprecated --trace-* flags and names their replacements", () => {
    for (const [flag, replacement] of [
      ["--trace-file=/tmp/t", "--trace-config=triton,file=<path>"],
      ["--trace-level=TIMESTAMPS", "--trace-config=level="],
      ["--trace-rate=10", "--trace-config=rate="],
      ["--trace-count=5", "--trace-config=count="],
      ["--trace-log-frequency=5", "--trace-config=triton,log-frequency="],
    ]) {
      assert.throws(
        () => parseFlag(flag),
        (e: Error) => e.message.includes("is deprecated upstream; use") && e.message.includes(replacement),
        flag,
      );
      assert.doesNotThrow(() => parseFlag(flag, { allowDeprecated: true }), flag);
    }
    bad("--help", /cannot be used: it prints the usage and exits/);
  });

  it("restriction values: <apis>:<key>=<value>, known apis only, each api restricted once across the flags", () => {
    ok("--http-restricted-api=model-repository,logging:admin-key=abc");
    ok("--grpc-restricted-protocol=health:k=v=with:colons");
    bad("--http-restricted-api=model-repository:admin-key=", /must be <api>\[,<api>…\]:<header>=<value>/);
    bad("--http-restricted-api=model-repository,admin-key=x", /must be <api>/);
    bad("--http-restricted-api=repository:k=v", /unknown restricted api "repository"/);
    bad("--http-restricted-api=trace,trace:k=v", /"trace" is listed twice/);
    assert.throws(() => parseFlags(["--http-restricted-api=trace:k=v", "--http-restricted-api=logging,trace:k2=v"]), /restricts trace a second time/);
    assert.doesNotThrow(() => parseFlags(["--http-restricted-api=trace:k=v", "--grpc-restricted-protocol=trace:k=v"]));
  });

  it("extra args may not take over the restriction, the forward patterns, or open SageMaker / Vertex AI endpoints", () => {
    const errors = extraArgsErrors([
      "--http-restricted-api=health:k=v",
      "--grpc-restricted-protocol=health:k=v",
      "--grpc-header-forward-pattern=.*",
      "--allow-sagemaker=true",
      "--allow-vertex-ai=true",
      "--http-thread-count=16",
    ]);
    assert.deepEqual(
      errors.map((e) => e.index),
      [0, 1, 2, 3, 4],
    );
    assert.match(errors[3].error.message, /opens a SageMaker endpoint/);
  });
});
