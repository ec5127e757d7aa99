/** The versioned machine-readable compile report (schemas/compile-report.schema.json). */
import type { Problem } from "../../problems/problem.js";
import { toReportedProblem } from "../../problems/reported-problem.js";
import type { GpuplanCompileReport } from "../../schema-types/compile-report.js";
import { jsonText } from "../../text/json-text.js";

export interface ReportInput {
  ok: boolean;
  problems: readonly Problem[];
  output: string | null;
  check: { plan: string; upToDate: boolean } | null;
  /** Several --check plans: each, with the inventory it was checked against. */
  checks?: { plan: string; upToDate: boolean; inventory: string }[];
  /** The plan as its file holds it (src/plan/plan-text.ts planDocument). */
  plan: Record<string, unknown> | null;
}

export function formatJson(input: ReportInput): string {
  const errors = input.problems.filter((p) => p.severity === "error").length;
  const report: GpuplanCompileReport = {
    schema: "gpuplan/compile-report@1",
    ok: input.ok,
    errors,
    warnings: input.problems.length - errors,
    problems: input.problems.map(toReportedProblem),
    output: input.output,
    check: input.check,
    ...(input.checks && { checks: input.checks }),
    plan: input.plan as GpuplanCompileReport["plan"],
  };
  return `${jsonText(report, 2)}\n`;
}
