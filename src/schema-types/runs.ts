/* Generated from schemas/runs.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * How the run stands over every pipeline it was started with, not only those its last session ran (a --resume with --pipeline). ok: every one finished, no step failed; failed: a step's last attempt failed; interrupted: a session was interrupted and some pipeline it ran has not finished since; unfinished: it never ended (gpuplan was killed, or still runs where gpuplan cannot tell); submitted: its pipelines went to Slurm (gpuplan run --executor slurm, or an exported array's run slurm-JOB), no gpuplan follows them to their end (--detach, the follower was stopped, an exported array has none), and Slurm still has some of its tasks queued or running — a task Slurm requeued after it wrote that it was interrupted included (asked where its array's script does not say --no-requeue) — or cannot be asked: gpuplan status RUN says where its jobs are (once every task has ended, such a run is ok, failed or interrupted from what its tasks wrote and, for a task that wrote no end, what Slurm says); running: a gpuplan process holds the run now; damaged: its journal cannot be read.
 *
 * This interface was referenced by `GpuplanRuns`'s JSON-Schema
 * via the `definition` "RunStatus".
 */
export type RunStatus = "ok" | "failed" | "interrupted" | "unfinished" | "submitted" | "running" | "damaged";

/**
 * What `gpuplan runs --json` prints: the runs in the runs folder (.gpuplan/runs), newest first, and with --prune what was removed and what was kept.
 */
export interface GpuplanRuns {
  schema: "gpuplan/runs@2";
  /**
   * The runs folder, as gpuplan names it (relative to where it ran).
   */
  runsDir: string;
  /**
   * Newest first, by when each started (after a prune: the runs left).
   */
  runs: RunListing[];
  pruned?: PruneResult;
}
/**
 * This interface was referenced by `GpuplanRuns`'s JSON-Schema
 * via the `definition` "Run".
 */
export interface RunListing {
  /**
   * The run id (its folder's name): gpuplan run's (20261122T011500Z-3fa9c1), or an exported array's slurm-JOB (JOB: its Slurm job id).
   */
  id: string;
  dir: string;
  /**
   * The plan's name, when its plan.json can be read.
   */
  plan: string | null;
  /**
   * The plan or pipeline file the run was started from, as given.
   */
  input: string | null;
  /**
   * A UTC time in ISO 8601 (2026-11-23T17:39:27.123Z); null when its journal holds no real one.
   */
  startedAt: string | null;
  /**
   * When its last session ended, as startedAt; null when it never did, or its journal holds no real time.
   */
  endedAt: string | null;
  /**
   * From the start to the end of its last session (pauses between sessions included).
   */
  wallMs: number | null;
  status: RunStatus;
  /**
   * The first run and each --resume of it.
   */
  sessions: number;
  /**
   * Steps done (in any session).
   */
  ok: number;
  failed: number;
  /**
   * Steps not run because a step before them failed.
   */
  skipped: number;
  /**
   * Not everything finished ok, and the run folder has what --resume needs (its journal and plan, the plan the one the journal recorded the SHA-256 of, where it did); false while it runs, here or (a Slurm run) in tasks Slurm says are queued or running, and while Slurm, asked, does not answer (a resume asks it first and is refused then).
   */
  resumable: boolean;
  /**
   * The command that resumes it, when it can be resumed.
   */
  resume: string | null;
  /**
   * What the run folder takes on disk (its files' sizes).
   */
  bytes: number;
  /**
   * Why it is damaged, why it may be running, or (a Slurm run) what is not known of how it stands.
   */
  problem: string | null;
}
/**
 * This interface was referenced by `GpuplanRuns`'s JSON-Schema
 * via the `definition` "Pruned".
 */
export interface PruneResult {
  /**
   * --keep: the newest runs kept.
   */
  keep: number;
  /**
   * Ids of the run folders removed.
   */
  removed: string[];
  /**
   * Older runs kept because they may be in use (running, or unfinished where gpuplan cannot tell, or with Slurm jobs not known to have ended).
   */
  inUse: string[];
  /**
   * Why runs in inUse were kept, where gpuplan asked someone other than the run's lock: a Slurm run's jobs still queued or running, or Slurm could not be asked.
   */
  reasons: {
    id: string;
    reason: string;
  }[];
  /**
   * Run folders that could not be removed, and why.
   */
  errors: {
    id: string;
    error: string;
  }[];
}
