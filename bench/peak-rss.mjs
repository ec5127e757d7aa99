// Preloaded by the benches and the fuzz campaign (node --import): when the process exits, writes
// its peak resident set (KiB, getrusage's ru_maxrss) and CPU time (µs) as JSON to the file named
// by GPUPLAN_BENCH_RSS_FILE. Node cannot read a child's rusage, and GNU time is not everywhere.
import { writeFileSync } from "node:fs";

const file = process.env.GPUPLAN_BENCH_RSS_FILE;
if (file) {
  process.on("exit", () => {
    const { maxRSS, userCPUTime, systemCPUTime } = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ maxRSS, user: userCPUTime, system: systemCPUTime }));
  });
}
