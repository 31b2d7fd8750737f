// The canary gates proven against the real tools: a real Prometheus server (Debian's, started
// once on 127.0.0.1) holding synthetic series imported with `promtool tsdb create-blocks-from
// openmetrics`, in exactly the label shapes the stack's scrape produces (derived from the
// rendered ServiceMonitor and PodMonitor relabelings and the metric-name modules, not written
// by hand), and `npm run gate` against it: a good canary passes, a bad one fails, a thin one is
// "insufficient", an unreachable server is a clear error. `promtool test rules` shows the gate
// alerts firing and silent both ways, and amtool routes the failing gate to the on-call receiver.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as yaml from "js-yaml";
import { main as gateMain, GATE_EXIT } from "../tools/gate";
import { fixtureValues } from "./support/stacks";
import { ROOT } from "./helpers";
import { requirePromtool, promtool, writeFiles } from "./promtool";
import { amtoolRoute, requireAmtool, writeAlertmanagerConfig } from "./amtool";
import { MONITORING_REFS } from "./support/monitoring";
import { podMonitorImplicit, serviceMonitorImplicit, targetLabels } from "./support/relabel";
import {
  alertmanagerConfig,
  canaryGateRules,
  canaryGates,
  CANARY_GATE_FAILED_ALERT,
  CANARY_GATE_INSUFFICIENT_ALERT,
  DEFAULT_THRESHOLDS,
  gatewayPodMonitor,
  resolveMonitoringArgs,
  tritonServiceMonitor,
  RECEIVERS,
} from "../components/monitoring";
import { GATEWAY_POD_LABELS, MONITORING_NAMESPACE, tritonMetricsServiceName, type Track } from "../components/contracts";
import { TRITON_COUNTERS, TRITON_SUMMARIES, TRITON_SUMMARY_QUANTILES } from "../components/upstream/triton-metrics";
import { ENVOY_CLUSTER_COUNTERS, ENVOY_STAT_LABELS } from "../components/upstream/envoy-stats";
import { upstreamClusterName } from "../components/gateway/envoy-config";
import { canaryStageRef, rolloutSettings } from "../components/triton/rollout";
import * as v from "valibot";
import type { OperatorRelabelConfig } from "../components/upstream/prometheus";

type Labels = Record<string, string>;

// ---- the scrape's label shapes, derived from the rendered monitors -------------------------
const monitoring = resolveMonitoringArgs({ ...MONITORING_REFS, alerting: { enabled: true, pagerduty: { routingKey: "k" } } });
const sm = tritonServiceMonitor(monitoring, MONITORING_NAMESPACE);
const pm = gatewayPodMonitor(monitoring, MONITORING_NAMESPACE);
const NS = monitoring.servingNamespace;

/** A Triton pod's target labels: its discovered meta labels through the ServiceMonitor's relabelings. */
function tritonTarget(track: Track, pod: string, ip: string): Labels {
  const d: Labels = {
    __address__: `${ip}:8002`,
    __meta_kubernetes_namespace: NS,
    __meta_kubernetes_service_name: tritonMetricsServiceName("vision", track),
    __meta_kubernetes_pod_name: pod,
    __meta_kubernetes_pod_container_name: "triton",
    __meta_kubernetes_pod_label_track: track,
    __meta_kubernetes_pod_label_app_kubernetes_io_instance: "vision",
  };
  const ep = sm.spec.endpoints[0];
  const l = targetLabels(d, ep.relabelings, serviceMonitorImplicit(d, sm.metadata, ep.port));
  assert.ok(l, `the ServiceMonitor keeps ${pod}`);
  return l;
}

/** A gateway pod's target labels through the PodMonitor's relabelings. */
function gatewayTarget(pod: string, ip: string): Labels {
  const d: Labels = {
    __address__: `${ip}:9902`,
    __meta_kubernetes_namespace: NS,
    __meta_kubernetes_pod_name: pod,
    __meta_kubernetes_pod_container_name: "envoy",
    ...Object.fromEntries(Object.entries(GATEWAY_POD_LABELS).map(([k, v]) => [`__meta_kubernetes_pod_label_${k.replace(/[^a-zA-Z0-9_]/g, "_")}`, v])),
  };
  const ep = pm.spec.podMetricsEndpoints[0];
  const l = targetLabels(d, ep.relabelings, podMonitorImplicit(d, pm.metadata, ep.port));
  assert.ok(l, `the PodMonitor keeps ${pod}`);
  return l;
}

