// Alertmanager's routing, built as data: the receivers of monitoring.alerting, routes by
// severity, grouping, inhibition and the Watchdog heartbeat, plus the Kubernetes Secret the
// receivers' keys live in.
//
// Why the secrets are files: kube-prometheus-stack renders `alertmanager.config` from the Helm
// values into its own Secret, so anything in it is also in the release's values (Helm history,
// `pulumi preview` diffs, the planner's resources.json). The keys therefore go into a Secret of
// their own, mounted by the operator through `alertmanagerSpec.secrets` at
// /etc/alertmanager/secrets/<secret>/<key> (prometheus-operator v0.93.0, the chart's appVersion:
// pkg/alertmanager/statefulset.go `secretsDir`), and the config names them with `*_file` fields.
//
// Which `*_file` fields: only those that both Alertmanager v0.33.1 (what chart 88.1.5 runs,
// values.yaml alertmanager.alertmanagerSpec.image.tag) and v0.25.0 (Debian bookworm's amtool,
// which the tests prove the config with) accept: pagerduty `routing_key_file`, slack
// `api_url_file` (config/notifiers.go at both tags) and http_config.authorization
// `credentials_file` (prometheus/common). webhook `url_file` exists only from v0.26.0, so a
// webhook URL is not secret here and its credential is a bearer token file.
import type * as pulumi from "@pulumi/pulumi";
import type { ReleaseArgs } from "@pulumi/kubernetes/helm/v3";
import { MONITORING_NAMESPACE } from "../contracts";
import type { AlertingSettings, ReceiverKind } from "./alerting-schema";
import { TRITON_TARGET_LABELS } from "./scrape";
import { CANARY_GATE_FAILED_ALERT } from "./rules";

/** The Secret holding the receivers' keys (mounted into every Alertmanager pod). */
export const ALERTMANAGER_SECRET_NAME = "alertmanager-receivers";
/** Where the operator mounts it (prometheus-operator pkg/alertmanager/statefulset.go, secretsDir + secret name). */
export const ALERTMANAGER_SECRET_DIR = `/etc/alertmanager/secrets/${ALERTMANAGER_SECRET_NAME}`;

/** Key of each secret setting in the Secret. */
export const SECRET_FILES = {
  pagerdutyRoutingKey: "pagerduty-routing-key",
  slackApiUrl: "slack-api-url",
  webhookBearerToken: "webhook-bearer-token",
  heartbeatBearerToken: "heartbeat-bearer-token",
} as const;

/** Receiver names. `null` is the chart's name for "notify nobody" (kept for InfoInhibitor only). */
export const RECEIVERS = { critical: "critical", warning: "warning", heartbeat: "heartbeat", none: "null" } as const;

/** Alerts of kube-prometheus-stack's general.rules that the routing treats specially (severity "none"). */
export const WATCHDOG_ALERT = "Watchdog";
export const INFO_INHIBITOR_ALERT = "InfoInhibitor";

/** One notification per alert name, namespace and serving group: a group's incident is one page, not one per pod. */
export const GROUP_BY = ["alertname", "namespace", TRITON_TARGET_LABELS.servingGroup] as const;

/** The notifier lists of an Alertmanager receiver that deliver somewhere (a receiver with none of them notifies nobody). */
export const NOTIFIER_FIELDS = ["pagerduty_configs", "slack_configs", "webhook_configs"] as const;

const file = (key: string) => `${ALERTMANAGER_SECRET_DIR}/${key}`;
const bearer = (key: string) => ({ authorization: { type: "Bearer", credentials_file: file(key) } });
const eq = (label: string, value: string) => `${label} = ${JSON.stringify(value)}`;

