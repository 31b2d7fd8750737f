// A copy of the project in a temporary folder, for planning variants of its stacks
// (tests, the scale benchmark) without touching the working tree.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const PROJECT_ENTRIES = ["Pulumi.yaml", "index.ts", "lib", "config", "components", "policies", "tools", "package.json", "tsconfig.json"];

/** Copy `root`'s program to a temp folder (node_modules linked) with `stacks` (name → YAML) as its stack files. */
export function copyProject(root: string, stacks: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "triton-platform-"));
  for (const e of PROJECT_ENTRIES) {
    fs.cpSync(path.join(root, e), path.join(dir, e), { recursive: true, filter: (src) => !src.includes(`${path.sep}node_modules`) });
  }
  fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  for (const [name, text] of Object.entries(stacks)) fs.writeFileSync(path.join(dir, `Pulumi.${name}.yaml`), text);
  return dir;
}
