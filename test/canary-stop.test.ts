// The canary stop without a deploy (components/gateway/canary-stop.ts), proved as far as it can
// be here: the runtime layer and the document the stop writes pass Envoy's protos; the stop
// job's own script, run by sh and curl against stand-ins of Prometheus' query API and the
// Kubernetes API, writes exactly the runtime keys the routes read, latches (a stop is never
// lifted by it), ignores unknown groups and fails loudly when Prometheus is unreachable; with
// its layer applied, no request reaches the canary, by split or mirror; its Role is least
// privilege (a pack rule); and pulumi up leaves the stop ConfigMap's data alone.
// What rests on reading: that Envoy reloads the file when the kubelet swaps the ConfigMap's
// ..data link (config_source.proto's watched_directory, whose comment gives this very setup),
// the kubelet's propagation delay, and the curl image's contents (components/upstream/curl.ts).
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fixtureStack, one, planFixture, recorded, ruleViolations, validateManifest } from "./helpers";
import { envoyInput, group, readBackBootstrap } from "./envoy-fixture";
import { envoySchema } from "./support/envoy-proto";
import { listenerHcm, routeRequest } from "./support/envoy-routes";
import { declareMutations, first } from "./support/mutations";
import {
  CANARY_STOP_DIR,
  CANARY_STOP_FILE,
  CANARY_STOP_NAME,
  GATE_ALERT,
  GATE_FAILURE_QUERY,
  canaryStopConfigMap,
  canaryStopCronJob,
  canaryStopDocument,
  canaryStopRole,
  canaryStopRoleBinding,
  canaryStopScript,
  gatewayDeployment,
  resolveEnvoyGatewayArgs,
  type CanaryStopArgs,
} from "../components/gateway";
import { grpcPath } from "../components/gateway/triton-api";
import { fractionalPercent } from "../components/upstream/envoy";

const schema = envoySchema();
const DISCOVERY_RESPONSE = "envoy.service.discovery.v3.DiscoveryResponse";

/** Every runtime key a bootstrap reads (route matches' runtime_fraction, mirror policies' runtime_fraction). */
function runtimeKeys(c: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(c)) c.forEach((x) => runtimeKeys(x, out));
  else if (c && typeof c === "object") {
    for (const [k, v] of Object.entries(c)) {
      if (k === "runtime_fraction" && typeof (v as { runtime_key?: unknown }).runtime_key === "string") out.add((v as { runtime_key: string }).runtime_key);
      runtimeKeys(v, out);
    }
  }
  return out;
}

/** The bootstrap as Envoy sees it with a runtime layer over its defaults: an integer value is numerator/HUNDRED (base.proto RuntimeFractionalPercent). */
function withRuntime(c: unknown, layer: Record<string, number>): unknown {
  if (Array.isArray(c)) return c.map((x) => withRuntime(x, layer));
  if (!c || typeof c !== "object") return c;
  const o = Object.fromEntries(Object.entries(c).map(([k, v]) => [k, withRuntime(v, layer)])) as Record<string, any>;
  if (typeof o.runtime_key === "string" && o.default_value && o.runtime_key in layer) o.default_value = fractionalPercent(layer[o.runtime_key]);
  return o;
}

interface StandIn {
  url: string;
  alerts: { group: string; gate?: string }[];
  configMap: Record<string, any>;
  patches: number;
  queries: string[];
  close(): Promise<void>;
}

