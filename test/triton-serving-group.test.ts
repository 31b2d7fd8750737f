import { strict as assert } from "node:assert";
import { plan, one, ofType, validateManifest } from "./helpers";
import type { RecordedResource } from "../tools/planner";
import {
  GPU_TOLERATION,
  HPA_QUEUE_METRIC,
  NODE_LABEL_GPU_TYPE,
  TRITON_METRICS_SERVICE_LABEL,
  tritonSelector,
  type ModelRepositoryBinding,
} from "../components/contracts";
import {
  resolveTritonServer,
  TRITON_EXIT_MARGIN_SECONDS,
  startupFailureThreshold,
  tritonHeadlessService,
  tritonHorizontalPodAutoscaler,
  tritonMetricsService,
  tritonPodDisruptionBudget,
  tritonPriorityClass,
  tritonService,
  tritonStatefulSet,
  tritonSection,
  type TritonServerArgs,
} from "../components/triton";
import * as v from "valibot";
import { SettingsError } from "../lib/errors";
import { parseTritonServerArgs } from "../components/upstream/tritonserver";
import { quantityValue } from "../lib/quantity";
import { STATEFUL_SET as STS, SERVICE as SVC, POD_DISRUPTION_BUDGET as PDB, HORIZONTAL_POD_AUTOSCALER as HPA } from "../policies/rules/types";

function container(sts: RecordedResource) {
  return sts.props.spec.template.spec.containers[0];
}

