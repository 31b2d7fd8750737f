// The GPU Operator installs only what the node image lacks, tolerates the GPU taint everywhere,
// and sets the dcgm-exporter ServiceMonitor explicitly.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { GPU_TOLERATION } from "../components/contracts";
import { gpuOperatorRelease, gpuOperatorValues, hostSoftwareOf, resolveGpuOperatorArgs, type GpuOperatorArgs } from "../components/gpu";
import { DCGM_SCRAPED_BY_MONITORING } from "../components/contracts";
import { sections } from "../config/schema";
import { checkSettings } from "../lib/schema";
import { isSettingsError } from "../lib/errors";
import { GPU_AMI_TYPE_NAMES } from "../components/upstream/eks";
import { CLUSTER_POLICY_READINESS } from "../components/upstream/gpu-operator";
import { plan, ofType, ROOT } from "./helpers";

const base: GpuOperatorArgs = { version: "v26.7.0", labels: {}, host: hostSoftwareOf("AL2023_x86_64_NVIDIA") };
const values = (a: Partial<GpuOperatorArgs>) => gpuOperatorValues(resolveGpuOperatorArgs({ ...base, ...a })) as any;
const tol = { key: GPU_TOLERATION.key, operator: GPU_TOLERATION.operator, effect: GPU_TOLERATION.effect };

