// The canary stop: when a release gate fails, the canary's traffic share and mirror drop to
// zero within minutes, without a pull request and without restarting the gateway.
//
// What runs, where, with which permissions:
//   - Envoy (the gateway pods) reads a runtime layer from a file (an RTDS layer whose ConfigSource
//     is a path, config/core/v3/config_source.proto PathConfigSource) in the ConfigMap
//     triton-gateway-canary-stop, mounted as a directory; `watched_directory` on that directory
//     makes Envoy reload the file when the kubelet swaps the volume's ..data link, which is how
//     a ConfigMap update reaches a running pod (the proto's own Kubernetes example). Every route
//     reads its canary share (match.runtime_fraction) and its mirror
//     (request_mirror_policies[].runtime_fraction) under runtime keys; the layer sets those keys.
//   - A CronJob in the gateway's namespace, every minute, runs one POSIX sh script in the curl
//     project's image: it asks Prometheus (the prometheus-operated Service) for the firing
//     CanaryGateFailed alerts, takes their `serving_group` label, and merges those groups into the stop
//     layer, both keys at 0 (never removes one: a stop stays until a person lifts it).
//   - Its ServiceAccount may get and patch that one ConfigMap (a namespaced Role with
//     resourceNames), nothing else; it talks to the API server with a projected token (10 min,
//     renewed by the kubelet) mounted in its one container, no automounted token.
//   - `pulumi up` creates the ConfigMap with an empty layer and ignores changes to its data
//     afterwards (ignoreChanges), so no deploy undoes a stop.
// The contract with the gate alerts (GATE_ALERT, from components/contracts.ts): the monitoring's
// CanaryGateFailed alert, one per failing gate on enough traffic, labelled serving_group.
import type * as k8s from "@pulumi/kubernetes";
import { CANARY_GATE_FAILED_ALERT, MONITORING_NAMESPACE, SERVING_GROUP_LABEL } from "../contracts";
import { CURL_GID, CURL_IMAGE, CURL_UID } from "../upstream/curl";
import { TYPE_URL, type RuntimeDiscoveryResponse, type RuntimeLayer } from "../upstream/envoy";
import { restrictedSecurityContext } from "../security-context";

/** Runtime key prefix for mirror fractions: `<prefix>.<group>` (the stop layer, or the admin layer, override it). */
export const MIRROR_RUNTIME_PREFIX = "triton_gateway.mirror";
/** Runtime key prefix for the canary's share of real traffic: `<prefix>.<group>`. */
export const CANARY_TRAFFIC_RUNTIME_PREFIX = "triton_gateway.canary_traffic";

/** Name of the stop ConfigMap, its CronJob, ServiceAccount, Role and RoleBinding (fixed: the Role names it). */
export const CANARY_STOP_NAME = "triton-gateway-canary-stop";
/** The ConfigMap's key: the runtime layer as a DiscoveryResponse (JSON, read by its .json extension). */
export const CANARY_STOP_FILE = "canary-stop.json";
/** Where the gateway pods mount the stop ConfigMap (a directory, never subPath: subPath mounts are not updated). */
export const CANARY_STOP_DIR = "/etc/envoy-canary-stop";
/** The Runtime resource's name, and the layer's in Envoy's /runtime output. */
export const CANARY_STOP_LAYER = "canary-stop";
/** The alert that stops a canary (the monitoring's gate-failure alert) and the label that names its serving group. */
export const GATE_ALERT = { alertname: CANARY_GATE_FAILED_ALERT, group: SERVING_GROUP_LABEL } as const;
/** The PromQL the stop job evaluates: the firing gate-failure alerts (Prometheus' ALERTS series). */
export const GATE_FAILURE_QUERY = `ALERTS{alertstate="firing",alertname="${GATE_ALERT.alertname}"}`;
/** The Prometheus the stop job asks: the prometheus-operator's governing Service of every Prometheus (port web, 9090). */
export function prometheusUrl(clusterDomain: string): string {
  return `http://prometheus-operated.${MONITORING_NAMESPACE}.svc.${clusterDomain}:9090`;
}
/** Where the stop job's container finds its projected API token and the cluster CA. */
export const CANARY_STOP_TOKEN_DIR = "/var/run/secrets/canary-stop";
/** The verbs the stop job's Role grants on its one ConfigMap. */
export const CANARY_STOP_VERBS = ["get", "patch"] as const;

