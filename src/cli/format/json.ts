/** The versioned machine-readable compile report (schema gpuplan/compile-report@1). */
import type { Problem } from "../../problems/problem.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";

export interface CompileReport {
  schema: "gpuplan/compile-report@1";
  ok: boolean;
  errors: number;
  warnings: number;
  problems: Omit<Problem, "offset" | "at">[];
  /** Where the plan was written, when -o was given. */
  output: string | null;
  /** --check: whether the plan file is up to date. */
  check: { plan: string; upToDate: boolean } | null;
  /** The plan itself when it was neither written to a file nor checked. */
  plan: GpuplanPlan | null;
}

export function formatJson(
  report: Omit<CompileReport, "schema" | "errors" | "warnings" | "problems"> & {
    problems: readonly Problem[];
  },
): string {
  const errors = report.problems.filter((p) => p.severity === "error").length;
  const full: CompileReport = {
    schema: "gpuplan/compile-report@1",
    ok: report.ok,
    errors,
    warnings: report.problems.length - errors,
    problems: report.problems.map(({ offset: _o, at: _a, ...p }) => p),
    output: report.output,
    check: report.check,
    plan: report.plan,
  };
  return `${JSON.stringify(full, null, 2)}\n`;
}
