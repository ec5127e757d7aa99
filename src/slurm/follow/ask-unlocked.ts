/**
 * A Slurm resume's question to Slurm (is any task of the run still queued or running? squeue, up
 * to 15 s a call) is asked without the run's lock, so that another gpuplan on the run — a dry
 * run, a look at it — is not refused run-in-use meanwhile. What the lock guards is the submission:
 * two resumes that both passed the check must not both submit (8b35f06). So the lock is taken
 * again after the question, and the resume goes on only where the run is as it was when the
 * journal was read — slurm/jobs.json and the journal untouched; another gpuplan that resumed it
 * meanwhile changed one of them, and this resume is refused, nothing submitted.
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { UsageError } from "../../problems/errors.js";
import type { PreparedRun } from "../../run/prepare/prepare-run.js";
import { takeRunLock } from "../../run/record/run-lock.js";
import { shellWord } from "../../text/shell-word.js";

/** `ask()` with `prepared`'s run lock let go, taken again after it (prepared.runLock is the new one). */
export async function askUnlocked<T>(prepared: PreparedRun, ask: () => Promise<T>): Promise<T> {
  const held = prepared.runLock;
  if (!held) return ask();
  const before = await runStamp(prepared.runDir);
  prepared.runLock = undefined;
  await held.release();
  const answer = await ask();
  prepared.runLock = await takeRunLock(prepared.runDir, prepared.runId);
  if ((await runStamp(prepared.runDir)) !== before)
    throw new UsageError(
      `run ${prepared.runId} was changed by another gpuplan while this resume asked Slurm whether its tasks still run (its journal or slurm/jobs.json was written); nothing was submitted`,
      "run-in-use",
      `see what the other submitted (gpuplan status ${shellWord(prepared.runId)}), then resume again if anything is left`,
    );
  return answer;
}

/**
 * What changes when the run's journal is appended to or its record rewritten (each rewrite is a
 * new file, renamed into place): one gpuplan's own reading needs no more than that.
 */
async function runStamp(runDir: string): Promise<string> {
  const files = [join(runDir, "journal.jsonl"), join(runDir, "slurm", "jobs.json")];
  const stats = await Promise.all(files.map((f) => lstat(f, { bigint: true }).catch(() => null)));
  return stats.map((s) => (s ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : "-")).join("|");
}