/** The notifier entries of one receiver kind, when that receiver is configured. */
function notifiers(a: AlertingSettings, kind: ReceiverKind): Record<string, unknown[]> {
  switch (kind) {
    case "pagerduty":
      return a.pagerduty ? { pagerduty_configs: [{ routing_key_file: file(SECRET_FILES.pagerdutyRoutingKey), send_resolved: true }] } : {};
    case "slack":
      return a.slack
        ? {
            slack_configs: [
              {
                api_url_file: file(SECRET_FILES.slackApiUrl),
                channel: a.slack.channel,
                send_resolved: true,
                title: "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }} ({{ .CommonLabels.severity }})",
                text: "{{ range .Alerts }}{{ .Annotations.summary }}\n{{ end }}",
              },
            ],
          }
        : {};
    case "webhook":
      return a.webhook
        ? {
            webhook_configs: [
              {
                url: a.webhook.url,
                send_resolved: true,
                ...(a.webhook.bearerToken !== undefined ? { http_config: bearer(SECRET_FILES.webhookBearerToken) } : {}),
              },
            ],
          }
        : {};
  }
}

/** A receiver notifying every configured kind of `kinds` (in that order). */
function receiver(name: string, a: AlertingSettings, kinds: readonly ReceiverKind[]) {
  const out: Record<string, unknown> = { name };
  for (const kind of kinds) Object.assign(out, notifiers(a, kind));
  return out;
}

/**
 * The Alertmanager configuration (alertmanager.config of the chart). Every key the chart's
 * default config sets is set here, so Helm's merge of the two changes nothing.
 */
export function alertmanagerConfig(a: AlertingSettings) {
  const heartbeat = a.heartbeat
    ? [
        {
          name: RECEIVERS.heartbeat,
          // Watchdog never resolves; a resolved message would be a ping too.
          webhook_configs: [
            {
              url: a.heartbeat.url,
              send_resolved: false,
              ...(a.heartbeat.bearerToken !== undefined ? { http_config: bearer(SECRET_FILES.heartbeatBearerToken) } : {}),
            },
          ],
        },
      ]
    : [];
  return {
    global: { resolve_timeout: "5m" },
    // Unrouted alerts (info, severity none, a rule without severity) go to the chat receiver,
    // never to `null`: an alert nobody thought of is still seen.
    route: {
      receiver: RECEIVERS.warning,
      group_by: [...GROUP_BY],
      group_wait: "30s",
      group_interval: "5m",
      repeat_interval: "12h",
      routes: [
        // Dead-man's switch: Watchdog always fires; the heartbeat service pages when its
        // pings stop (Prometheus, Alertmanager or their network is down). Pinged every minute.
        {
          receiver: a.heartbeat ? RECEIVERS.heartbeat : RECEIVERS.none,
          matchers: [eq("alertname", WATCHDOG_ALERT)],
          group_wait: "0s",
          group_interval: "1m",
          repeat_interval: "1m",
        },
        // InfoInhibitor only exists to inhibit info alerts; the chart's rule says to route it to a null receiver.
        { receiver: RECEIVERS.none, matchers: [eq("alertname", INFO_INHIBITOR_ALERT)] },
        // A failing canary gate goes to the on-call receiver, one notification per group and stage
        // (every failing gate in it), repeated hourly: the canary holds real traffic until stopped.
        {
          receiver: RECEIVERS.critical,
          matchers: [eq("alertname", CANARY_GATE_FAILED_ALERT)],
          group_by: [...GROUP_BY, "stage"],
          group_wait: "30s",
          repeat_interval: "1h",
        },
        // A page repeats every 4h while it fires (an acknowledged incident is PagerDuty's to hold).
        { receiver: RECEIVERS.critical, matchers: [eq("severity", "critical")], repeat_interval: "4h" },
        { receiver: RECEIVERS.warning, matchers: [eq("severity", "warning")] },
      ],
    },
    inhibit_rules: [
      // A critical silences the warning/info of the same alert in the same namespace and group
      // (kube-prometheus-stack's node and pod alerts come in warning + critical pairs).
      { source_matchers: [eq("severity", "critical")], target_matchers: ['severity =~ "warning|info"'], equal: [...GROUP_BY] },
      // Within one serving group a critical (target down, failures) explains its warnings
      // (queue time, latency): one page, no chat noise. Only for alerts that name a group:
      // `equal` treats a missing label as equal, which would let any critical silence everything.
      {
        source_matchers: [eq("severity", "critical"), `${TRITON_TARGET_LABELS.servingGroup} =~ ".+"`],
        target_matchers: [eq("severity", "warning"), `${TRITON_TARGET_LABELS.servingGroup} =~ ".+"`],
        equal: ["namespace", TRITON_TARGET_LABELS.servingGroup],
      },
      // The chart's InfoInhibitor mechanics (values.yaml 88.1.5 alertmanager.config.inhibit_rules).
      { source_matchers: [eq("alertname", INFO_INHIBITOR_ALERT)], target_matchers: [eq("severity", "info")], equal: ["namespace"] },
      { target_matchers: [eq("alertname", INFO_INHIBITOR_ALERT)] },
    ],
    receivers: [{ name: RECEIVERS.none }, receiver(RECEIVERS.critical, a, a.critical), receiver(RECEIVERS.warning, a, a.warning), ...heartbeat],
    templates: ["/etc/alertmanager/config/*.tmpl"],
  };
}

