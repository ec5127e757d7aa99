/**
 * What squeue says about a run's array tasks: one line per task (`-r`), finished ones included
 * (`-t all`; they stay listed for MinJobAge after they end), in a `-O` format whose fields end in
 * `|` so that a reason with spaces cannot shift a column. `exit_code` is the raw wait status.
 * `JobID` is each task's own job id, which Slurm's job completion log knows it by (sacct-tasks.ts).
 */

export interface TaskState {
  /** The array's job id. */
  job: string;
  /** The array task index. */
  task: number;
  state: string;
  /** null for Slurm's "None". */
  reason: string | null;
  node: string | null;
  /** The batch script's exit status once it ended; null while it runs or when a signal ended it. */
  exitCode: number | null;
  signal: number | null;
  /** The task's own job id (not the array's), where squeue said it. */
  rawJob?: string;
}

const FORMAT = "JobArrayID:64|,State:32|,Reason:200|,NodeList:200|,exit_code:12|,JobID:24|";

export function squeueArgs(jobs: readonly string[]): string[] {
  return ["-h", "-r", "-t", "all", "-j", jobs.join(","), "-O", FORMAT];
}

/** Slurm's states after which a job does not run again by itself (a requeue makes it PENDING first). */
const FINAL = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "OUT_OF_MEMORY",
  "NODE_FAIL",
  "BOOT_FAIL",
  "DEADLINE",
  "PREEMPTED",
  "SPECIAL_EXIT",
]);

export const isFinalState = (state: string): boolean => FINAL.has(state);

/** The tasks squeue listed; lines that do not read as `JOB_TASK|STATE|…` are left out. */
export function parseSqueue(text: string): TaskState[] {
  const tasks: TaskState[] = [];
  for (const line of text.split("\n")) {
    const fields = line.split("|").map((f) => f.trim());
    if (fields.length < 5) continue;
    const [id, state, reason, node, exit, raw = ""] = fields as [
      string,
      string,
      string,
      string,
      string,
      string?,
    ];
    if (!/^[A-Z_]+$/.test(state)) continue;
    const status = /^[0-9]+$/.test(exit) ? Number(exit) : null;
    const ended = isFinalState(state) && status !== null;
    for (const [job, task] of arrayTasks(id)) {
      tasks.push({
        job,
        task,
        state,
        reason: reason === "" || reason === "None" ? null : reason,
        node: node === "" || node === "(null)" ? null : node,
        exitCode: ended && (status & 0x7f) === 0 ? (status >> 8) & 0xff : null,
        signal: ended && (status & 0x7f) !== 0 ? status & 0x7f : null,
        ...(/^[0-9]+$/.test(raw) && /^[0-9]+_[0-9]+$/.test(id) && { rawJob: raw }),
      });
    }
  }
  return tasks;
}

/** `12_3` → [[12, 3]]; a pending range squeue did not split, `12_[4-6,9%2]`, → each index. */
function arrayTasks(id: string): [string, number][] {
  const one = /^([0-9]+)_([0-9]+)$/.exec(id);
  if (one) return [[one[1]!, Number(one[2])]];
  const range = /^([0-9]+)_\[([0-9,-]+)(%[0-9]+)?\]$/.exec(id);
  if (!range) return [];
  const out: [string, number][] = [];
  for (const part of range[2]!.split(",")) {
    const [a, b] = part.split("-").map(Number) as [number, number | undefined];
    for (let i = a; i <= (b ?? a) && out.length < 100_000; i++) out.push([range[1]!, i]);
  }
  return out;
}
