// Preloaded by the benches (node --import): when the process exits, writes its peak resident set
// (KiB, getrusage's ru_maxrss) to the file named by GPUPLAN_BENCH_RSS_FILE. Node cannot read a
// child's rusage, and GNU time is not everywhere.
import { writeFileSync } from "node:fs";

const file = process.env.GPUPLAN_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
