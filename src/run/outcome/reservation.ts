/**
 * The one answer to "how much GPU memory does this pipeline hold" (#16 item 3): what the slot
 * lock admits it by on each of its GPUs, what its steps may hold while they run (the wait rung
 * waits for it to be free), and whether an attempt held more (gpu.step.over_reservation, the
 * summary's overReservations) — one function, so that what is reported as exceeded is what was
 * admitted. The plan's pipeline reservation is it (plans from before it existed are read with
 * their peak, plan/upgrade-plan.ts); a plan that reserves nothing for a GPU pipeline is read as
 * reserving the most `vram` its steps declare. An exclusive step owns the whole GPU whatever this says.
 */
import type { PlannedPipeline } from "../../schema-types/plan.js";

/** Bytes the pipeline reserves on each of its GPUs (and its steps may hold); null when the plan sets none. */
export function reservationBytes(pipeline: PlannedPipeline): number | null {
  if (pipeline.reservationBytes > 0) return pipeline.reservationBytes;
  const declared = Math.max(0, ...pipeline.steps.map((s) => s.vramBytes ?? 0));
  return declared > 0 ? declared : null;
}

/** The reservation an attempt that held `peakVramBytes` exceeded, or null when it kept within it. */
export function exceededReservation(pipeline: PlannedPipeline, peakVramBytes: number | null): number | null {
  const reserved = reservationBytes(pipeline);
  return reserved !== null && peakVramBytes !== null && peakVramBytes > reserved ? reserved : null;
}
