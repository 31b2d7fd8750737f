// dcgm-exporter's label names follow the GPU Operator release that ships it: the table in
// components/upstream/dcgm.ts is keyed by operator chart version, and the dashboards and alerts
// take their node label from the configured gpu.operator.version. These tests fail when an
// operator bump changes the exporter (and so the labels) without the table knowing.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import * as yaml from "js-yaml";
import { DCGM_EXPORTER_BY_OPERATOR, dcgmLabels } from "../components/upstream/dcgm";
import { ofType, plan, ROOT } from "./helpers";

/** shared/reference/charts beside the clone (CI) or beside the main checkout of this worktree; absent: pending. */
const CHARTS_DIR = ((): string | undefined => {
  const common = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: ROOT, encoding: "utf8" });
  const beside = [ROOT, ...(common.status === 0 ? [path.dirname(common.stdout.trim())] : [])];
  return beside.map((d) => path.join(d, "..", "shared", "reference", "charts")).find((d) => fs.existsSync(d));
})();

/**
 * The node label an exporter release writes: `Hostname` up to 4.5.3-4.8.2, `hostname` after
 * (NVIDIA/dcgm-exporter commit d5e5f51 "Rename Hostname label to hostname (#655)", the first
 * commit after tag 4.5.3-4.8.2). Exporter versions are `<exporter>-<DCGM>[-variant]`.
 */
function hostnameLabelOf(exporterVersion: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)-/.exec(exporterVersion);
  assert.ok(m, `dcgm-exporter version ${exporterVersion}`);
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  const lastWithCapital = [4, 5, 3];
  const cmp = v.map((x, i) => x - lastWithCapital[i]).find((d) => d !== 0) ?? 0;
  return cmp <= 0 ? "Hostname" : "hostname";
}

describe("dcgm-exporter labels follow the pinned GPU Operator version", () => {
  it("knows the exporter each operator release ships, as that chart's values.yaml pins it", function () {
    if (CHARTS_DIR === undefined) this.skip(); // shared/ sits beside the clone in CI
    const charts = fs.readdirSync(CHARTS_DIR).filter((d) => d.startsWith("gpu-operator-"));
    assert.ok(charts.length >= 2, charts.join(", "));
    for (const dir of charts) {
      const version = dir.slice("gpu-operator-".length);
      const values = yaml.load(fs.readFileSync(path.join(CHARTS_DIR, dir, "values.yaml"), "utf8")) as { dcgmExporter: { version: string } };
      const row = DCGM_EXPORTER_BY_OPERATOR[version];
      assert.ok(row, `GPU Operator ${version} (shared/reference/charts/${dir}) has no row in DCGM_EXPORTER_BY_OPERATOR`);
      assert.equal(row.exporterVersion, values.dcgmExporter.version, `GPU Operator ${version} ships dcgm-exporter ${values.dcgmExporter.version}`);
    }
  });

  it("spells the node label as the exporter release of each row writes it", () => {
    for (const [operator, row] of Object.entries(DCGM_EXPORTER_BY_OPERATOR)) {
      assert.equal(row.hostnameLabel, hostnameLabelOf(row.exporterVersion), `GPU Operator ${operator} (dcgm-exporter ${row.exporterVersion})`);
      assert.equal(dcgmLabels(operator)?.hostname, row.hostnameLabel);
    }
    // The rule itself, on both sides of the rename.
    assert.equal(hostnameLabelOf("4.4.2-4.7.0-distroless"), "Hostname");
    assert.equal(hostnameLabelOf("4.5.3-4.8.2-ubuntu22.04"), "Hostname");
    assert.equal(hostnameLabelOf("4.6.0-4.8.3-distroless"), "hostname");
    assert.equal(dcgmLabels("v99.0.0"), undefined, "an unknown operator version has no label names");
  });

  it("draws each stack's GPU dashboard with the node label of the operator version it pins", async () => {
    for (const stack of ["dev", "prod"]) {
      const p = await plan(stack);
      const operator = ofType(p.resources, "kubernetes:helm.sh/v3:Release").find((r) => r.props.chart === "gpu-operator")!;
      const label = dcgmLabels(operator.props.version)?.hostname;
      assert.ok(label, `${stack}: GPU Operator ${operator.props.version} is in the table`);
      const other = label === "Hostname" ? "hostname" : "Hostname";
      const cm = ofType(p.resources, "kubernetes:core/v1:ConfigMap").find((r) => r.props.metadata.name === "dashboard-triton-gpu")!;
      const json = String(Object.values(cm.props.data)[0]);
      assert.match(json, new RegExp(`\\b${label}=~`));
      assert.doesNotMatch(json, new RegExp(`\\b${other}\\b`));
    }
  });
});
