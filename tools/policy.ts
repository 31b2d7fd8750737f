// npm run policy -- --resources FILE --stack NAME [--json]
// Evaluates the policy pack over any resources.json (the planner's format) with that
// stack's enforcement levels: for plans produced elsewhere.
import * as fs from "node:fs";
import { finish, parseArgs, runCli } from "./planner/cli";
import { checkResources } from "./planner/check";
import { UsageError } from "./planner/stackfile";
import type { RecordedResource } from "./planner/record";
import { stackReport } from "./planner/report";

function readResources(file: string): RecordedResource[] {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, "utf8"));
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

runCli(async () => {
  const args = parseArgs(process.argv.slice(2), { values: ["resources", "stack"], switches: ["json"] });
  if (typeof args.resources !== "string" || typeof args.stack !== "string") {
    throw new UsageError("usage: npm run policy -- --resources FILE --stack NAME [--json]");
  }
  const resources = readResources(args.resources);
  const violations = await checkResources(resources, args.stack);
  return finish([stackReport(args.stack, resources, violations)], args.json === true);
});
