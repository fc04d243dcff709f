// Preloaded (`node --require`) into the CLIs the scale benchmark runs: writes the process's peak
// resident memory (KiB) to BENCH_MAX_RSS_FILE when it exits, however it exits normally.
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  if (process.env.BENCH_MAX_RSS_FILE) writeFileSync(process.env.BENCH_MAX_RSS_FILE, String(process.resourceUsage().maxRSS));
});
