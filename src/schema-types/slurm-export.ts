/* Generated from schemas/slurm-export.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What `gpuplan export PLAN --to slurm -o DIR --json` prints: the job arrays written (one sbatch script per distinct resource request, one array task per pipeline) and what each task asks for.
 */
export interface GpuplanSlurmExport {
  schema: "gpuplan/slurm-export@1";
  /**
   * false: problems with severity error, nothing written.
   */
  ok: boolean;
  /**
   * The plan file, as given.
   */
  plan: string;
  outputDir: string;
  /**
   * Where the CPU and memory shares come from (a node type or inventory); null: Slurm's defaults.
   */
  nodeType: string | null;
  /**
   * The submit.sh to run; null when nothing was written.
   */
  submit: string | null;
  arrays: ExportedArray[];
  problems: ReportedProblem[];
}
/**
 * This interface was referenced by `GpuplanSlurmExport`'s JSON-Schema
 * via the `definition` "ExportedArray".
 */
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
/**
 * One problem gpuplan found in its input, located in its file: the same shape in a compile report's `problems` and a plan's `diagnostics`. Tools match on `code`, never on `message`.
 */
export interface ReportedProblem {
  /**
   * Stable kebab-case code, e.g. unknown-memory-type.
   */
  code: string;
  severity: "error" | "warning";
  message: string;
  /**
   * How to fix it.
   */
  hint?: string;
  /**
   * The file the problem is in, as the user named it.
   */
  file?: string;
  line?: number;
  column?: number;
  /**
   * RFC 6901 JSON pointer into the parsed file.
   */
  pointer?: string;
}