describe("GPU Operator values", () => {
  it("EKS NVIDIA AMIs: driver and toolkit off (the AMI ships them)", () => {
    for (const t of GPU_AMI_TYPE_NAMES) {
      const v = values({ host: hostSoftwareOf(t) });
      assert.deepEqual(v.driver, { enabled: false }, t);
      assert.deepEqual(v.toolkit, { enabled: false }, t);
    }
  });

  it("device plugin on for AL2/AL2023, off on Bottlerocket (which runs its own)", () => {
    assert.equal(values({ host: hostSoftwareOf("AL2023_x86_64_NVIDIA") }).devicePlugin.enabled, true);
    assert.equal(values({ host: hostSoftwareOf("AL2_x86_64_GPU") }).devicePlugin.enabled, true);
    assert.equal(values({ host: hostSoftwareOf("BOTTLEROCKET_x86_64_NVIDIA") }).devicePlugin.enabled, false);
  });

  it("a plain image: driver and toolkit on, with the driver version pinned", () => {
    const v = values({ host: { driver: false, toolkit: false, devicePlugin: false }, driverVersion: "580.105.08" });
    assert.deepEqual(v.driver, { enabled: true, version: "580.105.08" });
    assert.deepEqual(v.toolkit, { enabled: true });
  });

  it("refuses an unpinned driver on a plain image, and a driver version the image would ignore", () => {
    const refused = (a: Partial<GpuOperatorArgs>) => {
      let problems: unknown;
      assert.throws(
        () => resolveGpuOperatorArgs({ ...base, ...a }, "gpu-operator"),
        (e: unknown) => {
          assert.ok(isSettingsError(e), String(e));
          assert.equal(e.subject, 'invalid arguments of GpuOperator "gpu-operator"');
          problems = e.details;
          return true;
        },
      );
      return problems;
    };
    assert.deepEqual(refused({ host: { driver: false, toolkit: false, devicePlugin: false } }), [
      { key: "driverVersion", rule: "must pin the driver the operator installs on a host without one (host.driver is false)", value: { shown: "nothing" } },
    ]);
    assert.deepEqual(refused({ driverVersion: "580.105.08" }), [
      { key: "driverVersion", rule: "must not be set when the node image ships its driver (the operator would not use it)", value: { shown: '"580.105.08"' } },
    ]);
  });

  it("dcgm-exporter on, its ServiceMonitor set explicitly either way", () => {
    assert.deepEqual(values({}).dcgmExporter, { enabled: true, serviceMonitor: { enabled: !DCGM_SCRAPED_BY_MONITORING } });
    assert.deepEqual(values({ serviceMonitor: true }).dcgmExporter, { enabled: true, serviceMonitor: { enabled: true } });
    assert.deepEqual(values({ serviceMonitor: false }).dcgmExporter, { enabled: true, serviceMonitor: { enabled: false } });
  });

  it("a direct caller gets the stack config's defaults: no second dcgm-exporter scrape, namespace gpu-operator", () => {
    // A stack's gpu section that sets neither key.
    const parsed = checkSettings(sections.gpu, { instanceTypes: ["g5.xlarge"], scaling: { min: 1, desired: 1, max: 1 }, operator: { version: "v26.7.0" } });
    assert.ok(parsed.success);
    const stackGpu = parsed.output.operator;
    const direct = resolveGpuOperatorArgs(base);
    assert.equal(direct.serviceMonitor, false);
    assert.equal(direct.serviceMonitor, stackGpu.serviceMonitor);
    assert.equal(direct.namespace, stackGpu.namespace);
    // What GpuOperator hands to the Helm release.
    const rel = gpuOperatorRelease(direct, direct.namespace) as any;
    assert.equal(rel.values.dcgmExporter.serviceMonitor.enabled, false);
    assert.deepEqual([rel.name, rel.chart, rel.version, rel.atomic, rel.timeout], ["gpu-operator", "gpu-operator", "v26.7.0", true, 900]);
  });

  it("CDI is set explicitly (on, the default of the chart versions the stack has run), whatever the host ships", () => {
    for (const t of GPU_AMI_TYPE_NAMES) assert.deepEqual(values({ host: hostSoftwareOf(t) }).cdi, { enabled: true }, t);
    assert.deepEqual(values({ host: { driver: false, toolkit: false, devicePlugin: false }, driverVersion: "580.105.08" }).cdi, { enabled: true });
  });

  it("the release's comment and the docs do not claim that atomic waits for the operands", () => {
    // atomic only covers the chart's own objects; the operands' readiness (ClusterPolicy status) is not awaited.
    const src = fs.readFileSync(path.join(ROOT, "components", "gpu", "builders.ts"), "utf8");
    assert.match(src, /does NOT wait for the operands/);
    assert.doesNotMatch(src, /rolls back instead of leaving GPU nodes without a device plugin/);
    const docs = fs.readFileSync(path.join(ROOT, "docs", "gpu-nodes.md"), "utf8");
    assert.match(docs, /not awaited/);
    assert.equal(CLUSTER_POLICY_READINESS.ready, "ready");
  });

  it("operator, operand DaemonSets and NFD worker tolerate the GPU taint", () => {
    const v = values({});
    assert.deepEqual(v.operator.tolerations, [tol]);
    assert.deepEqual(v.daemonsets.tolerations, [tol]);
    assert.deepEqual(v["node-feature-discovery"].worker.tolerations, [tol]);
  });

  it("prod plans a pinned release from NVIDIA's repository in a privileged namespace of its own", async () => {
    const p = await plan("prod");
    const rels = ofType(p.resources, "kubernetes:helm.sh/v3:Release").filter((r) => r.props.chart === "gpu-operator");
    assert.equal(rels.length, 1);
    const rel = rels[0];
    assert.equal(rel.props.version, "v26.7.0");
    assert.equal(rel.props.repositoryOpts.repo, "https://helm.ngc.nvidia.com/nvidia");
    assert.equal(rel.props.namespace, "gpu-operator");
    assert.equal(rel.props.values.driver.enabled, false);
    const ns = p.resources.find((r) => r.type === "kubernetes:core/v1:Namespace" && r.props.metadata.name === "gpu-operator");
    assert.equal(ns?.props.metadata.labels["pod-security.kubernetes.io/enforce"], "privileged");
    assert.equal(ns?.props.metadata.labels["app.kubernetes.io/part-of"], "triton-platform");
  });
});