/** The secret settings that are set, by their key in the Secret (values as configured: the caller wraps them as secrets). */
export function alertmanagerSecretData(a: AlertingSettings): Record<string, string> {
  const out: Record<string, string> = {};
  if (a.pagerduty) out[SECRET_FILES.pagerdutyRoutingKey] = a.pagerduty.routingKey;
  if (a.slack) out[SECRET_FILES.slackApiUrl] = a.slack.apiUrl;
  if (a.webhook?.bearerToken !== undefined) out[SECRET_FILES.webhookBearerToken] = a.webhook.bearerToken;
  if (a.heartbeat?.bearerToken !== undefined) out[SECRET_FILES.heartbeatBearerToken] = a.heartbeat.bearerToken;
  return out;
}

/** Is there a receivers Secret to create (Alertmanager runs and some secret setting is set)? */
export function needsAlertmanagerSecret(a: AlertingSettings): boolean {
  return a.enabled && Object.keys(alertmanagerSecretData(a)).length > 0;
}

/** The receivers Secret; `data` values are pulumi secrets (index.ts wraps them), never plain strings in state. */
export function alertmanagerReceiversSecret(labels: Readonly<Record<string, string>>, data: Record<string, pulumi.Input<string>>) {
  return {
    metadata: { name: ALERTMANAGER_SECRET_NAME, namespace: MONITORING_NAMESPACE, labels: { ...labels } },
    type: "Opaque",
    stringData: data,
  };
}

/**
 * What the Alertmanager part of kube-prometheus-stack's values adds: the routing config and
 * the Secret mount. Deep-merged into `alertmanager` of the chart values by builders.ts.
 */
export function alertmanagerValues(a: AlertingSettings): Record<string, unknown> {
  if (!a.enabled) return {};
  return {
    config: alertmanagerConfig(a),
    ...(needsAlertmanagerSecret(a) ? { alertmanagerSpec: { secrets: [ALERTMANAGER_SECRET_NAME] } } : {}),
  };
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);

/** `base` with `extra` merged in: mappings merge key by key, anything else from `extra` (Helm's own rule for values). */
function mergeValues(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(extra)) out[k] = isObject(v) && isObject(out[k]) ? mergeValues(out[k], v) : v;
  return out;
}

/**
 * The kube-prometheus-stack release with the Alertmanager routing and Secret mount merged into
 * its `alertmanager` values (builders.ts builds the rest of the values).
 */
export function withAlertmanagerRouting(release: ReleaseArgs, a: AlertingSettings): ReleaseArgs {
  const values = release.values;
  // builders.ts passes plain data; an Output here would be a wiring bug, not a setting.
  if (!isObject(values)) throw new Error("withAlertmanagerRouting: the release's values must be plain data");
  const alertmanager = alertmanagerValues(a);
  if (Object.keys(alertmanager).length === 0) return release;
  return { ...release, values: mergeValues(values, { alertmanager }) };
}
