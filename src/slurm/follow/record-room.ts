/**
 * Room in a Slurm run's record (slurm/jobs.json) for one more submission, asked before sbatch.
 * Its reader refuses a record past its bounds as damaged (run-record.ts); one written past them
 * after sbatch left the new jobs in Slurm and the run unreadable to status, the follower and
 * --resume, so such a submission is refused while nothing of it is submitted yet.
 */
import { UsageError } from "../../problems/errors.js";
import { shellWord } from "../../text/shell-word.js";
import {
  MAX_RECORD_ARRAYS,
  MAX_RECORD_BYTES,
  MAX_RECORD_TASKS,
  recordSize,
  type SubmittedArray,
} from "./run-record.js";

/** The longest job id sbatch gives: Slurm's job ids are 32-bit, and the record is sized with it. */
const LONGEST_JOB_ID = String(2 ** 32 - 1);

/**
 * Throws slurm-run-too-large when the run's record, with `arrays` (the scripts about to be
 * submitted) added, would be past what readSlurmRecord accepts. Per-array bounds (1 to
 * MAX_ARRAY_TASKS pipelines, none twice) hold by how the export splits a plan. `resumed`: the
 * run whose record is added to, and its arrays as read (under its lock); a new run has none yet
 * (a folder of its id is another run's).
 */
export function checkRecordRoom(
  resumed: { run: string; recorded: readonly SubmittedArray[] } | null,
  arrays: readonly Omit<SubmittedArray, "job">[],
): void {
  const after: SubmittedArray[] = [
    ...(resumed ? resumed.recorded : []),
    ...arrays.map((a) => ({ job: LONGEST_JOB_ID, script: a.script, pipelines: a.pipelines })),
  ];
  const tasks = after.reduce((n, a) => n + a.pipelines.length, 0);
  const over =
    after.length > MAX_RECORD_ARRAYS
      ? `name ${after.length} job arrays, more than the ${MAX_RECORD_ARRAYS} gpuplan keeps for one run`
      : tasks > MAX_RECORD_TASKS
        ? `name ${tasks} tasks, more than the ${MAX_RECORD_TASKS} gpuplan keeps for one run`
        : recordSize(after, MAX_RECORD_BYTES) > MAX_RECORD_BYTES
          ? `be more than the ${MAX_RECORD_BYTES} bytes gpuplan reads`
          : null;
  if (over === null) return;
  const who = resumed
    ? `run ${resumed.run} cannot take this submission`
    : "the plan is too large for one run";
  throw new UsageError(
    `${who}: slurm/jobs.json would ${over}, and the run could not be read back; nothing was submitted`,
    "slurm-run-too-large",
    resumed
      ? `resume fewer pipelines at a time (--pipeline NAME), or start a new run of the plan (gpuplan run PLAN --executor slurm, without --resume ${shellWord(resumed.run)})`
      : "run fewer pipelines per run (--pipeline NAME), or split the pipeline file",
  );
}
