// Rules about credentials in the places they must never be: Helm values (kept in every release's
// history Secret, readable with `helm get values`), plaintext Secrets and ConfigMaps, and
// container env. Values are never echoed: messages show "(hidden)".
import { STATIC_AWS_CREDENTIAL_ENV } from "../../components/upstream/aws-iam";
import { containersOf, metadataOf, podSpecsOf, propsOf } from "./props";
import type { PolicyResource } from "@pulumi/policy";
import { NONE, resourceRule, stackRule, type Finding, type Resource, type Rule } from "./rule";
import { HELM_RELEASE } from "./types";
import { isK8sObject, isWorkload, namespaceOf, objectNameOf } from "./util";

const HIDDEN = "(hidden)";
/** Key names (lower-cased, without - _ .) that hold a credential. */
const CREDENTIAL_KEY = /(password|passwd|secretkey|secretaccesskey|accesskeyid|sessiontoken|token|apikey|privatekey|clientsecret)$/;
const normalKey = (k: string) => k.toLowerCase().replace(/[-_.]/g, "");
/** Values that reference a credential instead of holding one (Grafana's $__file{} / $__env{}, shell-style ${VAR}). */
const REFERENCE = /^\$(__file|__env|__vault)?\{.*\}$/;
const isLiteral = (v: unknown): boolean => (typeof v === "string" && v !== "" && !REFERENCE.test(v.trim())) || typeof v === "number";

/** Every (path, value) of a JSON-like value whose key reads as a credential and whose value is a literal. */
function credentialLiterals(v: unknown, at: string, out: { path: string }[] = []): { path: string }[] {
  if (Array.isArray(v)) v.forEach((x, i) => credentialLiterals(x, `${at}[${i}]`, out));
  else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      const path = /^[A-Za-z_][\w]*$/.test(k) ? `${at}.${k}` : `${at}["${k}"]`;
      if (CREDENTIAL_KEY.test(normalKey(k)) && isLiteral(x)) out.push({ path });
      else credentialLiterals(x, path, out);
    }
  }
  return out;
}

const GRAFANA_CHARTS = ["grafana", "kube-prometheus-stack"];
const ELEVATED_ROLES = ["admin", "editor"];

export const helmValuesNoCredentials = resourceRule({
  name: "helm-values-no-credentials",
  domain: "secrets",
  description:
    "No Helm release's values hold a credential literal (any key named like a password, token, secret or access key, e.g. grafana.adminPassword, " +
    "grafana.ini security.admin_password); Grafana takes its admin from a Secret (admin.existingSecret) and gives anonymous users no Admin/Editor role.",
  prevents:
    "A known or leaked admin password on a Grafana that reads every production metric (committed to git, kept in Helm history), and anyone " +
    "on the network administering Grafana anonymously.",
  remediationSteps:
    "Create the Secret from a @pulumi/random RandomPassword and set grafana.admin.existingSecret/userKey/passwordKey " +
    "(components/upstream/kube-prometheus-stack.ts); reference other credentials with existingSecret-style keys or $__file{}; keep " +
    'grafana.ini["auth.anonymous"] disabled or at org_role Viewer.',
  check: (r) => {
    const release = propsOf(r, HELM_RELEASE);
    if (!release) return NONE;
    const values = release.values ?? {};
    const out: Finding[] = credentialLiterals(values, "values").map(({ path }) => ({
      path,
      value: HIDDEN,
      message: `Helm release ${r.name} (chart ${release.chart}): ${path} is a literal credential (value hidden); reference a Secret instead`,
    }));
    if (GRAFANA_CHARTS.includes(release.chart as string)) {
      const [grafana, at] = release.chart === "grafana" ? [values, "values"] : [values.grafana ?? {}, "values.grafana"];
      if (grafana.enabled !== false) {
        const existing = grafana.admin?.existingSecret;
        if (typeof existing !== "string" || existing === "")
          out.push({
            path: `${at}.admin.existingSecret`,
            value: existing,
            message: `Helm release ${r.name}: ${at}.admin.existingSecret is ${JSON.stringify(existing ?? null)}; without it Grafana uses a values or chart-default password`,
          });
        const anonymous = grafana["grafana.ini"]?.["auth.anonymous"] ?? {};
        const role = String(anonymous.org_role ?? "Viewer");
        if (String(anonymous.enabled).toLowerCase() === "true" && ELEVATED_ROLES.includes(role.toLowerCase())) {
          const path = `${at}["grafana.ini"]["auth.anonymous"].org_role`;
          out.push({
            path,
            value: anonymous.org_role,
            message: `Helm release ${r.name}: ${path} is ${JSON.stringify(anonymous.org_role)} with anonymous access enabled`,
          });
        }
      }
    }
    return out;
  },
});

const STATIC_KEYS: readonly string[] = STATIC_AWS_CREDENTIAL_ENV;
/** An AWS access key id (long-term AKIA, temporary ASIA). */
const ACCESS_KEY_ID = /\b(AKIA|ASIA)[A-Z0-9]{16}\b/;
const ENV_CREDENTIAL = /(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)$/i;