/** The runtime keys that stop a group's canary: its mirror and its share of real traffic, at 0. */
export function canaryStopKeys(group: string): string[] {
  return [`${MIRROR_RUNTIME_PREFIX}.${group}`, `${CANARY_TRAFFIC_RUNTIME_PREFIX}.${group}`];
}

/** The runtime layer with `stopped` groups' canaries at zero, as the file Envoy reads (what the job writes has the same shape). */
export function canaryStopDocument(stopped: readonly string[], version = "0"): RuntimeDiscoveryResponse {
  const layer = Object.fromEntries(stopped.flatMap((g) => canaryStopKeys(g).map((k) => [k, 0] as const)));
  return { version_info: version, resources: [{ "@type": TYPE_URL.runtime, name: CANARY_STOP_LAYER, layer }] };
}

/** The bootstrap's runtime layer over the stop ConfigMap. */
export function canaryStopRuntimeLayer(): RuntimeLayer {
  return {
    name: CANARY_STOP_LAYER,
    rtds_layer: {
      name: CANARY_STOP_LAYER,
      rtds_config: {
        path_config_source: { path: `${CANARY_STOP_DIR}/${CANARY_STOP_FILE}`, watched_directory: { path: CANARY_STOP_DIR } },
        resource_api_version: "V3",
      },
    },
  };
}

/**
 * The stop job's script (POSIX sh with busybox's grep and sed, and curl). Environment:
 * PROMETHEUS_URL, NAMESPACE, CONFIGMAP, GROUPS (the gateway's canary groups, space separated:
 * only they are ever stopped), KUBERNETES_API (default the in-cluster API), SA_DIR (default the
 * mounted ServiceAccount token). Exit 0: nothing to do or the layer was written; non-zero: a
 * query or the patch failed (the Job fails and the next minute's run tries again).
 */
export function canaryStopScript(): string {
  const keyOf = (prefix: string) => prefix.replace(/\./g, "\\.");
  return [
    "set -eu",
    'API="${KUBERNETES_API:-https://kubernetes.default.svc}"',
    'SA="${SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}"',
    'TOKEN="$(cat "$SA/token")"',
    'CM_URL="$API/api/v1/namespaces/$NAMESPACE/configmaps/$CONFIGMAP"',
    // Group names are DNS labels: [a-z0-9-] is all a name can hold, so nothing else is taken from a label.
    `alerts="$(curl -sS --fail --max-time 20 -G "$PROMETHEUS_URL/api/v1/query" --data-urlencode 'query=${GATE_FAILURE_QUERY}')"`,
    `failing="$(printf '%s' "$alerts" | grep -o '"${GATE_ALERT.group}":"[a-z0-9-]*"' | sed 's/^"${GATE_ALERT.group}":"//; s/"$//' || true)"`,
    'current="$(curl -sS --fail --max-time 20 --cacert "$SA/ca.crt" -H "Authorization: Bearer $TOKEN" "$CM_URL")"',
    `stopped="$(printf '%s' "$current" | grep -o '${keyOf(CANARY_TRAFFIC_RUNTIME_PREFIX)}\\.[a-z0-9-]*' | sed 's/^${keyOf(CANARY_TRAFFIC_RUNTIME_PREFIX)}\\.//' || true)"`,
    'want=""; had=""',
    "for g in $GROUPS; do",
    '  if printf \'%s\\n\' $stopped | grep -qx -- "$g"; then had="$had $g"; want="$want $g"',
    '  elif printf \'%s\\n\' $failing | grep -qx -- "$g"; then want="$want $g"; echo "stopping the canary of group $g: a gate alert fires"; fi',
    "done",
    'if [ "$want" = "$had" ]; then echo "no change (stopped:${had:- none})"; exit 0; fi',
    'layer=""',
    `for g in $want; do layer="$layer\${layer:+,}\\"${MIRROR_RUNTIME_PREFIX}.$g\\":0,\\"${CANARY_TRAFFIC_RUNTIME_PREFIX}.$g\\":0"; done`,
    `doc="{\\"version_info\\":\\"$(date -u +%Y%m%dT%H%M%SZ)\\",\\"resources\\":[{\\"@type\\":\\"${TYPE_URL.runtime}\\",\\"name\\":\\"${CANARY_STOP_LAYER}\\",\\"layer\\":{$layer}}]}"`,
    `patch="{\\"data\\":{\\"${CANARY_STOP_FILE}\\":\\"$(printf '%s' "$doc" | sed 's/"/\\\\"/g')\\"}}"`,
    'curl -sS --fail --max-time 20 --cacert "$SA/ca.crt" -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/merge-patch+json" -X PATCH --data-binary "$patch" "$CM_URL" >/dev/null',
    'echo "stopped:$want"',
  ].join("\n");
}

