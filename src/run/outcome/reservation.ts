/**
 * What a step may hold of its GPU's memory while it runs — its reservation — and whether an
 * attempt held more (gpu.step.over_reservation, the summary's overReservations). The pipeline's
 * reservation wins where the plan has one (plan format 2: what the slot lock admits it by);
 * until then the step's own `vram` is its reservation. A step with neither has none to exceed.
 */
import type { PlannedPipeline, PlannedStep } from "../../schema-types/plan.js";

/** Bytes of GPU memory the step may hold, per GPU; null when the plan sets none. */
export function reservationBytes(pipeline: PlannedPipeline, step: PlannedStep): number | null {
  const perPipeline = (pipeline as PlannedPipeline & { reservationBytes?: number | null }).reservationBytes;
  return perPipeline ?? step.vramBytes ?? null;
}

/** The reservation an attempt that held `peakVramBytes` exceeded, or null when it kept within it. */
export function exceededReservation(
  pipeline: PlannedPipeline,
  step: PlannedStep,
  peakVramBytes: number | null,
): number | null {
  const reserved = reservationBytes(pipeline, step);
  return reserved !== null && peakVramBytes !== null && peakVramBytes > reserved ? reserved : null;
}
