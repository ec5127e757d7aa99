/* Generated from schemas/slurm-submit.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What `gpuplan run … --executor slurm --detach --json` prints: the run and the job arrays it submitted (one task per pipeline). `gpuplan status RUN` follows it.
 */
export interface GpuplanSlurmSubmission {
  schema: "gpuplan/slurm-submit@1";
  /**
   * The run id.
   */
  run: string;
  /**
   * The run folder (absolute).
   */
  runDir: string;
  /**
   * In submission order.
   */
  jobs: SubmittedArray[];
}
/**
 * This interface was referenced by `GpuplanSlurmSubmission`'s JSON-Schema
 * via the `definition` "SubmittedArray".
 */
export interface SubmittedArray {
  /**
   * The array's job id.
   */
  job: string;
  /**
   * The sbatch script, in the run folder's slurm/.
   */
  script: string;
  /**
   * Array task i runs pipelines[i].
   */
  pipelines: string[];
}
