// The Alertmanager configuration the plan ships, proven with Alertmanager's own tools: it is
// taken from the kube-prometheus-stack release the planner recorded (not rebuilt from the
// builder), checked by `amtool check-config`, and every alert the stack ships (the rules of the
// PrometheusRule manifests the plan writes, and kube-prometheus-stack's Watchdog) is routed with
// `amtool config routes test`: in staging and prod each reaches a receiver that notifies.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import * as yaml from "js-yaml";
import { NOTIFIER_FIELDS, RECEIVERS, WATCHDOG_ALERT } from "../components/monitoring";
import type { RecordedResource } from "../tools/planner";
import { amtoolCheckConfig, amtoolRoute, requireAmtool, writeAlertmanagerConfig } from "./amtool";
import { fixtureStack, planFixture, plan, ROOT } from "./helpers";

type Config = { receivers: Record<string, unknown>[]; route: Record<string, unknown>; [k: string]: unknown };
type Alert = { alertname: string; labels: Record<string, string>; expr?: string };

/** The Alertmanager config of the recorded kube-prometheus-stack release. */
function shippedConfig(resources: RecordedResource[]): Config {
  const kps = resources.filter((r) => r.custom && r.type === "kubernetes:helm.sh/v3:Release" && r.props.chart === "kube-prometheus-stack");
  assert.equal(kps.length, 1);
  const config = kps[0].props.values?.alertmanager?.config as Config | undefined;
  assert.ok(config, "the release sets alertmanager.config (without it the chart routes every alert to null)");
  return config;
}

/** Every alerting rule of the PrometheusRule manifests a plan wrote (out/<stack>/manifests/), with the labels it sets. */
function shippedAlerts(manifestsDir: string): Alert[] {
  const files = fs.readdirSync(manifestsDir).filter((f) => f.startsWith("prometheusrule-"));
  assert.ok(files.length > 0, `no PrometheusRule manifest in ${manifestsDir}`);
  const out: Alert[] = [];
  for (const f of files) {
    const m = yaml.load(fs.readFileSync(path.join(manifestsDir, f), "utf8")) as {
      spec: { groups: { rules: { alert?: string; expr?: string; labels?: Record<string, string> }[] }[] };
    };
    for (const g of m.spec.groups) for (const r of g.rules) if (r.alert) out.push({ alertname: r.alert, labels: { ...(r.labels ?? {}) }, expr: r.expr });
  }
  return out;
}

/** kube-prometheus-stack's Watchdog (templates/prometheus/rules-1.14/general.rules.yaml: `vector(1)`, severity none). */
const WATCHDOG: Alert = { alertname: WATCHDOG_ALERT, labels: { severity: "none" } };

/** Labels a firing alert of a Triton rule carries beside its own (from the series); routing must not depend on them, but grouping uses them. */
const SERIES_LABELS = { namespace: "triton", serving_group: "vision" };

const notifies = (config: Config, name: string) => {
  const r = config.receivers.find((x) => x.name === name);
  return r !== undefined && NOTIFIER_FIELDS.some((k) => Array.isArray(r[k]) && (r[k] as unknown[]).length > 0);
};

/** Route every alert with amtool; the alerts whose receivers all notify nobody, with where they went. */
function silentAlerts(config: Config, alerts: Alert[]): { alert: string; receivers: string[] }[] {
  const file = writeAlertmanagerConfig(config);
  return alerts
    .map((a) => ({ alert: a.alertname, receivers: amtoolRoute(file, { alertname: a.alertname, ...SERIES_LABELS, ...a.labels }) }))
    .filter((x) => !x.receivers.some((name) => notifies(config, name)));
}

/** The chart values file of kube-prometheus-stack 88.1.5 in shared/ (beside the clone, or the main checkout of this worktree). */
const KPS_VALUES = ((): string | undefined => {
  const common = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: ROOT, encoding: "utf8" });
  const beside = [ROOT, ...(common.status === 0 ? [path.dirname(common.stdout.trim())] : [])];
  return beside.map((d) => path.join(d, "..", "shared", "reference", "charts", "kube-prometheus-stack-88.1.5", "values.yaml")).find((f) => fs.existsSync(f));
})();

