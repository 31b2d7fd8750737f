// triton-termination-covers-gateway-timeout: a Triton pod's termination (preStop, --exit-timeout-secs,
// terminationGracePeriodSeconds) covers the longest request the gateway's rendered Envoy routes let
// through to it. Built on the prod fixture plan (gateway.inferTimeoutSeconds 120, termination derived),
// broken one property at a time, in the StatefulSet the stack writes and in a Deployment it does not.
import { strict as assert } from "node:assert";
import { ruleViolations } from "./helpers";
import type { RecordedResource } from "../tools/planner";
import { DEPLOYMENT, STATEFUL_SET } from "../policies/rules/types";
import { baseline, declareMutations, editEnvoy, first, k8sObject, tritonContainer, tritonSts, walk } from "./support/mutations";

const P = "triton-termination-covers-gateway-timeout";
const EXIT = "--exit-timeout-secs";

const prod = () => baseline("prod");
const setExit = (c: { args: string[] }, value: string) => {
  const i = c.args.findIndex((a) => a.startsWith(`${EXIT}=`));
  assert.ok(i >= 0, "the Triton container sets --exit-timeout-secs");
  c.args[i] = `${EXIT}=${value}`;
  return i;
};
/** Every inference route of the gateway (the ones with the longest timeout), edited. */
const editInferRoutes = (rs: RecordedResource[], edit: (route: Record<string, any>) => void) =>
  editEnvoy(rs, (c) => walk(c, (o) => o.route?.timeout && o.route.timeout !== "0s" && o.route.timeout !== "15s" && edit(o.route)));

/** A Triton Deployment beside the StatefulSet: the same pod labels (so the vision Services and the gateway reach it), its own termination. */
function tritonDeployment(rs: RecordedResource[], container: Record<string, any>, grace?: number): RecordedResource {
  const tpl = tritonSts(rs).props.spec.template;
  return k8sObject(rs, DEPLOYMENT, "vision-batch", {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "vision-batch", namespace: "triton" },
    spec: {
      selector: { matchLabels: tpl.metadata.labels },
      template: {
        metadata: { labels: tpl.metadata.labels },
        spec: {
          ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }),
          containers: [{ name: "triton", image: "nvcr.io/nvidia/tritonserver:26.07-py3", ...container }],
        },
      },
    },
  });
}

