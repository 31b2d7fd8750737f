// Starts the policy pack's entry file the way the Pulumi engine's policy host does
// (`run-policy-pack <engine-address> <pack-dir>` with the pack directory as cwd, TypeScript
// through the SDK's own ts-node), waits for the gRPC port it prints, and asks it over gRPC
// which policies it serves. A broken entry file fails here, not in a user's preview.
import { strict as assert } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as analyzerGrpc from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import type { AnalyzerInfo } from "@pulumi/pulumi/proto/analyzer_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { rules } from "../policies/rules";
import { ROOT } from "./helpers";

function startPack(): Promise<{ child: ChildProcess; port: number }> {
  const runner = require.resolve("@pulumi/pulumi/cmd/run-policy-pack", { paths: [ROOT] });
  const packDir = path.join(ROOT, "policies");
  const child = spawn(process.execPath, [runner, "127.0.0.1:1", "."], { cwd: packDir, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /^(\d+)\s*$/m.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => reject(new Error(`policy pack exited ${code} before serving:\n${err}\n${out}`)));
  });
}

describe("policy pack entry file", function () {
  this.timeout(90_000);
  let child: ChildProcess | undefined;
  after(() => child?.kill());

  it("comes up under the engine's policy host, prints its gRPC port and serves every rule", async () => {
    const started = await startPack();
    child = started.child;
    assert.ok(started.port > 0 && started.port < 65536);
    const client = new analyzerGrpc.AnalyzerClient(`127.0.0.1:${started.port}`, grpc.credentials.createInsecure());
    const info = await new Promise<AnalyzerInfo>((resolve, reject) => client.getAnalyzerInfo(new Empty(), (e, r) => (e ? reject(e) : resolve(r))));
    client.close();
    assert.equal(info.getName(), "triton-platform");
    const served = info
      .getPoliciesList()
      .map((p) => p.getName())
      .sort();
    assert.deepEqual(served, rules.map((r) => r.name).sort());
  });
});
