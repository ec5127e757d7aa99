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
import { slurmRecordFile } from "./slurm-folder.js";

/** `ask()` with `prepared`'s run lock let go, taken again after it (prepared.runLock is the new one). */
export async function askUnlocked<T>(prepared: PreparedRun, ask: () => Promise<T>): Promise<T> {
  const held = prepared.runLock;
  if (!held) return ask();
  const before = await runStamp(prepared.runDir);
  prepared.runLock = undefined;
  await held.release();
  const answer = await ask();
  prepared.runLock = await takeAgain(prepared);
  if ((await runStamp(prepared.runDir)) !== before)
    throw new UsageError(
      `run ${prepared.runId} was changed by another gpuplan while this resume asked Slurm whether its tasks still run (its journal or slurm/jobs.json was written); nothing was submitted`,
      "run-in-use",
      `see what the other submitted (gpuplan status ${shellWord(prepared.runId)}), then resume again if anything is left`,
    );
  return answer;
}

/** How long the lock is tried again for: a look at the run (gpuplan runs, its prune) holds it for an instant. */
const RETAKE_MS = 1000;
const RETRY_MS = 50;

/**
 * The run's lock taken again: `gpuplan runs` (isRunInUse) takes it for an instant to see whether
 * the run is in use, and a resume that met that instant was refused run-in-use after its squeue
 * check. Held longer than RETAKE_MS, it is another gpuplan's (a resume, a run): refused as before.
 */
async function takeAgain(prepared: PreparedRun) {
  const deadline = performance.now() + RETAKE_MS;
  for (;;) {
    try {
      return await takeRunLock(prepared.runDir, prepared.runId);
    } catch (e) {
      if (!(e instanceof UsageError && e.code === "run-in-use") || performance.now() >= deadline) throw e;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

/**
 * What changes when the run's journal is appended to or its record rewritten (each rewrite is a
 * new file, renamed into place): one gpuplan's own reading needs no more than that.
 */
async function runStamp(runDir: string): Promise<string> {
  const files = [join(runDir, "journal.jsonl"), slurmRecordFile(runDir)];
  const stats = await Promise.all(files.map((f) => lstat(f, { bigint: true }).catch(() => null)));
  return stats.map((s) => (s ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : "-")).join("|");
}
