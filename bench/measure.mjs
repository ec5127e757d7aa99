// Shared timing helpers for the benches: wall time of whole commands, median of several runs,
// always compared with a bare `node -e 0` measured in the same run (these machines are shared).
import { spawnSync } from "node:child_process";

export function timeCommand(args, { runs = 9, env = process.env, input } = {}) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { env, input, stdio: ["pipe", "ignore", "pipe"] });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)], min: samples[0], samples };
}

export const baseline = (runs = 9) => timeCommand(["-e", "0"], { runs });

export const fmt = (ms) => `${ms.toFixed(0)} ms`;
export const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
