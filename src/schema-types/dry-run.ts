/* Generated from schemas/dry-run.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What `gpuplan run PLAN --dry-run --json` prints: the plan verified against this machine, and per pipeline and step what would be started, where and with which environment. Nothing is started.
 */
export interface GpuplanDryRun {
  schema: "gpuplan/dry-run@1";
  /**
   * Each GPU of the plan the selected pipelines use, and the live GPU it would run on: the same UUID when present, else a free GPU of the same kind (run --bind).
   */
  bindings: DryRunBinding[];
  /**
   * The plan's name.
   */
  plan: string;
  /**
   * The run id a real run would have had.
   */
  run: string;
  /**
   * The selected pipelines (--pipeline), in the plan's order.
   */
  pipelines: DryRunPipeline[];
}
export interface DryRunBinding {
  /**
   * The plan's device id.
   */
  gpu: string;
  /**
   * The live GPU's UUID.
   */
  uuid: string;
  pciBusId: string | null;
  /**
   * The live GPU's own id on this machine.
   */
  liveGpu: string;
  planUuid: string;
  replaced: boolean;
}
export interface DryRunPipeline {
  name: string;
  /**
   * The pipeline's GPUs (registry ids); empty on the CPU.
   */
  gpus: string[];
  /**
   * In the order they would start (dependencies first).
   */
  steps: DryRunStep[];
}
export interface DryRunStep {
  id: string;
  /**
   * A registry id (cuda:0…) or cpu.
   */
  device: string;
  exclusive: boolean;
  needs: string[];
  /**
   * The command as a shell would read it (arguments quoted where needed); a worker step shows its worker's command and the task's arguments.
   */
  command: string;
  /**
   * Absolute.
   */
  cwd: string;
  /**
   * Variables set for the step: gpuplan's, then the step's own, which win.
   */
  env: {
    [k: string]: string;
  };
  /**
   * Inherited variables removed (visibility variables that would contradict the plan).
   */
  unset: string[];
  /**
   * What would stop the step from starting here: a working folder that does not exist, a program not found on the step's PATH. Empty when it would start; any problem makes the dry run exit 1.
   */
  problems: string[];
}
