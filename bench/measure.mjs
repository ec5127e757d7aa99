// Shared timing helpers for the benches: wall time of whole commands, median of several runs,
// always compared with a bare `node -e 0` measured in the same run (these machines are shared).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

export function timeCommand(args, { runs = 9, env = process.env, input } = {}) {
  const samples = [];
  let cpuMs = 0;
  for (let i = 0; i < runs; i++) {
    const cpuBefore = childrenCpuMs();
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { env, input, stdio: ["pipe", "ignore", "pipe"] });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    cpuMs += childrenCpuMs() - cpuBefore;
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)], min: samples[0], samples, cpuMs };
}

/**
 * CPU milliseconds (user + system) of this process's reaped children so far, from /proc/self/stat
 * (cutime + cstime, in 10 ms clock ticks: sum it over many runs); NaN where there is no /proc.
 */
export function childrenCpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return Number.NaN;
  }
}

export const baseline = (runs = 9) => timeCommand(["-e", "0"], { runs });

export const fmt = (ms) => `${ms.toFixed(0)} ms`;
export const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
