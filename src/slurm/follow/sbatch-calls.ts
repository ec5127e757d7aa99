/**
 * The run journal's record of a Slurm submission's sbatch calls: an `sbatch` entry flushed before
 * each call, and a `recorded` entry once every array they may have queued is in slurm/jobs.json
 * or not in Slurm. `sbatch` entries after the last `recorded` one are calls no record accounts for
 * (gpuplan was stopped in the submission): a resume looks for their arrays in Slurm first
 * (unrecorded-arrays.ts), and `status`, `runs` and `runs --prune` say so. Kept apart from the
 * squeue question so that reading a journal loads no Slurm module.
 */
import type { JournalSbatch } from "../../run/record/journal.js";
import { shellWord } from "../../text/shell-word.js";

export type SbatchCall = Omit<JournalSbatch, "type">;

/** The journal entry written before sbatch is called for `script` (its name) at `path`. */
export function sbatchEntry(script: string, path: string, pipelines: readonly string[]): JournalSbatch {
  return { type: "sbatch", ts: new Date().toISOString(), script, path, pipelines: [...pipelines] };
}

/** The journal entry that says every sbatch call before it is accounted for; `jobs`: the arrays it recorded. */
export function recordedEntry(jobs: readonly string[]) {
  return { type: "recorded" as const, ts: new Date().toISOString(), jobs: [...jobs] };
}

/**
 * The sbatch calls after the journal's last `recorded` entry: arrays of them may be in Slurm
 * without slurm/jobs.json naming them. The lines are outside text (`gpuplan runs` reads them
 * unchecked): anything but the shape gpuplan writes is no call.
 */
export function openSbatchCalls(lines: readonly unknown[]): SbatchCall[] {
  const calls: SbatchCall[] = [];
  for (const line of lines) {
    if (typeof line !== "object" || line === null) continue;
    const e = line as Record<string, unknown>;
    if (e.type === "recorded") calls.length = 0;
    else if (
      e.type === "sbatch" &&
      typeof e.ts === "string" &&
      typeof e.script === "string" &&
      typeof e.path === "string" &&
      Array.isArray(e.pipelines) &&
      e.pipelines.every((p) => typeof p === "string")
    )
      calls.push({ ts: e.ts, script: e.script, path: e.path, pipelines: e.pipelines as string[] });
  }
  return calls;
}

/** What `gpuplan status` and `gpuplan runs` say of a run with sbatch calls no record accounts for. */
export function describeOpenSubmission(calls: readonly SbatchCall[], runId: string): string {
  const last = calls.at(-1);
  return `gpuplan was stopped while it submitted the run to Slurm, unless it is submitting it now (sbatch was called for ${calls.map((c) => c.script).join(", ")}, last at ${last?.ts ?? "?"}), and slurm/jobs.json may not name every array that queued: one may be queued or running unrecorded; gpuplan run --resume ${shellWord(runId)} --executor slurm looks for it in Slurm before it submits anything (by hand: squeue --me -o '%F %o')`;
}
