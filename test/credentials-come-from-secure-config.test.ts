// Every key a component's schema marks as a credential (lib/schema.ts secret()) must come from a
// `secure:` value of the stack file: in clear it would be committed to git next to a working
// stack. The error names the key path and the command that sets it, and never shows the value.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { ConfigError, loadConfig, SECRET_KEY_PATHS } from "../config";
import { isSettingsError } from "../lib/errors";
import { fixtureStack, planFixture, runTool, tempProject, fixtureYaml } from "./helpers";

const CREDENTIALS = {
  "alerting.pagerduty.routingKey": "PLAIN-pagerduty-routing-key-0f1e2d3c",
  "alerting.slack.apiUrl": "https://hooks.slack.com/services/PLAIN/slack/4b5a6978",
  "alerting.webhook.bearerToken": "PLAIN-webhook-token-7c6d5e4f",
  "alerting.heartbeat.bearerToken": "PLAIN-heartbeat-token-8a9b0c1d",
} as const;
type Credential = keyof typeof CREDENTIALS;
const ALL = Object.keys(CREDENTIALS) as Credential[];

/** A prod-shaped stack's monitoring.alerting with each credential set, secure: or (plain) in clear. */
function stackWith(plain: readonly Credential[]) {
  const value = (k: Credential) => (plain.includes(k) ? CREDENTIALS[k] : { secure: `v1:${k}` });
  return fixtureStack("prod", (s) => {
    s.monitoring.alerting = {
      enabled: true,
      replicas: 3,
      pagerduty: { routingKey: value("alerting.pagerduty.routingKey") },
      slack: { apiUrl: value("alerting.slack.apiUrl"), channel: "#ml-prod-alerts" },
      webhook: { url: "https://alerts.example.com/hook", bearerToken: value("alerting.webhook.bearerToken") },
      heartbeat: { url: "https://heartbeat.example.com/ping/ml-prod", bearerToken: value("alerting.heartbeat.bearerToken") },
    };
  });
}

function problemsOf(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (isSettingsError(e)) return e.problems;
    throw e;
  }
  return [];
}

const expected = (k: Credential) =>
  `triton-platform:monitoring.${k} is a credential and must be a secure: value, not clear text in the stack file (pulumi config set --secret --path 'triton-platform:monitoring.${k}' <value>)`;

describe("credentials come from secure: config", function () {
  this.timeout(120_000);

  it("the schemas mark the receivers' keys, and only them, as credentials", () => {
    assert.deepEqual(
      Object.entries(SECRET_KEY_PATHS).flatMap(([s, ps]) => ps.map((p) => `${s}.${p.join(".")}`)),
      ALL.map((k) => `monitoring.${k}`),
    );
  });

  it("refuses each credential in clear, by its key, with the command, and never shows its value (any mix of secure and clear)", () => {
    fc.assert(
      fc.property(fc.subarray(ALL), (plain) => {
        const s = stackWith(plain);
        // What the planner checks: each secure: value of the stack file.
        const p = problemsOf(() => loadConfig(s.config, s.stack, s.secretKeys, s.securePaths));
        assert.deepEqual([...p].sort(), plain.map(expected).sort());
        for (const k of ALL) assert.ok(!p.join("\n").includes(CREDENTIALS[k]), `the value of ${k} is shown`);
        // What a program under the engine sees: the top-level keys only. All in clear: no key is secret, each refused.
        const engine = problemsOf(() => loadConfig(s.config, s.stack, s.secretKeys));
        if (plain.length === ALL.length) assert.deepEqual([...engine].sort(), plain.map(expected).sort());
        else assert.deepEqual(engine, []);
      }),
      { numRuns: 16 },
    );
  });

  it("a stack without credentials is not asked for any", () => {
    const s = fixtureStack("dev", (x) => delete x.monitoring?.alerting);
    assert.doesNotThrow(() => loadConfig(s.config, s.stack, s.secretKeys, s.securePaths));
  });

  it("the planner refuses a PagerDuty routing key in clear beside a secure Slack URL", async () => {
    await assert.rejects(planFixture(stackWith(["alerting.pagerduty.routingKey"])), (e: unknown) => {
      assert.ok(e instanceof Error && e.name === ConfigError.name, String(e));
      assert.deepEqual((e as InstanceType<typeof ConfigError>).problems, [expected("alerting.pagerduty.routingKey")]);
      return true;
    });
  });

  it("npm run plan exits 2 on a Slack webhook URL in clear, naming the key, without its value", async () => {
    const yaml = fixtureYaml("prod", (s) => {
      s.monitoring.alerting.slack = { apiUrl: CREDENTIALS["alerting.slack.apiUrl"], channel: "#ml-prod-alerts" };
    });
    const root = tempProject({ prod: yaml });
    const r = await runTool(root, "plan", ["--stack", "prod"]);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    const out = r.stdout + r.stderr;
    assert.ok(out.includes(expected("alerting.slack.apiUrl")), out);
    assert.ok(!out.includes(CREDENTIALS["alerting.slack.apiUrl"]), "the value is shown");
  });
});
