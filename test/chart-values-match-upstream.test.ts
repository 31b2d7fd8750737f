// Every Helm release the stack plans sets only values its chart has. Helm ignores an unknown
// key silently, so a misspelt or moved key is a setting that does nothing: each key path of a
// release's values must exist in the chart's own values.yaml at the release's version (the
// upstream files in ../shared/reference/charts/<chart>-<version>/, see its README), with the
// same type. Subcharts (kube-prometheus-stack's grafana, kube-state-metrics and
// prometheus-node-exporter) are checked against their own files. Below a key the chart
// documents as free-form (a labels map, a Kubernetes or operator object passed through with
// toYaml) nothing is checked; those keys are listed here with the reason. Lists end a path:
// their items are the chart's pass-through objects (tolerations, scrape configs, rules).
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import * as yaml from "js-yaml";
import { KPS_CHART_LABELS } from "../components/upstream/kube-prometheus-stack";
import { ADAPTER_CHART_LABELS } from "../components/upstream/prometheus-adapter";
import { ENVIRONMENT_LABEL } from "../components/naming";
import type { RecordedResource } from "../tools/planner";
import { ofType, plan, ROOT, SHAPES } from "./helpers";

/**
 * The chart values files as published: shared/ sits beside the clone (CI), or beside the main
 * checkout when this is a git worktree of it. Absent (a clone on its own), the tests are pending.
 */
const CHARTS_DIR = ((): string | undefined => {
  const common = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: ROOT, encoding: "utf8" });
  const beside = [ROOT, ...(common.status === 0 ? [path.dirname(common.stdout.trim())] : [])];
  return beside.map((d) => path.join(d, "..", "shared", "reference", "charts")).find((d) => fs.existsSync(d));
})();

/** Per chart: key paths whose content the chart does not define, and why. */
const FREE_FORM: Record<string, Record<string, string>> = {
  "kube-prometheus-stack": {
    commonLabels: "a labels map the chart copies onto every object (values.yaml: 'Labels to apply to all resources')",
    "prometheus.prometheusSpec.resources": "a Kubernetes ResourceRequirements, copied into the Prometheus CR",
    "prometheus.prometheusSpec.storageSpec": "a prometheus-operator StorageSpec, copied into the Prometheus CR (values.yaml refs the operator's storage.md)",
    "alertmanager.alertmanagerSpec.storage": "a prometheus-operator StorageSpec, copied into the Alertmanager CR (values.yaml refs the operator's storage.md)",
  },
  "prometheus-adapter": {
    customLabels: "a labels map the chart adds to every object (values.yaml: 'Additional labels to add to all resources')",
  },
  "gpu-operator": {},
  "cluster-autoscaler": {
    affinity: "a Kubernetes Affinity, copied into the pod spec with toYaml (values.yaml: 'Affinity for pod assignment')",
    extraArgs: "a map the chart renders as --<key>=<value> flags of the autoscaler (templates/deployment.yaml range over extraArgs)",
    "rbac.serviceAccount.annotations": "an annotations map copied onto the ServiceAccount (values.yaml: 'Additional Service Account annotations')",
    resources: "a Kubernetes ResourceRequirements, copied into the container with toYaml",
  },
  "aws-efs-csi-driver": {},
  grafana: {},
  "kube-state-metrics": {},
  "prometheus-node-exporter": {},
};

type Values = Record<string, unknown>;

interface ChartFiles {
  /** The chart's values.yaml, parsed. */
  readonly values: Values;
  /** Subchart key (alias or name) → its values (null: the subchart's file is not in the folder). */
  readonly subcharts: Record<string, { name: string; version: string; values: Values | null }>;
}

/**
 * Fact files of chart versions the shared folder lacks: `test/chart-keys/<chart>-<version>.yaml`,
 * a map of key path → type (`prometheus.prometheusSpec.replicas: number`; types: map, list,
 * string, number, boolean, null), derived from the chart's values.yaml at its tag.
 */
const FACT_DIR = path.join(ROOT, "test", "chart-keys");
const TYPE_SKELETON: Record<string, () => unknown> = {
  map: () => ({}),
  list: () => [],
  string: () => "",
  number: () => 0,
  boolean: () => false,
  null: () => null,
};

function factFileMessage(chart: string, version: string): string {
  return (
    `no values file for chart ${chart} ${version} in ${CHARTS_DIR ?? "shared/reference/charts"}: derive the key paths of ${chart} at that version from the chart at its tag ` +
    `and add them as a fact file (key paths and types only; see that folder's README) at ${path.relative(ROOT, factFile(chart, version))}, or plan a version that is there`
  );
}

function factFile(chart: string, version: string): string {
  return path.join(FACT_DIR, `${chart}-${version}.yaml`);
}

