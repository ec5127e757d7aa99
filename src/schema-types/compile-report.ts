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
   * With several --check plans: each plan, whether it is up to date, and the inventory it was checked against (the target or file it records, unless --target/--inventory named one). `check` is the first of them.
   */
  checks?: {
    plan: string;
    upToDate: boolean;
    /**
     * target:NAME, file:PATH or detect
     */
    inventory: string;
  }[];
  /**
   * The plan as compile writes it (schema gpuplan/plan@2: defaults left out) when it was neither written to a file nor checked.
   */
  plan: {} | null;
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
