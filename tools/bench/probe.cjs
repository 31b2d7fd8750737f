// Preloaded (--require) into a measured process: at exit it writes which Pulumi SDK module
// files were loaded and the process's peak memory to $BENCH_PROBE_FILE.
const fs = require("node:fs");
process.on("exit", () => {
  const file = process.env.BENCH_PROBE_FILE;
  if (!file) return;
  const modules = Object.keys(require.cache).filter((id) => /[\\/]node_modules[\\/]@pulumi[\\/]/.test(id));
  fs.writeFileSync(file, JSON.stringify({ modules, maxRssKiB: process.resourceUsage().maxRSS }));
});
