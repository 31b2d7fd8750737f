// Every rendered Envoy bootstrap is checked against Envoy's own schema: the data-plane-api
// protos @grpc/grpc-js-xds ships (API level: ENVOY_PROTO_API), walked strictly by
// test/support/envoy-proto.ts: unknown fields, enum values, Any resolved by @type, oneof
// conflicts, required fields; deprecated fields are warnings. Mutated bootstraps must fail.
import { strict as assert } from "node:assert";
import { envoySchema, jsonName } from "./support/envoy-proto";
import { envoyInput, group, readBackBootstrap } from "./envoy-fixture";
import { one, plan, SHAPES } from "./helpers";
import { ENVOY_CONFIG_FILE } from "../components/gateway/envoy-config";
import { UPSTREAM_HTTP_PROTOCOL_OPTIONS, fromJson } from "../components/upstream/envoy";

const schema = envoySchema();
const check = (c: unknown) => schema.check(c);
const firstRoute = (c: Record<string, any>) => c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0];
const inferenceRoute = (c: Record<string, any>) =>
  c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes.find(
    (r: any) => r.route?.request_mirror_policies,
  );

describe("Envoy bootstraps match the data-plane-api protos", () => {
  for (const shape of SHAPES) {
    it(`the ${shape} fixture stack's planned bootstrap passes the strict walk, with no deprecated field`, async () => {
      const p = await plan(shape);
      const config = fromJson(one(p.resources, "kubernetes:core/v1:ConfigMap", "gateway-config").props.data[ENVOY_CONFIG_FILE]);
      assert.deepEqual(check(config), { errors: [], warnings: [] });
    });
  }

  it("a bootstrap with groups sharing models, a model-less group, canary shares and a fractional mirror passes", () => {
    const c = readBackBootstrap(
      envoyInput({
        mirrorPercent: 12.5,
        servingGroups: [
          group("vision", { canary: true, models: ["a", "b"], canaryTrafficPercent: 0.25 }),
          group("text", { models: ["b"] }),
          group("any", { models: [], canary: true }),
        ],
      }),
    );
    assert.deepEqual(check(c), { errors: [], warnings: [] });
    // The walk reached the deep parts (it is not vacuous): a mirror's fraction inside an Any (the HCM).
    assert.ok(inferenceRoute(c).route.request_mirror_policies[0].runtime_fraction.default_value);
  });

  it("accepts proto3 JSON (lowerCamel) names as well as the proto names", () => {
    const c = readBackBootstrap(envoyInput());
    const cl = c.static_resources.clusters[0];
    cl.connectTimeout = cl.connect_timeout;
    delete cl.connect_timeout;
    c.staticResources = c.static_resources;
    delete c.static_resources;
    assert.deepEqual(check(c).errors, []);
    assert.equal(jsonName("max_ejection_percent"), "maxEjectionPercent");
    // Both spellings of one field at once is a duplicate.
    c.staticResources.clusters[0].connect_timeout = "1s";
    assert.ok(check(c).errors.some((e) => /set twice/.test(e)));
  });

  describe("fails a mutated bootstrap", () => {
    const cases: [string, (c: Record<string, any>) => void, RegExp][] = [
      [
        "an unknown field (request_mirror_policy, the removed v2 singular)",
        (c) => {
          const r = inferenceRoute(c).route;
          r.request_mirror_policy = r.request_mirror_policies;
          delete r.request_mirror_policies;
        },
        /RouteAction has no field "request_mirror_policy"/,
      ],
      ["an unknown field at the top (admin.adress)", (c) => (c.admin.adress = c.admin.address), /Admin has no field "adress"/],
      [
        "an unknown field inside an Any payload (the upstream protocol options)",
        (c) => {
          const grpc = c.static_resources.clusters.find((x: { name: string }) => x.name === "vision-primary-grpc");
          const opts = grpc.typed_extension_protocol_options[UPSTREAM_HTTP_PROTOCOL_OPTIONS].explicit_http_config;
          opts.http2_protocol_option = opts.http2_protocol_options;
          delete opts.http2_protocol_options;
        },
        /ExplicitHttpConfig has no field "http2_protocol_option"/,
      ],
      [
        "a bad enum value",
        (c) => (inferenceRoute(c).route.request_mirror_policies[0].runtime_fraction.default_value.denominator = "THOUSAND"),
        /"THOUSAND" is not one of DenominatorType/,
      ],
      ["a bad enum value (lb_policy)", (c) => (c.static_resources.clusters[0].lb_policy = "LEAST_REQUESTS"), /"LEAST_REQUESTS" is not one of LbPolicy/],
      [
        "a oneof conflict (path and prefix in one route match)",
        (c) => (firstRoute(c).match.prefix = "/"),
        /RouteMatch oneof path_specifier has more than one field set/,
      ],
      [
        "a oneof conflict (route and direct_response)",
        (c) => (firstRoute(c).direct_response = { status: 404 }),
        /Route oneof action has more than one field set/,
      ],
      [
        "a missing required field (Listener without address? no: a health check without its timeout)",
        (c) => delete c.static_resources.clusters[0].health_checks[0].timeout,
        /HealthCheck\.timeout is required/,
      ],
      ["a required oneof left empty (route match without a path specifier)", (c) => delete firstRoute(c).match.path, /oneof path_specifier is required/],
      ["a min_len string left empty (cluster name)", (c) => (c.static_resources.clusters[0].name = ""), /needs at least 1 character/],
      [
        "an Any of an unknown type",
        (c) =>
          (c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config["@type"] =
            "type.googleapis.com/envoy.config.filter.http.router.v2.Router"),
        /unknown type URL/,
      ],
      ["an Any without @type", (c) => delete c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config["@type"], /needs "@type"/],
      ["a Duration written as a number", (c) => (c.static_resources.clusters[0].connect_timeout = 2), /expected a Duration/],
      ["a PGV bound (max_ejection_percent above 100)", (c) => (c.static_resources.clusters[0].outlier_detection.max_ejection_percent = 150), /must be <= 100/],
    ];
    for (const [what, mutate, expected] of cases) {
      it(what, () => {
        const config = readBackBootstrap(envoyInput());
        assert.deepEqual(check(config).errors, [], "unmutated passes");
        mutate(config);
        const { errors } = check(config);
        assert.ok(
          errors.some((p) => expected.test(p)),
          `expected ${expected} among: ${errors.join("; ") || "(no problems)"}`,
        );
      });
    }
  });

  it("reports a deprecated field as a warning, not an error", () => {
    const c = readBackBootstrap(envoyInput());
    // Cluster.http2_protocol_options: deprecated in favour of typed_extension_protocol_options.
    c.static_resources.clusters[0].http2_protocol_options = {};
    const r = check(c);
    assert.deepEqual(r.errors, []);
    assert.ok(
      r.warnings.some((w) => /Cluster\.http2_protocol_options is deprecated/.test(w)),
      r.warnings.join("; "),
    );
  });
});
