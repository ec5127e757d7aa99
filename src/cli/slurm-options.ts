/**
 * The Slurm options `gpuplan export --to slurm` and `gpuplan run --executor slurm` share: the
 * flags (checked here, the way the pipeline file's schema checks the same settings), the plan's
 * own settings checked for what an sbatch script can carry, the tasks' working folder, and the
 * gpuplan the tasks run.
 */
import { realpathSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { pipelineSchema } from "../generated/schema-values.js";
import { UsageError } from "../problems/errors.js";
import { error, type Problem } from "../problems/problem.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import type { SlurmFlags } from "../slurm/executor-settings.js";
import { displayText } from "../text/safe-text.js";

/** The flags as commander gives them. */
export interface SlurmCliOptions {
  partition?: string;
  account?: string;
  qos?: string;
  gresType: string[];
  throttle?: string;
  timeFactor?: string;
  /** Parsed and bounded by the CLI (arg-parsers.ts), as --mem. */
  time?: number;
  cpusPerTask?: string;
  mem?: number;
  shards: boolean;
  sbatchArg: string[];
}

// The pipeline file's patterns for the same settings: one rule wherever they come from.
const SLURM_NAME = new RegExp(pipelineSchema.patterns.SlurmName);
const GRES_TYPE = new RegExp(pipelineSchema.patterns.GresType);
/** One sbatch option per argument, nothing a shell or sbatch's #SBATCH reader would split or expand. */
// Control characters too: they would reach the script and the terminal (a dry run prints them).
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const SBATCH_ARG = /^-[^\s"'%\\\u0000-\u001f\u007f-\u009f]*$/;
/**
 * Options that would break the scripts' contract: --array and --wrap (one task per pipeline, the
 * script gpuplan wrote), --wait (sbatch must return once the array is queued: gpuplan follows it),
 * --clusters / -M (the array would run on another cluster, where the squeue, sacct and scancel
 * gpuplan follows it with do not look: its tasks read as unknown, Ctrl-C cancelled nothing).
 * sbatch reads `#SBATCH` lines with getopt_long, which takes any unambiguous abbreviation of a
 * long option (`--arr=0`) and a short option's value attached or after flags (`-a0`, `-Ha0`).
 */
const RESERVED_LONG = ["array", "wrap", "wait", "clusters", "cluster"];
/** sbatch's short options that take no value, which may come before another in one word. */
const RESERVED_SHORT = /^-[hHIkOQsuvV]*[aWM]/;

/** The variables that send sbatch's jobs to another cluster (sacct reads neither). */
const CLUSTER_VARIABLES = ["SBATCH_CLUSTERS", "SLURM_CLUSTERS"] as const;

/**
 * gpuplan submits to the cluster it runs on and follows its jobs there: a shell whose
 * SBATCH_CLUSTERS or SLURM_CLUSTERS names another would have the arrays run where sacct (which
 * reads neither) does not look, and the run's end could not be told. Refused before anything is
 * submitted, as the same options in --sbatch-arg are.
 */
export function refuseOtherClusters(env: NodeJS.ProcessEnv): void {
  const set = CLUSTER_VARIABLES.find((name) => (env[name] ?? "") !== "");
  if (set === undefined) return;
  throw new UsageError(
    `${set}=${displayText(env[set]!, 60)} would send the job arrays to another cluster, where gpuplan cannot follow them (sacct does not read it)`,
    "conflicting-options",
    `unset ${set} and run gpuplan on a login node of that cluster`,
  );
}

function isReservedArg(arg: string): boolean {
  const long = /^--([^=]+)/.exec(arg)?.[1];
  if (long !== undefined) return RESERVED_LONG.some((name) => name.startsWith(long));
  return RESERVED_SHORT.test(arg);
}

export function parseSlurmFlags(o: SlurmCliOptions): SlurmFlags {
  const flags: SlurmFlags = {};
  for (const key of ["partition", "account", "qos"] as const) {
    const value = o[key];
    if (value === undefined) continue;
    if (!SLURM_NAME.test(value))
      throw new UsageError(
        `--${key} ${value}: not a Slurm ${key} name`,
        "invalid-option-value",
        "letters, digits, _ . + -",
      );
    flags[key] = value;
  }
  if (o.gresType.length) {
    flags.gresTypes = {};
    for (const g of o.gresType) {
      const eq = g.lastIndexOf("=");
      const model = eq >= 0 ? g.slice(0, eq) : "*";
      const type = eq >= 0 ? g.slice(eq + 1) : g;
      if (model === "" || !GRES_TYPE.test(type))
        throw new UsageError(
          `--gres-type ${g}: not [MODEL=]TYPE`,
          "invalid-option-value",
          "e.g. --gres-type h100, --gres-type 'NVIDIA L4=l4', --gres-type any (untyped gpu:N)",
        );
      flags.gresTypes[model] = type;
    }
  }
  const positive = (flag: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    if (!/^[1-9][0-9]{0,6}$/.test(value))
      throw new UsageError(`${flag} ${value}: not a positive whole number`, "invalid-option-value");
    return Number(value);
  };
  const throttle = positive("--throttle", o.throttle);
  const cpus = positive("--cpus-per-task", o.cpusPerTask);
  if (throttle !== undefined) flags.throttle = throttle;
  if (cpus !== undefined) flags.cpusPerTask = cpus;
  if (o.timeFactor !== undefined) {
    const f = Number(o.timeFactor);
    if (!/^[0-9]+(\.[0-9]+)?$/.test(o.timeFactor) || f < 1 || f > 100)
      throw new UsageError(`--time-factor ${o.timeFactor}: a number from 1 to 100`, "invalid-option-value");
    flags.timeFactor = f;
  }
  if (o.time !== undefined) flags.timeMs = o.time;
  if (o.mem !== undefined) flags.memPerTaskBytes = o.mem;
  if (o.shards === false) flags.shards = false;
  for (const a of o.sbatchArg) {
    if (!SBATCH_ARG.test(a) || isReservedArg(a))
      throw new UsageError(
        `--sbatch-arg ${a}: ${isReservedArg(a) ? "gpuplan writes this one itself (--array, --wrap), relies on sbatch returning (--wait), or follows the jobs on this cluster (--clusters, -M), in any spelling sbatch reads" : "one sbatch option without spaces, quotes, % or \\"}`,
        "invalid-option-value",
        "e.g. --sbatch-arg=--constraint=ib --sbatch-arg=--exclusive",
      );
  }
  if (o.sbatchArg.length) flags.sbatchArgs = o.sbatchArg;
  return flags;
}

/** The plan's own executor settings: the schema checked their shape, these their content. */
export function checkPlanSettings(plan: GpuplanPlan, file: string): Problem[] {
  const s = plan.settings.executor?.slurm;
  if (!s) return [];
  const bad: string[] = [];
  for (const key of ["partition", "account", "qos"] as const) {
    const v = s[key];
    if (v !== undefined && !SLURM_NAME.test(v)) bad.push(`${key} ${JSON.stringify(v)}`);
  }
  for (const [model, type] of Object.entries(s.gresTypes ?? {}))
    if (!GRES_TYPE.test(type)) bad.push(`gresTypes[${JSON.stringify(model)}] ${JSON.stringify(type)}`);
  for (const a of s.sbatchArgs ?? [])
    if (!SBATCH_ARG.test(a) || isReservedArg(a)) bad.push(`sbatch argument ${JSON.stringify(a)}`);
  return bad.map((b) =>
    error({
      code: "slurm-unsafe-value",
      message: `the plan's executor.slurm ${b.slice(0, 160)} cannot go into an sbatch script`,
      hint: "fix registry.executor.slurm in the pipeline file and compile again",
      file,
      pointer: "/settings/executor/slurm",
    }),
  );
}

/** The tasks' working folder: where the plan's pipeline file resolves, as gpuplan run looks for it. */
export function projectDir(plan: GpuplanPlan, planFile: string, cwd: string): string {
  const source = plan.source.file;
  if (isAbsolute(source) || existsFrom(cwd, source)) return cwd;
  const planDir = resolve(cwd, dirname(planFile));
  return existsFrom(planDir, source) ? planDir : cwd;
}

function existsFrom(dir: string, file: string): boolean {
  try {
    realpathSync(resolve(dir, file));
    return true;
  } catch {
    return false;
  }
}

/** This gpuplan's entry script (bin/gpuplan.js), so the tasks run the same version. */
export function gpuplanBinary(): string {
  const entry = process.argv[1] ?? "gpuplan";
  try {
    return realpathSync(entry);
  } catch {
    return entry;
  }
}
