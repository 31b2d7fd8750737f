// Preloaded (--require) into a measured process: at exit it writes which Pulumi SDK module
// files were loaded, the process's peak memory and its CPU time (user + system) to $BENCH_PROBE_FILE.
const fs = require("node:fs");
process.on("exit", () => {
  const file = process.env.BENCH_PROBE_FILE;
  if (!file) return;
  const modules = Object.keys(require.cache).filter((id) => /[\\/]node_modules[\\/]@pulumi[\\/]/.test(id));
  const { user, system } = process.cpuUsage();
  fs.writeFileSync(file, JSON.stringify({ modules, maxRssKiB: process.resourceUsage().maxRSS, cpuMs: (user + system) / 1000 }));
});
