// One run of a stack's program through `pulumi up`'s entry point, @pulumi/pulumi/cmd/run,
// spawned as the Go language host spawns it, against the fake engine of the tests
// (test/support/fake-engine.ts). Prints JSON: the wall time from spawn to exit of cmd/run
// (not this runner's own start-up) and the probe of that process (CPU, memory).
//   node -r ./tools/register.cjs tools/bench/entry-point.ts --stack prod [--dry-run] [--typescript]
// --typescript: the old runtime options (typescript: true, no nodeargs): the SDK's vendored ts-node.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readProjectName, readStackFile, ROOT, REPOSITORY } from "../planner";
import { runThroughEntryPoint } from "../../test/support/fake-engine";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const stack = argv[argv.indexOf("--stack") + 1];
  if (!argv.includes("--stack") || !stack) throw new Error("usage: entry-point.ts --stack NAME [--dry-run] [--typescript]");
  const probeFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-entry-")), "probe.json");
  const r = await runThroughEntryPoint({
    root: ROOT,
    project: readProjectName(ROOT),
    stack: readStackFile(ROOT, stack),
    fakes: REPOSITORY.fakes,
    dryRun: argv.includes("--dry-run"),
    options: argv.includes("--typescript") ? { typescript: true } : undefined,
    env: { NODE_OPTIONS: `--require ${path.join(__dirname, "probe.cjs")}`, BENCH_PROBE_FILE: probeFile },
  });
  if (r.code !== 0 || r.unexpected.length) throw new Error(`cmd/run exited ${r.code} (${r.unexpected.join(", ")}): ${r.stderr}`);
  const probe = fs.existsSync(probeFile) ? JSON.parse(fs.readFileSync(probeFile, "utf8")) : undefined;
  process.stdout.write(JSON.stringify({ ms: r.ms, resources: r.resources.length, probe }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
