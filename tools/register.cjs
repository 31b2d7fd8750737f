// Runs the project's TypeScript on plain Node: `node --require ./tools/register.cjs x.ts`.
// Why not tsx or esbuild-register: measured on the offline plan, their global loader
// hooks and source-map support cost more than the plan itself (every SDK module's .map was
// parsed). This hook touches only .ts files outside node_modules, transpiles them with
// esbuild (type checking is `npm run typecheck`), and caches the output by content hash in
// node_modules/.cache so a repeated run starts no esbuild process at all.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");

const CACHE = path.join(__dirname, "..", "node_modules", ".cache", "triton-platform-ts");
let esbuild;
let version;

function transpile(source, filename) {
  // The version from package.json: esbuild itself is loaded only on a cache miss.
  version ??= require("esbuild/package.json").version;
  // The output depends on the source and the file's base name (the inline source map names
  // it relative to the file itself), not on the folder: copies of the project (tests, the
  // plan of a base revision) share the cache instead of growing it.
  const base = path.basename(filename);
  const key = crypto.createHash("sha256").update(version).update("\0").update(base).update("\0").update(source).digest("hex");
  const cached = path.join(CACHE, key + ".js");
  try {
    return fs.readFileSync(cached, "utf8");
  } catch {
    // not cached yet
  }
  esbuild ??= require("esbuild");
  const { code } = esbuild.transformSync(source, { loader: "ts", format: "cjs", target: "node20", sourcefile: base, sourcemap: "inline" });
  try {
    fs.mkdirSync(CACHE, { recursive: true });
    const tmp = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached); // atomic: parallel test processes never read half a file
  } catch {
    // a read-only checkout still runs, only without the cache
  }
  return code;
}

require.extensions[".ts"] = function loadTs(module, filename) {
  if (filename.includes(`${path.sep}node_modules${path.sep}`)) throw new Error(`refusing to transpile ${filename} from node_modules`);
  module._compile(transpile(fs.readFileSync(filename, "utf8"), filename), filename);
};

// Two of the SDK's module-level requires load what a program that serializes no function never
// uses: runtime/closure/parseFunction.js requires TypeScript (9 MB of JavaScript) and
// runtime/closure/codePaths.js requires @npmcli/arborist (with pacote, sigstore, cacache...),
// both for pulumi.runtime.serializeFunction (function serialization, e.g. Lambda callbacks) only.
// Together about 1 s of CPU of every process that loads @pulumi/pulumi (the plan, cmd/run under
// `pulumi up`, the tests), measured with --cpu-prof. Those two requires get a stand-in that
// loads the real module on its first use, so a program that does serialize a function gets
// the same module, only later. Scoped to those two requiring files: any other require of
// typescript or arborist is untouched.
const LAZY = new Map([
  [`${path.sep}runtime${path.sep}closure${path.sep}parseFunction.js`, "../../typescript-shim"],
  [`${path.sep}runtime${path.sep}closure${path.sep}codePaths.js`, "@npmcli/arborist"],
]);
function lazyModule(load) {
  let real;
  const get = () => (real ??= load());
  // get/has only: parseFunction reads `ts.X`; codePaths' __importStar sees __esModule and keeps
  // the stand-in, then reads `arborist.Arborist`. Anything else (keys, descriptors) loads it too.
  return new Proxy(
    {},
    {
      get: (_t, k) => (k === "__esModule" ? true : Reflect.get(get(), k)),
      has: (_t, k) => k in get(),
    },
  );
}
{
  const loadJs = require.extensions[".js"];
  require.extensions[".js"] = function loadJsLazily(module, filename) {
    if (filename.includes(`${path.sep}@pulumi${path.sep}pulumi${path.sep}`)) {
      for (const [suffix, request] of LAZY) {
        if (!filename.endsWith(suffix)) continue;
        const req = module.require;
        module.require = function requireLazily(id) {
          return id === request ? lazyModule(() => req.call(module, id)) : req.call(module, id);
        };
      }
    }
    return loadJs(module, filename);
  };
}

// Under Pulumi's language host (`pulumi up`/`preview` run `node --require ./tools/register.cjs
// .../@pulumi/pulumi/cmd/run/index.js`, see Pulumi.yaml): the SDK records a stack trace on every
// promise it makes (runtime/debuggable.js debuggablePromise, `new Error().stack`, for its leak
// report), and cmd/run's source-map-support maps every frame of each: about a fifth of the
// program's CPU time, measured through the fake engine (test/support/fake-engine.ts). Those
// stacks are left empty, as the plan leaves them (record.ts); the program's own errors and the
// resources' source positions keep their stacks. PULUMI_DEBUG_PROMISE_LEAKS=true (the SDK's
// switch for printing those stacks) keeps them too.
if (/[\\/]@pulumi[\\/]pulumi[\\/]cmd[\\/]run([\\/]index\.js)?$/.test(process.argv[1] ?? "") && !process.env.PULUMI_DEBUG_PROMISE_LEAKS) {
  const loadJs = require.extensions[".js"];
  require.extensions[".js"] = function loadJsAndPatch(module, filename) {
    loadJs(module, filename);
    if (!filename.endsWith(`${path.sep}runtime${path.sep}debuggable.js`) || !filename.includes(`${path.sep}@pulumi${path.sep}pulumi${path.sep}`)) return;
    const original = module.exports.debuggablePromise;
    // Every caller reads it off the module's exports (`debuggable_1.debuggablePromise(...)`), so replacing the export suffices.
    if (typeof original !== "function") return;
    module.exports.debuggablePromise = function debuggablePromise(p, ctx) {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        return original.call(this, p, ctx);
      } finally {
        Error.stackTraceLimit = limit;
      }
    };
  };
}
