// Uncontended GPU slot lock latency: acquire + release of one slot, against the built code
// (dist/run/lock/index.js; run `npm run build` first). The per-step overhead target of
// `gpuplan run` is ≤ 5 ms, of which this is the lock's share.
//   node bench/lock-latency.mjs [iterations]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(fileURLToPath(import.meta.url), "../..");

/** Median and 95th percentile of acquire+release in ms, over `iterations` rounds after a warm-up. */
export async function measureLockLatency({ iterations = 1000 } = {}) {
  const { createSlotLock } = await import(pathToFileURL(join(root, "dist/run/lock/index.js")).href);
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-lock-bench-"));
  try {
    const lock = createSlotLock({ dir });
    const request = {
      uuid: "GPU-00000000-0000-0000-0000-00000000bench",
      gpu: "cuda:0",
      maxPipelines: 4,
      holder: {
        pid: process.pid,
        run: "bench",
        pipeline: "bench",
        step: null,
        since: new Date().toISOString(),
      },
      wait: false,
    };
    // Warm-up: koffi load, directory, file creation, JIT.
    for (let i = 0; i < 20; i++) (await lock.acquire(request)).release();
    const samples = [];
    for (let i = 0; i < iterations; i++) {
      const start = process.hrtime.bigint();
      const lease = await lock.acquire(request);
      lease.release();
      samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    samples.sort((a, b) => a - b);
    const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
    return { medianMs: at(0.5), p95Ms: at(0.95) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const iterations = Number(process.argv[2] ?? 1000);
  const { medianMs, p95Ms } = await measureLockLatency({ iterations });
  console.log(
    `GPU slot lock, uncontended acquire+release (${iterations} rounds): median ${medianMs.toFixed(3)} ms, p95 ${p95Ms.toFixed(3)} ms`,
  );
}
