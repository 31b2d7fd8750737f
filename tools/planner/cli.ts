// Shared command-line plumbing of `npm run plan` and `npm run policy`: argument parsing,
// exit codes (0 clean, 1 a mandatory violation, 2 bad config or usage) and output.
import { UsageError } from "./stackfile";
import { isSettingsError } from "../../lib/errors";
import { formatText, REPORT_SCHEMA_VERSION, type StackReport } from "./report";

export const EXIT_OK = 0;
export const EXIT_VIOLATION = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERNAL = 3;

/** Parse `--flag value` / `--flag=value` / `--switch` arguments against a spec. */
export function parseArgs(argv: string[], spec: { values: string[]; switches: string[] }): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new UsageError(`unexpected argument ${JSON.stringify(a)}`);
    const [, name, inline] = m;
    if (spec.switches.includes(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      out[name] = true;
    } else if (spec.values.includes(name)) {
      const v = inline ?? argv[++i];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`--${name} needs a value`);
      out[name] = v;
    } else {
      throw new UsageError(`unknown option --${name} (options: ${[...spec.values, ...spec.switches].map((o) => "--" + o).join(", ")})`);
    }
  }
  return out;
}

/** The JSON report document (`--json`, `--output FILE`): versioned, one entry per stack. */
export function jsonDocument(reports: readonly StackReport[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ schemaVersion: REPORT_SCHEMA_VERSION, ...extra, stacks: reports }, null, 2) + "\n";
}

/** The exit code of a set of reports: 2 when a stack has a configuration error, 1 on a mandatory violation, else 0. */
export function exitCode(reports: readonly StackReport[]): number {
  if (reports.some((r) => r.error)) return EXIT_USAGE;
  return reports.some((r) => r.mandatory > 0) ? EXIT_VIOLATION : EXIT_OK;
}

/** Print the reports to `io` and return the exit code. */
export function finish(io: CliIo, reports: StackReport[], json: boolean, opts: { verbose?: boolean } = {}): number {
  if (json) io.stdout.write(jsonDocument(reports));
  else io.stdout.write(reports.map((r) => formatText(r, opts)).join("\n\n") + "\n");
  for (const r of reports) if (r.error) io.stderr.write(`error: stack ${r.stack}: ${r.error}\n`);
  return exitCode(reports);
}

/**
 * Where a command runs: its output streams, the folder relative paths are resolved against
 * (the process's cwd) and the project root it plans (the checkout the tool sits in). A test
 * runs a command in-process with its own streams and root; `runCli` passes the process's.
 */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  cwd: string;
  root: string;
}

/** A command: its arguments (without node and the script) → its exit code. */
export type CliMain = (argv: string[], io: CliIo) => Promise<number>;

/**
 * Run a command with the project's exit codes: what it returns, else 2 for a configuration or
 * usage error (its message on stderr) and 3 for an internal error (its stack on stderr).
 */
export async function runMain(main: CliMain, argv: string[], io: CliIo): Promise<number> {
  try {
    return await main(argv, io);
  } catch (e) {
    // By name: each planned stack loads the program's modules afresh (SettingsError included),
    // and `npm run policy` does not load the config module at all.
    if (isSettingsError(e) || (e instanceof Error && e.name === UsageError.name)) {
      io.stderr.write(`error: ${e.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr.write(`internal error: ${(e as Error)?.stack ?? String(e)}\n`);
    return EXIT_INTERNAL;
  }
}

/**
 * A closed pipe (`npm run plan | head`) ends the process quietly: the reader wanted no more.
 * Without this, the EPIPE of the next write is an unhandled 'error' event and a stack trace.
 */
export function quietOnClosedPipe(): void {
  for (const s of [process.stdout, process.stderr]) {
    s.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(typeof process.exitCode === "number" ? process.exitCode : EXIT_OK);
      throw e;
    });
  }
}

/** Run a command as the process (`node tools/<tool>.ts ...`) on the project at `root`: its exit code becomes the process's. */
export function runCli(main: CliMain, root: string): void {
  quietOnClosedPipe();
  void runMain(main, process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd(), root }).then((code) => {
    process.exitCode = code;
  });
}
