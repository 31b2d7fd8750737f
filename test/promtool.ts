// promtool (Debian package "prometheus") for the tests that prove rules and scrape config
// with the real tool. Missing promtool is a test failure with instructions, never a skip.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import * as yaml from "js-yaml";

/** Throws (failing the suite) when promtool is not on PATH. */
export function requirePromtool(): string {
  const r = spawnSync("promtool", ["--version"], { encoding: "utf8" });
  if (r.error || r.status !== 0) {
    throw new Error(
      "promtool is required by the monitoring tests but was not found on PATH " +
        `(${r.error?.message ?? `exit ${r.status}: ${r.stderr}`}). Install Debian's 'prometheus' package ` +
        "(apt-get install -y prometheus); .ci/run does this.",
    );
  }
  return (r.stdout || r.stderr).split("\n")[0];
}

/** A temporary folder with the given files (objects are dumped as YAML). */
export function writeFiles(files: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "promtool-"));
  for (const [name, content] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), typeof content === "string" ? content : yaml.dump(content, { noRefs: true, lineWidth: -1 }));
  }
  return dir;
}

/** Run promtool in `dir`. */
export function promtool(dir: string, args: string[]): { status: number | null; output: string } {
  const r = spawnSync("promtool", args, { cwd: dir, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

let k8sSd: boolean | undefined;
/**
 * Whether this promtool knows kubernetes_sd_configs. Debian builds Prometheus without the
 * Kubernetes service discovery (its client libraries are not packaged), so its promtool
 * rejects the field itself; an upstream build accepts it.
 */
export function promtoolSupportsKubernetesSd(): boolean {
  if (k8sSd === undefined) {
    const dir = writeFiles({ "probe.yml": { scrape_configs: [{ job_name: "probe", kubernetes_sd_configs: [{ role: "endpoints" }] }] } });
    const r = promtool(dir, ["check", "config", "probe.yml"]);
    if (r.status === 0) k8sSd = true;
    else if (/field kubernetes_sd_configs not found/.test(r.output)) k8sSd = false;
    else throw new Error(`probing promtool for kubernetes_sd_configs failed unexpectedly:\n${r.output}`);
  }
  return k8sSd;
}
