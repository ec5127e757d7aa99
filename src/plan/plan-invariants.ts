/**
 * What the plan schema cannot say but the runner relies on: pipeline names are unique (logs,
 * journal and --pipeline use them), every GPU a pipeline or step names is in the registry once,
 * budgets fit their cards, and no GPU has more slots than the slot lock gives. compile never writes
 * a plan that breaks them; a hand edit can, and is refused here, located, before anything starts.
 */
import { MAX_SLOTS_PER_GPU } from "../inventory/limits.js";
import { error, type Problem } from "../problems/problem.js";
import type { GpuplanPlan } from "../schema-types/plan.js";

export function planInvariantProblems(plan: GpuplanPlan, file: string): Problem[] {
  const problems: Problem[] = [];
  const broken = (pointer: string, message: string) =>
    problems.push(
      error({
        code: "plan-inconsistent",
        message,
        hint: "the plan was edited by hand or damaged; write it again with gpuplan compile",
        file,
        pointer,
      }),
    );
  const gpus = new Set<string>();
  const uuids = new Set<string>();
  plan.registry.forEach((e, i) => {
    if (gpus.has(e.gpu)) broken(`/registry/${i}/gpu`, `the registry lists ${e.gpu} twice`);
    if (uuids.has(e.uuid)) broken(`/registry/${i}/uuid`, `the registry lists GPU ${e.uuid} twice`);
    gpus.add(e.gpu);
    uuids.add(e.uuid);
    if (e.memoryBudgetBytes > e.memoryBytes)
      broken(`/registry/${i}/memoryBudgetBytes`, `${e.gpu}'s memory budget is larger than the GPU`);
    if (e.maxPipelines > MAX_SLOTS_PER_GPU)
      broken(
        `/registry/${i}/maxPipelines`,
        `${e.gpu} has ${e.maxPipelines} slots; the slot lock gives at most ${MAX_SLOTS_PER_GPU} per GPU`,
      );
  });
  const names = new Map<string, number>();
  plan.pipelines.forEach((p, i) => {
    const first = names.get(p.name);
    if (first !== undefined)
      broken(`/pipelines/${i}/name`, `pipeline \`${p.name}\` appears twice (pipelines ${first} and ${i})`);
    else names.set(p.name, i);
    p.gpus.forEach((g, j) => {
      if (!gpus.has(g))
        broken(
          `/pipelines/${i}/gpus/${j}`,
          `pipeline \`${p.name}\` uses ${g}, which the registry does not list`,
        );
    });
    p.steps.forEach((s, j) => {
      if (s.device !== "cpu" && !gpus.has(s.device))
        broken(
          `/pipelines/${i}/steps/${j}/device`,
          `step \`${s.id}\` of pipeline \`${p.name}\` runs on ${s.device}, which the registry does not list`,
        );
    });
  });
  return problems;
}
