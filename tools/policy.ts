// npm run policy -- --resources FILE --stack NAME [--json]
// Evaluates the policy pack over any resources.json (the planner's format) with that
// stack's enforcement levels: for plans produced elsewhere.
import * as fs from "node:fs";
import * as path from "node:path";
import { finish, parseArgs, runCli, type CliIo } from "./planner/cli";
import { checkResources } from "./planner/check";
import { projectAt, REPOSITORY, ROOT } from "./planner/project";
import { UsageError } from "./planner/stackfile";
import type { RecordedResource } from "./planner/record";
import { stackReport } from "./planner/report";

function readResources(file: string, absolute: string): RecordedResource[] {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(absolute, "utf8"));
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  if (!Array.isArray(data)) throw new UsageError(`${file} must hold a JSON array of {urn, type, name, custom, parent, props}`);
  data.forEach((r, i) => {
    for (const k of ["urn", "type", "name"]) {
      if (typeof r?.[k] !== "string") throw new UsageError(`${file}[${i}].${k} must be a string, got ${JSON.stringify(r?.[k])}`);
    }
    if (r.props === null || typeof r.props !== "object") throw new UsageError(`${file}[${i}].props must be an object`);
  });
  return data as RecordedResource[];
}

/** `npm run policy -- <argv>` on the project at `io.root`, writing to `io`; its exit code (errors are thrown: see runMain). */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { values: ["resources", "stack"], switches: ["json"] });
  if (typeof args.resources !== "string" || typeof args.stack !== "string") {
    throw new UsageError("usage: npm run policy -- --resources FILE --stack NAME [--json]");
  }
  // As the user wrote it in messages; read relative to where the command runs.
  const resources = readResources(args.resources, path.resolve(io.cwd, args.resources));
  const project = io.root === ROOT ? REPOSITORY : projectAt(io.root);
  const violations = await checkResources(resources, args.stack, project.policiesDir, project);
  return finish(io, [stackReport(args.stack, resources, violations)], args.json === true);
}

if (require.main === module) runCli(main, ROOT);
