/** Turns the resolved templates into concrete pipelines, one per matrix combination. */
import { error, type Problem } from "../problems/problem.js";
import type { PipelineSpec } from "../schema-types/pipeline.js";
import { expandMatrix, type MatrixValues, substitute } from "./expand-matrix.js";
import type { ResolvedPipeline } from "./model.js";

export function expandPipelines(
  templates: readonly { spec: PipelineSpec; resolved: ResolvedPipeline }[],
  file: string,
): { value: ResolvedPipeline[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const out: ResolvedPipeline[] = [];
  const firstPointer = new Map<string, string>();
  for (const { spec, resolved } of templates) {
    for (const values of expandMatrix(spec.matrix)) {
      const p = applyMatrix(resolved, values);
      const earlier = firstPointer.get(p.name);
      if (earlier !== undefined && earlier !== resolved.pointer) {
        problems.push(
          error({
            code: "duplicate-pipeline-name",
            message: `pipeline name \`${p.name}\` is used more than once`,
            hint: "pipeline names identify runs, logs and locks; make each unique",
            file,
            pointer: `${resolved.pointer}/name`,
          }),
        );
      }
      firstPointer.set(p.name, resolved.pointer);
      out.push(p);
    }
  }
  return { value: out, problems };
}

function applyMatrix(t: ResolvedPipeline, values: MatrixValues): ResolvedPipeline {
  // Always substitute, matrix or not: `{{` and `}}` are literal braces in every pipeline.
  // Unknown placeholders were reported once per template by the matrix rule.
  const sub = (s: string) => substitute(s, values, new Set());
  return {
    ...t,
    name: sub(t.name),
    matrix: values,
    steps: t.steps.map((s) => ({
      ...s,
      argv: s.argv.map(sub),
      // The worker's own argv is shared by every pipeline using its key: only task args vary.
      worker: s.worker && { ...s.worker, args: s.worker.args.map(sub) },
      env: Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, sub(v)])),
      cwd: s.cwd === null ? null : sub(s.cwd),
    })),
  };
}