/** Does the PodMonitor's metricRelabelings keep this series? */
function keptByPodMonitor(metric: string): boolean {
  const rules: OperatorRelabelConfig[] = pm.spec.podMetricsEndpoints[0].metricRelabelings;
  return targetLabels({ __name__: metric }, rules, {}) !== undefined;
}

// ---- synthetic series ------------------------------------------------------------------------
/** Per-minute behaviour of the tracks in one phase of the timeline. */
interface Phase {
  primary: { ok: number; fail: number; queueMs: number; p99Ms: number };
  canary: { ok: number; fail: number; queueMs: number; p99Ms: number };
  /** Gateway requests to the canary's clusters per minute, and how many were 5xx / reset. */
  gateway: { total: number; fiveXx: number; resets: number };
}
const GOOD: Phase = {
  primary: { ok: 600, fail: 6, queueMs: 5, p99Ms: 120 },
  canary: { ok: 60, fail: 0, queueMs: 4, p99Ms: 110 },
  gateway: { total: 60, fiveXx: 0, resets: 0 },
};
const BAD: Phase = {
  primary: { ok: 600, fail: 6, queueMs: 5, p99Ms: 120 },
  canary: { ok: 60, fail: 12, queueMs: 90, p99Ms: 900 },
  gateway: { total: 72, fiveXx: 12, resets: 3 },
};
// A canary nobody sends traffic to, failing what little it gets: still "insufficient", never "fail".
const THIN: Phase = {
  primary: { ok: 600, fail: 6, queueMs: 5, p99Ms: 120 },
  canary: { ok: 1, fail: 1, queueMs: 90, p99Ms: 900 },
  gateway: { total: 2, fiveXx: 1, resets: 0 },
};
const MINUTES_PER_PHASE = 40;
const PHASES = [GOOD, BAD, THIN];
const WINDOW_MINUTES = 30;
const MIN_REQUESTS = 200;
/** Start of the timeline: whole hours, far enough back that every sample is in the past. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3600 - 4 * 3600;
/** End of each phase (Unix seconds): the `--at` of its case, with the window inside the phase. */
const phaseEnd = (i: number) => T0 + (i + 1) * MINUTES_PER_PHASE * 60;

