// Shared command-line plumbing of `npm run plan` and `npm run policy`: argument parsing,
// exit codes (0 clean, 1 a mandatory violation, 2 bad config or usage) and output.
import { UsageError } from "./stackfile";
import { isSettingsError } from "../../lib/errors";
import { formatText, type StackReport } from "./report";

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

/** Print the reports and return the exit code. */
export function finish(reports: StackReport[], json: boolean): number {
  if (json) process.stdout.write(JSON.stringify({ stacks: reports }, null, 2) + "\n");
  else process.stdout.write(reports.map(formatText).join("\n\n") + "\n");
  return reports.some((r) => r.mandatory > 0) ? EXIT_VIOLATION : EXIT_OK;
}

/** Run a CLI main function with the project's exit codes. */
export function runCli(main: () => Promise<number>): void {
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
