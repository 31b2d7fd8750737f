// tools/register.cjs (the loader of the plan, of `pulumi up` through Pulumi.yaml's nodeargs, and
// of the tests) gives two of the SDK's module-level requires a stand-in that loads on first use:
// TypeScript (runtime/closure/parseFunction.js) and @npmcli/arborist (runtime/closure/codePaths.js),
// both needed only to serialize a function. In a fresh node process, as those load it: loading
// @pulumi/pulumi loads neither, and serializing a function (a subclass calling super, which
// parses and rewrites its text with TypeScript) and computing its code paths (arborist) still
// work and then load them.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { ROOT } from "./helpers";

const SCRIPT = `
const loaded = () => Object.keys(require.cache).filter((f) => /[\\\\/]typescript[\\\\/]lib[\\\\/]typescript\\.js$|[\\\\/]@npmcli[\\\\/]arborist[\\\\/]lib[\\\\/]index\\.js$/.test(f)).map((f) => f.replace(/.*node_modules[\\\\/]/, ""));
const pulumi = require("@pulumi/pulumi");
const atLoad = loaded();
class A { constructor() { this.x = 1; } m() { return this.x; } }
class B extends A { m() { return super.m() + 1; } }
const b = new B();
pulumi.runtime
  .serializeFunction(() => b.m() + 40)
  .then(async (f) => {
    const afterSerialize = loaded();
    const paths = await pulumi.runtime.computeCodePaths();
    process.stdout.write(JSON.stringify({ atLoad, afterSerialize, text: f.text, paths: paths.size, afterPaths: loaded() }));
  })
  .catch((e) => { console.error(e); process.exit(1); });
`;

describe("tools/register.cjs loads TypeScript and arborist for the SDK only when a function is serialized", function () {
  this.timeout(60_000);

  it("a process that loads @pulumi/pulumi loads neither; serializeFunction and computeCodePaths work and load them", () => {
    const r = spawnSync(process.execPath, ["--require", "./tools/register.cjs", "-e", SCRIPT], { cwd: ROOT, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.atLoad, []);
    assert.deepEqual(out.afterSerialize, ["typescript/lib/typescript.js"]);
    // The serialized function captured the subclass, whose super call TypeScript rewrote.
    assert.match(out.text, /__super/);
    assert.match(out.text, /\+ 40/);
    assert.ok(out.paths > 0, "computeCodePaths found the package's files");
    assert.deepEqual(out.afterPaths.sort(), ["@npmcli/arborist/lib/index.js", "typescript/lib/typescript.js"]);
  });
});
