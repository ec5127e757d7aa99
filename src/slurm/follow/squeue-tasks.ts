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

/** Job ids per squeue call: one argument may not pass 128 KiB (MAX_ARG_STRLEN), or spawn fails with E2BIG. */
const JOBS_PER_CALL = 1000;

/** squeue's arguments for `jobs`, one call per 1,000 of them (a run resumed many times has many arrays). */
export function squeueCalls(jobs: readonly string[]): string[][] {
  const calls: string[][] = [];
  for (let i = 0; i < jobs.length; i += JOBS_PER_CALL)
    calls.push(["-h", "-r", "-t", "all", "-j", jobs.slice(i, i + JOBS_PER_CALL).join(","), "-O", FORMAT]);
  return calls;
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

/**
 * Slurm's states of a task waiting to run: queued, or requeued (REQUEUED while its last run
 * completes, REQUEUE_HOLD held, REQUEUE_FED by a federation) and waiting to run again.
 */
const QUEUED = new Set(["PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"]);

export const isQueuedState = (state: string): boolean => QUEUED.has(state);

/**
 * squeue -j with one job id Slurm has forgotten (MinJobAge passed) fails ("Invalid job id
 * specified", exit 1) where with several it lists the others: either way it lists none of them,
 * which is an answer, not a failure.
 */
export const forgetsEveryJob = (out: { status: number | null; stderr: string }): boolean =>
  out.status !== null && /Invalid job id specified/i.test(out.stderr);

/**
 * At most this many tasks are read from one squeue answer without `taskCounts` (its pending ranges
 * expanded). With them, the run's own tasks bound it: every one of them is read, however many
 * (a resumed run's answers come in parts and are read as one text).
 */
const MAX_TASKS = 100_000;

/**
 * The tasks squeue listed; lines that do not read as `JOB_TASK|STATE|…` are left out. With
 * `taskCounts` (each of the run's arrays: its number of tasks), only those arrays' tasks are
 * read: squeue's output is outside text, and a pending range like `13_[0-4000000000]` would
 * otherwise be expanded index by index.
 */
export function parseSqueue(text: string, taskCounts?: ReadonlyMap<string, number>): TaskState[] {
  const tasks: TaskState[] = [];
  let cap = MAX_TASKS;
  if (taskCounts) {
    cap = 0;
    for (const n of taskCounts.values()) cap += n;
  }
  // A task squeue lists twice is read once: repeated lines cannot crowd out others.
  const seen = new Set<string>();
  for (const line of text.split("\n")) {
    if (tasks.length >= cap) break;
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
    for (const [job, task] of arrayTasks(id, taskCounts, cap - tasks.length)) {
      const key = `${job}_${task}`;
      if (seen.has(key)) continue;
      seen.add(key);
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

/**
 * `12_3` → [[12, 3]]; a pending range squeue did not split, `12_[4-6,9%2]`, → each index — of the
 * run's arrays only and below their task counts, where known, and at most `budget` of them.
 */
function arrayTasks(
  id: string,
  taskCounts: ReadonlyMap<string, number> | undefined,
  budget: number,
): [string, number][] {
  const one = /^([0-9]+)_([0-9]+)$/.exec(id);
  const range = one ? null : /^([0-9]+)_\[([0-9,-]+)(%[0-9]+)?\]$/.exec(id);
  const job = one?.[1] ?? range?.[1];
  if (job === undefined) return [];
  const count = taskCounts === undefined ? Number.POSITIVE_INFINITY : (taskCounts.get(job) ?? 0);
  if (one) return Number(one[2]) < count ? [[job, Number(one[2])]] : [];
  const out: [string, number][] = [];
  for (const part of range!.at(2)!.split(",")) {
    // `1,,3` or `-3`: not a range squeue prints; nothing is read from it.
    if (!/^[0-9]+(-[0-9]+)?$/.test(part)) continue;
    const [a, b] = part.split("-").map(Number) as [number, number | undefined];
    const last = Math.min(b ?? a, count - 1);
    for (let i = a; i <= last && out.length < budget; i++) out.push([job, i]);
  }
  return out;
}
