/**
 * `gpuplan run RUN/plan.json --pipeline P --slurm-task JOB_TASK`, the way the sbatch scripts of
 * `gpuplan run --executor slurm` start each array task: the task is part of the run that submitted
 * it, so one run is one folder, as a local run is. It records into that run's folder under that
 * run's id — step logs in its logs/, its own journal and events under slurm/ (the submitter's
 * journal and events.jsonl have one writer, the submitter) — and skips the steps an earlier
 * attempt of the run completed, numbering its attempts after theirs (--resume).
 */
import { existsSync, lstatSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { UsageError } from "../problems/errors.js";
import { readJournal } from "../run/record/journal.js";
import { type RunProgress, readSlurmRunProgress } from "./follow/run-progress.js";

export interface TaskOfRun extends RunProgress {
  runId: string;
  runDir: string;
  /** The digest of plan.json the run's journal recorded when it was submitted (none: an older run, or an exported array's whose node had no sha256sum). */
  planSha256?: string;
}

/** The run `planFile` (its folder's plan.json) belongs to, and what it has completed so far. */
export async function loadTaskOfRun(planFile: string, task: string): Promise<TaskOfRun> {
  if (!/^[0-9]{1,12}_[0-9]{1,9}$/.test(task))
    throw new UsageError(
      `--slurm-task ${task.slice(0, 40)}: not a Slurm array task (JOB_TASK)`,
      "invalid-option-value",
      "the sbatch scripts of gpuplan run --executor slurm pass it; run a pipeline by hand without it",
    );
  const runDir = dirname(planFile);
  if (basename(planFile) !== "plan.json" || !existsSync(join(runDir, "journal.jsonl")))
    throw new UsageError(
      `--slurm-task: ${planFile} is not the plan.json of a run folder (no journal.jsonl beside it)`,
      "invalid-option-value",
      "the sbatch scripts of gpuplan run --executor slurm pass the run folder's plan.json",
    );
  // The submitter (or an exported script's first task) makes slurm/ before any task can start;
  // a folder without it is a local run's, whose records a task must not write into.
  const slurm = lstatSync(join(runDir, "slurm"), { throwIfNoEntry: false });
  if (!slurm?.isDirectory())
    throw new UsageError(
      `--slurm-task: ${planFile} is the plan of a run that was not submitted to Slurm (its folder has no slurm/ folder)`,
      "invalid-option-value",
      "the sbatch scripts of gpuplan run --executor slurm pass it; resume a local run with gpuplan run --resume RUN",
    );
  const own = await readJournal(runDir);
  const { planSha256 } = own.header;
  return {
    runId: own.header.run,
    runDir,
    ...(planSha256 !== undefined && { planSha256 }),
    ...(await readSlurmRunProgress(runDir, own)),
  };
}
