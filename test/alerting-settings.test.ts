// monitoring.alerting settings: defaults, each rule named with its key path, and secrets that
// are accepted as any non-empty string (a format rule would print the secret in its error).
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { alertingSettings, alertmanagerConfig, alertmanagerSecretData, monitoringSettings, resolveMonitoringArgs } from "../components/monitoring";
import { checkSettings, secretKeyPaths, setAt } from "../lib/schema";
import * as v from "valibot";
import { MONITORING_REFS } from "./support/monitoring";

const problems = (input: unknown): string[] => {
  const r = checkSettings(alertingSettings, input, "alerting.");
  return r.success ? [] : r.problems.map((p) => `${p.key} ${p.rule}`);
};

describe("monitoring.alerting settings", () => {
  it("defaults: Alertmanager on, one replica, critical to pager/webhook/chat and warnings to chat/webhook, no receiver", () => {
    const a = v.parse(alertingSettings, {});
    assert.deepEqual(a, { enabled: true, replicas: 1, critical: ["pagerduty", "webhook", "slack"], warning: ["slack", "webhook"] });
    // A direct caller of the component gets the same.
    const r = resolveMonitoringArgs({ ...MONITORING_REFS });
    assert.deepEqual(r.alerting, a);
  });

  it("names each broken rule with its key path", () => {
    const p = problems({
      pagerduty: { routing_key: "x" },
      slack: { apiUrl: "x", channel: "Alerts Channel" },
      webhook: { url: "https://user:pw@alerts.example.com/x" },
      heartbeat: { url: "https://hc.example.com/ping?key=abc" },
      critical: ["pagerduty", "pagerduty"],
      warning: ["email"],
    });
    const has = (re: RegExp) =>
      assert.ok(
        p.some((l) => re.test(l)),
        `${re} in\n${p.join("\n")}`,
      );
    has(/^alerting\.pagerduty\.routing_key is not a known key/);
    has(/^alerting\.pagerduty\.routingKey must be a non-empty string \(a secure: value\)/);
    has(/^alerting\.slack\.channel must be a Slack channel name/);
    has(/^alerting\.webhook\.url must be an http\(s\) URL without user:password@/);
    has(/^alerting\.heartbeat\.url must be an http\(s\) URL without user:password@ or a query string/);
    has(/^alerting\.critical must not repeat a receiver/);
    has(/^alerting\.warning\[0\] must be one of "pagerduty", "slack", "webhook"/);
  });

  it("accepts any non-empty string as a secret, and reports which secrets are set", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (key, url) => {
        const a = v.parse(alertingSettings, { pagerduty: { routingKey: key }, slack: { apiUrl: url, channel: "#a" } });
        assert.deepEqual(alertmanagerSecretData(a), { "pagerduty-routing-key": key, "slack-api-url": url });
      }),
    );
    const paths = secretKeyPaths(monitoringSettings);
    assert.deepEqual(
      paths.map((p) => p.join(".")),
      ["alerting.pagerduty.routingKey", "alerting.slack.apiUrl", "alerting.webhook.bearerToken", "alerting.heartbeat.bearerToken"],
    );
    assert.deepEqual(setAt({ alerting: { pagerduty: { routingKey: "k" }, webhook: { url: "https://x" } } }, paths), [["alerting", "pagerduty", "routingKey"]]);
    assert.deepEqual(setAt({ alerting: { webhook: { url: "https://x", bearerToken: "t" } } }, paths), [["alerting", "webhook", "bearerToken"]]);
    assert.deepEqual(setAt({}, paths), []);
    assert.deepEqual(setAt(undefined, paths), []);
  });

  it("a severity notifies the configured receivers it lists, in order; one it lists that is not set is left out", () => {
    const a = v.parse(alertingSettings, {
      webhook: { url: "https://alerts.example.com/x" },
      slack: { apiUrl: "u", channel: "#a" },
      critical: ["pagerduty", "slack"],
    });
    const c = alertmanagerConfig(a);
    const critical = c.receivers.find((r) => r.name === "critical")!;
    assert.deepEqual(Object.keys(critical), ["name", "slack_configs"]);
    const warning = c.receivers.find((r) => r.name === "warning")!;
    assert.deepEqual(Object.keys(warning), ["name", "slack_configs", "webhook_configs"]);
    // No bearer token: no http_config; no heartbeat: Watchdog to null and no heartbeat receiver.
    assert.equal((warning.webhook_configs as Record<string, unknown>[])[0].http_config, undefined);
    assert.equal(c.route.routes[0].receiver, "null");
    assert.ok(!c.receivers.some((r) => r.name === "heartbeat"));
  });
});