describe("Triton serving group (prod, under mocks)", () => {
  let rs: RecordedResource[];
  before(async () => {
    rs = (await plan("prod")).resources;
  });

  it("renders the primary and the canary StatefulSet, parented by the TritonServer component", () => {
    const server = rs.find((r) => r.type === "triton-platform:triton:TritonServer" && r.name === "vision")!;
    assert.ok(server, "TritonServer vision registered");
    for (const name of ["vision", "vision-canary"]) {
      const sts = one(rs, STS, name);
      assert.equal(sts.parent, server.urn);
      assert.equal(sts.props.metadata.namespace, "triton");
      assert.match(sts.provider ?? "", /pulumi:providers:kubernetes::cluster-k8s::/);
    }
  });

  it("primary: three replicas, the configured image, track primary; canary: its own image, one replica, track canary", () => {
    const p = one(rs, STS, "vision");
    const c = one(rs, STS, "vision-canary");
    assert.equal(p.props.spec.replicas, 3);
    assert.equal(c.props.spec.replicas, 1);
    assert.equal(container(p).image, "nvcr.io/nvidia/tritonserver:25.01-py3");
    assert.equal(container(c).image, "nvcr.io/nvidia/tritonserver:25.02-py3");
    assert.deepEqual(p.props.spec.selector.matchLabels, tritonSelector("vision", "primary"));
    assert.deepEqual(c.props.spec.selector.matchLabels, tritonSelector("vision", "canary"));
    assert.equal(p.props.spec.template.metadata.labels.track, "primary");
    assert.equal(c.props.spec.template.metadata.labels.track, "canary");
    assert.equal(p.props.spec.serviceName, "vision-headless");
    assert.equal(c.props.spec.serviceName, "vision-canary-headless");
  });

  it("GPU limits equal requests; CPU and memory requests equal limits; memory covers /dev/shm", () => {
    for (const sts of ofType(rs, STS)) {
      const { requests, limits } = container(sts).resources;
      assert.equal(limits["nvidia.com/gpu"], "1");
      assert.deepEqual(requests, limits);
      const dshm = sts.props.spec.template.spec.volumes.find((v: { name: string }) => v.name === "dshm");
      assert.deepEqual(dshm.emptyDir, { medium: "Memory", sizeLimit: "4Gi" });
      assert.ok(quantityValue(limits.memory) > quantityValue(dshm.emptyDir.sizeLimit));
      const mounts = Object.fromEntries(container(sts).volumeMounts.map((m: { mountPath: string; name: string }) => [m.mountPath, m.name]));
      assert.equal(mounts["/dev/shm"], "dshm");
      assert.equal(mounts["/tmp"], "tmp");
      assert.equal(mounts["/var/lib/triton/model-cache"], "model-cache");
      assert.ok(
        container(sts).env.some((e: { name: string; value: string }) => e.name === "TRITON_AWS_MOUNT_DIRECTORY" && e.value === "/var/lib/triton/model-cache"),
      );
    }
  });

  it("runs as uid/gid 1000, non-root, no escalation, no capabilities, RuntimeDefault seccomp, read-only root", () => {
    for (const sts of ofType(rs, STS)) {
      const pod = sts.props.spec.template.spec.securityContext;
      assert.deepEqual([pod.runAsUser, pod.runAsGroup, pod.runAsNonRoot, pod.seccompProfile.type], [1000, 1000, true, "RuntimeDefault"]);
      const sc = container(sts).securityContext;
      assert.equal(sc.allowPrivilegeEscalation, false);
      assert.deepEqual(sc.capabilities.drop, ["ALL"]);
      assert.equal(sc.readOnlyRootFilesystem, true);
      assert.equal(sc.seccompProfile.type, "RuntimeDefault");
    }
  });

  it("probes: startup on /v2/health/ready covering the 900 s model-load budget, liveness on live, readiness on ready", () => {
    const c = container(one(rs, STS, "vision"));
    assert.equal(c.startupProbe.httpGet.path, "/v2/health/ready");
    assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 900);
    assert.equal(c.livenessProbe.httpGet.path, "/v2/health/live");
    assert.equal(c.readinessProbe.httpGet.path, "/v2/health/ready");
  });

  it("tolerates the GPU taint, requires the group's GPU type, spreads over zones and hosts, has a PriorityClass", () => {
    const spec = one(rs, STS, "vision").props.spec.template.spec;
    assert.deepEqual(spec.tolerations, [GPU_TOLERATION]);
    const term = spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0];
    assert.deepEqual(term.matchExpressions, [{ key: NODE_LABEL_GPU_TYPE, operator: "In", values: ["nvidia-l4"] }], "the GPU node group's gpu-type");
    const zone = spec.topologySpreadConstraints.find((t: { topologyKey: string }) => t.topologyKey === "topology.kubernetes.io/zone");
    const host = spec.topologySpreadConstraints.find((t: { topologyKey: string }) => t.topologyKey === "kubernetes.io/hostname");
    assert.equal(zone.whenUnsatisfiable, "DoNotSchedule");
    assert.equal(zone.minDomains, 3, "one domain per configured zone");
    assert.deepEqual(zone.labelSelector.matchLabels, tritonSelector("vision", "primary"));
    assert.ok(host);
    const pc = one(rs, "kubernetes:scheduling.k8s.io/v1:PriorityClass");
    assert.equal(spec.priorityClassName, pc.props.metadata.name);
  });

  it("grace period outlasts preStop + --exit-timeout-secs; args come from the builder; the repository from its binding", async () => {
    const { outputs } = await plan("prod");
    const sts = one(rs, STS, "vision");
    const c = container(sts);
    const opts = parseTritonServerArgs(c.args);
    assert.deepEqual(c.command, ["tritonserver"]);
    assert.match(String(outputs.modelRepositoryUri), /^s3:\/\//);
    assert.equal(opts.modelRepository, outputs.modelRepositoryUri);
    assert.deepEqual(opts.models, ["resnet50", "efficientnet_b0"]);
    assert.equal(opts.modelControlMode, "explicit");
    assert.ok(sts.props.spec.template.spec.terminationGracePeriodSeconds > opts.exitTimeoutSecs + c.lifecycle.preStop.sleep.seconds);
    assert.equal(sts.props.spec.template.spec.serviceAccountName, (outputs.modelRepositoryDetails as { serviceAccountName: string }).serviceAccountName);
  });

  it("Services per track: headless, ClusterIP http 8000/grpc 8001 with appProtocol, metrics 8002", () => {
    for (const [base, track] of [
      ["vision", "primary"],
      ["vision-canary", "canary"],
    ] as const) {
      const headless = one(rs, SVC, `${base}-headless`).props;
      assert.equal(headless.spec.clusterIP, "None");
      const svc = one(rs, SVC, base).props;
      assert.equal(svc.spec.type, "ClusterIP");
      assert.deepEqual(svc.spec.selector, tritonSelector("vision", track));
      const ports = Object.fromEntries(svc.spec.ports.map((p: { name: string }) => [p.name, p]));
      assert.equal(ports.http.port, 8000);
      assert.equal(ports.grpc.port, 8001);
      assert.ok(ports.http.appProtocol && ports.grpc.appProtocol, "appProtocol set");
      const metrics = one(rs, SVC, `${base}-metrics`).props;
      assert.deepEqual(
        metrics.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port]),
        [["metrics", 8002]],
      );
      for (const [k, v] of Object.entries(TRITON_METRICS_SERVICE_LABEL)) assert.equal(metrics.metadata.labels[k], v);
      assert.deepEqual(metrics.spec.selector, tritonSelector("vision", track));
      assert.notEqual(
        svc.metadata.labels["app.kubernetes.io/component"],
        TRITON_METRICS_SERVICE_LABEL["app.kubernetes.io/component"],
        "only the metrics Service is scraped",
      );
    }
  });

  it("a PodDisruptionBudget per StatefulSet allows at most one pod down", () => {
    for (const [name, track] of [
      ["vision", "primary"],
      ["vision-canary", "canary"],
    ] as const) {
      const pdb = one(rs, PDB, name).props;
      assert.equal(pdb.spec.maxUnavailable, 1);
      assert.deepEqual(pdb.spec.selector.matchLabels, tritonSelector("vision", track));
    }
  });

  it("the HPA scales the primary StatefulSet on the per-pod queue metric, min/max from config", () => {
    const hpa = one(rs, HPA).props;
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: "apps/v1", kind: "StatefulSet", name: "vision" });
    assert.deepEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas], [3, 9]);
    assert.equal(hpa.spec.metrics[0].type, "Pods");
    assert.equal(hpa.spec.metrics[0].pods.metric.name, HPA_QUEUE_METRIC);
    assert.equal(hpa.spec.metrics[0].pods.target.averageValue, "10000");
  });
});

