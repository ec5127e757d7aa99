/* Generated from schemas/compile-report.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What `gpuplan compile --format json` prints on stdout.
 */
export interface GpuplanCompileReport {
  schema: "gpuplan/compile-report@1";
  /**
   * No errors (warnings count as errors with --strict).
   */
  ok: boolean;
  errors: number;
  warnings: number;
  problems: ReportedProblem[];
  /**
   * Where the plan was written (-o), or null.
   */
  output: string | null;
  check: {
    plan: string;
    upToDate: boolean;
  } | null;
  /**
   * The plan (schema gpuplan/plan@1) when it was neither written to a file nor checked.
   */
  plan: {} | null;
}
/**
 * This interface was referenced by `GpuplanCompileReport`'s JSON-Schema
 * via the `definition` "ReportedProblem".
 */
export interface ReportedProblem {
  code: string;
  severity: "error" | "warning";
  message: string;
  hint?: string;
  file?: string;
  pointer?: string;
  line?: number;
  column?: number;
}
