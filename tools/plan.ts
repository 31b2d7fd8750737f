// npm run plan [-- --stack NAME] [--out DIR] [--json] [--base GIT-REF] [--format text|json|markdown]
// Plans every Pulumi.<stack>.yaml (or one) offline under Pulumi's mock runtime, writes
// out/<stack>/resources.json and manifests/, and evaluates the policy pack.
// With --base, also plans the same stacks as they were at that git revision and prints what
// would change in each (creates, updates with property paths, replacements, deletes).
import * as path from "node:path";
import { EXIT_USAGE, EXIT_OK, EXIT_VIOLATION, finish, parseArgs, runCli } from "./planner/cli";
import { listStacks, planStack, ROOT, UsageError, type PlanResult } from "./planner";
import type { StackDiff } from "./planner/diff";
import { formatText } from "./planner/report";

const USAGE = "usage: npm run plan -- [--stack NAME] [--out DIR] [--base GIT-REF] [--format text|json|markdown | --json]\n";
const FORMATS = ["text", "json", "markdown"] as const;
type Format = (typeof FORMATS)[number];

runCli(async () => {
  const args = parseArgs(process.argv.slice(2), { values: ["stack", "out", "base", "format"], switches: ["json", "help"] });
  if (args.help) {
    process.stdout.write(USAGE);
    return EXIT_USAGE;
  }
  const format = (args.json === true ? "json" : (args.format ?? "text")) as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, got ${JSON.stringify(args.format)}`);
  if (args.json === true && args.format !== undefined && args.format !== "json")
    throw new UsageError(`--json and --format ${args.format} contradict each other`);
  const base = typeof args.base === "string" ? args.base : undefined;

  const stacks = typeof args.stack === "string" ? [args.stack] : listStacks(ROOT);
  const outRoot = path.resolve(typeof args.out === "string" ? args.out : path.join(ROOT, "out"));
  const plans: PlanResult[] = [];
  for (const stack of stacks) {
    try {
      plans.push(await planStack(stack, { outRoot }));
    } catch (e) {
      // Say which stack failed: the same key may be fine in another stack.
      (e as Error).message = `stack ${stack}: ${(e as Error).message}`;
      throw e;
    }
  }
  const reports = plans.map((p) => p.report);

  // Without --base and in the formats that existed before it: exactly today's output.
  if (!base && format !== "markdown") return finish(reports, format === "json");

  // Loaded only here, with require (import() would leave the transpile hook): a plain plan,
  // every pull request's job, does not pay for them.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { recordAtRef } = require("./planner/base") as typeof import("./planner/base");
  const { countChanges, diffResources, diffSecureConfig, formatDiffText } = require("./planner/diff") as typeof import("./planner/diff");
  const { planMarkdown } = require("./planner/markdown") as typeof import("./planner/markdown");
  /* eslint-enable @typescript-eslint/no-require-imports */
  const diffs = new Map<string, StackDiff>();
  if (base) {
    const before = await recordAtRef(ROOT, base, stacks);
    for (const p of plans) {
      const old = before.get(p.report.stack) ?? null;
      const resources = diffResources(old?.resources ?? [], p.resources, { base: old?.secretFingerprints, head: p.secretFingerprints });
      diffs.set(p.report.stack, {
        stack: p.report.stack,
        base,
        ...(old ? {} : { newStack: true as const }),
        counts: countChanges(resources),
        resources,
        config: diffSecureConfig(old?.secureFingerprints ?? {}, p.secureFingerprints),
      });
    }
  }

  if (format === "markdown") process.stdout.write(planMarkdown(reports, base ? diffs : undefined, base));
  else if (format === "json") process.stdout.write(JSON.stringify({ base, stacks: reports.map((r) => ({ ...r, diff: diffs.get(r.stack) })) }, null, 2) + "\n");
  else process.stdout.write(reports.map((r) => `${formatDiffText(diffs.get(r.stack)!)}\n${formatText(r)}`).join("\n\n") + "\n");
  return reports.some((r) => r.mandatory > 0) ? EXIT_VIOLATION : EXIT_OK;
});
