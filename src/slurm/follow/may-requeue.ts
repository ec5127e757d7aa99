/**
 * Whether Slurm may have requeued a run's task: its array's sbatch script (in the run's slurm/
 * folder) says `--requeue`, or says neither that nor `--no-requeue` (Slurm's default, JobRequeue=1,
 * requeues). `gpuplan run --executor slurm` writes one of the two; without `--requeue` a task's
 * interrupted end is its last, and `gpuplan runs` need not ask Slurm about it (run-standing.ts).
 */
import { sbatchArgOptions, scriptDirectives } from "../sbatch-options.js";
import { readTaskFile } from "./read-task-file.js";

/** A script gpuplan writes is a few KiB; a larger file is not read (it may requeue). */
const MAX_SCRIPT_BYTES = 1024 * 1024;

/**
 * Whether the array whose script is `script` (its name in slurm/jobs.json: outside text, so only a
 * plain file name in slurm/ is read) may requeue its tasks; true where the script cannot tell.
 */
export async function mayRequeue(runDir: string, script: string): Promise<boolean> {
  if (!/^[A-Za-z0-9._-]+$/.test(script) || script.startsWith(".")) return true;
  const read = readTaskFile(runDir, script, { maxBytes: MAX_SCRIPT_BYTES });
  // A link, a FIFO or a huge file is not the script gpuplan wrote.
  if (!("bytes" in read) || read.size > MAX_SCRIPT_BYTES) return true;
  return requeueDirective(read.bytes.toString("utf8")) !== false;
}

/**
 * What the script's `#SBATCH` lines say of requeueing: true (`--requeue`), false (`--no-requeue`),
 * null when nothing, however a line spells the option (`--req`, `--no-r`: sbatch takes unique
 * abbreviations). A later one wins (a `--sbatch-arg --requeue` is written after gpuplan's own
 * `--no-requeue`).
 */
export function requeueDirective(script: string): boolean | null {
  return requeueSaid(scriptDirectives(script));
}

/** What sbatch arguments say of requeueing, the last that says either: true, false, or null (nothing). */
export function requeueSaid(args: readonly string[]): boolean | null {
  let said: boolean | null = null;
  for (const directive of args) {
    const options = sbatchArgOptions(directive);
    if (options.length !== 1 || /=/.test(directive)) continue;
    if (options[0] === "requeue") said = true;
    else if (options[0] === "no-requeue") said = false;
  }
  return said;
}
