/**
 * Which `gpuplan run` flags mean something where the run goes. A local run's slot waiting and step
 * starting happen inside each Slurm task, on its node, and a Slurm request means nothing to a
 * local run; given for the other executor they would be silently ignored, so they are refused,
 * naming the flag. Only flags given on the command line count: a GPUPLAN_* variable is ambient,
 * and gpuplan passes its GPUPLAN_* settings on to the tasks (as their scripts' arguments, whatever
 * the site's sbatch export policy), where they take effect.
 */
import { UsageError } from "../problems/errors.js";

const LOCAL_ONLY: Record<string, string> = {
  "--no-wait": "Slurm queues each task until its GPUs are free; --throttle bounds how many run at once",
  "--lock-timeout": "Slurm queues each task until its GPUs are free; --time bounds how long a task runs",
  "--bind": "each task runs on the GPUs Slurm allocated to it",
  "--lock-dir": "set GPUPLAN_LOCK_DIR instead: gpuplan passes its GPUPLAN_* settings to the tasks",
  "--kill-grace": "set GPUPLAN_KILL_GRACE instead: gpuplan passes its GPUPLAN_* settings to the tasks",
  "--cpu-pinning": "set GPUPLAN_CPU_PINNING instead: gpuplan passes its GPUPLAN_* settings to the tasks",
  "--spawn": "set GPUPLAN_SPAWN instead: gpuplan passes its GPUPLAN_* settings to the tasks",
  "--bind-slurm-gpus": "the sbatch scripts pass it to each task",
  "--slurm-task": "the sbatch scripts pass it to each task",
};

const SLURM_ONLY = new Set([
  "--detach",
  "--requeue",
  "--inventory",
  "--partition",
  "--account",
  "--qos",
  "--gres-type",
  "--throttle",
  "--time-factor",
  "--time",
  "--cpus-per-task",
  "--mem",
  "--no-shards",
  "--sbatch-arg",
]);

/** Refuse (exit 2) the first of `given` (long flags) the executor would ignore. */
export function checkRunFlagScope(executor: "local" | "slurm", given: readonly string[]): void {
  for (const flag of given) {
    if (executor === "slurm" && flag in LOCAL_ONLY)
      throw new UsageError(
        `${flag} is a local run's flag: with --executor slurm it would be ignored`,
        "conflicting-options",
        LOCAL_ONLY[flag],
      );
    if (executor === "local" && SLURM_ONLY.has(flag))
      throw new UsageError(
        `${flag} is a Slurm flag: a local run would ignore it`,
        "conflicting-options",
        "add --executor slurm to submit the run to Slurm",
      );
  }
}
