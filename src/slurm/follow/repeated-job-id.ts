/**
 * An sbatch that gives a job id the run already names (Slurm's ids wrapped, or a site's wrapper
 * printed an old one). The run's record names each job once: its reader refuses a repeated id as
 * damage, and squeue, sacct and the tasks' files (events/JOB_TASK.jsonl) tell jobs apart only by
 * it. Recorded, the jobs were in Slurm and the run unreadable; so the submission is cancelled and
 * refused instead, the record left as it was.
 */
import { VendorError } from "../../problems/errors.js";
import { displayText } from "../../text/safe-text.js";
import { shellWord } from "../../text/shell-word.js";
import type { SubmittedArray } from "./run-record.js";

export interface RepeatedJobId {
  run: string;
  /** The script sbatch was given, its job name and the full call. */
  script: string;
  jobName: string;
  call: string;
  /** What sbatch printed, and the id read from it. */
  stdout: string;
  job: string;
  /** The array that has the id already, and whether the record names it (else this submission does). */
  earlier: SubmittedArray;
  recorded: boolean;
  /** The jobs of this submission that were cancelled, and how scancel failed (null: it did not). */
  cancelled: readonly string[];
  cancelFailed: string | null;
}

/** The array `job` is already taken by: among the record's arrays, then this submission's. */
export function findJobHolder(
  job: string,
  recorded: readonly SubmittedArray[],
  submitted: readonly SubmittedArray[],
): { earlier: SubmittedArray; recorded: boolean } | undefined {
  const inRecord = recorded.find((a) => a.job === job);
  if (inRecord) return { earlier: inRecord, recorded: true };
  const inSubmission = submitted.find((a) => a.job === job);
  return inSubmission && { earlier: inSubmission, recorded: false };
}

export function repeatedJobIdError(r: RepeatedJobId): VendorError {
  const holder = r.recorded
    ? `the id of ${r.earlier.script} in run ${r.run}'s slurm/jobs.json`
    : `the id sbatch gave ${r.earlier.script} just before`;
  const s = r.cancelled.length === 1 ? "" : "s";
  const jobs = r.cancelled.join(" ");
  const cancelled =
    r.cancelFailed === null
      ? `job${s} ${jobs} of this submission cancelled (scancel)`
      : `cancelling job${s} ${jobs} of this submission failed, ${r.cancelFailed}: scancel ${jobs}`;
  const said = r.stdout.trim().split("\n").slice(-3).join(" / ") || "(nothing)";
  return new VendorError(
    `sbatch gave ${r.script} job id ${r.job}, ${holder}: gpuplan cannot tell two jobs of one id apart, so nothing of this submission was recorded; ${cancelled}`,
    "slurm-command-failed",
    r.call,
    `stdout: ${displayText(said, 400)}`,
    `a site's sbatch wrapper may print an old job id: look for the array with squeue --me -n ${r.jobName} and scancel it; the run's record is as it was, and gpuplan run --resume ${shellWord(r.run)} --executor slurm submits what did not complete`,
  );
}