export interface CanaryStopArgs {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly clusterDomain: string;
  /** The gateway's groups with a canary: only their keys are ever written. */
  readonly canaryGroups: readonly string[];
}

function meta(a: CanaryStopArgs, name = CANARY_STOP_NAME) {
  return { name, namespace: a.namespace, labels: { ...a.labels, ...CANARY_STOP_POD_LABELS } };
}
/** Labels of the stop job's pods. */
export const CANARY_STOP_POD_LABELS = { "app.kubernetes.io/name": CANARY_STOP_NAME, "app.kubernetes.io/component": "canary-stop" } as const;

/** The stop ConfigMap as created: no group stopped. Its data is the job's afterwards (the component sets ignoreChanges). */
export function canaryStopConfigMap(a: CanaryStopArgs): k8s.types.input.core.v1.ConfigMap {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: meta(a), data: { [CANARY_STOP_FILE]: JSON.stringify(canaryStopDocument([])) } };
}

export function canaryStopServiceAccount(a: CanaryStopArgs): k8s.types.input.core.v1.ServiceAccount {
  return { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(a) };
}

/** Get and patch the stop ConfigMap, by name, in its namespace: nothing else. */
export function canaryStopRole(a: CanaryStopArgs): k8s.types.input.rbac.v1.Role {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: meta(a),
    rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [CANARY_STOP_NAME], verbs: [...CANARY_STOP_VERBS] }],
  };
}

export function canaryStopRoleBinding(a: CanaryStopArgs): k8s.types.input.rbac.v1.RoleBinding {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: meta(a),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: CANARY_STOP_NAME },
    subjects: [{ kind: "ServiceAccount", name: CANARY_STOP_NAME, namespace: a.namespace }],
  };
}

/** Every minute; one run at a time; a run that cannot finish in 50 s gives way to the next. */
export function canaryStopCronJob(a: CanaryStopArgs): k8s.types.input.batch.v1.CronJob {
  const security = restrictedSecurityContext({ uid: CURL_UID, gid: CURL_GID });
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: meta(a),
    spec: {
      schedule: "* * * * *",
      concurrencyPolicy: "Forbid",
      startingDeadlineSeconds: 50,
      successfulJobsHistoryLimit: 1,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: 50,
          ttlSecondsAfterFinished: 600,
          template: {
            metadata: { labels: { ...a.labels, ...CANARY_STOP_POD_LABELS } },
            spec: {
              serviceAccountName: CANARY_STOP_NAME,
              // No automounted token: the one container that calls the API server gets an explicit,
              // short-lived projected token (and the cluster CA) in its own volume, nothing else does.
              automountServiceAccountToken: false,
              restartPolicy: "Never",
              securityContext: security.pod,
              containers: [
                {
                  name: "canary-stop",
                  image: `${CURL_IMAGE.repository}:${CURL_IMAGE.tag}`,
                  command: ["/bin/sh", "-c", canaryStopScript()],
                  env: [
                    { name: "PROMETHEUS_URL", value: prometheusUrl(a.clusterDomain) },
                    { name: "NAMESPACE", value: a.namespace },
                    { name: "CONFIGMAP", value: CANARY_STOP_NAME },
                    { name: "GROUPS", value: a.canaryGroups.join(" ") },
                    { name: "SA_DIR", value: CANARY_STOP_TOKEN_DIR },
                  ],
                  volumeMounts: [{ name: "api-token", mountPath: CANARY_STOP_TOKEN_DIR, readOnly: true }],
                  resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "32Mi" } },
                  securityContext: security.container,
                },
              ],
              volumes: [
                {
                  name: "api-token",
                  projected: {
                    sources: [
                      // The kubelet renews it; 600 s is the shortest expiry the API server accepts.
                      { serviceAccountToken: { path: "token", expirationSeconds: 600 } },
                      // Published in every namespace by the API server's root CA publisher (kube-root-ca.crt).
                      { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                    ],
                  },
                },
              ],
            },
          },
        },
      },
    },
  };
}