/** A fact file's paths and types as a values-shaped skeleton the checker compares against. */
function skeleton(facts: Record<string, string>): Values {
  const root: Values = {};
  // Shorter paths first, so a map's entry exists before its keys are added.
  for (const [p, type] of Object.entries(facts).sort(([a], [b]) => a.split(".").length - b.split(".").length)) {
    const make = TYPE_SKELETON[type];
    if (!make) throw new Error(`${p}: unknown type ${JSON.stringify(type)} (types: ${Object.keys(TYPE_SKELETON).join(", ")})`);
    const keys = p.split(".");
    let at = root;
    for (const k of keys.slice(0, -1)) {
      if (!isMap(at[k])) at[k] = {};
      at = at[k] as Values;
    }
    at[keys[keys.length - 1]] = make();
  }
  return root;
}

function loadYaml(file: string): Values {
  return (yaml.load(fs.readFileSync(file, "utf8")) ?? {}) as Values;
}

/** A chart's values at a version: its values.yaml in the shared folder, else the project's fact file, else undefined. */
function valuesOf(chart: string, version: string): Values | undefined {
  const file = path.join(CHARTS_DIR ?? "", `${chart}-${version}`, "values.yaml");
  if (CHARTS_DIR !== undefined && fs.existsSync(file)) return loadYaml(file);
  if (fs.existsSync(factFile(chart, version))) return skeleton(loadYaml(factFile(chart, version)) as Record<string, string>);
  return undefined;
}

/** The chart's values file at a version, and its subcharts' (from Chart.yaml beside it), or an error saying what to add. */
function chartFiles(chart: string, version: string): ChartFiles {
  const values = valuesOf(chart, version);
  if (values === undefined) throw new Error(factFileMessage(chart, version));
  const subcharts: ChartFiles["subcharts"] = {};
  const chartYaml = path.join(CHARTS_DIR ?? "", `${chart}-${version}`, "Chart.yaml");
  if (CHARTS_DIR !== undefined && fs.existsSync(chartYaml)) {
    const deps = (loadYaml(chartYaml).dependencies ?? []) as { name: string; version: string; alias?: string }[];
    for (const d of deps) subcharts[d.alias ?? d.name] = { name: d.name, version: d.version, values: valuesOf(d.name, d.version) ?? null };
  }
  return { values, subcharts };
}

function typeOf(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return "list";
  return typeof v === "object" ? "map" : typeof v;
}

function isMap(v: unknown): v is Values {
  return typeOf(v) === "map";
}

/**
 * The problems of `set` (a release's values below `prefix`) against `ref` (the chart's values
 * at the same path). A key the chart leaves null (`key: ~`) takes any type.
 */
function compare(set: Values, ref: Values, prefix: string, freeForm: Record<string, string>, problems: string[]): void {
  for (const [k, v] of Object.entries(set)) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (p in freeForm) continue;
    if (!(k in ref)) {
      problems.push(`${p} is not a key of the chart (its values.yaml has ${Object.keys(ref).join(", ") || "no keys"} at ${prefix || "the top"})`);
      continue;
    }
    const want = typeOf(ref[k]);
    const got = typeOf(v);
    if (want === "null") continue;
    if (want !== got) {
      problems.push(`${p} is a ${got} here, but a ${want} in the chart (${JSON.stringify(ref[k])})`);
      continue;
    }
    if (got === "map") compare(v as Values, ref[k] as Values, p, freeForm, problems);
  }
}

/** Every problem of a release's values against its chart's files (throws when a file is missing). */
function chartValueProblems(chart: string, version: string, values: Values): string[] {
  const files = chartFiles(chart, version);
  const problems: string[] = [];
  const own: Values = {};
  for (const [k, v] of Object.entries(values)) {
    const sub = files.subcharts[k];
    if (sub === undefined || !isMap(v)) {
      own[k] = v;
      continue;
    }
    // A subchart's key: the parent's values.yaml may preset some of it (grafana.enabled, the
    // condition); everything else must be the subchart's own.
    const parentPart = isMap(files.values[k]) ? files.values[k] : {};
    if (sub.values === null) {
      const unknown: string[] = [];
      compare(v, parentPart, k, {}, unknown);
      if (unknown.length > 0) throw new Error(factFileMessage(sub.name, sub.version) + ` (values set: ${unknown.join("; ")})`);
      continue;
    }
    compare(v, deepMerge(sub.values, parentPart), k, prefixed(FREE_FORM[sub.name] ?? {}, k), problems);
  }
  compare(own, files.values, "", FREE_FORM[chart] ?? {}, problems);
  return problems;
}

/** `over` laid on `base`, maps merged key by key (how Helm merges a parent's subchart section into the subchart's values). */
function deepMerge(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isMap(v) && isMap(out[k]) ? deepMerge(out[k], v) : v;
  return out;
}

function prefixed(freeForm: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(freeForm).map(([p, why]) => [`${prefix}.${p}`, why]));
}

/** The Helm releases of the fixture stacks of every shape (staging's model repository is on EFS). */
async function plannedReleases(): Promise<{ shape: string; release: RecordedResource }[]> {
  const out: { shape: string; release: RecordedResource }[] = [];
  for (const shape of SHAPES) {
    const p = await plan(shape); // cached: the other tests plan the same shapes
    for (const r of ofType(p.resources, "kubernetes:helm.sh/v3:Release")) out.push({ shape, release: r });
  }
  return out;
}

