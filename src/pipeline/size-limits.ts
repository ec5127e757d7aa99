/**
 * Sizes too large to count in bytes exactly (8 PiB and more), each a located error. The schema
 * takes any whole number or a number with a unit, and parseSize answers undefined past the bound:
 * `requires.min_memory`, `registry.context_reserve` and `executor.slurm.mem_per_task` read that as
 * "not given", so `min_memory: 9007199254740993` asked for nothing and the plan was written.
 * A step's `vram` and `data` are checked where the step is normalized.
 */
import { error, type Problem, toPointer } from "../problems/problem.js";
import type { GpuplanPipelineFile } from "../schema-types/pipeline.js";
import { parseSize } from "../units/size.js";
import { sizeTooLarge } from "./size-too-large.js";

/** `skip`: indices of pipelines left out after schema errors. */
export function sizeProblems(data: GpuplanPipelineFile, file: string, skip: ReadonlySet<number>): Problem[] {
  const problems: Problem[] = [];
  const check = (value: number | string | undefined, path: (string | number)[]) => {
    if (value === undefined || parseSize(value) !== undefined) return;
    problems.push(
      error({ ...sizeTooLarge(`\`${String(path.at(-1))}\``, value), file, pointer: toPointer(path) }),
    );
  };
  check(data.registry?.context_reserve, ["registry", "context_reserve"]);
  check(data.registry?.executor?.slurm?.mem_per_task, ["registry", "executor", "slurm", "mem_per_task"]);
  check(data.defaults?.vram, ["defaults", "vram"]);
  data.pipelines.forEach((p, i) => {
    if (!skip.has(i)) check(p.requires?.min_memory, ["pipelines", i, "requires", "min_memory"]);
  });
  return problems;
}
