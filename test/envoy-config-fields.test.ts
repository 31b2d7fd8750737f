// The generated Envoy bootstrap uses only Envoy v3 field names (and enum values): read back from
// the planned ConfigMap of every stack and checked against the proto field table.
import { strict as assert } from "node:assert";
import { checkMessage } from "./envoy-v3-api";
import { envoyInput, readBackBootstrap } from "./envoy-fixture";
import { one, plan } from "./helpers";
import { ENVOY_CONFIG_FILE } from "../components/gateway/envoy-config";
import { UPSTREAM_HTTP_PROTOCOL_OPTIONS, fromJson } from "../components/upstream/envoy";

const input = envoyInput({ mirrorPercent: 12.5 });

function readBack(): Record<string, any> {
  return readBackBootstrap(input);
}

describe("Envoy config field names", () => {
  for (const stack of ["dev", "staging", "prod"]) {
    it(`the ${stack} ConfigMap's envoy.json uses only v3 field names`, async () => {
      const p = await plan(stack);
      const cm = one(p.resources, "kubernetes:core/v1:ConfigMap", "gateway-config");
      const config = fromJson(cm.props.data[ENVOY_CONFIG_FILE]);
      assert.deepEqual(checkMessage(config, "Bootstrap"), []);
    });
  }

  it("a bootstrap with several groups, a canary and a fractional mirror uses only v3 field names", () => {
    const config = readBack();
    assert.deepEqual(checkMessage(config, "Bootstrap"), []);
    // The walk reached the deep parts (it is not vacuous).
    const route = config.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0];
    assert.ok(route.route.request_mirror_policies[0].runtime_fraction.default_value);
  });

  it("typed_extension_protocol_options is keyed by the extension's own name", () => {
    for (const c of readBack().static_resources.clusters) {
      if (!c.typed_extension_protocol_options) continue;
      assert.deepEqual(Object.keys(c.typed_extension_protocol_options), [UPSTREAM_HTTP_PROTOCOL_OPTIONS]);
    }
  });

  describe("catches a mistyped field", () => {
    const cases: [string, (c: Record<string, any>) => void, RegExp][] = [
      [
        "request_mirror_policy (the removed v2 singular)",
        (c) => {
          const r = c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route;
          r.request_mirror_policy = r.request_mirror_policies;
          delete r.request_mirror_policies;
        },
        /RouteAction has no field "request_mirror_policy"/,
      ],
      [
        "runtime_fracton in a mirror policy",
        (c) => {
          const m =
            c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.request_mirror_policies[0];
          m.runtime_fracton = m.runtime_fraction;
          delete m.runtime_fraction;
        },
        /RequestMirrorPolicy has no field "runtime_fracton"/,
      ],
      [
        "http2_protocol_option inside the upstream protocol options (an Any payload)",
        (c) => {
          const grpc = c.static_resources.clusters.find((x: { name: string }) => x.name === "vision-primary-grpc");
          const opts = grpc.typed_extension_protocol_options[UPSTREAM_HTTP_PROTOCOL_OPTIONS].explicit_http_config;
          opts.http2_protocol_option = opts.http2_protocol_options;
          delete opts.http2_protocol_options;
        },
        /ExplicitHttpConfig has no field "http2_protocol_option"/,
      ],
      [
        "outlier_detection.consecutive5xx",
        (c) => {
          c.static_resources.clusters[0].outlier_detection.consecutive5xx = 5;
        },
        /OutlierDetection has no field "consecutive5xx"/,
      ],
      [
        "an unknown denominator",
        (c) => {
          c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route.request_mirror_policies[0].runtime_fraction.default_value.denominator =
            "THOUSAND";
        },
        /"THOUSAND" is not one of DenominatorType/,
      ],
      [
        "a Duration written as a number",
        (c) => {
          c.static_resources.clusters[0].connect_timeout = 2;
        },
        /connect_timeout: expected a Duration/,
      ],
      [
        "an unknown @type",
        (c) => {
          c.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config["@type"] =
            "type.googleapis.com/envoy.config.filter.http.router.v2.Router";
        },
        /unknown type URL/,
      ],
      [
        "admin.adress",
        (c) => {
          c.admin.adress = c.admin.address;
        },
        /Admin has no field "adress"/,
      ],
    ];
    for (const [what, mutate, expected] of cases) {
      it(what, () => {
        const config = readBack();
        mutate(config);
        const problems = checkMessage(config, "Bootstrap");
        assert.ok(
          problems.some((p) => expected.test(p)),
          `expected ${expected} among: ${problems.join("; ") || "(no problems)"}`,
        );
      });
    }
  });
});
