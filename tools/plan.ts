// npm run plan [-- --stack NAME] [--out DIR] [--base GIT-REF] [--format text|json|markdown | --json]
//              [--output FILE] [--sarif FILE] [--verbose]
// Plans every Pulumi.<stack>.yaml (or one) offline under Pulumi's mock runtime, writes
// out/<stack>/ (resources.json, manifests/, envoy.json, helm/, triton/, graph.md), and
// evaluates the policy pack. A stack whose configuration is invalid is reported with its
// error and the others are still planned (exit 2 at the end).
// With --base, also plans the same stacks as they were at that git revision and prints what
// `pulumi up` would change in each (config keys, creates, updates with property paths,
// replacements, deletes, policy violations new/fixed).
// --output FILE writes the JSON report (whatever the terminal format); --sarif FILE writes
// SARIF 2.1.0 for GitHub code scanning.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { EXIT_USAGE, exitCode, jsonDocument, parseArgs, runCli, type CliIo } from "./planner/cli";
import { listStacks, planStack, projectAt, readProjectName, REPOSITORY, ROOT, UsageError, type PlanResult } from "./planner";
import type { StackDiff } from "./planner/diff";
import { errorReport, formatText, type StackReport } from "./planner/report";
import { isSettingsError } from "../lib/errors";

const USAGE =
  "usage: npm run plan -- [--stack NAME] [--out DIR] [--base GIT-REF] [--format text|json|markdown | --json] [--output FILE] [--sarif FILE] [--verbose]\n";
const FORMATS = ["text", "json", "markdown"] as const;
type Format = (typeof FORMATS)[number];

/** A stack's configuration error (exit 2 on its own): reported for that stack, the others still planned. */
function isConfigError(e: unknown): e is Error {
  return isSettingsError(e) || (e instanceof Error && e.name === UsageError.name);
}

