// The gateway deploys at scale: its bootstrap's ConfigMap stays under Kubernetes' 1 MiB limit
// (ValidateConfigMap: data and binaryData together, decoded) at 100 serving groups of 10 models
// with canaries, mirrors and traffic shares. Small bootstraps ship as readable JSON; large ones
// packed (gzip in binaryData), inflated by an init container into the path Envoy reads; the
// policy pack and the planner read both forms, so every gateway rule still sees the routes.
import { strict as assert } from "node:assert";
import { gunzipSync } from "node:zlib";
import { recorded, ruleViolations, validateManifest } from "./helpers";
import { envoyInput, group } from "./envoy-fixture";
import {
  CONFIGMAP_MAX_BYTES,
  ENVOY_CONFIG_FILE,
  ENVOY_PACKED_CONFIG_FILE,
  PLAIN_BOOTSTRAP_MAX_BYTES,
  envoyBootstrap,
  envoyConfigInput,
  gatewayConfigMap,
  gatewayDeployment,
  packBootstrap,
  resolveEnvoyGatewayArgs,
  shippedBootstrapText,
} from "../components/gateway";
import { envoyBootstrap as plannedBootstrap } from "../tools/planner/artifacts";
import { listenerHcm, routeRequest } from "./support/envoy-routes";
import type { ServingGroupRef } from "../components/contracts";

/** `n` groups of `m` models each, every group with a canary; every other group splits 5 % of its traffic to it. */
function groups(n: number, m: number): ServingGroupRef[] {
  return Array.from({ length: n }, (_, i) => {
    const models = Array.from({ length: m }, (_, j) => `efficientnet_b0_${i}_${j}`);
    return {
      name: `vision-${String(i).padStart(3, "0")}`,
      canary: true,
      models,
      canaryModels: models,
      canaryTrafficPercent: i % 2 ? 5 : 0,
      maxPods: { primary: 9, canary: 1 },
    };
  });
}

const args = (servingGroups: ServingGroupRef[], mirrorPercent = 5) =>
  resolveEnvoyGatewayArgs({ namespace: "triton", labels: {}, servingGroups, mirrorPercent, replicas: 3, inferTimeoutSeconds: 120 });

/** What Kubernetes counts against the limit: data values as written, binaryData values decoded. */
function configMapBytes(cm: { data?: Record<string, string>; binaryData?: Record<string, string> }): number {
  const data = Object.values(cm.data ?? {}).reduce((n, v) => n + Buffer.byteLength(v, "utf8"), 0);
  return data + Object.values(cm.binaryData ?? {}).reduce((n, v) => n + Buffer.from(v, "base64").length, 0);
}