describe("Triton serving group in dev and staging", () => {
  it("dev: one replica, no canary", async () => {
    const rs = (await plan("dev")).resources;
    assert.deepEqual(
      ofType(rs, STS).map((s) => [s.name, s.props.spec.replicas]),
      [["vision", 1]],
    );
    assert.equal(ofType(rs, SVC).filter((s) => s.name.includes("canary")).length, 0);
  });

  it("staging: two replicas and a canary, reading the EFS repository from its claim, read-only", async () => {
    const { resources: rs, outputs } = await plan("staging");
    assert.deepEqual(
      ofType(rs, STS)
        .map((s) => [s.name, s.props.spec.replicas])
        .sort(),
      [
        ["vision", 2],
        ["vision-canary", 1],
      ],
    );
    const claim = one(rs, "kubernetes:core/v1:PersistentVolumeClaim");
    for (const sts of ofType(rs, STS)) {
      const spec = sts.props.spec.template.spec;
      const vol = spec.volumes.find((v: { persistentVolumeClaim?: unknown }) => v.persistentVolumeClaim);
      assert.deepEqual(vol.persistentVolumeClaim, { claimName: claim.props.metadata.name, readOnly: true });
      const mount = spec.containers[0].volumeMounts.find((m: { name: string }) => m.name === vol.name);
      assert.equal(mount.readOnly, true);
      assert.equal(parseTritonServerArgs(spec.containers[0].args).modelRepository, outputs.modelRepositoryUri);
      assert.equal(mount.mountPath, outputs.modelRepositoryUri);
    }
  });
});

