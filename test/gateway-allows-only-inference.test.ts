// Through the gateway, only inference, metadata and readiness reach Triton: requests are
// evaluated against the rendered route table (test/support/envoy-routes.ts) of every fixture
// stack's planned ConfigMap and of built variants. Control APIs (repository, logging, trace,
// shared memory, model config and statistics; HTTP and gRPC) reach no Triton cluster and are
// never mirrored; inference to a model reaches its group, by name or by the group header.
import { strict as assert } from "node:assert";
import { checkAtLevels, fixtureStack, one, plan, planFixture, SHAPES } from "./helpers";
import { modelNameOf } from "../components/triton";
import { envoyInput, group, readBackBootstrap } from "./envoy-fixture";
import { listenerHcm, routeRequest, type TestRequest } from "./support/envoy-routes";
import { fixtureConfig } from "./support/stacks";
import { GATEWAY_GROUP_HEADER, TRITON_ADMIN_HEADER } from "../components/contracts";
import { ENVOY_CONFIG_FILE, upstreamClusterName } from "../components/gateway";
import { TRITON_GRPC_ALLOWED, TRITON_GRPC_CONTROL, grpcPath } from "../components/gateway/triton-api";
import { fromJson } from "../components/upstream/envoy";
import { loadConfig } from "../config";

/** Every HTTP control call a client might try, with a model name `m`. */
function httpControlCalls(m: string): TestRequest[] {
  const calls: [string, string][] = [
    ["POST", `/v2/repository/models/${m}/load`],
    ["POST", `/v2/repository/models/${m}/unload`],
    ["POST", "/v2/repository/index"],
    ["POST", `/v2/repository/some-repo/models/${m}/load`],
    ["GET", "/v2/logging"],
    ["POST", "/v2/logging"],
    ["GET", "/v2/trace/setting"],
    ["POST", "/v2/trace/setting"],
    ["POST", `/v2/models/${m}/trace/setting`],
    ["GET", "/v2/systemsharedmemory/status"],
    ["POST", "/v2/systemsharedmemory/region/r/register"],
    ["POST", "/v2/cudasharedmemory/region/r/register"],
    ["GET", "/v2/models/stats"],
    ["GET", `/v2/models/${m}/stats`],
    ["GET", `/v2/models/${m}/config`],
    ["GET", `/v2/models/${m}/versions/1/config`],
    ["GET", `/v2/models/${m}/versions/1/stats`],
    ["POST", `/v2/models/${m}/versions/1/trace/setting`],
    // Walking out of an allowed prefix, or hiding the path in a query string.
    ["POST", `/v2/models/${m}/../../repository/models/${m}/load`],
    ["POST", `/v2/models/${m}/versions/1/%2F../../repository/index`],
    ["POST", `/v2/models/${m}/versions/1/config?x=/infer`],
    ["GET", `/v2/models/${m}/versions/1/config?x=/ready`],
    ["POST", `/v2/models/${m}/generate`],
  ];
  return calls.map(([method, path]) => ({ method, path }));
}

function assertNeverReachesTriton(c: Record<string, any>, req: TestRequest, clusters: Set<string>, what: string): void {
  const out = routeRequest(listenerHcm(c, req.grpc ? "grpc" : "http"), req);
  assert.equal(out.cluster, undefined, `${what}: ${req.method} ${req.path} was forwarded to ${out.cluster} (route ${out.route})`);
  assert.deepEqual(out.mirrors, [], `${what}: ${req.method} ${req.path} mirrored`);
  assert.ok(out.status !== undefined && out.status >= 400, `${what}: ${req.method} ${req.path} answered ${out.status}`);
  for (const x of [out.cluster, ...out.mirrors]) assert.ok(x === undefined || !clusters.has(x));
}

function tritonClusters(c: Record<string, any>): Set<string> {
  return new Set(c.static_resources.clusters.map((x: { name: string }) => x.name).filter((n: string) => n !== "envoy-admin"));
}

