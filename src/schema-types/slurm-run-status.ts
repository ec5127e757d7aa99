/* Generated from schemas/slurm-run-status.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * pending: Slurm has the task queued, or requeued (PENDING, REQUEUED, REQUEUE_HOLD, REQUEUE_FED: preempted, its node failed, with --requeue), whatever an earlier run of it said. running: Slurm runs it (a requeued task once its new run has started recording). done/failed/interrupted: the task's gpuplan said so (its run.end, the last since the task last started), or Slurm ended the task (failed). unknown: squeue no longer lists the task (MinJobAge) and it left no account. not-submitted: no array of the run holds it.
 *
 * This interface was referenced by `GpuplanSlurmRunStatus`'s JSON-Schema
 * via the `definition` "PipelineState".
 */
export type PipelineState =
  "pending" | "running" | "done" | "failed" | "interrupted" | "unknown" | "not-submitted";

/**
 * What `gpuplan status RUN --json` prints for a run submitted with `gpuplan run --executor slurm` (detached or followed): each pipeline's state, from Slurm (squeue) and from the run folder (the tasks' own events and start markers).
 */
export interface GpuplanSlurmRunStatus {
  schema: "gpuplan/slurm-run-status@1";
  run: string;
  runDir: string;
  /**
   * The job ids of the run's arrays, in submission order (a --resume adds more).
   */
  jobs: string[];
  pipelines: PipelineStatus[];
  /**
   * Pipelines per state.
   */
  counts: {
    [k: string]: number;
  };
}
/**
 * This interface was referenced by `GpuplanSlurmRunStatus`'s JSON-Schema
 * via the `definition` "PipelineStatus".
 */
export interface PipelineStatus {
  pipeline: string;
  state: PipelineState;
  /**
   * Its latest array task, ARRAYJOB_TASK.
   */
  job: string | null;
  /**
   * As squeue said; null when not listed.
   */
  slurmState: string | null;
  reason: string | null;
  node: string | null;
  /**
   * The GPUs Slurm gave the task (node-wide indices), from its start marker.
   */
  gpus: string | null;
  exitCode: number | null;
}
