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
import { fixtureStack, ofType, planFixture, ROOT, SHAPES } from "./helpers";

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

function factFileMessage(chart: string, version: string): string {
  return (
    `no values file for chart ${chart} ${version} in ${CHARTS_DIR ?? "shared/reference/charts"}: derive the key paths of ${chart} at that version from the chart at its tag ` +
    `and add them as a fact file (key paths and types only; see that folder's README), or plan a version that is there`
  );
}

function loadYaml(file: string): Values {
  return (yaml.load(fs.readFileSync(file, "utf8")) ?? {}) as Values;
}

/** The chart's values file at a version, and its subcharts' (from Chart.yaml beside it), or an error saying what to add. */
function chartFiles(chart: string, version: string): ChartFiles {
  const dir = path.join(CHARTS_DIR ?? "", `${chart}-${version}`);
  if (!fs.existsSync(path.join(dir, "values.yaml"))) throw new Error(factFileMessage(chart, version));
  const subcharts: ChartFiles["subcharts"] = {};
  const chartYaml = path.join(dir, "Chart.yaml");
  if (fs.existsSync(chartYaml)) {
    const deps = (loadYaml(chartYaml).dependencies ?? []) as { name: string; version: string; alias?: string }[];
    for (const d of deps) {
      const file = path.join(CHARTS_DIR ?? "", `${d.name}-${d.version}`, "values.yaml");
      subcharts[d.alias ?? d.name] = { name: d.name, version: d.version, values: fs.existsSync(file) ? loadYaml(file) : null };
    }
  }
  return { values: loadYaml(path.join(dir, "values.yaml")), subcharts };
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
    compare(v, { ...sub.values, ...parentPart }, k, prefixed(FREE_FORM[sub.name] ?? {}, k), problems);
  }
  compare(own, files.values, "", FREE_FORM[chart] ?? {}, problems);
  return problems;
}

function prefixed(freeForm: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(freeForm).map(([p, why]) => [`${prefix}.${p}`, why]));
}

/** The Helm releases of the fixture stacks of every shape (staging's model repository is on EFS). */
async function plannedReleases(): Promise<{ shape: string; release: RecordedResource }[]> {
  const out: { shape: string; release: RecordedResource }[] = [];
  for (const shape of SHAPES) {
    const p = await planFixture(fixtureStack(shape));
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

  it("plans every chart the stack installs, the EFS CSI driver included (staging's backend)", () => {
    const charts = new Set(releases.map((r) => r.release.props.chart));
    for (const c of ["kube-prometheus-stack", "prometheus-adapter", "gpu-operator", "aws-efs-csi-driver"]) assert.ok(charts.has(c), c);
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
    });

    it("fails a version not in the folder with a message saying to add a fact file", () => {
      assert.throws(() => chartValueProblems("kube-prometheus-stack", "0.0.1", {}), /add them as a fact file/);
    });
  });
});
