// The map of imports, checked by a real tool (dependency-cruiser, rules in .dependency-cruiser.cjs):
// no import cycle, lib/ knows nothing of the project, components/ never import config/, tools/
// or policies/, components/upstream/ knows no platform module, components/naming.ts no component.
// Type-only imports count (see the config). The rules are shown to fire on a planted violation each.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ROOT } from "./helpers";

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: { name: string }[];
}

const CLI = path.join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");
const CONFIG = path.join(ROOT, ".dependency-cruiser.cjs");

function cruise(cwd: string, paths: string[]): Violation[] {
  const r = spawnSync(process.execPath, [CLI, "--config", CONFIG, "--output-type", "json", ...paths], { cwd, encoding: "utf8", maxBuffer: 64 << 20 });
  assert.ok(r.stdout, `dependency-cruiser printed nothing: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const show = (v: Violation) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name).join(" → ")})` : ""}`;

describe("the map of imports", function () {
  this.timeout(180_000);

  it("has no wrong-way arrow and no import cycle in any folder", () => {
    const violations = cruise(ROOT, ["index.ts", "config", "components", "lib", "tools", "policies"]);
    const errors = violations.filter((v) => v.rule.severity === "error");
    assert.deepEqual(errors.map(show), []);
    assert.ok(violations.length === 0, violations.map(show).join("\n"));
  });

  it("each rule fires on a planted violation (type-only imports included)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "import-map-"));
    try {
      const files: Record<string, string> = {
        "tsconfig.json": JSON.stringify({ compilerOptions: { module: "commonjs", moduleResolution: "node", strict: true } }),
        "lib/a.ts": 'import { x } from "../components/x";\nexport const a = x;\n',
        "components/x.ts": 'import type { C } from "../config/c";\nexport const x: C = 1;\n',
        "components/naming.ts": 'import type { S } from "./gpu/schema";\nexport const n: S = 1;\n',
        "components/gpu/schema.ts": "export type S = number;\n",
        "components/upstream/u.ts": 'import { n } from "../naming";\nexport const u = n;\n',
        "config/c.ts": 'import type { D } from "./d";\nexport type C = D;\n',
        "config/d.ts": 'import type { C } from "./c";\nexport type D = number;\nexport type E = C;\n',
      };
      for (const [f, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
        fs.writeFileSync(path.join(dir, f), text);
      }
      const fired = new Set(cruise(dir, ["lib", "components", "config"]).map((v) => v.rule.name));
      for (const rule of [
        "no-cycle",
        "lib-imports-nothing-of-the-project",
        "components-never-import-config-tools-or-policies",
        "upstream-knows-no-platform",
        "naming-knows-no-component",
      ]) {
        assert.ok(fired.has(rule), `${rule} did not fire (fired: ${[...fired].join(", ")})`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
