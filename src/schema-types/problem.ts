/* Generated from schemas/problem.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

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
