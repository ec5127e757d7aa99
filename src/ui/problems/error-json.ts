/**
 * The document a `--json` command prints on stdout in place of its result when it stops
 * (schemas/error.schema.json): a failure (report-failure.ts), or the problems that stopped it
 * (a plan that no longer fits this machine, under `run --dry-run --json`).
 */
import type { Problem } from "../../problems/problem.js";
import { toReportedProblem } from "../../problems/reported-problem.js";
import type { GpuplanError } from "../../schema-types/error.js";
import { jsonText } from "../../text/json-text.js";

export function formatErrorJson(exitCode: number, problems: readonly [Problem, ...Problem[]]): string {
  const [first, ...rest] = problems;
  const document: GpuplanError = {
    schema: "gpuplan/error@1",
    ok: false,
    exitCode,
    problems: [toReportedProblem(first), ...rest.map(toReportedProblem)],
  };
  return `${jsonText(document, 2)}\n`;
}