/** One HTTP server standing in for Prometheus' /api/v1/query and the API server's ConfigMap endpoint (GET, merge PATCH), in their documented shapes. */
async function standIn(configMap: Record<string, any>, token: string): Promise<StandIn> {
  const state: Omit<StandIn, "url" | "close"> = { alerts: [], configMap: structuredClone(configMap), patches: 0, queries: [] };
  const cmPath = `/api/v1/namespaces/${configMap.metadata.namespace}/configmaps/${configMap.metadata.name}`;
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://x");
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const json = (status: number, o: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(o));
      };
      if (u.pathname === "/api/v1/query") {
        state.queries.push(u.searchParams.get("query") ?? "");
        const result = state.alerts.map((a) => ({
          metric: {
            __name__: "ALERTS",
            alertname: "CanaryGateFailed",
            alertstate: "firing",
            gate: a.gate ?? "failure_ratio",
            serving_group: a.group,
            severity: "critical",
          },
          value: [1764633600, "1"],
        }));
        return json(200, { status: "success", data: { resultType: "vector", result } });
      }
      if (u.pathname !== cmPath) return json(404, { kind: "Status", code: 404 });
      if (req.headers.authorization !== `Bearer ${token}`) return json(401, { kind: "Status", code: 401 });
      if (req.method === "GET") return json(200, state.configMap);
      if (req.method === "PATCH") {
        assert.equal(req.headers["content-type"], "application/merge-patch+json");
        const patch = JSON.parse(body) as { data: Record<string, string> };
        assert.deepEqual(Object.keys(patch), ["data"], "the patch touches data only");
        state.configMap.data = { ...state.configMap.data, ...patch.data };
        state.patches++;
        return json(200, state.configMap);
      }
      return json(405, { kind: "Status", code: 405 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const out: StandIn = Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
  return out;
}

/** Run the CronJob's container command as it is rendered (sh -c <script>), with its env, against the stand-in. */
function runJob(cron: Record<string, any>, s: StandIn, saDir: string, prometheus = s.url): Promise<{ code: number; out: string }> {
  const c = cron.spec.jobTemplate.spec.template.spec.containers[0];
  const env: Record<string, string> = Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value]));
  const [shell, flag, script] = c.command as string[];
  return new Promise((resolve) => {
    const p = spawn(shell === "/bin/sh" ? "sh" : shell, [flag, script], {
      env: { PATH: process.env.PATH ?? "", ...env, PROMETHEUS_URL: prometheus, KUBERNETES_API: s.url, SA_DIR: saDir },
    });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("close", (code) => resolve({ code: code ?? -1, out }));
  });
}

const layerOf = (cm: Record<string, any>): Record<string, number> => {
  const doc = JSON.parse(cm.data[CANARY_STOP_FILE]);
  assert.deepEqual(schema.check(doc, DISCOVERY_RESPONSE), { errors: [], warnings: [] }, "the written document is a DiscoveryResponse of a Runtime");
  return doc.resources[0].layer;
};