describe("Helm values match the charts' values files", () => {
  let releases: { shape: string; release: RecordedResource }[];
  before(async function () {
    if (CHARTS_DIR === undefined) this.skip(); // no shared/ beside the clone: reported as pending
    this.timeout(120_000);
    releases = await plannedReleases();
  });

  it("plans every chart the stack installs, the EFS CSI driver (staging's backend) and the Cluster Autoscaler included", () => {
    const charts = new Set(releases.map((r) => r.release.props.chart));
    for (const c of ["kube-prometheus-stack", "prometheus-adapter", "gpu-operator", "aws-efs-csi-driver", "cluster-autoscaler"]) assert.ok(charts.has(c), c);
  });

  it("every key path a release sets exists in its chart's values.yaml with the same type", () => {
    const problems: string[] = [];
    for (const { shape, release } of releases) {
      const { chart, version, values } = release.props;
      for (const p of chartValueProblems(chart, version, values)) problems.push(`${shape}: ${release.name} (${chart} ${version}): ${p}`);
    }
    assert.deepEqual(problems, []);
  });

  it("every free-form key listed exists in its chart (a stale entry would hide a moved key)", () => {
    for (const { release } of releases) {
      const { chart, version } = release.props;
      const files = chartFiles(chart, version);
      for (const p of Object.keys(FREE_FORM[chart] ?? {})) {
        const v = p.split(".").reduce<unknown>((o, k) => (isMap(o) ? o[k] : undefined), files.values);
        assert.ok(v !== undefined, `${chart} ${version}: free-form ${p} is not in its values.yaml`);
      }
    }
  });

  it("sets no label the chart's own label helpers set (Helm keeps the chart's: managed-by: Helm)", () => {
    const owned: Record<string, { key: string; labels: readonly string[] }> = {
      "kube-prometheus-stack": { key: "commonLabels", labels: KPS_CHART_LABELS },
      "prometheus-adapter": { key: "customLabels", labels: ADAPTER_CHART_LABELS },
    };
    for (const { shape, release } of releases) {
      const o = owned[release.props.chart];
      if (!o) continue;
      const labels = release.props.values[o.key] as Record<string, string>;
      for (const k of o.labels) assert.ok(!(k in labels), `${shape}: ${release.props.chart} ${o.key}["${k}"]`);
      // The environment label stays: the monitoring policies read it from commonLabels.
      assert.equal(labels[ENVIRONMENT_LABEL], shape);
    }
  });

  describe("the checker", () => {
    const version = "88.1.5";
    it("reports a misspelt key, a moved key and a wrong type, naming the path", () => {
      const problems = chartValueProblems("kube-prometheus-stack", version, {
        prometheus: { prometheusSpec: { retentionSzie: "1GB", replicas: "2" } },
        alertmanager: { storageSpec: {} },
      });
      assert.equal(problems.length, 3, problems.join("\n"));
      assert.match(problems[0], /^prometheus\.prometheusSpec\.retentionSzie is not a key of the chart/);
      assert.match(problems[1], /^prometheus\.prometheusSpec\.replicas is a string here, but a number in the chart/);
      assert.match(problems[2], /^alertmanager\.storageSpec is not a key of the chart/);
    });

    it("checks a subchart's keys against the subchart's own file, and skips free-form keys", () => {
      assert.deepEqual(chartValueProblems("kube-prometheus-stack", version, { grafana: { enabled: true, admin: { existingSecret: "s" } } }), []);
      assert.match(
        chartValueProblems("kube-prometheus-stack", version, { grafana: { admin: { existingSecrets: "s" } } })[0],
        /^grafana\.admin\.existingSecrets/,
      );
      assert.deepEqual(chartValueProblems("kube-prometheus-stack", version, { commonLabels: { anything: "x" } }), []);
      // The parent presets grafana.sidecar.dashboards; a key only the grafana chart has there is still found (deep merge).
      assert.deepEqual(chartValueProblems("kube-prometheus-stack", version, { grafana: { sidecar: { dashboards: { watchMethod: "WATCH" } } } }), []);
      assert.match(
        chartValueProblems("kube-prometheus-stack", version, { grafana: { sidecar: { dashboards: { watchMethods: "WATCH" } } } })[0],
        /watchMethods/,
      );
    });

    it("reads a fact file's key paths and types as the chart's values", () => {
      assert.deepEqual(skeleton({ "a.b": "number", a: "map", "a.c": "list", d: "string" }), { a: { b: 0, c: [] }, d: "" });
      assert.throws(() => skeleton({ a: "int" }), /a: unknown type "int"/);
    });

    it("fails a version not in the folder with a message saying to add a fact file", () => {
      assert.throws(
        () => chartValueProblems("kube-prometheus-stack", "0.0.1", {}),
        /no values file for chart kube-prometheus-stack 0\.0\.1 .*add them as a fact file .* at test\/chart-keys\/kube-prometheus-stack-0\.0\.1\.yaml/,
      );
    });
  });
});
