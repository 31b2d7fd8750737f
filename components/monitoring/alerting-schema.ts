// The `monitoring.alerting` settings: Alertmanager on/off, its replicas, and the receivers
// alerts notify (PagerDuty, Slack, a generic webhook, a heartbeat for the Watchdog). Imported
// by schema.ts as the `alerting` key.
//
// Secrets (the PagerDuty routing key, the Slack webhook URL, bearer tokens) are `secure:`
// values of the stack file (`pulumi config set --secret --path ...`). They are validated as
// non-empty strings only: a rule on their format would print the value in its error
// (`<key> <rule>, got <value>`), and a secret must never reach a terminal or CI log.
import * as v from "valibot";
import { bool, doc, integer, list, oneOf, pattern, refined, secret as credential, section, str } from "../../lib/schema";

/** A secret setting: any non-empty string (no format rule, see above), marked a credential (lib/schema.ts secret()). */
const secret = (description: string) => credential(str("must be a non-empty string (a secure: value)"), description);

/** An http(s) URL that carries no credentials (those go in bearerToken, which is secret). */
const plainUrl = pattern(
  /^https?:\/\/[^\s/@?#]+(\/[^\s?#]*)?$/,
  "must be an http(s) URL without user:password@ or a query string (put credentials in bearerToken, a secure: value)",
);

/** Receivers a severity can notify; each is used when its section is set. */
export const RECEIVER_KINDS = ["pagerduty", "slack", "webhook"] as const;
export type ReceiverKind = (typeof RECEIVER_KINDS)[number];

const receiverList = (what: string) =>
  refined(list(oneOf(RECEIVER_KINDS)), (xs, ctx) => {
    if (new Set(xs).size !== xs.length) ctx.addIssue({ path: [], message: `must not repeat a receiver (${what})` });
  });

export const alertingSettings = section({
  enabled: doc(v.optional(bool(), true), "Run Alertmanager. Staging and prod keep it on (policy monitoring-alerting-in-prod)."),
  replicas: doc(v.optional(integer({ min: 1, max: 5 }), 1), "Alertmanager replicas, 1–5 (they gossip; 3 survive a node loss without double-paging)."),
  pagerduty: doc(
    v.optional(
      section({
        routingKey: secret(
          "PagerDuty Events API v2 integration (routing) key of the service to page; secure: (`pulumi config set --secret --path monitoring.alerting.pagerduty.routingKey`).",
        ),
      }),
    ),
    "PagerDuty receiver (Events API v2): the pager for critical alerts.",
  ),
  slack: doc(
    v.optional(
      section({
        apiUrl: secret(
          "Slack incoming-webhook URL (https://hooks.slack.com/services/...); secure: (`pulumi config set --secret --path monitoring.alerting.slack.apiUrl`).",
        ),
        channel: doc(
          pattern(/^[#@]?[a-z0-9._-]{1,80}$/, "must be a Slack channel name such as #ml-alerts (lower-case letters, digits, '.', '_', '-')"),
          "Slack channel the alerts are posted to, e.g. #ml-platform-alerts (the webhook's own channel when it ignores overrides).",
        ),
      }),
    ),
    "Slack receiver (incoming webhook): the chat channel for warnings.",
  ),
  webhook: doc(
    v.optional(
      section({
        url: doc(plainUrl, "URL Alertmanager POSTs its webhook JSON to (an incident tool or an in-cluster relay); not secret, so no credentials in it."),
        bearerToken: credential(
          v.optional(str("must be a non-empty string (a secure: value)")),
          "Bearer token sent as `Authorization: Bearer`; secure: (`pulumi config set --secret --path monitoring.alerting.webhook.bearerToken`).",
        ),
      }),
    ),
    "Generic webhook receiver (Alertmanager's webhook_config), e.g. Opsgenie/incident.io/an internal relay.",
  ),
  heartbeat: doc(
    v.optional(
      section({
        url: doc(plainUrl, "Dead-man's-switch URL pinged with every Watchdog notification (healthchecks-style); it alerts when the pings stop."),
        bearerToken: credential(
          v.optional(str("must be a non-empty string (a secure: value)")),
          "Bearer token of the heartbeat URL; secure: (`pulumi config set --secret --path monitoring.alerting.heartbeat.bearerToken`).",
        ),
      }),
    ),
    "Heartbeat receiver for the always-firing Watchdog alert: when Prometheus or Alertmanager dies, the pings stop and the service pages.",
  ),
  critical: doc(
    v.optional(receiverList("critical"), ["pagerduty", "webhook", "slack"]),
    "Receivers a critical alert notifies, those of them that are set (pagerduty, slack, webhook). Prod and staging need one (policy monitoring-critical-alerts-notify).",
  ),
  warning: doc(
    v.optional(receiverList("warning"), ["slack", "webhook"]),
    "Receivers a warning (and an info or unrouted) alert notifies, those of them that are set (pagerduty, slack, webhook).",
  ),
});

export type AlertingSettings = v.InferOutput<typeof alertingSettings>;