const decoded = (v: unknown, base64: boolean): string => {
  if (typeof v !== "string") return "";
  return base64 ? Buffer.from(v, "base64").toString("utf8") : v;
};

export const noPlaintextCredentials = resourceRule({
  name: "no-plaintext-credentials",
  domain: "secrets",
  description:
    "No container env sets AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN (pods use IRSA) or a credential-named variable to a literal; " +
    "no Secret or ConfigMap holds AWS access keys (by key name or an AKIA/ASIA key id in its data), and no ConfigMap holds a credential-named key.",
  prevents: "Long-lived access keys and passwords copied into manifests, Secrets and env, where they leak, never rotate and outlive the pod that needed them.",
  remediationSteps:
    "Remove the keys; run the pod as the ServiceAccount annotated with eks.amazonaws.com/role-arn (ModelRepositoryBinding.serviceAccountName); " +
    "take other credentials from a Secret with valueFrom.secretKeyRef, generated by the stack (RandomPassword).",
  check: (r: Resource) => {
    if (!isK8sObject(r.type, r.props)) return NONE;
    const kind = (r.props as { kind?: string }).kind;
    const name = `${kind} ${metadataOf(r).name ?? r.name}`;
    const out: Finding[] = [];
    if (isWorkload(r)) {
      for (const { spec, path } of podSpecsOf(r)) {
        for (const { c, path: cp } of containersOf(spec, path)) {
          (c.env ?? []).forEach((e, j) => {
            const at = `${cp}.env[${j}]`;
            if (STATIC_KEYS.includes(e?.name as string))
              out.push({ path: `${at}.name`, value: e.name, message: `${name}: ${at}.name (container ${c.name}) is ${e.name}` });
            else if (ENV_CREDENTIAL.test(String(e?.name)) && isLiteral(e?.value))
              out.push({
                path: `${at}.value`,
                value: HIDDEN,
                message: `${name}: ${at}.value (container ${c.name}, ${e.name}) is a literal credential (value hidden)`,
              });
          });
        }
      }
      return out;
    }
    if (kind !== "Secret" && kind !== "ConfigMap") return NONE;
    const p = r.props as { data?: Record<string, unknown>; stringData?: Record<string, unknown>; binaryData?: Record<string, unknown> };
    for (const [field, base64] of [
      ["stringData", false],
      ["data", kind === "Secret"],
    ] as const) {
      for (const [k, v] of Object.entries(p[field] ?? {})) {
        const at = `${field}["${k}"]`;
        const text = decoded(v, base64);
        const awsKey =
          STATIC_KEYS.includes(k.toUpperCase()) ||
          /aws_(access_key_id|secret_access_key|session_token)/i.test(text) ||
          ACCESS_KEY_ID.test(text) ||
          /^(aws)?(secretaccesskey|accesskeyid|secretkey|accesskey|sessiontoken)$/.test(normalKey(k));
        if (awsKey) out.push({ path: at, value: HIDDEN, message: `${name}: ${at} holds AWS access keys (value hidden); pods get AWS access through IRSA` });
        else if (kind === "ConfigMap" && CREDENTIAL_KEY.test(normalKey(k)) && isLiteral(v))
          out.push({ path: at, value: HIDDEN, message: `${name}: ${at} is a credential in a ConfigMap (value hidden); ConfigMaps are not secret` });
      }
    }
    return out;
  },
});

/** A key or file name that holds an AWS access key: aws_access_key_id, AWS_SECRET_ACCESS_KEY, secretAccessKey, session-token, ... */
const isAwsKeyName = (name: string): boolean => /^(aws)?(secretaccesskey|accesskeyid|secretkey|accesskey|sessiontoken)$/.test(normalKey(name));
/** A file path the AWS SDKs and CLI read static keys from: the shared credentials file (~/.aws/credentials). */
const isAwsCredentialsFile = (path: string): boolean => /(^|\/)\.aws\/credentials$/.test(path);

type KeyRef = { readonly key?: string; readonly path?: string };
type ObjectRef = { readonly name?: string; readonly items?: readonly KeyRef[] };

/** Keys of the Secrets and ConfigMaps of the stack, by kind, namespace and name (what envFrom and volumes expand). */
function objectKeys(resources: readonly PolicyResource[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of resources) {
    if (!isK8sObject(r.type, r.props)) continue;
    const kind = (r.props as { kind?: string }).kind;
    if (kind !== "Secret" && kind !== "ConfigMap") continue;
    const p = r.props as { data?: object; stringData?: object; binaryData?: object };
    const keys = [...Object.keys(p.data ?? {}), ...Object.keys(kind === "Secret" ? (p.stringData ?? {}) : (p.binaryData ?? {}))];
    out.set(JSON.stringify([kind, namespaceOf(r), objectNameOf(r)]), keys);
  }
  return out;
}

