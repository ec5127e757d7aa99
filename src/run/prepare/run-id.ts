/** Run ids sort by start time and are unique without coordination: `20261122T011500Z-3fa9c1`. */
import { randomHex } from "../../text/random-hex.js";

export function makeRunId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${stamp}-${randomHex(3)}`;
}

export const RUN_ID_PATTERN = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/**
 * An exported array's run (gpuplan export, then sbatch): its first task names the folder after the
 * array's job id (src/slurm/render-scripts.ts). Such ids do not sort by time. A Slurm job id is a
 * 32-bit number, at most 10 digits: a longer one (a folder, a plan's learned runs) is no run's.
 */
export const SLURM_RUN_ID_PATTERN = /^slurm-[0-9]{1,10}$/;

/** When a run id of makeRunId's says the run started (to the second), in ms; null for any other id. */
export function runIdTime(id: string): number | null {
  const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z-/.exec(id);
  if (!m || !RUN_ID_PATTERN.test(id)) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s);
}