/** Helm's merge of values onto a chart's: mappings key by key, anything else replaced. */
function helmMerge(base: unknown, over: unknown): unknown {
  const isMap = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);
  if (!isMap(base) || !isMap(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = helmMerge(base[k], v);
  return out;
}

describe("Alertmanager routing the plan ships (amtool)", function () {
  this.timeout(180_000);
  before(() => requireAmtool());

  for (const shape of ["staging", "prod"]) {
    describe(shape, () => {
      let config: Config;
      let alerts: Alert[];
      before(async () => {
        const p = await plan(shape);
        config = shippedConfig(p.resources);
        alerts = shippedAlerts(path.join(p.outRoot, shape, "manifests"));
      });

      it("passes amtool check-config", () => {
        const r = amtoolCheckConfig(writeAlertmanagerConfig(config));
        assert.equal(r.status, 0, r.output);
        assert.match(r.output, /SUCCESS/);
      });

      it("is what Alertmanager runs once Helm merges it onto the chart's default config", function () {
        if (KPS_VALUES === undefined) this.skip(); // no shared/ beside the clone: pending
        const chart = yaml.load(fs.readFileSync(KPS_VALUES, "utf8")) as { alertmanager: { config: unknown } };
        const merged = helmMerge(chart.alertmanager.config, config);
        assert.deepEqual(merged, config, "every key of the chart's default alertmanager.config is set by the stack");
        const r = amtoolCheckConfig(writeAlertmanagerConfig(merged));
        assert.equal(r.status, 0, r.output);
      });

      it("routes every shipped alert and the Watchdog to a receiver that notifies, never to null", () => {
        assert.ok(alerts.length >= 10, `expected the stack's alert rules, found ${alerts.map((a) => a.alertname).join(", ")}`);
        assert.deepEqual(silentAlerts(config, [...alerts, WATCHDOG]), []);
      });

      it("pages critical alerts, sends warnings to chat and the Watchdog to the heartbeat", () => {
        const file = writeAlertmanagerConfig(config);
        for (const a of alerts) {
          const got = amtoolRoute(file, { alertname: a.alertname, ...SERIES_LABELS, ...a.labels });
          const want = a.labels.severity === "critical" ? RECEIVERS.critical : RECEIVERS.warning;
          assert.deepEqual(got, [want], `${a.alertname} (severity ${a.labels.severity})`);
        }
        assert.deepEqual(amtoolRoute(file, { alertname: WATCHDOG_ALERT, severity: "none" }), [RECEIVERS.heartbeat]);
        // The chart's InfoInhibitor exists only to inhibit: it alone goes to null.
        assert.deepEqual(amtoolRoute(file, { alertname: "InfoInhibitor", severity: "none", namespace: "triton" }), [RECEIVERS.none]);
        // An alert nobody routed (a chart rule of severity info) is still seen.
        assert.ok(notifies(config, amtoolRoute(file, { alertname: "KubeQuotaAlmostFull", severity: "info", namespace: "triton" })[0]));
      });

      it("groups by alert name, namespace and serving group, the label the Triton alerts aggregate by", () => {
        assert.deepEqual(config.route.group_by, ["alertname", "namespace", "serving_group"]);
        const byGroup = alerts.filter((a) => /by \([^)]*\bserving_group\b/.test(a.expr ?? ""));
        assert.ok(byGroup.length >= 4, `Triton alerts aggregated by serving_group: ${byGroup.map((a) => a.alertname).join(", ")}`);
      });
    });
  }

  describe("the checks fail when they should", () => {
    let prod: Config;
    let alerts: Alert[];
    before(async () => {
      const p = await plan("prod");
      prod = shippedConfig(p.resources);
      alerts = shippedAlerts(path.join(p.outRoot, "prod", "manifests"));
    });

    it("finds every alert of a stack with no receiver configured (staging-shaped, receivers removed) silent", async () => {
      const p = await planFixture(
        fixtureStack("staging", (s) => {
          s.monitoring.alerting = { enabled: true, replicas: 1 };
        }),
      );
      const config = shippedConfig(p.resources);
      assert.equal(amtoolCheckConfig(writeAlertmanagerConfig(config)).status, 0);
      const silent = silentAlerts(config, [...shippedAlerts(path.join(p.outRoot, "staging", "manifests")), WATCHDOG]);
      assert.ok(silent.length >= 11, JSON.stringify(silent));
      assert.deepEqual(silent.find((s) => s.alert === WATCHDOG_ALERT)?.receivers, [RECEIVERS.none]);
    });

    it("finds the critical alerts silent when the critical receiver loses its notifiers", () => {
      const broken = structuredClone(prod);
      broken.receivers = broken.receivers.map((r) => (r.name === RECEIVERS.critical ? { name: RECEIVERS.critical } : r));
      const silent = silentAlerts(broken, alerts).map((s) => s.alert);
      assert.ok(silent.includes("TritonTargetDown") && silent.includes("GpuXidError"), silent.join(", "));
      assert.ok(!silent.includes("TritonQueueTimeAboveBudget"), "warnings still reach chat");
    });

    it("finds an alert silent when a route in front sends it to null", () => {
      const broken = structuredClone(prod);
      (broken.route.routes as unknown[]).unshift({ receiver: RECEIVERS.none, matchers: ['alertname =~ "Triton.*"'] });
      const silent = silentAlerts(broken, alerts).map((s) => s.alert);
      assert.ok(silent.length > 0 && silent.every((a) => a.startsWith("Triton")), silent.join(", "));
    });

    it("amtool check-config rejects a route to a receiver that does not exist", () => {
      const broken = structuredClone(prod);
      broken.route.receiver = "nobody";
      const r = amtoolCheckConfig(writeAlertmanagerConfig(broken));
      assert.notEqual(r.status, 0, r.output);
      assert.match(r.output, /undefined receiver "nobody"/);
    });
  });
});
