// The policy pack's entry (package.json main), as the engine's policy host runs it:
// `run-policy-pack` registers the SDK's ts-node with type checking, always (@pulumi/pulumi
// cmd/run-policy-pack/run.js at 3.248.0), so an index.ts entry type-checked the pack and every
// module it imports on each cold start (17.6 s of CPU against 3.8 s warm in the entry test,
// measured with /usr/bin/time). The pack loads the way the program does under `pulumi up`:
// the project's esbuild loader (tools/register.cjs) takes over .ts files, and the type check is
// `npm test`'s (tools/check-code.mjs), as for the program. The pack itself is index.ts.
"use strict";
require("../tools/register.cjs");
module.exports = require("./index.ts");
