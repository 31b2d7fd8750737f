// Shared command-line plumbing of `npm run plan` and `npm run policy`: argument parsing,
// exit codes (0 clean, 1 a mandatory violation, 2 bad config or usage) and output.
import { UsageError } from "./stackfile";
import { isSettingsError } from "../../lib/errors";
import { formatText, REPORT_SCHEMA_VERSION, type StackReport } from "./report";

export const EXIT_OK = 0;
export const EXIT_VIOLATION = 1;
export const EXIT_USAGE = 2;

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

/** Print the reports and return the exit code. */
export function finish(reports: StackReport[], json: boolean, opts: { verbose?: boolean } = {}): number {
  if (json) process.stdout.write(jsonDocument(reports));
  else process.stdout.write(reports.map((r) => formatText(r, opts)).join("\n\n") + "\n");
  for (const r of reports) if (r.error) process.stderr.write(`error: stack ${r.stack}: ${r.error}\n`);
  return exitCode(reports);
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

/** Run a CLI main function with the project's exit codes. */
export function runCli(main: () => Promise<number>): void {
  quietOnClosedPipe();
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      // By name: each planned stack loads the program's modules afresh (SettingsError included),
      // and `npm run policy` does not load the config module at all.
      if (isSettingsError(e) || (e instanceof Error && e.name === UsageError.name)) {
        process.stderr.write(`error: ${e.message}\n`);
        process.exitCode = EXIT_USAGE;
      } else {
        process.stderr.write(`internal error: ${(e as Error)?.stack ?? String(e)}\n`);
        process.exitCode = 3;
      }
    },
  );
}