describe("Triton serving group builders", () => {
  const efs: ModelRepositoryBinding = {
    uri: "/models",
    serviceAccountName: "triton",
    env: [{ name: "AWS_DEFAULT_REGION", value: "eu-west-1" }],
    volume: { claimName: "models", mountPath: "/models" },
    egressPort: 2049,
  };
  const args: TritonServerArgs = {
    name: "nlp",
    namespace: "triton",
    labels: { "app.kubernetes.io/part-of": "triton-platform" },
    modelRepository: efs,
    priorityClassName: "triton-serving",
    zoneCount: 1,
    longestRequestSeconds: 60,
    models: ["bert"],
    image: { tag: "25.01-py3", digest: `sha256:${"a".repeat(64)}` },
    replicas: 3,
    gpu: { type: "nvidia-l4", count: 2 },
    cpu: "4",
    memory: "16Gi",
    canary: { models: ["bert", "bert_v2"], replicas: 1 },
  };
  const plain = { ...efs, volume: { claimName: "models", mountPath: "/models" } } as never;

  it("applies defaults once: HPA 3..6 from 3 replicas, startup threshold from the budget; the canary inherits image and digest", () => {
    const r = resolveTritonServer(args);
    assert.equal(r.replicas, 3);
    assert.deepEqual(r.hpa, { min: 3, max: 6, targetQueueUs: 10000 });
    assert.equal(startupFailureThreshold(r), 60);
    assert.equal(r.tracks[1].image, `nvcr.io/nvidia/tritonserver:25.01-py3@sha256:${"a".repeat(64)}`);
    assert.deepEqual(r.tracks[1].models, ["bert", "bert_v2"]);
  });

  it("mounts an EFS binding's claim read-only, passes its env, and emits one CUDA pool per GPU", () => {
    const r = resolveTritonServer(args);
    const sts = tritonStatefulSet(r, r.tracks[0], plain) as any;
    const spec = sts.spec.template.spec;
    const c = spec.containers[0];
    assert.deepEqual(spec.volumes.find((v: { name: string }) => v.name === "model-repository").persistentVolumeClaim, { claimName: "models", readOnly: true });
    assert.ok(c.volumeMounts.some((m: { mountPath: string; readOnly?: boolean }) => m.mountPath === "/models" && m.readOnly === true));
    assert.ok(!c.env.some((e: { name: string }) => e.name === "TRITON_AWS_MOUNT_DIRECTORY"));
    assert.deepEqual(c.env, [
      { name: "TRITON_PLATFORM_ADMIN_KEY", valueFrom: { secretKeyRef: { name: "nlp-triton-admin", key: "key" } } },
      { name: "AWS_DEFAULT_REGION", value: "eu-west-1" },
    ]);
    assert.equal(c.args.filter((a: string) => a.startsWith("--cuda-memory-pool-byte-size=")).length, 2);
    assert.equal(c.resources.limits["nvidia.com/gpu"], "2");
  });

  it("every builder's manifest is schema-valid", async () => {
    const r = resolveTritonServer(args);
    for (const t of r.tracks) {
      for (const m of [
        tritonStatefulSet(r, t, plain),
        tritonService(r, t.track),
        tritonHeadlessService(r, t.track),
        tritonMetricsService(r, t.track),
        tritonPodDisruptionBudget(r, t.track),
      ]) {
        await validateManifest(m);
      }
    }
    await validateManifest(tritonHorizontalPodAutoscaler(r));
    await validateManifest(tritonPriorityClass("triton-serving", {}));
  });

  it("refuses inconsistent arguments before building anything, listing every problem", () => {
    assert.throws(
      () =>
        resolveTritonServer({
          ...args,
          shmSize: "32Gi",
          exitTimeoutSecs: 120,
          terminationGracePeriodSeconds: 60,
          canary: { replicas: 0 },
          extraArgs: ["--gpus=1"],
        }),
      (e: Error) =>
        e instanceof SettingsError &&
        e.subject === 'invalid arguments of TritonServer "nlp"' &&
        /shmSize must be smaller than memory \(16Gi\)/.test(e.message) &&
        /terminationGracePeriodSeconds must be at least preStopSleepSeconds \(10\) \+ exitTimeoutSecs \(120\) \+ 15 s = 145, .*got 60/.test(e.message) &&
        /canary\.replicas must be >= 1/.test(e.message) &&
        /extraArgs\[0\] .*--gpus/.test(e.message),
    );
  });

  it("a direct caller's exit timeout below its longest request is refused, naming the key", () => {
    assert.throws(
      () => resolveTritonServer({ ...args, longestRequestSeconds: 90, exitTimeoutSecs: 60 }),
      (e: Error) => e instanceof SettingsError && e.problems.some((p) => /^exitTimeoutSecs must be at least the longest request .*90 s.*got 60$/.test(p)),
    );
    assert.equal(resolveTritonServer({ ...args, longestRequestSeconds: 90 }).exitTimeoutSecs, 90);
  });

  it("a direct caller gets the stack config's defaults, from the same schema", () => {
    const { namespace, labels, modelRepository, priorityClassName, zoneCount, longestRequestSeconds, ...settings } = args;
    void [namespace, labels, modelRepository, priorityClassName, zoneCount];
    const fromConfig = v.parse(tritonSection, { groups: [settings] }).groups[0];
    const r = resolveTritonServer(args);
    for (const [key, value] of Object.entries(fromConfig)) {
      if (!["hpa", "image", "models", "canary", "exitTimeoutSecs", "terminationGracePeriodSeconds"].includes(key))
        assert.deepEqual(r[key as keyof typeof r], value, key);
    }
    // The termination is derived from the gateway's longest request by the same function as the stack's.
    assert.equal(r.exitTimeoutSecs, longestRequestSeconds);
    assert.equal(r.terminationGracePeriodSeconds, r.preStopSleepSeconds + longestRequestSeconds + TRITON_EXIT_MARGIN_SECONDS);
    assert.equal(r.hpa.targetQueueUs, fromConfig.hpa.targetQueueUs);
    assert.equal(r.tracks[0].image, `${fromConfig.image.repository}:25.01-py3@sha256:${"a".repeat(64)}`);
  });

  it("a direct caller's missing replicas and misspelt keys are errors, as in the stack file", () => {
    const { replicas, ...noReplicas } = args;
    void replicas;
    assert.throws(
      () => resolveTritonServer({ ...noReplicas, shmsize: "2Gi" } as never),
      (e: Error) =>
        e instanceof SettingsError &&
        e.problems.includes("replicas must be an integer >= 1, got nothing") &&
        e.problems.some((p) => /^shmsize is not a known key/.test(p)),
    );
  });
});
