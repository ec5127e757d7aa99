/** `--pipeline NAME…`: the pipelines of the plan to run, by exact name. */
import { didYouMean } from "../../problems/did-you-mean.js";
import { UsageError } from "../../problems/errors.js";
import type { GpuplanPlan, PlannedPipeline } from "../../schema-types/plan.js";

/** The named pipelines, in plan order; all pipelines when none is given. An unknown name is a usage error. */
export function selectPipelines(plan: GpuplanPlan, names: readonly string[] | undefined): PlannedPipeline[] {
  if (!names || names.length === 0) return plan.pipelines;
  const known = plan.pipelines.map((p) => p.name);
  for (const name of names) {
    if (!known.includes(name)) {
      const suggestion = didYouMean(name, known);
      throw new UsageError(
        `--pipeline: the plan has no pipeline \`${name}\``,
        "unknown-pipeline",
        suggestion
          ? `did you mean \`${suggestion}\`?`
          : `pipelines: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", …" : ""}`,
      );
    }
  }
  return plan.pipelines.filter((p) => names.includes(p.name));
}