describe("the gateway's configuration fits a ConfigMap at scale", () => {
  const large = args(groups(100, 10));
  const cm = gatewayConfigMap(large) as { metadata: { name: string }; data?: Record<string, string>; binaryData?: Record<string, string> };

  it("100 groups × 10 models with canaries: the ConfigMap holds under a quarter of the 1 MiB limit", () => {
    const bytes = configMapBytes(cm);
    // Measured 2026-12-02: 59 KB packed (5.6 % of the limit) for 3.2 MB of compact JSON; the bound leaves a margin of 75 %.
    assert.ok(bytes < CONFIGMAP_MAX_BYTES / 4, `${bytes} bytes`);
    assert.equal(cm.data, undefined, "no plain copy beside the packed one");
    assert.deepEqual(Object.keys(cm.binaryData ?? {}), [ENVOY_PACKED_CONFIG_FILE]);
    // The same content unpacked would not fit: the packing is what makes it deploy.
    assert.ok(Buffer.byteLength(shippedBootstrapText(cm)!, "utf8") > CONFIGMAP_MAX_BYTES, "the compact JSON alone is over the limit");
  });

  it("the packed value inflates (gzip) to exactly the bootstrap the builder renders", () => {
    const inflated = gunzipSync(Buffer.from(cm.binaryData![ENVOY_PACKED_CONFIG_FILE], "base64")).toString("utf8");
    assert.deepEqual(JSON.parse(inflated), JSON.parse(JSON.stringify(envoyBootstrap(envoyConfigInput(large)))));
    assert.equal(shippedBootstrapText(cm), inflated);
  });

  it("routing is unchanged by the packing: a model of the last group reaches its primary, a control call does not", () => {
    const c = JSON.parse(shippedBootstrapText(cm)!) as Record<string, any>;
    const http = listenerHcm(c, "http");
    assert.equal(routeRequest(http, { method: "POST", path: "/v2/models/efficientnet_b0_99_9/infer", draw: 99 }).cluster, "vision-099-primary-http");
    assert.equal(routeRequest(http, { method: "POST", path: "/v2/models/efficientnet_b0_99_9/infer", draw: 1 }).cluster, "vision-099-canary-http");
    assert.equal(routeRequest(http, { method: "POST", path: "/v2/repository/models/efficientnet_b0_99_9/load" }).status, 403);
  });

  it("the Deployment inflates it in an init container into the emptyDir Envoy's --config-path reads, and both pass the Kubernetes schema", async () => {
    const d = gatewayDeployment(large) as any;
    const pod = d.spec.template.spec;
    const envoy = pod.containers[0];
    const configPath: string = envoy.args[envoy.args.indexOf("--config-path") + 1];
    const [init] = pod.initContainers;
    assert.equal(init.image, envoy.image, "the pinned Envoy image, nothing new to pull or trust");
    const script: string = init.command[2];
    const [, from, to] = /gzip -dc (\S+) > (\S+)$/.exec(script) ?? [];
    assert.equal(to, configPath, "writes the file Envoy reads");
    const mountOf = (c: any, path: string) => c.volumeMounts.find((m: any) => path.startsWith(m.mountPath + "/"));
    const src = mountOf(init, from);
    assert.equal(from, `${src.mountPath}/${ENVOY_PACKED_CONFIG_FILE}`);
    assert.equal(pod.volumes.find((v: any) => v.name === src.name).configMap.name, cm.metadata.name, "reads this ConfigMap");
    const dst = mountOf(envoy, configPath);
    assert.equal(dst.name, mountOf(init, to).name, "Envoy mounts the volume the init container wrote");
    assert.ok(pod.volumes.find((v: any) => v.name === dst.name).emptyDir);
    assert.equal(dst.readOnly, true);
    assert.deepEqual(init.securityContext, envoy.securityContext, "restricted like Envoy");
    await validateManifest(d);
    await validateManifest(cm as any);
  });

  it("a small gateway stays plain: readable JSON in data, no init container", () => {
    const small = args(groups(2, 2));
    const c = gatewayConfigMap(small) as any;
    assert.equal(typeof c.data[ENVOY_CONFIG_FILE], "string");
    assert.equal(c.binaryData, undefined);
    assert.ok(configMapBytes(c) <= PLAIN_BOOTSTRAP_MAX_BYTES);
    assert.equal((gatewayDeployment(small) as any).spec.template.spec.initContainers, undefined);
  });

  it("packs exactly when the indented JSON passes half the limit", () => {
    const packedAt: boolean[] = [];
    for (const [n, m] of [
      [10, 2],
      [30, 2],
    ] as const) {
      const b = envoyBootstrap(
        envoyInput({ servingGroups: Array.from({ length: n }, (_, i) => group(`g${i}`, { canary: true, models: [`a${i}`, `b${i}`] })), defaultGroup: "g0" }),
      );
      const shipped = packBootstrap(b);
      const indented = Buffer.byteLength(JSON.stringify(b, null, 2) + "\n", "utf8");
      assert.equal(shipped.packed !== undefined, indented > PLAIN_BOOTSTRAP_MAX_BYTES, `${n}×${m}: ${indented} bytes indented`);
      assert.ok(shipped.configMapBytes < PLAIN_BOOTSTRAP_MAX_BYTES);
      packedAt.push(shipped.packed !== undefined);
    }
    assert.deepEqual(packedAt, [false, true], "10 groups of 2 plain, 30 of 2 packed");
  });

  describe("the policy pack and the planner read the packed form", () => {
    const packed = (mirrorPercent: number) =>
      recorded("kubernetes:core/v1:ConfigMap", "gateway-config", gatewayConfigMap(args(groups(100, 10), mirrorPercent)) as any);

    it("gateway-mirror-percent-within-max fires on a packed bootstrap over the cap and not under it", async () => {
      const over = await ruleViolations("gateway-mirror-percent-within-max", [packed(30)], { maxPercent: 25 });
      assert.ok(over.length > 0 && over.every((v) => /mirrors 30 % to vision-\d{3}-canary-(http|grpc)/.test(v.message)), over.map((v) => v.message).join("\n"));
      assert.deepEqual(await ruleViolations("gateway-mirror-percent-within-max", [packed(5)], { maxPercent: 25 }), []);
    });

    it("gateway-canary-traffic-within-max sees the packed splits", async () => {
      const vs = await ruleViolations("gateway-canary-traffic-within-max", [packed(5)], { maxPercent: 1 });
      assert.ok(vs.some((v) => v.message.includes("5 % to vision-001-canary-http")));
    });

    it("a packed value that is not gzip is reported, not skipped", async () => {
      const bad = recorded("kubernetes:core/v1:ConfigMap", "gateway-config", {
        metadata: { name: "x", namespace: "triton" },
        binaryData: { [ENVOY_PACKED_CONFIG_FILE]: Buffer.from("not gzip").toString("base64") },
      });
      const vs = await ruleViolations("gateway-mirror-percent-within-max", [bad]);
      assert.equal(vs.length, 1);
      assert.match(vs[0].message, /ConfigMap x: data\["envoy.json"\] is not valid JSON \(incorrect header check\)/);
    });

    it("the planner's envoy.json artifact is the unpacked bootstrap", () => {
      const r = packed(5);
      assert.deepEqual(plannedBootstrap([r]), JSON.parse(shippedBootstrapText(r.props)!));
    });
  });
});