/** `npm run plan -- <argv>` on the project at `io.root`, writing to `io`; its exit code (errors are thrown: see runMain). */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const root = io.root;
  const project = root === ROOT ? REPOSITORY : projectAt(root);
  const args = parseArgs(argv, { values: ["stack", "out", "base", "format", "output", "sarif"], switches: ["json", "help", "verbose"] });
  if (args.help) {
    io.stdout.write(USAGE);
    return EXIT_USAGE;
  }
  const format = (args.json === true ? "json" : (args.format ?? "text")) as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, got ${JSON.stringify(args.format)}`);
  if (args.json === true && args.format !== undefined && args.format !== "json")
    throw new UsageError(`--json and --format ${args.format} contradict each other`);
  const base = typeof args.base === "string" ? args.base : undefined;
  const verbose = args.verbose === true;
  const outputFile = typeof args.output === "string" ? path.resolve(io.cwd, args.output) : undefined;
  const sarifFile = typeof args.sarif === "string" ? path.resolve(io.cwd, args.sarif) : undefined;

  const stacks = typeof args.stack === "string" ? [args.stack] : listStacks(root);
  const outRoot = path.resolve(io.cwd, typeof args.out === "string" ? args.out : path.join(root, "out"));
  const plans = new Map<string, PlanResult>();
  const reports: StackReport[] = [];
  // The checkout's root: SARIF paths and a config error's `Pulumi.<stack>.yaml:line:column` are relative to it.
  const top = (() => {
    try {
      return fs.realpathSync(
        execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim(),
      );
    } catch {
      return fs.realpathSync(root); // not a git checkout: paths relative to the project
    }
  })();
  for (const stack of stacks) {
    try {
      const p = await planStack(stack, { outRoot, project });
      plans.set(stack, p);
      reports.push(p.report);
    } catch (e) {
      // Say which stack failed: the same key may be fine in another stack. Keep planning the others.
      if (!isConfigError(e)) {
        (e as Error).message = `stack ${stack}: ${(e as Error).message}`;
        throw e;
      }
      /* eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for a config error (the yaml package) */
      const { stackFileOf, withStackFilePositions } = require("./planner/sarif") as typeof import("./planner/sarif");
      reports.push(errorReport(stack, withStackFilePositions(e.message, stackFileOf(fs.realpathSync(root), stack, top), readProjectName(root))));
    }
  }

  const diffs = new Map<string, StackDiff>();
  if (base) {
    // Loaded only here, with require (import() would leave the transpile hook): a plain plan
    // does not pay for them.
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { recordAtRef, isBaseError } = require("./planner/base") as typeof import("./planner/base");
    const { compareStack } = require("./planner/compare") as typeof import("./planner/compare");
    /* eslint-enable @typescript-eslint/no-require-imports */
    const planned = stacks.filter((s) => plans.has(s));
    const before = await recordAtRef(root, base, planned);
    const projectName = readProjectName(root);
    for (const stack of planned) {
      const p = plans.get(stack)!;
      const old = before.get(stack) ?? null;
      if (isBaseError(old)) {
        diffs.set(stack, { stack, base, counts: { create: 0, update: 0, replace: 0, delete: 0 }, resources: [], config: [], baseError: old.error });
        continue;
      }
      diffs.set(stack, await compareStack(stack, base, old, p, projectName, project));
    }
  }

  const doc = () =>
    jsonDocument(
      reports.map((r) => ({ ...r, ...(diffs.has(r.stack) ? { diff: diffs.get(r.stack) } : {}) })),
      base ? { base } : {},
    );
  if (outputFile) {
    fs.mkdirSync(path.dirname(outputFile), { recursive: true });
    fs.writeFileSync(outputFile, doc());
  }
  if (sarifFile) {
    /* eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for --sarif (the yaml package) */
    const { sarifLog, stackFileOf } = require("./planner/sarif") as typeof import("./planner/sarif");
    const log = sarifLog(
      reports.map((report) => ({
        report,
        resources: plans.get(report.stack)?.resources ?? [],
        stackFile: stackFileOf(fs.realpathSync(root), report.stack, top),
      })),
      project.rules(),
      {
        projectName: readProjectName(root),
        version: (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version?: string }).version,
        // In Actions the repository's page; elsewhere the README of the checkout.
        informationUri:
          process.env.GITHUB_SERVER_URL && process.env.GITHUB_REPOSITORY
            ? `${process.env.GITHUB_SERVER_URL}/${process.env.GITHUB_REPOSITORY}#readme`
            : pathToFileURL(path.join(root, "README.md")).href,
      },
    );
    fs.mkdirSync(path.dirname(sarifFile), { recursive: true });
    fs.writeFileSync(sarifFile, JSON.stringify(log, null, 2) + "\n");
  }

  if (format === "json") {
    io.stdout.write(doc());
  } else if (format === "markdown") {
    /* eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for the Markdown body */
    const { planMarkdown } = require("./planner/markdown") as typeof import("./planner/markdown");
    const commit = (() => {
      try {
        return execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
      } catch {
        return undefined; // not a git checkout
      }
    })();
    const resources = new Map([...plans].map(([s, p]) => [s, p.resources] as const));
    io.stdout.write(planMarkdown(reports, base ? diffs : undefined, base, { verbose, resources, ...(commit ? { commit } : {}) }));
  } else if (base) {
    /* eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only with --base */
    const { formatDiffText } = require("./planner/diff") as typeof import("./planner/diff");
    io.stdout.write(
      reports.map((r) => (diffs.has(r.stack) ? `${formatDiffText(diffs.get(r.stack)!)}\n` : "") + formatText(r, { verbose })).join("\n\n") + "\n",
    );
  } else {
    io.stdout.write(reports.map((r) => formatText(r, { verbose })).join("\n\n") + "\n");
  }
  const failed = reports.filter((r) => r.error);
  for (const r of failed) io.stderr.write(`error: stack ${r.stack}: ${r.error}\n`);
  if (failed.length && reports.length > 1)
    io.stderr.write(`${failed.length} of ${reports.length} stacks have a configuration error (exit 2); the others were planned.\n`);
  return exitCode(reports);
}

if (require.main === module) runCli(main, ROOT);
