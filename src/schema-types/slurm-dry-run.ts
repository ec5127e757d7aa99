/* Generated from schemas/slurm-dry-run.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What `gpuplan run PLAN --executor slurm --dry-run --json` prints: the job arrays the run would submit (as `gpuplan export --json` describes them), the sbatch command line of each and the scripts themselves. Nothing is submitted and no run folder is made.
 */
export interface GpuplanSlurmDryRun {
  schema: "gpuplan/slurm-dry-run@1";
  /**
   * The plan's name.
   */
  plan: string;
  /**
   * The run id a real run would have had; with --resume, the run resumed.
   */
  run: string;
  /**
   * The run folder (absolute) the scripts name; its slurm/ would hold them.
   */
  runDir: string;
  /**
   * The pipelines that would be submitted, in the plan's order.
   */
  pipelines: string[];
  /**
   * With --resume: pipelines an earlier attempt of the run completed, not submitted again.
   */
  completed: string[];
  /**
   * One job array per distinct resource request, in submission order.
   */
  arrays: ExportedArray[];
  /**
   * Each array's sbatch script, in the order `arrays` names them.
   */
  scripts: SlurmDryRunScript[];
}
export interface ExportedArray {
  /**
   * File name in outputDir.
   */
  script: string;
  jobName: string;
  /**
   * Array task i runs pipelines[i].
   */
  pipelines: string[];
  /**
   * --gres, e.g. gpu:h100:1 or shard:h100:2; null: no GPU.
   */
  gres: string | null;
  sharing: "cpu" | "whole-gpu" | "shard";
  gpusPerTask: number;
  cpusPerTask: number;
  /**
   * --mem; null: the cluster's default.
   */
  memMiB: number | null;
  /**
   * --time as written, [D-]HH:MM:00.
   */
  time: string;
  timeMinutes: number;
}
export interface SlurmDryRunScript {
  /**
   * The script's file name (an array's `script`).
   */
  name: string;
  /**
   * Where it would be written (absolute).
   */
  path: string;
  /**
   * The sbatch command line it would be submitted with, one argument each (gpuplan's GPUPLAN_* settings last).
   */
  command: string[];
  /**
   * The script as it would be written.
   */
  text: string;
}
