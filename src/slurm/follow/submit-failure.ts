/**
 * A Slurm run whose submission failed before slurm/jobs.json named any of its arrays (sbatch
 * refused one after others were queued, or gave a repeated id; those were cancelled). Its folder
 * stays — its scripts, and the tasks of an array scancel may not have stopped write into it — and
 * its journal ends with the failure (an end entry's submitFailed), so that `gpuplan runs`,
 * `report` and `status` say what happened. Read as a run with no Slurm records, it was listed as
 * one gpuplan was killed in, offered a resume without `--executor slurm` (which ran it here).
 */

export interface SubmitFailure {
  /** What went wrong, as the submission said it (outside text when read back: escaped where shown). */
  reason: string;
  /** Arrays of it may still be queued or running: scancel failed, or sbatch's answer was lost. */
  mayRun: boolean;
}

/** How much of the reason the journal keeps: what sbatch said is cut in the error already. */
const MAX_REASON = 1000;

/** The journal's end entry for a session whose submission failed. */
export function submitFailedEnd(pipelines: readonly string[], failure: SubmitFailure) {
  return {
    type: "end" as const,
    ts: new Date().toISOString(),
    pipelines: [...pipelines],
    // Not run, so not done: a later resume that runs some of them leaves the others unfinished.
    interrupted: true,
    ok: 0,
    failed: 0,
    skipped: 0,
    submitFailed: { reason: failure.reason.slice(0, MAX_REASON), mayRun: failure.mayRun },
  };
}

/**
 * The failed submission a run's journal ends with (its last step, end or sbatch entry: a later
 * submission's sbatch calls are not that failure's), or null. The lines are outside text:
 * anything but the shape gpuplan writes is no failure.
 */
export function submitFailureOf(lines: readonly unknown[]): SubmitFailure | null {
  const last = lines.findLast(
    (l): l is Record<string, unknown> =>
      typeof l === "object" &&
      l !== null &&
      ["end", "step", "sbatch"].includes((l as { type?: unknown }).type as string),
  );
  const f = last?.type === "end" ? last.submitFailed : undefined;
  if (typeof f !== "object" || f === null) return null;
  const { reason, mayRun } = f as Record<string, unknown>;
  return typeof reason === "string" && typeof mayRun === "boolean" ? { reason, mayRun } : null;
}

/** What `gpuplan runs` (and the report, and status) say of a run whose submission failed. */
export function describeSubmitFailure(f: SubmitFailure): string {
  return f.mayRun
    ? `its submission to Slurm failed: ${f.reason}; arrays of it may still be queued or running without the run knowing their ids: find them with squeue --me and scancel them before resuming it`
    : `its submission to Slurm failed: ${f.reason}; nothing of it is queued or running`;
}
