// The user data of each AMI family parses as what EKS expects (MIME multi-part for AL2/AL2023,
// TOML for Bottlerocket) and carries the host tuning: THP off, vm.swappiness=1, no swap.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as yaml from "js-yaml";
import { gpuUserData, HOST_TUNING, MIME_BOUNDARY } from "../components/gpu/user-data";
import { GPU_AMI_TYPES, GPU_AMI_TYPE_NAMES, NODEADM } from "../components/upstream/eks";
import { plan, one, ofType } from "./helpers";
import { parseMime, parseToml } from "./support/user-data";

/** The tuning as the shell part applies it. */
function assertShellTuning(script: string): void {
  assert.match(script, /^#!\/bin\/bash\n/);
  assert.match(script, new RegExp(`^vm\\.swappiness = ${HOST_TUNING.swappiness}$`, "m"));
  assert.match(script, /echo never > \/sys\/kernel\/mm\/transparent_hugepage\/enabled/);
  assert.match(script, /systemctl enable --now triton-platform-thp\.service/);
  assert.match(script, /^swapoff -a$/m);
  const syntax = spawnSync("bash", ["-n"], { input: script, encoding: "utf8" });
  assert.equal(syntax.status, 0, `bash -n: ${syntax.stderr}`);
}

/**
 * The document's parts as raw text, split on the boundary lines without a MIME library (which
 * may normalise line ends): each part's headers and its body exactly as the node receives them.
 */
function rawMimeParts(text: string): { headers: string; body: string }[] {
  const chunks = text.split(`--${MIME_BOUNDARY}`);
  const closing = chunks.pop() ?? "";
  assert.match(closing, /^--\n?$/, "the document ends with the closing boundary");
  // chunks[0] is the outer header block; each other chunk is "\n<headers>\n\n<body>\n".
  return chunks.slice(1).map((c) => {
    const blank = c.indexOf("\n\n");
    assert.ok(blank >= 0, `a part has a blank line after its headers: ${JSON.stringify(c.slice(0, 80))}`);
    return { headers: c.slice(0, blank), body: c.slice(blank + 2) };
  });
}

/** Shell parts with no CR anywhere (headers, boundaries, bodies) that pass `bash -n`. */
function assertLfOnly(text: string, shellParts: number): void {
  assert.ok(!text.includes("\r"), `CR at offset ${text.indexOf("\r")}`);
  const parts = rawMimeParts(text);
  assert.ok(parts.length >= 1);
  let shells = 0;
  for (const p of parts) {
    assert.ok(!p.headers.includes("\r") && !p.body.includes("\r"), `CR in part ${p.headers.trim()}`);
    if (/^Content-Type: text\/x-shellscript/m.test(p.headers)) {
      shells++;
      assert.match(p.body, /^#!\/bin\/bash\n/);
      const syntax = spawnSync("bash", ["-n"], { input: p.body, encoding: "utf8" });
      assert.equal(syntax.status, 0, `bash -n: ${syntax.stderr}`);
      assert.equal(syntax.stderr, "", "bash -n warns of nothing (an unterminated here-document, say)");
    }
  }
  assert.equal(shells, shellParts, "shell parts");
}

/** A serving pods' grace period (the nodes' shutdown covers it: gpu-node-shutdown-covers-serving-pods.test.ts). */
const GRACE = 145;

describe("GPU node user data", () => {
  it("AL2023 and AL2: LF line ends in every MIME part and its headers; the shell part passes bash -n", () => {
    assertLfOnly(gpuUserData("al2023", GRACE), 1);
    assertLfOnly(gpuUserData("al2", GRACE), 1);
  });

  it("the LF check fails on the CRLF document the stack used to write", () => {
    assert.throws(() => assertLfOnly(gpuUserData("al2023", GRACE).replace(/\n/g, "\r\n"), 1), /CR at offset/);
  });

  it("Bottlerocket: the TOML settings have no CR either", () => {
    assert.ok(!gpuUserData("bottlerocket", GRACE).includes("\r"));
  });

  it("AL2023: MIME multi-part with a nodeadm NodeConfig part and a shell tuning part", async () => {
    const parts = await parseMime(gpuUserData("al2023", GRACE));
    assert.deepEqual(
      parts.map((p) => p.mimeType),
      [NODEADM.contentType, "text/x-shellscript"],
    );
    const nodeConfig = yaml.load(parts[0].body) as any;
    assert.equal(nodeConfig.apiVersion, "node.eks.aws/v1alpha1");
    assert.equal(nodeConfig.kind, "NodeConfig");
    // Partial: EKS supplies the cluster section; ours must not fight it.
    assert.equal(nodeConfig.spec.cluster, undefined);
    assert.equal(nodeConfig.spec.kubelet.config.shutdownGracePeriod, `${GRACE + 15}s`);
    assertShellTuning(parts[1].body);
  });

  it("AL2: MIME multi-part with the shell tuning part (EKS appends bootstrap.sh)", async () => {
    const parts = await parseMime(gpuUserData("al2", GRACE));
    assert.deepEqual(
      parts.map((p) => p.mimeType),
      ["text/x-shellscript"],
    );
    assertShellTuning(parts[0].body);
  });

  it("Bottlerocket: TOML settings with swappiness and THP off on the kernel command line", async () => {
    const doc = await parseToml(gpuUserData("bottlerocket", GRACE));
    assert.equal(doc.settings.kernel.sysctl["vm.swappiness"], String(HOST_TUNING.swappiness));
    assert.deepEqual(doc.settings.boot["kernel-parameters"].transparent_hugepage, ["never"]);
    assert.equal(doc.settings.boot["reboot-to-reconcile"], true);
    // Only settings: anything else makes Bottlerocket's settings generation fail at boot.
    assert.deepEqual(Object.keys(doc), ["settings"]);
  });

  it("every AMI type's family has user data that parses", async () => {
    for (const t of GPU_AMI_TYPE_NAMES) {
      const text = gpuUserData(GPU_AMI_TYPES[t].family, GRACE);
      if (GPU_AMI_TYPES[t].family === "bottlerocket") await parseToml(text);
      else assert.ok((await parseMime(text)).length >= 1, t);
    }
  });

  it("the planned launch template carries the AL2023 user data, base64-encoded", async () => {
    const p = await plan("prod");
    const lt = one(p.resources, "aws:ec2/launchTemplate:LaunchTemplate");
    const graces = ofType(p.resources, "kubernetes:apps/v1:StatefulSet").map((s) => s.props.spec.template.spec.terminationGracePeriodSeconds ?? 30);
    assert.equal(Buffer.from(lt.props.userData, "base64").toString("utf8"), gpuUserData("al2023", Math.max(...graces)));
  });
});