export const awsKeysNeverReachContainers = stackRule({
  name: "aws-keys-never-reach-containers",
  domain: "secrets",
  description:
    "No container receives static AWS keys through a Secret or ConfigMap: no envFrom (secretRef or configMapRef, with its prefix) yields " +
    "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN from the object's keys, and no mounted secret, configMap or projected volume " +
    "puts a file named like an AWS key (aws_secret_access_key, accessKeyId, ...) or an .aws/credentials file in a container.",
  prevents:
    "Long-lived access keys handed to pods through a Secret the manifest only names (envFrom, a mounted credentials file), past the env checks: " +
    "they leak, never rotate, and override IRSA in the AWS SDKs' credential chain.",
  remediationSteps:
    "Remove the envFrom or volume; run the pod as the ServiceAccount annotated with eks.amazonaws.com/role-arn (ModelRepositoryBinding.serviceAccountName).",
  check: (resources) => {
    const keysOf = objectKeys(resources);
    const out: Finding[] = [];
    for (const r of resources) {
      if (!isWorkload(r)) continue;
      const ns = namespaceOf(r);
      const name = `${(r.props as { kind?: string }).kind} ${ns}/${objectNameOf(r)}`;
      const keys = (kind: "Secret" | "ConfigMap", object: string | undefined) => keysOf.get(JSON.stringify([kind, ns, object])) ?? [];
      const push = (path: string, value: unknown, why: string) => out.push({ path, value, message: `${name}: ${path} ${why}`, urn: r.urn });
      for (const { spec, path } of podSpecsOf(r)) {
        const containers = containersOf(spec, path);
        // envFrom: every key of the object becomes a variable, named prefix + key (Kubernetes skips keys that are not valid names).
        for (const { c, path: cp } of containers) {
          (c.envFrom ?? []).forEach((e, i) => {
            const [kind, ref] = e?.secretRef ? (["Secret", e.secretRef] as const) : (["ConfigMap", e?.configMapRef] as const);
            const names = keys(kind, ref?.name).map((k) => `${e?.prefix ?? ""}${k}`);
            const bad = names.filter((n) => STATIC_KEYS.includes(n));
            if (bad.length)
              push(
                `${cp}.envFrom[${i}]`,
                { prefix: e?.prefix, [kind === "Secret" ? "secretRef" : "configMapRef"]: ref?.name },
                `(container ${c.name}) sets ${bad.join(", ")} from ${kind} ${ref?.name}`,
              );
          });
        }
        // Volumes mounted by some container: the files their items (or, without items, the object's keys) create.
        const mounts = containers.flatMap(({ c }) => c.volumeMounts ?? []);
        (spec?.volumes ?? []).forEach((v, i) => {
          const at = `${path}.volumes[${i}]`;
          const mountedAt = mounts.filter((m) => m.name === v.name);
          if (mountedAt.length === 0) return;
          // Where a file of the volume lands in a container: below mountPath, or (subPath) only the files at and under subPath.
          const placed = (file: string): string[] =>
            mountedAt.flatMap((m) => {
              const root = String(m.mountPath ?? "").replace(/\/+$/, "");
              if (!m.subPath) return [`${root}/${file}`];
              const sub = String(m.subPath).replace(/\/+$/, "");
              return file === sub ? [root] : file.startsWith(`${sub}/`) ? [`${root}/${file.slice(sub.length + 1)}`] : [];
            });
          const sources: { kind: "Secret" | "ConfigMap"; ref: ObjectRef | undefined; at: string }[] = [];
          if (v.secret) sources.push({ kind: "Secret", ref: { name: v.secret.secretName, items: v.secret.items }, at: `${at}.secret` });
          if (v.configMap) sources.push({ kind: "ConfigMap", ref: v.configMap, at: `${at}.configMap` });
          (v.projected?.sources ?? []).forEach((src, j) => {
            if (src.secret) sources.push({ kind: "Secret", ref: src.secret, at: `${at}.projected.sources[${j}].secret` });
            if (src.configMap) sources.push({ kind: "ConfigMap", ref: src.configMap, at: `${at}.projected.sources[${j}].configMap` });
          });
          for (const { kind, ref, at: sourceAt } of sources) {
            const files: { path: string; key: string; at: string }[] = ref?.items?.length
              ? ref.items.map((item, k) => ({ path: String(item.path ?? item.key), key: String(item.key), at: `${sourceAt}.items[${k}]` }))
              : keys(kind, ref?.name).map((k) => ({ path: k, key: k, at: sourceAt }));
            for (const f of files) {
              const full = placed(f.path);
              if (full.length === 0) continue;
              if (full.some((p) => isAwsKeyName(p.split("/").pop() ?? p) || isAwsCredentialsFile(p)) || isAwsKeyName(f.key))
                push(f.at, { key: f.key, path: f.path }, `mounts ${kind} ${ref?.name} key ${f.key} as ${full.join(", ")}: a static AWS credential file`);
            }
          }
        });
      }
    }
    return out;
  },
});

/** The rules of this domain, in the order the pack serves them (every Rule this file exports: test/policy-layout.test.ts). */
export const rules: readonly Rule[] = [helmValuesNoCredentials, noPlaintextCredentials, awsKeysNeverReachContainers];
