/**
 * What a Slurm run has done so far, step by step, from every journal it has: the run's own (what
 * a follower recorded of the tasks' events) and each array task's (what the task recorded itself,
 * flushed before it reported a step done, whether or not a follower was watching). A step is
 * complete when its highest attempt ended ok in any of them; --resume (on Slurm or here) skips it
 * and numbers the step's next attempt after the highest any journal used, so no log is overwritten.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { type JournalState, readJournalFile, stepKey } from "../../run/record/journal.js";
import { damagedRun } from "../../run/record/read-run-file.js";
import { taskJournalDir } from "./run-record.js";

export interface RunProgress {
  /** stepKey of every step whose highest attempt ended ok. */
  completed: Set<string>;
  /** The highest attempt each step has used, by stepKey. */
  attempts: Map<string, number>;
}

/** The run's own journal (already read) merged with its Slurm tasks' journals. */
export async function readSlurmRunProgress(runDir: string, own: JournalState): Promise<RunProgress> {
  const states = [own];
  const dir = taskJournalDir(runDir);
  // A linked journals/ would have journals from elsewhere say which steps completed (and are skipped).
  if ((await lstat(dir).catch(() => null))?.isSymbolicLink()) throw damagedRun(dir, "is a symbolic link");
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".jsonl")).sort();
  for (const f of files) {
    const path = join(dir, f);
    // A task killed before its header reached the disk left an empty journal: nothing ran. Not
    // followed (lstat): a dangling link here was an internal error (ENOENT); readJournalFile
    // refuses a link, a FIFO and the rest as damaged.
    if ((await lstat(path).catch(() => null))?.size === 0) continue;
    states.push(await readJournalFile(path));
  }
  return mergeProgress(states);
}

function mergeProgress(states: readonly JournalState[]): RunProgress {
  const attempts = new Map<string, number>();
  /** Per step: the highest attempt with an end recorded, and whether one such end was ok. */
  const ends = new Map<string, { attempt: number; ok: boolean }>();
  for (const state of states) {
    for (const [key, n] of state.attempts) attempts.set(key, Math.max(attempts.get(key) ?? 0, n));
    for (const e of state.entries) {
      if (e.type !== "step") continue;
      const key = stepKey(e.pipeline, e.step);
      const seen = ends.get(key);
      const ok = e.status === "ok";
      // The follower records what a task's events said, the task what it did: the same attempt
      // may be in both, and a follower that lost the task's last events may have closed it out
      // as failed; the task's flushed ok is the truth.
      if (!seen || e.attempt > seen.attempt) ends.set(key, { attempt: e.attempt, ok });
      else if (e.attempt === seen.attempt && ok) seen.ok = true;
    }
  }
  const completed = new Set([...ends].filter(([, end]) => end.ok).map(([key]) => key));
  return { completed, attempts };
}
