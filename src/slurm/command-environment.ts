/**
 * The environment gpuplan runs Slurm's client commands with: the user's, less the variables that
 * would make a command do other than what gpuplan asked. Slurm's commands read options from the
 * environment (`man sbatch`, INPUT ENVIRONMENT VARIABLES), and for sbatch those win over the
 * script's `#SBATCH` lines: a shell with SBATCH_ARRAY_INX=0 would run one pipeline of every array,
 * SBATCH_REQUEUE=1 would requeue tasks the follower takes as ended, SBATCH_WAIT=1 would hold
 * sbatch until its array ended. The script gpuplan wrote is what runs: what it says holds, and what
 * it leaves unsaid (a partition, an account, a reservation) the environment may still set.
 */

import { sbatchArgOptions, scriptDirectives } from "./sbatch-options.js";

/** Any Slurm command: gpuplan reads each one's exit status (SLURM_EXIT_ERROR=0 makes errors exit 0). */
const EVERY_COMMAND = ["SLURM_EXIT_ERROR"];

/**
 * sbatch, whatever the script says. SBATCH_WAIT: sbatch would return only when the array ended
 * (--parsable's job id after it, past gpuplan's time limit). The GPU requests: the plan decides
 * each task's GPUs, and a CPU array's script asks for none, so it has no directive to beat them.
 */
const SBATCH_ALWAYS = [
  "SBATCH_WAIT",
  "SBATCH_ARRAY_INX",
  "SBATCH_GRES",
  "SBATCH_GPUS",
  "SBATCH_GPUS_PER_NODE",
  "SBATCH_GPUS_PER_TASK",
];

/**
 * An option's variables where they are not SBATCH_ and its long name in capitals, and options
 * that one request says several ways (a script's --mem is undone by SBATCH_MEM_PER_CPU too).
 */
const SBATCH_VARIABLES: Record<string, readonly string[]> = {
  array: ["SBATCH_ARRAY_INX"],
  time: ["SBATCH_TIMELIMIT"],
  mem: ["SBATCH_MEM_PER_NODE", "SBATCH_MEM_PER_CPU", "SBATCH_MEM_PER_GPU"],
  "mem-per-cpu": ["SBATCH_MEM_PER_NODE", "SBATCH_MEM_PER_CPU", "SBATCH_MEM_PER_GPU"],
  "mem-per-gpu": ["SBATCH_MEM_PER_NODE", "SBATCH_MEM_PER_CPU", "SBATCH_MEM_PER_GPU"],
  "cpus-per-task": ["SBATCH_CPUS_PER_GPU"],
  requeue: ["SBATCH_REQUEUE", "SBATCH_NO_REQUEUE"],
  "no-requeue": ["SBATCH_REQUEUE", "SBATCH_NO_REQUEUE"],
  clusters: ["SBATCH_CLUSTERS", "SLURM_CLUSTERS"],
  hint: ["SBATCH_HINT", "SLURM_HINT"],
  // The tasks' folder holds an exported array's run folder. Slurm 22.05 reads no variable for it,
  // other versions are said to; unsetting one sbatch does not read costs nothing.
  chdir: ["SBATCH_CHDIR", "SBATCH_WORKING_DIR"],
};

/**
 * The variables sbatch must not see when it submits `script`: those that would override one of
 * its `#SBATCH` lines, however the line spells its option (`--part=gpu`, `-pgpu`), and
 * SBATCH_ALWAYS.
 */
export function sbatchOverrides(script: string): string[] {
  const names = new Set([...EVERY_COMMAND, ...SBATCH_ALWAYS]);
  for (const directive of scriptDirectives(script))
    for (const option of sbatchArgOptions(directive)) {
      const variables = SBATCH_VARIABLES[option] ?? [`SBATCH_${option.toUpperCase().replaceAll("-", "_")}`];
      for (const v of variables) names.add(v);
    }
  return [...names].sort();
}

/**
 * Variables read by the other commands gpuplan runs, whatever they are set to. gpuplan asks squeue
 * and sacct about its own jobs by id, with every option it needs: SQUEUE_PARTITION, SQUEUE_USERS,
 * SQUEUE_STATES … would filter the run's tasks out of the answer, and gpuplan would take them as
 * forgotten. scancel cancels the run's jobs by id: SCANCEL_STATE, SCANCEL_PARTITION … would spare
 * some, SCANCEL_INTERACTIVE would wait for a yes on a stdin nobody writes.
 */
function isOverride(command: string, name: string): boolean {
  if (EVERY_COMMAND.includes(name)) return true;
  if (command === "squeue") return name.startsWith("SQUEUE_");
  if (command === "scancel") return name.startsWith("SCANCEL_");
  if (command === "sbatch") return SBATCH_ALWAYS.includes(name);
  return false;
}

/** What gpuplan's Slurm commands run without, and why: the environment reference (npm run docs). */
export const SLURM_ENVIRONMENT_RULES: readonly { command: string; variables: string; why: string }[] = [
  {
    command: "every Slurm command",
    variables: EVERY_COMMAND.join(", "),
    why: "gpuplan reads each command's exit status; SLURM_EXIT_ERROR=0 would make a failure read as an answer",
  },
  {
    command: "sbatch",
    variables: SBATCH_ALWAYS.join(", "),
    why: "SBATCH_WAIT would hold sbatch until the array ended; the plan decides each task's GPUs (a CPU array's script asks for none, so it has no line to beat the GPU variables) and its array's tasks",
  },
  {
    command: "sbatch",
    variables:
      "the variable of each option the script's `#SBATCH` lines give (`SBATCH_PARTITION` for `--partition`, `SBATCH_TIMELIMIT` for `--time`, `SBATCH_REQUEUE` and `SBATCH_NO_REQUEUE` for either, …)",
    why: "sbatch lets them win over the script; what the script says holds, what it leaves unsaid (a partition, an account, a reservation) the environment still sets",
  },
  {
    command: "squeue",
    variables: "every `SQUEUE_*`",
    why: "gpuplan asks about its own jobs by id; a filter (SQUEUE_PARTITION, SQUEUE_USERS, …) would leave the run's tasks out and they would read as forgotten",
  },
  {
    command: "scancel",
    variables: "every `SCANCEL_*`",
    why: "gpuplan cancels its own jobs by id; a filter (SCANCEL_STATE, …) would spare some, SCANCEL_INTERACTIVE would wait for an answer nobody gives",
  },
];

/** `env` without what would change what `command` does; `unset` names more (sbatchOverrides). */
export function slurmCommandEnv(
  command: string,
  env: NodeJS.ProcessEnv,
  unset: readonly string[] = [],
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env))
    if (!isOverride(command, name) && !unset.includes(name)) out[name] = value;
  return out;
}

/**
 * gpuplan's settings in `env` (`GPUPLAN_*`), as `NAME=VALUE` arguments after a task's script:
 * sbatch passes a script's arguments on whatever the site's export policy, where the environment
 * reaches the task only under `--export=ALL` (SBATCH_EXPORT=NONE passes none of it). The script
 * exports exactly these names (render-scripts.ts).
 */
export function taskSettings(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([name, value]) => /^GPUPLAN_[A-Z0-9_]+$/.test(name) && value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
    .sort();
}
