/**
 * A lower bound on any schedule's makespan, so the plan can say honestly how far its estimate is
 * from the best possible: the largest of the GPU slots' share of the GPU work, the longest
 * pipeline, the GPUs' memory-time (Σ work × reservation ÷ Σ shared budgets) and the host lanes'
 * share of all the work. The plan names the term that binds.
 */
import type { ScheduleGpu, ScheduleJob } from "./list-schedule.js";

export interface LowerBound {
  lowerBoundMs: number;
  lowerBoundBy: "longest-pipeline" | "gpu-slots" | "gpu-memory" | "host-lanes";
  terms: { longestPipelineMs: number; gpuSlotsMs: number; gpuMemoryMs: number; hostLanesMs: number };
}

export function scheduleLowerBound(
  jobs: readonly ScheduleJob[],
  gpus: readonly ScheduleGpu[],
  lanes: number,
): LowerBound {
  let longest = 0;
  let work = 0;
  let gpuWork = 0;
  let memoryTime = 0;
  for (const j of jobs) {
    longest = Math.max(longest, j.workMs);
    work += j.workMs;
    if (j.gpus === 0 || j.eligible.length < j.gpus) continue;
    gpuWork += j.workMs * j.gpus;
    // On whichever GPU costs it least (an exclusive step counts as its reservation only: still a bound).
    memoryTime += j.workMs * Math.min(...j.reservation) * j.gpus;
  }
  const slots = gpus.reduce((s, g) => s + g.slots, 0);
  const capacity = gpus.reduce((s, g) => s + g.capacityBytes, 0);
  const terms = {
    longestPipelineMs: longest,
    gpuSlotsMs: slots > 0 ? Math.ceil(gpuWork / slots) : 0,
    gpuMemoryMs: capacity > 0 ? Math.ceil(memoryTime / capacity) : 0,
    hostLanesMs: Math.ceil(work / Math.max(1, lanes)),
  };
  const named: [LowerBound["lowerBoundBy"], number][] = [
    ["longest-pipeline", terms.longestPipelineMs],
    ["gpu-slots", terms.gpuSlotsMs],
    ["gpu-memory", terms.gpuMemoryMs],
    ["host-lanes", terms.hostLanesMs],
  ];
  const [lowerBoundBy, lowerBoundMs] = named.reduce((best, x) => (x[1] > best[1] ? x : best));
  return { lowerBoundMs, lowerBoundBy, terms };
}