function openMetrics(): string {
  const families = new Map<string, string[]>();
  const add = (metric: string, labels: Labels, perMinute: (p: Phase) => number, counter: boolean) => {
    const lines = families.get(metric) ?? families.set(metric, []).get(metric)!;
    const l = Object.entries(labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(",");
    let total = 0;
    for (let m = 0; m <= PHASES.length * MINUTES_PER_PHASE; m++) {
      const p = PHASES[Math.min(PHASES.length - 1, Math.floor(Math.max(0, m - 1) / MINUTES_PER_PHASE))];
      total = counter ? total + (m === 0 ? 0 : perMinute(p)) : perMinute(p);
      lines.push(`${metric}{${l}} ${total} ${T0 + m * 60}`);
    }
  };
  const model = { model: "resnet", version: "1" };
  for (const [track, pod, ip] of [
    ["primary", "vision-0", "10.0.0.1"],
    ["canary", "vision-canary-0", "10.0.0.2"],
  ] as const) {
    const t = { ...tritonTarget(track, pod, ip), ...model };
    add(TRITON_COUNTERS.requestSuccess, t, (p) => p[track].ok, true);
    add(TRITON_COUNTERS.requestFailure, { ...t, reason: "BACKEND" }, (p) => p[track].fail, true);
    add(TRITON_COUNTERS.queueDurationUs, t, (p) => p[track].ok * p[track].queueMs * 1000, true);
    add(TRITON_SUMMARIES.requestUs, { ...t, quantile: TRITON_SUMMARY_QUANTILES.p99 }, (p) => p[track].p99Ms * 1000, false);
  }
  // Two gateway pods, each seeing half of the canary's requests, on the HTTP cluster.
  for (const [pod, ip] of [
    ["triton-gateway-a", "10.0.1.1"],
    ["triton-gateway-b", "10.0.1.2"],
  ] as const) {
    const g = { ...gatewayTarget(pod, ip), [ENVOY_STAT_LABELS.clusterName]: upstreamClusterName("vision", "canary", "http") };
    const envoy = (metric: string, labels: Labels, f: (p: Phase) => number) => {
      assert.ok(keptByPodMonitor(metric), `the PodMonitor keeps ${metric}`);
      add(metric, labels, f, true);
    };
    envoy(ENVOY_CLUSTER_COUNTERS.rqTotal, g, (p) => p.gateway.total / 2);
    envoy(ENVOY_CLUSTER_COUNTERS.rqXx, { ...g, [ENVOY_STAT_LABELS.responseCodeClass]: "2" }, (p) => (p.gateway.total - p.gateway.fiveXx) / 2);
    envoy(ENVOY_CLUSTER_COUNTERS.rqXx, { ...g, [ENVOY_STAT_LABELS.responseCodeClass]: "5" }, (p) => p.gateway.fiveXx / 2);
    envoy(ENVOY_CLUSTER_COUNTERS.rqRxReset, g, (p) => p.gateway.resets / 2);
  }
  // OpenMetrics: one family's samples together; type unknown keeps Triton's names (a counter would need _total).
  return [...families].map(([name, lines]) => `# TYPE ${name} unknown\n${lines.join("\n")}`).join("\n") + "\n# EOF\n";
}

// ---- the stack file the gate reads -----------------------------------------------------------
const ROLLOUT = {
  stage: "split-5",
  stages: [
    { name: "mirror-5", mirrorPercent: 5, minDurationMinutes: WINDOW_MINUTES, gates: { minRequests: MIN_REQUESTS } },
    { name: "split-5", mirrorPercent: 5, trafficPercent: 5, minDurationMinutes: WINDOW_MINUTES, gates: { minRequests: MIN_REQUESTS } },
  ],
};

function gateProject(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gate-project-"));
  fs.copyFileSync(path.join(ROOT, "Pulumi.yaml"), path.join(dir, "Pulumi.yaml"));
  const values = fixtureValues("prod", (s) => {
    s.triton.namespace = NS;
    s.triton.groups[0].canary.trafficPercent = 5;
    s.triton.groups[0].canary.rollout = ROLLOUT;
    s.gateway.mirrorPercent = 5;
  });
  fs.writeFileSync(path.join(dir, "Pulumi.prod.yaml"), yaml.dump({ config: values }, { lineWidth: -1, noRefs: true }));
  return dir;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function gate(root: string, args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: root, root };
  const status = await gateMain(args, io);
  return { status, stdout, stderr };
}

describe("canary gates against a real Prometheus (npm run gate)", function () {
  this.timeout(120_000);
  let server: ChildProcess | undefined;
  let url = "";
  let root = "";
  let log = "";

  before(async () => {
    requirePromtool();
    const bin = spawnSync("prometheus", ["--version"], { encoding: "utf8" });
    if (bin.error || bin.status !== 0)
      throw new Error("the prometheus server is required (Debian package 'prometheus', /usr/bin/prometheus); .ci/run installs it");
    const dir = writeFiles({ "series.om": openMetrics(), "prometheus.yml": { global: { scrape_interval: "1m" }, scrape_configs: [] } });
    const imported = promtool(dir, ["tsdb", "create-blocks-from", "openmetrics", "series.om", "data"]);
    assert.equal(imported.status, 0, imported.output);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = spawn(
      "prometheus",
      [`--config.file=${path.join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${path.join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    server.stderr!.on("data", (b: Buffer) => (log += b.toString()));
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/-/ready`)).ok) break;
      } catch {
        // not listening yet
      }
      if (i > 100 || server.exitCode !== null) throw new Error(`prometheus did not become ready:\n${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    root = gateProject();
  });

  after(() => {
    server?.kill("SIGTERM");
  });

  it("passes a canary that is as good as its primary on enough traffic (exit 0)", async () => {
    const r = await gate(root, ["--stack", "prod", "--prometheus", url, "--at", String(phaseEnd(0))]);
    assert.equal(r.status, GATE_EXIT.pass, r.stdout + r.stderr);
    assert.match(r.stdout, /canary vision · stage split-5 \(2 of 2\) · window 30m: PASS/);
    assert.match(r.stdout, /pass +requests +1800 requests \(limit >= 200 requests\)/);
    for (const g of ["failure_ratio", "p99_slo", "p99_vs_primary", "queue_time", "gateway_5xx", "gateway_resets"])
      assert.match(r.stdout, new RegExp(`pass +${g} `));
    assert.match(r.stdout, /verdict: pass\n$/);
  });

  it("fails a canary worse than its primary, naming each failing gate with its number (exit 1)", async () => {
    const r = await gate(root, ["--stack", "prod", "--prometheus", url, "--at", new Date(phaseEnd(1) * 1000).toISOString()]);
    assert.equal(r.status, GATE_EXIT.fail, r.stdout + r.stderr);
    // 12 of 72 canary requests fail (0.1667) against 6 of 606 (0.0099): a delta of 0.1568 > the fixture's margin 0.01.
    assert.match(r.stdout, /fail +failure_ratio +0\.1568 \(limit <= 0\.01\)/);
    assert.match(r.stdout, /fail +p99_slo +900 ms \(limit <= 500 ms\)/);
    assert.match(r.stdout, /fail +p99_vs_primary +7\.5 \(limit <= 1\.25\)/);
    assert.match(r.stdout, /fail +queue_time +90 ms \(limit <= 50 ms\)/);
    assert.match(r.stdout, /fail +gateway_5xx +0\.1667 \(limit <= 0\.01\)/);
    assert.match(r.stdout, /fail +gateway_resets +0\.04167 \(limit <= 0\.01\)/);
    assert.match(r.stdout, /verdict: fail/);
  });

  it("says a thin canary has insufficient data, never pass or fail (exit 3)", async () => {
    const r = await gate(root, ["--stack", "prod", "--prometheus", url, "--at", String(phaseEnd(2))]);
    assert.equal(r.status, GATE_EXIT.insufficient, r.stdout + r.stderr);
    assert.match(r.stdout, /insufficient +requests +60 requests \(limit >= 200 requests\): too few to judge any gate/);
    assert.match(r.stdout, /INSUFFICIENT/);
    // Its numbers are shown, but a failing-looking gate on 60 requests is no verdict.
    assert.match(r.stdout, /insufficient +failure_ratio +0\.4901 /);
    assert.doesNotMatch(r.stdout, /^ +(fail|pass) /m);
    assert.match(r.stdout, /verdict: insufficient/);
  });

  it("gives --json the same numbers", async () => {
    const r = await gate(root, ["--stack", "prod", "--prometheus", url, "--at", String(phaseEnd(1)), "--json"]);
    const doc = JSON.parse(r.stdout) as { verdict: string; canaries: { gates: { name: string; value: number; verdict: string }[] }[] };
    assert.equal(doc.verdict, "fail");
    const fr = doc.canaries[0].gates.find((g) => g.name === "failure_ratio")!;
    assert.ok(Math.abs(fr.value - (12 / 72 - 6 / 606)) < 1e-9, String(fr.value));
  });

  it("is a clear error (exit 2, no stack trace) for an unreachable server, a non-Prometheus answer and a bad stack", async () => {
    const dead = await freePort();
    const r = await gate(root, ["--stack", "prod", "--prometheus", `http://127.0.0.1:${dead}`]);
    assert.equal(r.status, GATE_EXIT.error);
    assert.match(r.stderr, /^error: cannot reach Prometheus at http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED\n$/);
    const html = await gate(root, ["--stack", "prod", "--prometheus", `${url}/graph`]);
    assert.equal(html.status, GATE_EXIT.error, html.stderr);
    assert.match(html.stderr, /^error: /);
    assert.doesNotMatch(html.stderr, /\n\s+at /);
    const none = await gate(root, ["--stack", "nope", "--prometheus", url]);
    assert.equal(none.status, GATE_EXIT.error);
    assert.match(none.stderr, /^error: no stack file Pulumi\.nope\.yaml/);
    const bad = await gate(root, ["--stack", "prod", "--prometheus", "127.0.0.1:9090"]);
    assert.equal(bad.status, GATE_EXIT.error);
    assert.match(bad.stderr, /--prometheus must be an http\(s\) URL/);
  });
});

