/**
 * The attempts a step gets: its first run, `on_oom.retries` more on its GPU after an OOM, then
 * one on the CPU with `on_oom.fallback: cpu`. CPU steps run once (an OOM there is host memory,
 * which a retry does not fix).
 */
import type { PlannedStep } from "../../schema-types/plan.js";
import type { StepStatus } from "../record/events.js";

export interface AttemptPlan {
  /** Attempts on the step's GPU (1 for a CPU step). */
  onDevice: number;
  /** All attempts, the CPU fallback included. */
  total: number;
}

export const isGpuStep = (step: PlannedStep): boolean => step.gpu && step.uuid !== null;

export function planAttempts(step: PlannedStep): AttemptPlan {
  if (!isGpuStep(step)) return { onDevice: 1, total: 1 };
  const onDevice = 1 + step.onOom.retries;
  return { onDevice, total: onDevice + (step.onOom.fallback === "cpu" ? 1 : 0) };
}

/** Attempt N (1-based) runs on the CPU: a CPU step, or the fallback after the GPU attempts. */
export const runsOnCpu = (step: PlannedStep, attempt: number): boolean =>
  !isGpuStep(step) || attempt > planAttempts(step).onDevice;

/** An attempt that ended this way will be followed by another: it is not a failure yet. */
export function willRetry(step: PlannedStep, attempt: number, status: StepStatus): boolean {
  return status === "oom" && attempt < planAttempts(step).total;
}
