/**
 * A warm worker that floods its stdout, for the tests of how gpuplan bounds what it holds of a
 * worker's output (flood.test.ts) and of what a slow reader of its stderr makes it hold
 * (test/ui/run/slow-reader.test.ts).
 */
import { readFileSync } from "node:fs";

/** Ready at once; each task: `mib` MiB of 64 KiB lines as fast as the pipe takes them, then the reply. */
export const floodWorker = (mib: number): string => `
const line = "x".repeat(64 * 1024 - 1) + "\\n";
const write = (s) => new Promise((r) => (process.stdout.write(s) ? r() : process.stdout.once("drain", r)));
process.stdout.write('{"ready": true}\\n');
let buf = "";
process.stdin.on("data", async (d) => {
  buf += d;
  const nl = buf.indexOf("\\n");
  if (nl < 0) return;
  const task = JSON.parse(buf.slice(0, nl));
  buf = buf.slice(nl + 1);
  for (let i = 0; i < ${mib} * 16; i++) await write(line);
  await write(JSON.stringify({ id: task.id, ok: true, result: {} }) + "\\n");
});
process.stdin.on("end", () => process.exit(0));
`;

/** One pipeline of one step run by the worker above, saved as worker.mjs beside it. */
export const FLOOD_PIPELINE = `
version: 1
name: flood
registry:
  platform_priority: [cpu]
pipelines:
  - name: p
    steps:
      - id: w
        memory: numpy
        worker:
          run: [node, worker.mjs]
          key: flood
        keep_warm: { ttl: 1m }
`;

/** Peak resident memory (VmHWM) of a process in MiB, or 0 once it is gone. */
export function peakMiB(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}