describe("canary gate rules (promtool) and their routing (amtool)", () => {
  const stage = canaryStageRef(v.parse(rolloutSettings, ROLLOUT));
  const gates = canaryGates(NS, { name: "vision", canary: true, canaryStage: stage }, DEFAULT_THRESHOLDS)!;
  const { records, alerts } = canaryGateRules(gates);
  const series = (phase: Phase) => {
    const out: { series: string; values: string }[] = [];
    const sel = (m: string, l: Labels) =>
      `${m}{${Object.entries(l)
        .map(([k, v]) => `${k}="${v}"`)
        .join(",")}}`;
    for (const [track, pod, ip] of [
      ["primary", "vision-0", "10.0.0.1"],
      ["canary", "vision-canary-0", "10.0.0.2"],
    ] as const) {
      const t = { ...tritonTarget(track, pod, ip), model: "resnet", version: "1" };
      out.push({ series: sel(TRITON_COUNTERS.requestSuccess, t), values: `0+${phase[track].ok}x60` });
      out.push({ series: sel(TRITON_COUNTERS.requestFailure, { ...t, reason: "BACKEND" }), values: `0+${phase[track].fail}x60` });
      out.push({ series: sel(TRITON_COUNTERS.queueDurationUs, t), values: `0+${phase[track].ok * phase[track].queueMs * 1000}x60` });
      out.push({ series: sel(TRITON_SUMMARIES.requestUs, { ...t, quantile: "0.99" }), values: `${phase[track].p99Ms * 1000}x60` });
    }
    const g = { ...gatewayTarget("triton-gateway-a", "10.0.1.1"), envoy_cluster_name: "vision-canary-http" };
    out.push({ series: sel(ENVOY_CLUSTER_COUNTERS.rqTotal, g), values: `0+${phase.gateway.total}x60` });
    out.push({ series: sel(ENVOY_CLUSTER_COUNTERS.rqXx, { ...g, envoy_response_code_class: "5" }), values: `0+${phase.gateway.fiveXx}x60` });
    out.push({ series: sel(ENVOY_CLUSTER_COUNTERS.rqRxReset, g), values: `0+${phase.gateway.resets}x60` });
    return out;
  };
  const labels = (gate: string, severity: string) => ({ severity, namespace: NS, serving_group: "vision", stage: "split-5", gate });
  const ruleFile = { groups: [{ name: "canary-gates-vision", rules: [...records, ...alerts.map((a) => ({ ...a, annotations: undefined }))] }] };
  const failed = ["failure_ratio", "p99_slo", "p99_vs_primary", "queue_time", "gateway_5xx", "gateway_resets"];
  const tests = (bad: Phase, expectBad: Labels[]) => ({
    rule_files: ["gates.yml"],
    evaluation_interval: "1m",
    tests: [
      {
        name: "better canary",
        interval: "1m",
        input_series: series(GOOD),
        alert_rule_test: [
          { eval_time: "59m", alertname: CANARY_GATE_FAILED_ALERT, exp_alerts: [] },
          { eval_time: "59m", alertname: CANARY_GATE_INSUFFICIENT_ALERT, exp_alerts: [] },
        ],
        promql_expr_test: [
          {
            expr: `triton_platform:canary_gate:value{gate="requests"}`,
            eval_time: "59m",
            exp_samples: [
              { labels: `triton_platform:canary_gate:value{gate="requests",namespace="${NS}",serving_group="vision",stage="split-5"}`, value: 1800 },
            ],
          },
        ],
      },
      {
        name: "worse canary",
        interval: "1m",
        input_series: series(bad),
        alert_rule_test: [
          { eval_time: "59m", alertname: CANARY_GATE_FAILED_ALERT, exp_alerts: expectBad.map((l) => ({ exp_labels: l })) },
          { eval_time: "59m", alertname: CANARY_GATE_INSUFFICIENT_ALERT, exp_alerts: [] },
        ],
      },
      {
        name: "thin canary: insufficient, never failed",
        interval: "1m",
        input_series: series(THIN),
        alert_rule_test: [
          { eval_time: "59m", alertname: CANARY_GATE_FAILED_ALERT, exp_alerts: [] },
          { eval_time: "59m", alertname: CANARY_GATE_INSUFFICIENT_ALERT, exp_alerts: [{ exp_labels: labels("requests", "warning") }] },
        ],
      },
    ],
  });

  it("`promtool test rules`: a better canary is silent, a worse one fires every gate, a thin one is insufficient only", () => {
    requirePromtool();
    const dir = writeFiles({
      "gates.yml": ruleFile,
      "tests.yml": tests(
        BAD,
        failed.map((g) => labels(g, "critical")),
      ),
    });
    const r = promtool(dir, ["test", "rules", "tests.yml"]);
    assert.equal(r.status, 0, r.output);
    const check = promtool(writeFiles({ "gates.yml": { groups: [{ name: "g", rules: [...records, ...alerts] }] } }), ["check", "rules", "gates.yml"]);
    assert.equal(check.status, 0, check.output);
  });

  it("`promtool test rules` fails when a worse canary is expected silent (the harness can fail)", () => {
    const dir = writeFiles({ "gates.yml": ruleFile, "tests.yml": tests(BAD, []) });
    assert.notEqual(promtool(dir, ["test", "rules", "tests.yml"]).status, 0);
  });

  it("amtool routes a failing gate to the on-call (critical) receiver and an insufficient-data alert to chat", () => {
    requireAmtool();
    const file = writeAlertmanagerConfig(alertmanagerConfig(monitoring.alerting));
    assert.deepEqual(amtoolRoute(file, { alertname: CANARY_GATE_FAILED_ALERT, ...labels("failure_ratio", "critical") }), [RECEIVERS.critical]);
    assert.deepEqual(amtoolRoute(file, { alertname: CANARY_GATE_INSUFFICIENT_ALERT, ...labels("requests", "warning") }), [RECEIVERS.warning]);
  });
});
