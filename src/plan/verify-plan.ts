/**
 * A plan names GPUs by UUID; before running, every GPU the selected pipelines use must still be
 * on this machine, visible to this process, and big enough for its budget. Index shifts are
 * harmless (steps get UUIDs, never indices), a missing or shrunk card is not: never run on the
 * wrong card.
 */
import type { Inventory } from "../inventory/types.js";
import { error, type Problem } from "../problems/problem.js";
import type { GpuplanPlan, PlannedPipeline } from "../schema-types/plan.js";
import { formatSize } from "../units/size.js";

export interface VerifyContext {
  /** Where the plan came from, for messages. */
  planFile: string;
  /** The command that makes a fresh plan, for hints. */
  recompile: string;
}

/** GPU ids (cuda:N, cuda:N/migK, rocm:N) the pipelines use. */
export function gpusUsed(pipelines: readonly PlannedPipeline[]): string[] {
  const ids = new Set<string>();
  for (const p of pipelines) {
    for (const g of p.gpus) ids.add(g);
    for (const s of p.steps) if (s.uuid !== null && s.device !== "cpu") ids.add(s.device);
  }
  return [...ids].sort();
}

/** Problems (errors) for every GPU of the selected pipelines that this machine cannot honour. */
export function verifyPlan(
  plan: GpuplanPlan,
  pipelines: readonly PlannedPipeline[],
  inventory: Inventory,
  context: VerifyContext,
): Problem[] {
  const problems: Problem[] = [];
  const hint = `the machine changed since the plan was made; recompile against it: ${context.recompile}`;
  for (const id of gpusUsed(pipelines)) {
    const entry = plan.registry.find((r) => r.gpu === id);
    if (!entry) {
      problems.push(
        error({
          code: "plan-unknown-gpu",
          message: `the plan uses ${id} but its registry does not list it`,
          hint: `the plan is damaged; ${context.recompile}`,
          file: context.planFile,
        }),
      );
      continue;
    }
    const live = inventory.gpus.find((g) => g.uuid === entry.uuid);
    if (!live) {
      const sameIndex = inventory.gpus.find((g) => g.id === id);
      problems.push(
        error({
          code: "gpu-missing",
          message:
            `${id} (${entry.name}, ${entry.uuid}) from the plan is not visible on this machine` +
            (sameIndex ? `; ${id} is now ${sameIndex.name} (${sameIndex.uuid})` : ""),
          hint: `${hint} (or check CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES in this shell)`,
          file: context.planFile,
        }),
      );
      continue;
    }
    const fits = Math.floor(live.memoryBytes * plan.settings.memoryFraction);
    if (fits < entry.memoryBudgetBytes) {
      problems.push(
        error({
          code: "gpu-budget-no-longer-fits",
          message:
            `${id} (${entry.uuid}) now has ${formatSize(live.memoryBytes)}; ` +
            `${plan.settings.memoryFraction} of it is ${formatSize(fits)}, less than the plan's budget of ${formatSize(entry.memoryBudgetBytes)}`,
          hint,
          file: context.planFile,
        }),
      );
    }
  }
  return problems;
}
