// The gateway routes each serving group to its primary, mirrors the configured fraction to
// its canary, speaks HTTP/2 to gRPC upstreams, health-checks, ejects and bounds per pod,
// retries only idempotent calls, and keeps Envoy's admin interface on loopback.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { one, plan } from "./helpers";
import { GATEWAY_GROUP_HEADER, GATEWAY_POD_LABELS, TRITON_PORTS } from "../components/contracts";
import {
  ENVOY_ADMIN,
  ENVOY_CONFIG_FILE,
  TRITON_READY_PATH,
  gatewayDeployment,
  gatewayPodDisruptionBudget,
  gatewayService,
  resolveEnvoyGatewayArgs,
  upstreamClusterName,
  workerThreads,
  circuitBreakerLimit,
  type EnvoyConfigInput,
} from "../components/gateway";
import { UPSTREAM_HTTP_PROTOCOL_OPTIONS, findMirrorPolicies, fractionalPercent, percentOf, fromJson } from "../components/upstream/envoy";
import { loadConfig } from "../config";
import { fixtureConfig } from "./support/stacks";
import { envoyInput, group, readBackBootstrap } from "./envoy-fixture";

const base: EnvoyConfigInput = envoyInput();

/** Build, serialise and read back: assertions are on what Envoy would read. */
function bootstrap(over: Partial<EnvoyConfigInput> = {}): Record<string, any> {
  return readBackBootstrap({ ...base, ...over });
}
const listener = (c: Record<string, any>, name: string) => c.static_resources.listeners.find((l: { name: string }) => l.name === name);
const hcm = (c: Record<string, any>, name: string) => listener(c, name).filter_chains[0].filters[0].typed_config;
const routes = (c: Record<string, any>, name: string): Record<string, any>[] => hcm(c, name).route_config.virtual_hosts[0].routes;
const cluster = (c: Record<string, any>, name: string) => c.static_resources.clusters.find((x: { name: string }) => x.name === name);

