// npm run plan [-- --stack NAME] [--out DIR] [--json]
// Plans every Pulumi.<stack>.yaml (or one) offline under Pulumi's mock runtime, writes
// out/<stack>/resources.json and manifests/, and evaluates the policy pack.
import * as path from "node:path";
import { EXIT_USAGE, finish, parseArgs, runCli } from "./planner/cli";
import { listStacks, planStack, ROOT } from "./planner";
import type { StackReport } from "./planner/report";

runCli(async () => {
  const args = parseArgs(process.argv.slice(2), { values: ["stack", "out"], switches: ["json", "help"] });
  if (args.help) {
    process.stdout.write("usage: npm run plan -- [--stack NAME] [--out DIR] [--json]\n");
    return EXIT_USAGE;
  }
  const stacks = typeof args.stack === "string" ? [args.stack] : listStacks(ROOT);
  const outRoot = path.resolve(typeof args.out === "string" ? args.out : path.join(ROOT, "out"));
  const reports: StackReport[] = [];
  for (const stack of stacks) {
    try {
      reports.push((await planStack(stack, { outRoot })).report);
    } catch (e) {
      // Say which stack failed: the same key may be fine in another stack.
      (e as Error).message = `stack ${stack}: ${(e as Error).message}`;
      throw e;
    }
  }
  return finish(reports, args.json === true);
});
