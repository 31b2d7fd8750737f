// The driver table (components/upstream/triton-releases.ts) covers every release the shared
// option tables describe, each row cites where it comes from, and a digest pin keeps the check.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { checkTritonDriver, checkTritonImages, tritonReleaseOf } from "../components/gpu/compatibility";
import { TRITON_DRIVER_REQUIREMENTS } from "../components/upstream/triton-releases";
import { TRITON_OPTION_RELEASES } from "../components/upstream/tritonserver";
import { fixtureConfig, ROOT } from "./helpers";
import { loadConfig, ConfigError } from "../config";

const OPTIONS_DIR = ((): string | undefined => {
  const common = spawnSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], { cwd: ROOT, encoding: "utf8" });
  const beside = [ROOT, ...(common.status === 0 ? [path.dirname(common.stdout.trim())] : [])];
  return beside.map((d) => path.join(d, "..", "shared", "reference", "tritonserver-options")).find((d) => fs.existsSync(d));
})();

const DIGEST = `sha256:${"c".repeat(64)}`;

describe("Triton driver table", () => {
  it("has a row for every release of the shared option tables", function () {
    if (OPTIONS_DIR === undefined) this.skip();
    const releases = fs.readdirSync(OPTIONS_DIR).flatMap((f) => /^r(\d{2}\.\d{2})\.tsv$/.exec(f)?.slice(1) ?? []);
    assert.ok(releases.length >= 9);
    assert.deepEqual(
      releases.filter((r) => !TRITON_DRIVER_REQUIREMENTS[r]),
      [],
    );
  });

  it("reaches the option table's newest release, and every row cites NVIDIA's notes (plus the CUDA page where they give no number)", () => {
    const newest = TRITON_OPTION_RELEASES[TRITON_OPTION_RELEASES.length - 1];
    assert.ok(TRITON_DRIVER_REQUIREMENTS[newest], `a row for ${newest}`);
    for (const [release, row] of Object.entries(TRITON_DRIVER_REQUIREMENTS)) {
      assert.match(row.source, /^https:\/\/docs\.nvidia\.com\/deeplearning\/triton-inference-server\/release-notes\/rel-\d{2}-\d{2}\.html/, release);
      if (row.minDriverBranch === 580) assert.match(row.source, /cuda-compatibility/, `${release} takes CUDA 13's requirement: cites it`);
    }
  });

  it("a tag pinned by digest keeps the driver check (primary and canary)", () => {
    assert.equal(tritonReleaseOf(`nvcr.io/nvidia/tritonserver:26.08-py3@${DIGEST}`), "26.08");
    assert.equal(tritonReleaseOf(`nvcr.io/nvidia/tritonserver@${DIGEST}`), undefined, "a digest alone names no release");
    assert.match(checkTritonDriver("26.08", "AL2_x86_64_GPU") ?? "", /needs NVIDIA driver R580 .* AL2_x86_64_GPU nodes ship R570/);
    assert.equal(checkTritonImages([`nvcr.io/nvidia/tritonserver:26.08-py3@${DIGEST}`], "AL2_x86_64_GPU").length, 1);
    assert.equal(checkTritonImages([`nvcr.io/nvidia/tritonserver:26.08-py3@${DIGEST}`], "AL2023_x86_64_NVIDIA").length, 0);
    const config = (digest: boolean) =>
      fixtureConfig("prod", (s) => {
        s.gpu.amiType = "AL2_x86_64_GPU";
        s.triton.groups[0].image = { tag: "25.03-py3", ...(digest ? { digest: DIGEST } : {}) };
        s.triton.groups[0].canary.image = { tag: "26.08-py3", ...(digest ? { digest: DIGEST } : {}) };
      });
    for (const digest of [false, true]) {
      assert.throws(
        () => loadConfig(config(digest), "prod"),
        (e: Error) =>
          e instanceof ConfigError &&
          /canary\.image is incompatible with gpu\.amiType: Triton 26\.08/.test(e.message) &&
          !/groups\[0\]\.image is/.test(e.message),
        `digest ${digest}`,
      );
    }
  });
});
