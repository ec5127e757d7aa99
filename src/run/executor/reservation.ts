/**
 * The GPU memory a pipeline reserves in the slot lock on one of its GPUs: the plan's own
 * reservation when it carries one (`reservationBytes`, a number or per GPU), else the most VRAM
 * any of its steps on that GPU declares, else the pipeline's peak. An exclusive step still owns
 * the whole GPU whatever this says.
 */
import type { PlannedPipeline, PlanRegistryEntry } from "../../schema-types/plan.js";

export function reservationOf(pipeline: PlannedPipeline, entry: PlanRegistryEntry): number {
  const planned = (pipeline as unknown as { reservationBytes?: unknown }).reservationBytes;
  if (typeof planned === "number") return planned;
  if (typeof planned === "object" && planned !== null) {
    const byGpu = planned as Record<string, unknown>;
    const v = byGpu[entry.gpu] ?? byGpu[entry.uuid];
    if (typeof v === "number") return v;
  }
  let peak = 0;
  for (const s of pipeline.steps) if (s.device === entry.gpu) peak = Math.max(peak, s.vramBytes ?? 0);
  return peak > 0 ? peak : pipeline.peakVramBytes;
}