describe("gateway routes and mirroring", () => {
  describe("routes", () => {
    it("route every group by the x-triton-group header to its primary cluster, per protocol", () => {
      const c = bootstrap();
      for (const [l, proto] of [
        ["http", "http"],
        ["grpc", "grpc"],
      ] as const) {
        for (const g of ["vision", "text"]) {
          const rs = routes(c, l).filter((r) => r.match.headers?.some((h: any) => h.name === GATEWAY_GROUP_HEADER && h.string_match?.exact === g));
          assert.ok(rs.length >= 2, `${l}: routes for ${g}`);
          for (const r of rs) assert.ok([upstreamClusterName(g, "primary", proto), upstreamClusterName(g, "canary", proto)].includes(r.route.cluster));
        }
      }
    });

    it("retry only where the request never reached Triton (connect failure, refused stream), on another host", () => {
      const c = bootstrap();
      for (const l of ["http", "grpc"]) {
        const vh = hcm(c, l).route_config.virtual_hosts[0];
        assert.equal(vh.retry_policy.retry_on, "connect-failure,refused-stream", l);
        assert.deepEqual(
          vh.retry_policy.retry_host_predicate.map((p: any) => p.name),
          ["envoy.retry_host_predicates.previous_hosts"],
        );
        // No route overrides it (a route-level policy replaces the virtual host's entirely).
        for (const r of vh.routes) assert.equal(r.route?.retry_policy, undefined, r.name);
      }
    });

    it("bound inference by the timeout and streams by an idle timeout; honour gRPC deadlines up to the timeout", () => {
      const c = bootstrap({ inferTimeoutSeconds: 90 });
      assert.equal(routes(c, "http").find((r) => r.name === "model-vision-http-resnet50-infer")!.route.timeout, "90s");
      const infer = routes(c, "grpc").find((r) => r.name === "vision-grpc-ModelInfer")!;
      assert.deepEqual(infer.route.max_stream_duration, { grpc_timeout_header_max: "90s" });
      const stream = routes(c, "grpc").find((r) => r.name === "vision-grpc-ModelStreamInfer")!;
      assert.equal(stream.match.path, "/inference.GRPCInferenceService/ModelStreamInfer");
      assert.equal(stream.route.timeout, "0s");
      assert.equal(stream.route.idle_timeout, "300s");
      assert.deepEqual(stream.route.max_stream_duration, { grpc_timeout_header_max: "0s" }, "the client's deadline, uncapped");
      assert.equal(stream.route.request_mirror_policies, undefined, "streams are not mirrored");
    });

    it("pass x-request-id through and log it with the route, upstream, duration and response flags", () => {
      const c = bootstrap();
      for (const l of ["http", "grpc"]) {
        const h = hcm(c, l);
        assert.equal(h.preserve_external_request_id, true);
        assert.equal(h.generate_request_id, true);
        assert.equal(h.always_set_request_id_in_response, true);
        const f = h.access_log[0].typed_config.log_format.json_format;
        assert.equal(f.request_id, "%REQ(X-REQUEST-ID)%");
        assert.equal(f.route, "%ROUTE_NAME%");
        assert.equal(f.upstream_cluster, "%UPSTREAM_CLUSTER%");
        assert.equal(f.upstream_host, "%UPSTREAM_HOST%");
        assert.equal(f.duration_ms, "%DURATION%");
        assert.equal(f.response_flags, "%RESPONSE_FLAGS%");
      }
    });
  });

  describe("mirror policies", () => {
    it("mirror every inference route of a group with a canary to the canary cluster of the same protocol", () => {
      const c = bootstrap({ mirrorPercent: 7 });
      for (const [l, proto] of [
        ["http", "http"],
        ["grpc", "grpc"],
      ] as const) {
        const inference = routes(c, l).filter((r) => r.route?.cluster === upstreamClusterName("vision", "primary", proto) && /infer$|ModelInfer$/.test(r.name));
        assert.ok(inference.length > 0);
        for (const r of inference) {
          assert.equal(r.route.request_mirror_policies.length, 1, r.name);
          const m = r.route.request_mirror_policies[0];
          assert.equal(m.cluster, upstreamClusterName("vision", "canary", proto));
          assert.deepEqual(m.runtime_fraction.default_value, { numerator: 7, denominator: "HUNDRED" });
          assert.equal(m.runtime_fraction.runtime_key, "triton_gateway.mirror.vision");
        }
      }
    });

    it("never mirror a group without a canary, and create no canary cluster for it", () => {
      const c = bootstrap();
      for (const r of [...routes(c, "http"), ...routes(c, "grpc")].filter((r) => r.route?.cluster?.startsWith("text-"))) {
        assert.equal(r.route.request_mirror_policies, undefined, r.name);
      }
      assert.equal(cluster(c, "text-canary-http"), undefined);
      assert.ok(cluster(c, "vision-canary-http") && cluster(c, "vision-canary-grpc"));
    });

    it("0 % disables mirroring entirely", () => {
      assert.deepEqual(findMirrorPolicies(bootstrap({ mirrorPercent: 0 })), []);
    });

    it("fractions are exact: 0.25 % is 25/TEN_THOUSAND, 0.0001 % is 1/MILLION", () => {
      assert.deepEqual(fractionalPercent(0.25), { numerator: 25, denominator: "TEN_THOUSAND" });
      assert.deepEqual(fractionalPercent(0.0001), { numerator: 1, denominator: "MILLION" });
      assert.deepEqual(fractionalPercent(100), { numerator: 100, denominator: "HUNDRED" });
      assert.throws(() => fractionalPercent(0.00001), /more than 4 decimal places/);
    });

    it("property: any valid stack percentage renders mirror fractions equal to it", () => {
      // Valid = what the config schema accepts: 0–100 with at most 4 decimal places.
      const validPercent = fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 10_000);
      fc.assert(
        fc.property(validPercent, (pct) => {
          const raw = fixtureConfig("staging", { gateway: { mirrorPercent: pct } });
          const cfg = loadConfig(raw, "staging");
          const policies = findMirrorPolicies(
            bootstrap({ servingGroups: [group("vision", { canary: true })], defaultGroup: "vision", mirrorPercent: cfg.gateway.mirrorPercent }),
          );
          if (pct === 0) return policies.length === 0;
          return policies.length > 0 && policies.every(({ policy }) => Math.abs(percentOf(policy.runtime_fraction.default_value) - pct) < 1e-9);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe("clusters", () => {
    it("resolve each track's headless Service in the Triton namespace on the Triton ports", () => {
      const c = bootstrap();
      const sa = (name: string) => cluster(c, name).load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
      assert.deepEqual(sa("vision-primary-http"), { address: "vision-headless.triton.svc.cluster.local", port_value: TRITON_PORTS.http });
      assert.deepEqual(sa("vision-canary-grpc"), { address: "vision-canary-headless.triton.svc.cluster.local", port_value: TRITON_PORTS.grpc });
      assert.equal(cluster(c, "vision-primary-http").type, "STRICT_DNS");
    });

    it("speak HTTP/2 to gRPC upstreams and HTTP/1.1 to HTTP upstreams via typed_extension_protocol_options", () => {
      const c = bootstrap();
      const opts = (name: string) => cluster(c, name).typed_extension_protocol_options[UPSTREAM_HTTP_PROTOCOL_OPTIONS];
      assert.equal(opts("vision-primary-grpc")["@type"], "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions");
      assert.ok(opts("vision-primary-grpc").explicit_http_config.http2_protocol_options);
      assert.ok(opts("vision-primary-http").explicit_http_config.http_protocol_options);
      assert.equal(cluster(c, "vision-primary-grpc").http2_protocol_options, undefined, "not the deprecated cluster field");
    });

    it("health-check HTTP clusters on /v2/health/ready and gRPC clusters with grpc.health.v1", () => {
      const c = bootstrap();
      const http = cluster(c, "vision-canary-http").health_checks[0];
      assert.equal(http.http_health_check.path, "/v2/health/ready"); // Triton: 200 when ready, 400 otherwise
      assert.equal(TRITON_READY_PATH, "/v2/health/ready");
      assert.ok(http.healthy_threshold >= 1 && http.unhealthy_threshold >= 1, "both thresholds are required by Envoy");
      const grpc = cluster(c, "vision-primary-grpc").health_checks[0];
      assert.deepEqual(grpc.grpc_health_check, {});
      assert.equal(grpc.http_health_check, undefined);
    });

    it("eject on gateway failures only (not timeouts, not 500s) and never more than half a group", () => {
      const c = bootstrap();
      for (const name of ["vision-primary-http", "vision-canary-grpc", "text-primary-grpc"]) {
        const od = cluster(c, name).outlier_detection;
        assert.equal(od.split_external_local_origin_errors, true);
        assert.ok(od.consecutive_gateway_failure > 0);
        assert.equal(od.enforcing_consecutive_gateway_failure, 100);
        assert.equal(od.enforcing_consecutive_5xx, 0);
        assert.equal(od.enforcing_consecutive_local_origin_failure, 0, "timeouts are local-origin errors in split mode");
        assert.equal(od.enforcing_success_rate, 0);
        assert.ok(od.max_ejection_percent <= 50);
        assert.equal(cluster(c, name).dns_refresh_rate, undefined, "deprecated at the pinned Envoy");
      }
    });

    it("size circuit breakers per gateway replica from the track's most pods", () => {
      // vision primary: 4 pods x 64 per pod over (3 - 1) replicas = 128; its canary: 1 pod -> 32.
      const c = bootstrap({ maxRequestsPerPod: 64, gatewayReplicas: 3 });
      const limit = (name: string) => cluster(c, name).circuit_breakers.thresholds[0];
      assert.deepEqual([limit("vision-primary-http").max_requests, limit("vision-primary-http").max_pending_requests], [128, 128]);
      assert.equal(limit("vision-canary-grpc").max_requests, 32);
      assert.equal(bootstrap({ gatewayReplicas: 1 }).static_resources.clusters[0].circuit_breakers.thresholds[0].max_requests, 256);
      assert.ok(limit("vision-primary-http").max_retries >= 3);
      assert.equal(circuitBreakerLimit({ maxRequestsPerPod: 10, gatewayReplicas: 5 }, 7), 18);
    });

    it("limit heap and downstream connections with the overload manager", () => {
      const om = bootstrap({ memoryLimitBytes: 1000, maxClientConnections: 777 }).overload_manager;
      const monitors = Object.fromEntries(om.resource_monitors.map((m: any) => [m.name, m.typed_config]));
      assert.equal(monitors["envoy.resource_monitors.fixed_heap"].max_heap_size_bytes, 900);
      assert.equal(monitors["envoy.resource_monitors.downstream_connections"].max_active_downstream_connections, 777);
      assert.ok(om.actions.some((a: any) => a.name === "envoy.overload_actions.stop_accepting_requests"));
      for (const a of om.actions) for (const t of a.triggers) assert.equal(t.name, "envoy.resource_monitors.fixed_heap");
    });
  });

  describe("admin interface", () => {
    it("listens on 127.0.0.1 only", () => {
      assert.deepEqual(bootstrap().admin.address.socket_address, { address: ENVOY_ADMIN.address, port_value: ENVOY_ADMIN.port });
    });

    it("is reachable only through listeners that forward exactly /stats/prometheus or /ready", () => {
      const c = bootstrap();
      const adminCluster = c.static_resources.clusters.find(
        (x: any) => x.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value === ENVOY_ADMIN.port,
      );
      const forwarded = c.static_resources.listeners.flatMap((l: any) =>
        routes(c, l.name)
          .filter((r) => r.route?.cluster === adminCluster.name)
          .map((r) => `${l.name}:${r.match.path}`),
      );
      assert.deepEqual(forwarded.sort(), ["metrics:/stats/prometheus", "ready:/ready"]);
      for (const l of ["metrics", "ready"]) assert.equal(routes(c, l).at(-1)!.direct_response.status, 404, `${l} 404s every other path`);
    });
  });

  describe("Kubernetes objects", () => {
    const args = {
      namespace: "triton",
      labels: { "app.kubernetes.io/part-of": "triton-platform" },
      servingGroups: base.servingGroups,
      replicas: 3,
      zoneSpread: "required" as const,
      cpu: "1500m",
    };

    it("run a pinned Envoy as non-root with a read-only root, probed on /ready", () => {
      const d = gatewayDeployment(resolveEnvoyGatewayArgs(args)) as any;
      const pod = d.spec.template.spec;
      const ctr = pod.containers[0];
      assert.match(ctr.image, /^envoyproxy\/envoy:v\d+\.\d+\.\d+$/);
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(ctr.securityContext.readOnlyRootFilesystem, true);
      assert.equal(ctr.securityContext.allowPrivilegeEscalation, false);
      assert.deepEqual(ctr.securityContext.capabilities.drop, ["ALL"]);
      assert.equal(ctr.readinessProbe.httpGet.path, "/ready");
      assert.equal(ctr.readinessProbe.httpGet.port, 9903);
      assert.ok(!ctr.ports.some((p: any) => p.containerPort === ENVOY_ADMIN.port), "admin port not declared");
      assert.equal(d.spec.replicas, 3);
      assert.equal(pod.topologySpreadConstraints[0].whenUnsatisfiable, "DoNotSchedule");
      assert.deepEqual(ctr.args.slice(ctr.args.indexOf("--concurrency"), ctr.args.indexOf("--concurrency") + 2), ["--concurrency", "2"]);
      assert.equal(pod.automountServiceAccountToken, false);
    });

    it("drain before exit: the preStop fails the health check and drains on the loopback admin, and the grace outlasts drain plus the longest request", () => {
      for (const [drainSeconds, inferTimeoutSeconds] of [
        [30, 60],
        [5, 3600],
        [600, 1],
      ]) {
        const pod = (gatewayDeployment(resolveEnvoyGatewayArgs({ ...args, drainSeconds, inferTimeoutSeconds })) as any).spec.template.spec;
        const ctr = pod.containers[0];
        const [shell, flag, script] = ctr.lifecycle.preStop.exec.command;
        assert.deepEqual([shell, flag], ["/bin/bash", "-c"]);
        const fail = script.indexOf("POST /healthcheck/fail HTTP/1.1");
        const drain = script.indexOf("POST /drain_listeners?graceful HTTP/1.1");
        assert.ok(fail >= 0 && drain > fail, "health check failed first, then the listeners drained");
        assert.ok(script.includes(`/dev/tcp/${ENVOY_ADMIN.address}/${ENVOY_ADMIN.port}`), "on the loopback admin");
        assert.ok(!/[\r\n]/.test(script), "no control characters in the command (printf writes the CR LF)");
        assert.ok(script.endsWith(`sleep ${drainSeconds + inferTimeoutSeconds}`));
        assert.ok(pod.terminationGracePeriodSeconds > drainSeconds + inferTimeoutSeconds);
        const at = ctr.args.indexOf("--drain-time-s");
        assert.deepEqual(ctr.args.slice(at, at + 4), ["--drain-time-s", String(drainSeconds), "--drain-strategy", "gradual"]);
      }
    });

    it("Service exposes only 8000 and 8001; a load balancer only with client CIDRs, restricted to them", () => {
      const clusterIp = gatewayService(resolveEnvoyGatewayArgs(args)) as any;
      assert.equal(clusterIp.spec.type, "ClusterIP");
      assert.deepEqual(
        clusterIp.spec.ports.map((p: any) => p.port),
        [8000, 8001],
      );
      assert.deepEqual(clusterIp.spec.selector, { ...GATEWAY_POD_LABELS });
      const lb = gatewayService(resolveEnvoyGatewayArgs({ ...args, clientCidrs: ["10.0.0.0/8"], loadBalancerSecurityGroupId: "sg-1" })) as any;
      assert.equal(lb.spec.type, "LoadBalancer");
      assert.deepEqual(lb.spec.loadBalancerSourceRanges, ["10.0.0.0/8"]);
      assert.equal(lb.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-security-groups"], "sg-1");
      assert.equal(lb.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"], "internal");
    });

    it("PDB lets one replica go at a time", () => {
      assert.equal((gatewayPodDisruptionBudget(resolveEnvoyGatewayArgs(args)) as any).spec.maxUnavailable, 1);
    });

    it("worker threads follow the CPU request", () => {
      assert.deepEqual(["250m", "1", "1500m", "2", "3.5"].map(workerThreads), [1, 1, 2, 2, 4]);
    });

    it("reject a default group that is not a serving group", () => {
      assert.throws(
        () => resolveEnvoyGatewayArgs({ ...args, defaultGroup: "audio" }),
        (e: any) => e.name === "SettingsError" && e.problems.includes('defaultGroup must name one of the serving groups (vision, text), got "audio"'),
      );
    });
  });

  describe("planned stacks", () => {
    it("prod renders the gateway with its 5 % mirror, a load balancer and 3 replicas", async () => {
      const p = await plan("prod");
      const cm = one(p.resources, "kubernetes:core/v1:ConfigMap", "gateway-config");
      const mirrors = findMirrorPolicies(fromJson(cm.props.data[ENVOY_CONFIG_FILE]));
      assert.ok(mirrors.length > 0);
      for (const { policy } of mirrors) assert.equal(percentOf(policy.runtime_fraction.default_value), 5);
      assert.equal(one(p.resources, "kubernetes:core/v1:Service", "gateway").props.spec.type, "LoadBalancer");
      assert.equal(one(p.resources, "kubernetes:apps/v1:Deployment", "gateway").props.spec.replicas, 3);
      one(p.resources, "kubernetes:policy/v1:PodDisruptionBudget", "gateway");
    });

    it("dev, without client CIDRs, has no load balancer", async () => {
      const p = await plan("dev");
      assert.equal(one(p.resources, "kubernetes:core/v1:Service", "gateway").props.spec.type, "ClusterIP");
    });
  });
});
