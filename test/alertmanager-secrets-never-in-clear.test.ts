// The receivers' keys (PagerDuty routing key, Slack webhook URL, bearer tokens) are secure:
// config that lands only in a Kubernetes Secret: never in the Helm values, never in clear in
// what the plan records. Proven by planting known values where Pulumi would hand the program
// the decrypted secrets and searching every file the plan writes for them.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { ALERTMANAGER_SECRET_DIR, ALERTMANAGER_SECRET_NAME } from "../components/monitoring";
import { ConfigError, loadConfig } from "../config";
import { MASK, SECRET_PLACEHOLDER } from "../tools/planner/fakes";
import { fixtureStack, one, planFixture } from "./helpers";
import type { FixtureStack } from "./support/stacks";

const KEY = "triton-platform:monitoring";
const PLANTED = {
  routingKey: "PLANTED-pagerduty-3c1f9e7a0b2d4c6e",
  apiUrl: "https://hooks.slack.com/services/PLANTED/slack/9d8e7f6a",
  webhookToken: "PLANTED-webhook-token-5a4b3c2d",
  heartbeatToken: "PLANTED-heartbeat-token-1e2f3a4b",
};

/** A prod-shaped stack with all four receivers, each secret marked secure: and then given a known value, as Pulumi decrypts it for the program. */
function plantedStack(): FixtureStack {
  const stack = fixtureStack("prod", (s) => {
    s.monitoring.alerting = {
      enabled: true,
      replicas: 3,
      pagerduty: { routingKey: { secure: "v1:x" } },
      slack: { apiUrl: { secure: "v1:x" }, channel: "#ml-prod-alerts" },
      webhook: { url: "https://alerts.example.com/PLAIN-webhook-url-marker", bearerToken: { secure: "v1:x" } },
      heartbeat: { url: "https://heartbeat.example.com/ping/ml-prod", bearerToken: { secure: "v1:x" } },
    };
  });
  assert.ok(stack.secretKeys.includes(KEY), "the planner marks the whole monitoring key secret");
  const monitoring = JSON.parse(stack.config[KEY]);
  const a = monitoring.alerting;
  assert.equal(a.pagerduty.routingKey, SECRET_PLACEHOLDER);
  a.pagerduty.routingKey = PLANTED.routingKey;
  a.slack.apiUrl = PLANTED.apiUrl;
  a.webhook.bearerToken = PLANTED.webhookToken;
  a.heartbeat.bearerToken = PLANTED.heartbeatToken;
  return { ...stack, config: { ...stack.config, [KEY]: JSON.stringify(monitoring) } };
}

/** Every file under `dir`, recursively, with its text. */
function filesUnder(dir: string): { file: string; text: string }[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).flatMap((e) => {
    if (!e.isFile()) return [];
    const file = path.join(e.parentPath, e.name);
    return [{ file, text: fs.readFileSync(file, "utf8") }];
  });
}

describe("Alertmanager receiver secrets are never in clear", function () {
  this.timeout(120_000);
  let outDir: string;
  let result: Awaited<ReturnType<typeof planFixture>>;
  before(async () => {
    result = await planFixture(plantedStack());
    outDir = path.join(result.outRoot, "prod");
  });

  it("appear in no file the plan writes (resources.json, manifests, outputs) nor in its report", () => {
    const files = filesUnder(outDir);
    assert.ok(files.some((f) => f.file.endsWith("resources.json")) && files.some((f) => f.file.includes(`${path.sep}manifests${path.sep}`)));
    for (const value of Object.values(PLANTED)) {
      const leaks = files.filter((f) => f.text.includes(value)).map((f) => path.relative(outDir, f.file));
      assert.deepEqual(leaks, [], `${value} leaked`);
      assert.ok(!JSON.stringify(result.report).includes(value), `${value} in the report`);
    }
  });

  it("the same search finds a value that is not secret (the webhook URL), so it can fail", () => {
    const hits = filesUnder(outDir).filter((f) => f.text.includes("PLAIN-webhook-url-marker"));
    assert.ok(hits.some((f) => f.file.endsWith("resources.json")));
  });

  it("land in the receivers Secret, masked, which Alertmanager mounts and its config reads through *_file fields", () => {
    const secret = one(result.resources, "kubernetes:core/v1:Secret", "monitoring-alertmanager-receivers");
    assert.equal(secret.props.metadata.name, ALERTMANAGER_SECRET_NAME);
    const keys = Object.keys(secret.props.stringData).sort();
    assert.deepEqual(keys, ["heartbeat-bearer-token", "pagerduty-routing-key", "slack-api-url", "webhook-bearer-token"]);
    for (const k of keys) assert.equal(secret.props.stringData[k], MASK, k);

    const kps = result.resources.find((r) => r.type === "kubernetes:helm.sh/v3:Release" && r.props.chart === "kube-prometheus-stack")!;
    const am = kps.props.values.alertmanager;
    assert.deepEqual(am.alertmanagerSpec.secrets, [ALERTMANAGER_SECRET_NAME]);
    assert.ok(kps.dependencies.includes(secret.urn), "the pods mount the Secret: it exists before the release");
    // Every *_file the config names is a key of that Secret, at the operator's mount path.
    const files: string[] = [];
    const walk = (x: unknown): void => {
      if (Array.isArray(x)) x.forEach(walk);
      else if (x !== null && typeof x === "object")
        for (const [k, v] of Object.entries(x)) {
          if (k.endsWith("_file") && typeof v === "string") files.push(v);
          else walk(v);
        }
    };
    walk(am.config);
    assert.deepEqual([...new Set(files.map((f) => path.posix.basename(f)))].sort(), keys);
    for (const f of files) assert.equal(path.posix.dirname(f), ALERTMANAGER_SECRET_DIR);
    // No secret-bearing field inline: each key is read from its file.
    const text = JSON.stringify(am);
    for (const inline of ['"routing_key"', '"service_key"', '"api_url"', '"credentials"']) assert.ok(!text.includes(inline), inline);
  });

  it("in clear in a stack file are refused, naming the key and never showing the value", () => {
    const stack = plantedStack();
    const clear = stack.secretKeys.filter((k) => k !== KEY);
    assert.throws(
      () => loadConfig(stack.config, "prod", clear),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        const lines = e.problems;
        for (const k of ["pagerduty.routingKey", "slack.apiUrl", "webhook.bearerToken", "heartbeat.bearerToken"])
          assert.ok(
            lines.some((l) => l.startsWith(`${KEY}.alerting.${k} is a credential and must be a secure: value`)),
            lines.join("\n"),
          );
        for (const value of Object.values(PLANTED)) assert.ok(!e.message.includes(value) && !lines.join("\n").includes(value));
        return true;
      },
    );
    // Marked secure, they load; a secret anywhere else is still refused.
    assert.doesNotThrow(() => loadConfig(stack.config, "prod", stack.secretKeys));
    assert.throws(() => loadConfig(stack.config, "prod", [...stack.secretKeys, "triton-platform:tags"]), /triton-platform:tags must not be a secret/);
  });
});
