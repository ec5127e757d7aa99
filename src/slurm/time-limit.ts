/**
 * A pipeline's `--time`: Slurm counts whole minutes, and a task that runs past its limit is
 * killed (TIMEOUT), so the limit must cover the slowest honest run:
 *   Σ over steps of attempts × (the step's timeout, else timeFactor × its estimate)
 *   + each worker step's ready timeout + one minute for gpuplan to start and check the GPUs,
 * rounded up to whole minutes. attempts = 1 + on_oom.retries (+1 with fallback: cpu). Steps
 * are summed even where `needs` lets them overlap: an upper bound, never a cut-off run.
 */
import type { PlannedPipeline } from "../schema-types/plan.js";

const START_MS = 60_000;

export function pipelineTimeLimitMinutes(pipeline: PlannedPipeline, timeFactor: number): number {
  let ms = START_MS;
  for (const s of pipeline.steps) {
    const attempts = 1 + s.onOom.retries + (s.onOom.fallback === "cpu" ? 1 : 0);
    // A plan made before `timeout: 0` meant "no limit" in the plan itself says timeoutMs 0, which
    // run reads as no limit too: never a limit of 0 ms.
    const each = s.timeoutMs ? s.timeoutMs : Math.ceil(s.estimateMs * timeFactor);
    ms += attempts * each + (s.worker ? s.worker.readyTimeoutMs : 0);
  }
  return Math.max(1, Math.ceil(ms / 60_000));
}

/** Slurm's `[D-]HH:MM:00`, e.g. 00:31:00, 1-02:00:00. */
export function formatSlurmTime(minutes: number): string {
  const days = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const hhmm = `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}:00`;
  return days > 0 ? `${days}-${hhmm}` : hhmm;
}
