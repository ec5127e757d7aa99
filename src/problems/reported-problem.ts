/**
 * A problem as gpuplan's machine output shows it (schemas/problem.schema.json): the one shape of a
 * compile report's `problems` and a plan's `diagnostics`. Offsets and key/value targeting are
 * internal; line and column are what tools need.
 */
import type { ReportedProblem } from "../schema-types/problem.js";
import type { Problem } from "./problem.js";

export function toReportedProblem(p: Problem): ReportedProblem {
  return {
    code: p.code,
    severity: p.severity,
    message: p.message,
    ...(p.hint !== undefined && { hint: p.hint }),
    ...(p.file !== undefined && { file: p.file }),
    ...(p.line !== undefined && { line: p.line, column: p.column }),
    ...(p.pointer !== undefined && { pointer: p.pointer }),
  };
}