describe("the gateway admits only inference, metadata and health", () => {
  for (const shape of SHAPES) {
    describe(`${shape} fixture stack (planned ConfigMap)`, () => {
      let c: Record<string, any>;
      let groups: { name: string; models: string[] }[];
      before(async () => {
        const p = await plan(shape);
        c = fromJson(one(p.resources, "kubernetes:core/v1:ConfigMap", "gateway-config").props.data[ENVOY_CONFIG_FILE]) as Record<string, any>;
        groups = loadConfig(fixtureConfig(shape), shape).triton.groups.map((g) => ({ name: g.name, models: (g.models ?? []).map(modelNameOf) }));
      });

      it("control APIs over HTTP reach no Triton cluster and are not mirrored, with or without the group or admin header", () => {
        const clusters = tritonClusters(c);
        for (const g of groups) {
          for (const m of g.models) {
            for (const base of httpControlCalls(m)) {
              const variants: Record<string, string>[] = [
                {},
                { [GATEWAY_GROUP_HEADER]: g.name },
                { [TRITON_ADMIN_HEADER]: "guess", [GATEWAY_GROUP_HEADER]: g.name },
              ];
              for (const headers of variants) {
                assertNeverReachesTriton(c, { ...base, headers }, clusters, shape);
              }
            }
          }
        }
      });

      it("every gRPC method but inference, metadata and readiness is refused (403) and not mirrored", () => {
        const clusters = tritonClusters(c);
        for (const method of TRITON_GRPC_CONTROL) {
          for (const headers of [{}, ...groups.map((g) => ({ [GATEWAY_GROUP_HEADER]: g.name }))]) {
            const req = { method: "POST", path: grpcPath(method), grpc: true, headers };
            assertNeverReachesTriton(c, req, clusters, shape);
            assert.equal(routeRequest(listenerHcm(c, "grpc"), req).status, 403, method);
          }
        }
        assertNeverReachesTriton(c, { method: "POST", path: "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", grpc: true }, clusters, shape);
      });

      it("inference to each model reaches its group's primary, without the group header and with it", () => {
        for (const g of groups) {
          for (const m of g.models) {
            for (const path of [`/v2/models/${m}/infer`, `/v2/models/${m}/versions/3/infer`]) {
              const byName = routeRequest(listenerHcm(c, "http"), { method: "POST", path });
              assert.equal(byName.cluster, upstreamClusterName(g.name, "primary", "http"), `${path} by name`);
              const byHeader = routeRequest(listenerHcm(c, "http"), { method: "POST", path, headers: { [GATEWAY_GROUP_HEADER]: g.name } });
              assert.equal(byHeader.cluster, upstreamClusterName(g.name, "primary", "http"), `${path} by header`);
            }
            for (const path of [`/v2/models/${m}`, `/v2/models/${m}/ready`, `/v2/models/${m}/versions/2`, `/v2/models/${m}/versions/2/ready`]) {
              const read = routeRequest(listenerHcm(c, "http"), { method: "GET", path });
              assert.equal(read.cluster, upstreamClusterName(g.name, "primary", "http"), path);
              assert.deepEqual(read.mirrors, [], `${path}: reads are not mirrored`);
            }
          }
          for (const method of [...TRITON_GRPC_ALLOWED.inference, ...TRITON_GRPC_ALLOWED.stream, ...TRITON_GRPC_ALLOWED.read]) {
            const out = routeRequest(listenerHcm(c, "grpc"), {
              method: "POST",
              path: grpcPath(method),
              grpc: true,
              headers: { [GATEWAY_GROUP_HEADER]: g.name },
            });
            assert.equal(out.cluster, upstreamClusterName(g.name, "primary", "grpc"), method);
          }
        }
        for (const path of ["/v2", "/v2/health/live", "/v2/health/ready"]) {
          assert.ok(routeRequest(listenerHcm(c, "http"), { method: "GET", path }).cluster?.endsWith("-primary-http"), path);
        }
      });

      it("the admin header is stripped from every client request on both listeners", () => {
        for (const l of ["http", "grpc"]) {
          assert.ok(listenerHcm(c, l).route_config.request_headers_to_remove.includes(TRITON_ADMIN_HEADER), l);
          const m = groups[0].models[0];
          const out = routeRequest(listenerHcm(c, l), {
            method: "POST",
            path: l === "http" ? `/v2/models/${m}/infer` : grpcPath("ModelInfer"),
            grpc: l === "grpc",
            headers: { [TRITON_ADMIN_HEADER]: "x" },
          });
          assert.ok(out.cluster);
          assert.equal(out.forwarded[TRITON_ADMIN_HEADER], undefined);
        }
      });

      it("unknown paths, methods and groups are answered 404 by the gateway", () => {
        const clusters = tritonClusters(c);
        const m = groups[0].models[0];
        for (const req of [
          { method: "GET", path: `/v2/models/${m}/infer/../../../metrics` },
          { method: "DELETE", path: `/v2/models/${m}` },
          { method: "GET", path: `/v2/models/not-a-model-here` },
          { method: "POST", path: `/v2/models/${m}/infer`, headers: { [GATEWAY_GROUP_HEADER]: "no-such-group" } },
        ]) {
          assertNeverReachesTriton(c, req, clusters, shape);
          assert.equal(routeRequest(listenerHcm(c, "http"), req).status, 404, req.path);
        }
      });
    });
  }

  describe("routing by model name", () => {
    const input = envoyInput();
    const c = readBackBootstrap(input);
    const http = listenerHcm(c, "http");

    it("a model one group serves goes to it without the header; a model several serve goes to the default group", () => {
      assert.equal(routeRequest(http, { method: "POST", path: "/v2/models/bert/infer" }).cluster, "text-primary-http");
      assert.equal(routeRequest(http, { method: "POST", path: "/v2/models/resnet50/infer" }).cluster, "vision-primary-http");
      // yolo is in both: the default group (vision) without the header, the named one with it.
      assert.equal(routeRequest(http, { method: "POST", path: "/v2/models/yolo/infer" }).cluster, "vision-primary-http");
      assert.equal(
        routeRequest(http, { method: "POST", path: "/v2/models/yolo/infer", headers: { [GATEWAY_GROUP_HEADER]: "text" } }).cluster,
        "text-primary-http",
      );
      const other = readBackBootstrap({ ...input, defaultGroup: "text" });
      assert.equal(routeRequest(listenerHcm(other, "http"), { method: "POST", path: "/v2/models/yolo/infer" }).cluster, "text-primary-http");
    });

    it("a model the named group does not serve is not sent to it (404)", () => {
      assert.equal(routeRequest(http, { method: "POST", path: "/v2/models/bert/infer", headers: { [GATEWAY_GROUP_HEADER]: "vision" } }).status, 404);
    });

    it("a group without a model list (poll/none) is reached by its header, or as the default group, for inference and reads only", () => {
      const open = readBackBootstrap({
        ...input,
        servingGroups: [group("any", { models: [], canary: true, canaryModels: [] }), group("text", { models: ["bert"] })],
        defaultGroup: "any",
      });
      const h = listenerHcm(open, "http");
      assert.equal(routeRequest(h, { method: "POST", path: "/v2/models/whatever/infer" }).cluster, "any-primary-http");
      assert.equal(routeRequest(h, { method: "POST", path: "/v2/models/bert/infer" }).cluster, "text-primary-http", "a listed model wins");
      assert.equal(routeRequest(h, { method: "GET", path: "/v2/models/whatever/ready" }).cluster, "any-primary-http");
      for (const req of httpControlCalls("whatever")) assertNeverReachesTriton(open, req, tritonClusters(open), "model-less group");
    });
  });

  describe("mirroring and the canary's traffic share", () => {
    it("only inference is mirrored, to the canary of the same protocol", () => {
      const c = readBackBootstrap(envoyInput({ mirrorPercent: 7 }));
      const http = listenerHcm(c, "http");
      assert.deepEqual(routeRequest(http, { method: "POST", path: "/v2/models/resnet50/infer" }).mirrors, ["vision-canary-http"]);
      assert.deepEqual(routeRequest(http, { method: "GET", path: "/v2/models/resnet50" }).mirrors, []);
      assert.deepEqual(routeRequest(http, { method: "POST", path: "/v2/models/bert/infer" }).mirrors, [], "no canary, no mirror");
      const grpc = listenerHcm(c, "grpc");
      assert.deepEqual(routeRequest(grpc, { method: "POST", path: grpcPath("ModelInfer"), grpc: true }).mirrors, ["vision-canary-grpc"]);
      assert.deepEqual(routeRequest(grpc, { method: "POST", path: grpcPath("ModelStreamInfer"), grpc: true }).mirrors, [], "streams are not mirrored");
      assert.deepEqual(routeRequest(grpc, { method: "POST", path: grpcPath("ModelMetadata"), grpc: true }).mirrors, []);
    });

    it("a canary share sends that fraction to the canary, unmirrored, and mirrors only what goes to the primary", () => {
      const input = envoyInput({ mirrorPercent: 10 });
      const c = readBackBootstrap({
        ...input,
        servingGroups: [group("vision", { canary: true, models: ["resnet50"], canaryTrafficPercent: 20 }), input.servingGroups[1]],
      });
      for (const [l, req] of [
        ["http", { method: "POST", path: "/v2/models/resnet50/infer" }],
        ["http", { method: "POST", path: "/v2/models/resnet50/versions/2/infer" }],
        ["grpc", { method: "POST", path: grpcPath("ModelInfer"), grpc: true }],
      ] as const) {
        for (let draw = 0; draw < 100; draw += 2.5) {
          const out = routeRequest(listenerHcm(c, l), { ...req, draw });
          const toCanary = [out.cluster, ...out.mirrors].filter((x) => x === `vision-canary-${l}`).length;
          assert.equal(toCanary <= 1, true, `${req.path} draw ${draw}: canary reached twice`);
          assert.equal(out.cluster, draw < 20 ? `vision-canary-${l}` : `vision-primary-${l}`, `${req.path} draw ${draw}`);
          assert.deepEqual(out.mirrors, draw < 20 ? [] : [`vision-canary-${l}`]);
        }
      }
      // Reads stay on the primary.
      assert.equal(routeRequest(listenerHcm(c, "http"), { method: "GET", path: "/v2/models/resnet50", draw: 0 }).cluster, "vision-primary-http");
    });

    it("a model the canary does not load is neither mirrored nor split to it", () => {
      const c = readBackBootstrap(
        envoyInput({
          servingGroups: [group("vision", { canary: true, models: ["a", "b"], canaryModels: ["a"], canaryTrafficPercent: 50 })],
          defaultGroup: "vision",
        }),
      );
      const http = listenerHcm(c, "http");
      const b = routeRequest(http, { method: "POST", path: "/v2/models/b/infer", draw: 0 });
      assert.equal(b.cluster, "vision-primary-http");
      assert.deepEqual(b.mirrors, []);
      assert.equal(routeRequest(http, { method: "POST", path: "/v2/models/a/infer", draw: 0 }).cluster, "vision-canary-http");
    });
  });

  describe("canary.trafficPercent in a stack", () => {
    const withShare = (shape: string, pct: number) =>
      fixtureStack(
        shape,
        (s) => {
          for (const g of s.triton.groups) if (g.canary) g.canary.trafficPercent = pct;
        },
        `${shape}-share-${pct}`,
      );
    const bootstrapOf = (resources: { type: string; name: string; props: any }[]) =>
      fromJson(one(resources as any, "kubernetes:core/v1:ConfigMap", "gateway-config").props.data[ENVOY_CONFIG_FILE]) as Record<string, any>;

    it("renders the split for the canary's models and passes staging's cap (50 %) at 30 %", async () => {
      const p = await planFixture(withShare("staging", 30));
      const c = bootstrapOf(p.resources);
      const to = (draw: number) => routeRequest(listenerHcm(c, "http"), { method: "POST", path: "/v2/models/resnet50/infer", draw });
      assert.equal(to(10).cluster, "vision-canary-http");
      assert.equal(to(50).cluster, "vision-primary-http");
      assert.deepEqual(
        (await checkAtLevels(p.resources, "staging")).filter((v) => v.policy === "gateway-canary-traffic-within-max"),
        [],
      );
    });

    it("is refused by prod's cap (10 %) at 30 %, mandatory", async () => {
      const p = await planFixture(withShare("prod", 30));
      const vs = (await checkAtLevels(p.resources, "prod")).filter((v) => v.policy === "gateway-canary-traffic-within-max");
      assert.equal(vs.length, 2, "one per canary cluster (http, grpc)");
      assert.ok(vs.every((v) => v.level === "mandatory"));
    });

    it("is a percentage with at most 4 decimal places, refused otherwise naming the key", () => {
      const at = (pct: number) => () =>
        loadConfig(
          fixtureConfig("staging", (s) => (s.triton.groups[0].canary.trafficPercent = pct)),
          "staging",
        );
      assert.doesNotThrow(at(0.0001));
      assert.throws(at(150), /triton\.groups\[0\]\.canary\.trafficPercent must be a number from 0 to 100, got 150/);
      assert.throws(at(0.00001), /canary\.trafficPercent must have at most 4 decimal places/);
    });
  });

  describe("route matching uses no regex", () => {
    /** Every regex in a document, anywhere (safe_regex in routes, headers, or string matchers). */
    function regexes(v: unknown, out: string[] = []): string[] {
      if (Array.isArray(v)) v.forEach((x) => regexes(x, out));
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (k === "safe_regex") out.push(JSON.stringify(x));
          regexes(x, out);
        }
      }
      return out;
    }

    it("the worst case (30 groups of 5 long model names, canaries, shares) has no regex program at all", () => {
      const groups = Array.from({ length: 30 }, (_, i) =>
        group(`g${i}`, {
          canary: i % 2 === 0,
          canaryTrafficPercent: i % 4 === 0 ? 5 : 0,
          models: Array.from({ length: 5 }, (_, j) => `model_${"x".repeat(60)}_${i}_${j}`),
        }),
      );
      const c = readBackBootstrap(envoyInput({ servingGroups: groups, defaultGroup: "g0" }));
      // Envoy's default program-size limit (re2.max_program_size.error_level) is 100; with no regex the worst case is 0.
      assert.deepEqual(regexes(c), []);
      assert.ok(listenerHcm(c, "http").route_config.virtual_hosts[0].routes.length > 500, "the walk saw the large table");
    });

    it("ten groups of two models with canaries render a bootstrap well under Kubernetes' 1 MiB ConfigMap limit", () => {
      const groups = Array.from({ length: 10 }, (_, i) =>
        group(`group-${i}`, { canary: true, canaryTrafficPercent: 5, models: [`resnet50_${i}`, `efficientnet_b0_${i}`] }),
      );
      const text = JSON.stringify(readBackBootstrap(envoyInput({ servingGroups: groups, defaultGroup: "group-0" })), null, 2);
      assert.ok(text.length < 512 * 1024, `${text.length} bytes`);
    });

    it("the check finds a regex where there is one", () => {
      const c = readBackBootstrap(envoyInput());
      listenerHcm(c, "grpc").route_config.virtual_hosts[0].routes[0].match = { safe_regex: { regex: "^/inference.*" } };
      assert.equal(regexes(c).length, 1);
      assert.throws(() => routeRequest(listenerHcm(c, "grpc"), { method: "POST", path: grpcPath("ModelInfer"), grpc: true }), /regex/);
    });
  });
});