describe(P, () => {
  it("passes on the prod and staging fixture plans: derived termination, streams (timeout 0s) left out", async () => {
    for (const stack of ["prod", "staging"] as const) assert.deepEqual(await ruleViolations(P, await baseline(stack)), [], stack);
  });

  it("fires on an exit timeout below the gateway's inference timeout, at the flag, naming the route", async () => {
    const rs = await prod();
    const i = setExit(tritonContainer(rs), "30");
    const vs = await ruleViolations(P, rs);
    assert.equal(vs.length, 1, JSON.stringify(vs));
    assert.equal(vs[0].path, `spec.template.spec.containers[0].args[${i}]`);
    assert.equal(vs[0].value, 30);
    assert.match(
      vs[0].message,
      /args\[\d+\] \(container triton's --exit-timeout-secs\) is 30, below the 120 s the gateway lets a request to these pods run \(ConfigMap .*route\)/,
    );
  });

  it("fires when the gateway's route timeout outgrows the pods' exit timeout (read from the rendered Envoy config)", async () => {
    const rs = await prod();
    editInferRoutes(rs, (r) => {
      r.timeout = "300s";
      delete r.max_stream_duration;
    });
    const vs = await ruleViolations(P, rs);
    assert.ok(vs.length >= 1);
    assert.ok(
      vs.every((v) => /below the 300 s/.test(v.message)),
      JSON.stringify(vs),
    );
  });

  it("fires when a gRPC client's deadline may run longer (grpc_timeout_header_max above the exit timeout)", async () => {
    const rs = await prod();
    editInferRoutes(rs, (r) => r.max_stream_duration && (r.max_stream_duration.grpc_timeout_header_max = "600s"));
    const vs = await ruleViolations(P, rs);
    assert.ok(vs.length >= 1 && vs.every((v) => /below the 600 s/.test(v.message)), JSON.stringify(vs));
  });

  it("fires on a grace period below preStop + exit timeout", async () => {
    const rs = await prod();
    tritonSts(rs).props.spec.template.spec.terminationGracePeriodSeconds = 100;
    const vs = (await ruleViolations(P, rs)).filter((v) => v.type === STATEFUL_SET);
    assert.ok(vs.length >= 1);
    assert.equal(vs[0].path, "spec.template.spec.terminationGracePeriodSeconds");
    assert.equal(vs[0].value, 100);
    assert.match(vs[0].message, /is 100, below the preStop \(10 s\) \+ --exit-timeout-secs \(120 s\)/);
  });

  it("fires in a Deployment: the flag as two arguments, an exec preStop's sleep, the Kubernetes default grace period", async () => {
    const rs = await prod();
    rs.push(tritonDeployment(rs, { command: ["tritonserver"], args: ["--model-repository=s3://b/m", EXIT, "60"] }, 200));
    rs.push({
      ...tritonDeployment(rs, { args: ["tritonserver", `${EXIT}=120`], lifecycle: { preStop: { exec: { command: ["/bin/sh", "-c", "sleep 20"] } } } }),
      urn: "urn:pulumi:prod::triton-platform::kubernetes:apps/v1:Deployment::vision-batch-2",
      name: "vision-batch-2",
    });
    const vs = (await ruleViolations(P, rs)).filter((v) => v.type === DEPLOYMENT);
    const messages = vs.map((v) => `${v.path}: ${v.message}`);
    assert.ok(
      messages.some((m) => /^spec\.template\.spec\.containers\[0\]\.args\[2\]: .*--exit-timeout-secs\) is 60, below the 120 s/.test(m)),
      messages.join("\n"),
    );
    assert.ok(
      messages.some((m) =>
        /^spec\.template\.spec\.terminationGracePeriodSeconds: .*is 30, below the preStop \(20 s\) \+ --exit-timeout-secs \(120 s\)/.test(m),
      ),
      messages.join("\n"),
    );
    assert.equal(vs.length, 2, messages.join("\n"));
  });

  it("fires on tritonserver's default exit timeout (30 s) when the flag is left out", async () => {
    const rs = await prod();
    rs.push(tritonDeployment(rs, { command: ["tritonserver"], args: ["--model-repository=s3://b/m"] }, 200));
    const vs = (await ruleViolations(P, rs)).filter((v) => v.type === DEPLOYMENT);
    assert.equal(vs.length, 1);
    assert.match(vs[0].message, /--exit-timeout-secs\) is 30 \(tritonserver's default, flag absent\), below the 120 s/);
  });

  it("stays silent on reasonable variants", async () => {
    // A longer exit timeout and a roomier grace period.
    let rs = await prod();
    setExit(tritonContainer(rs), "300");
    tritonSts(rs).props.spec.template.spec.terminationGracePeriodSeconds = 400;
    assert.deepEqual(await ruleViolations(P, rs), []);
    // A hard cap (max_stream_duration) below a long route timeout bounds the request.
    rs = await prod();
    editInferRoutes(rs, (r) => {
      r.timeout = "600s";
      r.max_stream_duration = { max_stream_duration: "90s" };
    });
    assert.deepEqual(await ruleViolations(P, rs), []);
    // A Triton Deployment no gateway route reaches (other labels, no Service) needs only its grace period.
    rs = await prod();
    const other = tritonDeployment(rs, { command: ["tritonserver"], args: [`${EXIT}=5`] }, 10);
    other.props.spec.template.metadata.labels = { ...other.props.spec.template.metadata.labels, "app.kubernetes.io/instance": "offline" };
    rs.push(other);
    assert.deepEqual(await ruleViolations(P, rs), []);
    // No gateway at all: the grace period is still checked, the route bound is not.
    rs = (await prod()).filter((r) => !(typeof r.props.data?.["envoy.json"] === "string"));
    assert.deepEqual(await ruleViolations(P, rs), []);
  });
});

declareMutations([
  {
    rule: P,
    breaks: "sets the Triton StatefulSet's --exit-timeout-secs back to 30, below the gateway's 120 s inference timeout",
    mutate: (rs) => void setExit(first(rs, STATEFUL_SET, (r) => r.name === "vision").props.spec.template.spec.containers[0], "30"),
  },
]);
