// amtool (Debian package "prometheus-alertmanager") for the tests that prove the Alertmanager
// configuration with Alertmanager's own parser and router. Missing amtool is a test failure
// with instructions, never a skip.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import * as yaml from "js-yaml";

/** Throws (failing the suite) when amtool is not on PATH; else its version line. */
export function requireAmtool(): string {
  const r = spawnSync("amtool", ["--version"], { encoding: "utf8" });
  if (r.error || r.status !== 0) {
    throw new Error(
      "amtool is required by the Alertmanager tests but was not found on PATH " +
        `(${r.error?.message ?? `exit ${r.status}: ${r.stderr}`}). Install Debian's 'prometheus-alertmanager' package ` +
        "(apt-get install -y prometheus-alertmanager); .ci/run does this.",
    );
  }
  return (r.stdout || r.stderr).split("\n")[0];
}

/** An Alertmanager configuration written to a temporary file; its path. */
export function writeAlertmanagerConfig(config: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "amtool-"));
  const file = path.join(dir, "alertmanager.yml");
  fs.writeFileSync(file, yaml.dump(config, { noRefs: true, lineWidth: -1 }));
  return file;
}

/** `amtool check-config <file>`. */
export function amtoolCheckConfig(file: string): { status: number | null; output: string } {
  const r = spawnSync("amtool", ["check-config", file], { encoding: "utf8", timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

/**
 * The receivers Alertmanager's router delivers an alert with `labels` to:
 * `amtool config routes test --config.file=<file> <label>=<value>...` (it prints them comma-separated).
 */
export function amtoolRoute(file: string, labels: Readonly<Record<string, string>>): string[] {
  // amtool's answer is a function of the configuration's text and the labels: asked once per
  // test process (tests that route the same alerts through the same configuration share it).
  const key = `${fs.readFileSync(file, "utf8")}\0${JSON.stringify(Object.entries(labels))}`;
  let receivers = routes.get(key);
  if (!receivers) {
    receivers = amtoolRouteUncached(file, labels);
    routes.set(key, receivers);
  }
  return [...receivers];
}

const routes = new Map<string, readonly string[]>();

function amtoolRouteUncached(file: string, labels: Readonly<Record<string, string>>): string[] {
  const args = ["config", "routes", "test", `--config.file=${file}`, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)];
  const r = spawnSync("amtool", args, { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`amtool ${args.join(" ")} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout
    .trim()
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