describe("the canary stop: a failing gate zeroes the canary's share and mirror without a deploy", () => {
  const input = envoyInput({
    canaryStop: true,
    mirrorPercent: 5,
    servingGroups: [
      group("vision", { canary: true, models: ["resnet50"], canaryTrafficPercent: 10 }),
      group("text", { canary: true, models: ["bert"], canaryTrafficPercent: 0.25 }),
      group("audio", { models: ["whisper"] }),
    ],
  });
  const bootstrap = readBackBootstrap(input);
  const a: CanaryStopArgs = { namespace: "triton", labels: {}, clusterDomain: "cluster.local", canaryGroups: ["vision", "text"] };

  describe("Envoy's side", () => {
    it("the bootstrap reads a runtime layer from the stop ConfigMap's file, reloaded on a move in its directory, between static and admin layers", () => {
      assert.deepEqual(schema.check(bootstrap), { errors: [], warnings: [] });
      const layers = bootstrap.layered_runtime.layers;
      assert.deepEqual(
        layers.map((l: any) => Object.keys(l).find((k) => k !== "name")),
        ["static_layer", "rtds_layer", "admin_layer"],
      );
      const src = layers[1].rtds_layer.rtds_config.path_config_source;
      assert.equal(src.path, `${CANARY_STOP_DIR}/${CANARY_STOP_FILE}`);
      assert.equal(src.watched_directory.path, CANARY_STOP_DIR, "the directory whose ..data the kubelet swaps");
      assert.equal(readBackBootstrap({ ...input, canaryStop: false }).layered_runtime.layers.length, 2, "no layer without the stop");
    });

    it("the walk refuses a misspelt source field and a layer with two sources", () => {
      const bad = structuredClone(bootstrap);
      bad.layered_runtime.layers[1].rtds_layer.rtds_config.path_config_source.watch_directory = { path: "/x" };
      assert.ok(schema.check(bad).errors.some((e) => /watch_directory/.test(e)));
      const two = structuredClone(bootstrap);
      two.layered_runtime.layers[1].admin_layer = {};
      assert.ok(schema.check(two).errors.length > 0);
    });

    it("the initial document and a stopped one are DiscoveryResponses of the layer's Runtime; a wrong field fails", () => {
      for (const d of [canaryStopDocument([]), canaryStopDocument(["vision", "text"], "20261202T001500Z")]) {
        assert.deepEqual(schema.check(JSON.parse(JSON.stringify(d)), DISCOVERY_RESPONSE), { errors: [], warnings: [] });
        assert.equal(d.resources[0].name, bootstrap.layered_runtime.layers[1].rtds_layer.name, "the resource the layer subscribes to");
      }
      const bad = JSON.parse(JSON.stringify(canaryStopDocument(["vision"])));
      bad.resources[0].layers = bad.resources[0].layer;
      assert.ok(schema.check(bad, DISCOVERY_RESPONSE).errors.length > 0);
    });
  });

  describe("the stop job's script, run by sh and curl", function () {
    this.timeout(30_000);
    let s: StandIn;
    let saDir: string;
    const cron = canaryStopCronJob(a) as Record<string, any>;
    beforeEach(async () => {
      s = await standIn(canaryStopConfigMap(a) as Record<string, any>, "token-1");
      saDir = fs.mkdtempSync(path.join(os.tmpdir(), "canary-stop-"));
      fs.writeFileSync(path.join(saDir, "token"), "token-1");
      fs.writeFileSync(path.join(saDir, "ca.crt"), "unused over http\n");
    });
    afterEach(() => s.close());

    it("asks Prometheus for the firing gate-failure alerts and, with none, changes nothing", async () => {
      const r = await runJob(cron, s, saDir);
      assert.equal(r.code, 0, r.out);
      assert.deepEqual(s.queries, [GATE_FAILURE_QUERY]);
      assert.equal(s.patches, 0);
      assert.deepEqual(layerOf(s.configMap), {});
    });

    it("writes exactly the runtime keys the routes read, at 0, for the failing groups (and only known canary groups)", async () => {
      s.alerts = [{ group: "vision" }, { group: "text" }, { group: "audio" }, { group: "no-such-group" }];
      const r = await runJob(cron, s, saDir);
      assert.equal(r.code, 0, r.out);
      const layer = layerOf(s.configMap);
      assert.deepEqual(new Set(Object.keys(layer)), runtimeKeys(bootstrap), "keys written = keys read");
      assert.ok(Object.values(layer).every((v) => v === 0));
      assert.match(r.out, /stopping the canary of group vision/);
    });

    it("with the layer applied, no request reaches a stopped canary, by split or by mirror; the other canary keeps its traffic", async () => {
      s.alerts = [{ group: "vision" }];
      assert.equal((await runJob(cron, s, saDir)).code, 0);
      const live = withRuntime(bootstrap, layerOf(s.configMap)) as Record<string, any>;
      for (let draw = 0; draw < 100; draw += 0.05) {
        const http1 = routeRequest(listenerHcm(live, "http"), { method: "POST", path: "/v2/models/resnet50/infer", draw });
        assert.equal(http1.cluster, "vision-primary-http", `draw ${draw}`);
        assert.deepEqual(http1.mirrors, []);
        const g = routeRequest(listenerHcm(live, "grpc"), { method: "POST", path: grpcPath("ModelInfer"), grpc: true, draw });
        assert.equal(g.cluster, "vision-primary-grpc");
        assert.deepEqual(g.mirrors, []);
      }
      assert.deepEqual(routeRequest(listenerHcm(live, "http"), { method: "POST", path: "/v2/models/bert/infer", draw: 50 }).mirrors, ["text-canary-http"]);
      assert.equal(routeRequest(listenerHcm(live, "http"), { method: "POST", path: "/v2/models/bert/infer", draw: 0.1 }).cluster, "text-canary-http");
    });

    it("latches: once the alert resolves (the stopped canary sees no traffic) the stop stays; a later failure adds to it", async () => {
      s.alerts = [{ group: "text" }];
      assert.equal((await runJob(cron, s, saDir)).code, 0);
      s.alerts = [];
      const again = await runJob(cron, s, saDir);
      assert.equal(again.code, 0, again.out);
      assert.equal(s.patches, 1, "no write when nothing is new");
      assert.match(again.out, /no change \(stopped: text\)/);
      s.alerts = [{ group: "vision" }];
      assert.equal((await runJob(cron, s, saDir)).code, 0);
      assert.deepEqual(Object.keys(layerOf(s.configMap)).sort(), [
        "triton_gateway.canary_traffic.text",
        "triton_gateway.canary_traffic.vision",
        "triton_gateway.mirror.text",
        "triton_gateway.mirror.vision",
      ]);
    });

    it("fails (the Job fails, the next minute retries) when Prometheus is unreachable or the token is refused, and writes nothing", async () => {
      s.alerts = [{ group: "vision" }];
      const down = await runJob(cron, s, saDir, "http://127.0.0.1:9");
      assert.notEqual(down.code, 0);
      fs.writeFileSync(path.join(saDir, "token"), "stolen");
      const refused = await runJob(cron, s, saDir);
      assert.notEqual(refused.code, 0);
      assert.equal(s.patches, 0);
    });

    it("the script run here is the one the CronJob renders (one sh -c), with the stack's Prometheus and canary groups", () => {
      const c = cron.spec.jobTemplate.spec.template.spec.containers[0];
      assert.deepEqual(c.command, ["/bin/sh", "-c", canaryStopScript()]);
      const env = Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value]));
      assert.equal(env.PROMETHEUS_URL, "http://prometheus-operated.monitoring.svc.cluster.local:9090");
      assert.equal(env.GROUPS, "vision text");
      assert.equal(env.CONFIGMAP, CANARY_STOP_NAME);
    });
  });

  describe("the Kubernetes objects", () => {
    it("the job's Role gets and patches the one stop ConfigMap in its namespace, bound to the job's ServiceAccount only", async () => {
      const role = canaryStopRole(a) as any;
      assert.deepEqual(role.rules, [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [CANARY_STOP_NAME], verbs: ["get", "patch"] }]);
      assert.equal(role.metadata.namespace, a.namespace);
      const binding = canaryStopRoleBinding(a) as any;
      assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: CANARY_STOP_NAME, namespace: a.namespace }]);
      const cron = canaryStopCronJob(a) as any;
      const pod = cron.spec.jobTemplate.spec.template.spec;
      assert.equal(pod.serviceAccountName, CANARY_STOP_NAME);
      assert.equal(pod.automountServiceAccountToken, false, "only the projected token, in the one container");
      for (const m of [role, binding, cron, canaryStopConfigMap(a)]) await validateManifest(m);
    });

    it("the gateway mounts the stop ConfigMap as a directory (no subPath, which the kubelet never updates)", () => {
      const r = resolveEnvoyGatewayArgs({ namespace: "triton", labels: {}, servingGroups: input.servingGroups });
      const pod = (gatewayDeployment(r) as any).spec.template.spec;
      const mount = pod.containers[0].volumeMounts.find((m: any) => m.mountPath === CANARY_STOP_DIR);
      assert.equal(mount.subPath, undefined);
      assert.equal(pod.volumes.find((v: any) => v.name === mount.name).configMap.name, CANARY_STOP_NAME);
      const off = (
        gatewayDeployment(resolveEnvoyGatewayArgs({ namespace: "triton", labels: {}, servingGroups: input.servingGroups, canaryStop: false })) as any
      ).spec.template.spec;
      assert.equal(
        off.volumes.some((v: any) => v.name === mount.name),
        false,
      );
    });

    it("in a planned stack: pulumi up ignores the stop ConfigMap's data, and the summary states the stop", async () => {
      const p = await planFixture(fixtureStack("prod"));
      const cm = one(p.resources, "kubernetes:core/v1:ConfigMap", "gateway-canary-stop");
      assert.deepEqual(cm.options?.ignoreChanges, ["data"]);
      // The contract with the gates: the alert the stop asks for is the one the monitoring writes,
      // one per gate of each canary, labelled with a serving group the stop job knows.
      const rules = (one(p.resources, "kubernetes:monitoring.coreos.com/v1:PrometheusRule").props.spec.groups as any[]).flatMap((g) => g.rules);
      const gateAlerts = rules.filter((r) => r.alert === GATE_ALERT.alertname);
      assert.ok(gateAlerts.length > 0, "the monitoring writes gate-failure alerts");
      const cron = one(p.resources, "kubernetes:batch/v1:CronJob", "gateway-canary-stop").props;
      const env = cron.spec.jobTemplate.spec.template.spec.containers[0].env as { name: string; value?: string }[];
      const groups = (env.find((e) => e.name === "GROUPS")?.value ?? "").split(/[ ,]+/).filter(Boolean);
      assert.ok(groups.length > 0, JSON.stringify(env));
      for (const a of gateAlerts) assert.ok(groups.includes(a.labels[GATE_ALERT.group]), JSON.stringify(a.labels));
      assert.ok(JSON.stringify(cron).includes(JSON.stringify(GATE_FAILURE_QUERY).slice(1, -1)), "the job asks for that alert");
      one(p.resources, "kubernetes:batch/v1:CronJob", "gateway-canary-stop");
      const summary = (p.report.sections ?? []).find((x) => x.id === "summary");
      assert.ok(
        summary?.text.some((l) => /canary stop: .*CanaryGateFailed alert.*serving_group.*\(vision\).*triton-gateway-canary-stop.*ignoreChanges/.test(l)),
        summary?.text.join("\n"),
      );
    });
  });

  describe("gateway-runtime-writers-named", () => {
    const P = "gateway-runtime-writers-named";
    const roleRes = (props: Record<string, any>) => recorded("kubernetes:rbac.authorization.k8s.io/v1:Role", "r", props);
    const base = canaryStopRole(a) as Record<string, any>;
    const withRule = (rule: Record<string, any>, kind = "Role") => roleRes({ ...base, kind, rules: [rule] });

    it("is silent on the stop job's Role and on read-only roles", async () => {
      assert.deepEqual(await ruleViolations(P, [roleRes(base)]), []);
      assert.deepEqual(await ruleViolations(P, [withRule({ apiGroups: [""], resources: ["configmaps", "pods"], verbs: ["get", "list", "watch"] })]), []);
      assert.deepEqual(await ruleViolations(P, [withRule({ apiGroups: ["apps"], resources: ["deployments"], verbs: ["patch"] })]), []);
    });

    it("fires on a ClusterRole, on writes without resourceNames, on create/delete/*, and on wildcards", async () => {
      const named = { apiGroups: [""], resources: ["configmaps"], resourceNames: [CANARY_STOP_NAME] };
      for (const [r, why] of [
        [withRule({ ...named, verbs: ["patch"] }, "ClusterRole"), /a ClusterRole/],
        [withRule({ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "patch"] }), /no resourceNames/],
        [withRule({ ...named, verbs: ["get", "create"] }), /verbs create beyond/],
        [withRule({ ...named, verbs: ["*"] }), /verbs \* beyond/],
        [withRule({ apiGroups: ["*"], resources: ["*"], verbs: ["delete"] }), /no resourceNames/],
      ] as const) {
        const vs = await ruleViolations(P, [r]);
        assert.equal(vs.length, 1, JSON.stringify(r.props.rules));
        assert.match(vs[0].message, why);
        assert.match(vs[0].message, /rules\[0\]/);
      }
    });
  });
});

declareMutations([
  {
    rule: "gateway-runtime-writers-named",
    breaks: "drops resourceNames from the canary stop's Role, so its job could rewrite every ConfigMap of the namespace (Envoy bootstraps included)",
    mutate: (rs) =>
      delete first(rs, "kubernetes:rbac.authorization.k8s.io/v1:Role", (r) => r.props.metadata?.name === CANARY_STOP_NAME).props.rules[0].resourceNames,
  },
]);
