/**
 * A Slurm task's pipeline runs on the GPUs Slurm allocated to the task, whichever they are: a plan
 * compiled for a node type names GPUs no node has (their UUIDs are made up), and a plan compiled
 * on a node names cards Slurm may give to another task. The allocation comes as node-wide indices
 * in SLURM_STEP_GPUS / SLURM_JOB_GPUS (CUDA_VISIBLE_DEVICES is renumbered from 0 where Slurm
 * constrains devices), matched to the live GPUs' PCI-order index; each must be the plan's model
 * with room for its budget. The plan's GPUs keep their ids, and take the live cards' UUIDs, so
 * everything after this (verification, the slot lock, the steps' environment) runs as on a
 * workstation.
 */
import type { Inventory } from "../inventory/types.js";
import { error, type Problem } from "../problems/problem.js";
import type { GpuplanPlan, PlannedPipeline } from "../schema-types/plan.js";
import { displayText } from "../text/safe-text.js";
import { formatSize } from "../units/size.js";

/** The GPUs a task's pipelines use, in order of first use. */
function pipelineGpus(pipelines: readonly PlannedPipeline[]): string[] {
  const ids: string[] = [];
  for (const p of pipelines) for (const g of p.gpus) if (!ids.includes(g)) ids.push(g);
  return ids;
}

export function bindToAllocatedGpus(
  plan: GpuplanPlan,
  pipelines: readonly PlannedPipeline[],
  inventory: Inventory,
  allocated: string | undefined,
): { plan: GpuplanPlan; pipelines: PlannedPipeline[] } | { problems: Problem[] } {
  const wanted = pipelineGpus(pipelines);
  if (wanted.length === 0) return { plan, pipelines: [...pipelines] };
  const fail = (message: string, hint: string) => ({
    problems: [error({ code: "slurm-gpu-binding-failed", message, hint })],
  });
  const list = (allocated ?? "").trim();
  if (!/^[0-9]+(,[0-9]+)*$/.test(list))
    return fail(
      `--bind-slurm-gpus: Slurm gave this task no GPU list (SLURM_STEP_GPUS / SLURM_JOB_GPUS is ${list === "" ? "unset" : `'${displayText(list, 40)}'`})`,
      "run it as an array task of the job gpuplan submitted, on a cluster whose gres.conf names GPU device files (File=)",
    );
  const indices = list.split(",").map(Number);
  if (indices.length < wanted.length)
    return fail(
      `--bind-slurm-gpus: the pipeline uses ${wanted.length} GPUs, Slurm gave ${indices.length} (${list})`,
      "submit it with --gres=gpu:N for its N GPUs (gpuplan run --executor slurm does)",
    );
  const registry = [...plan.registry];
  const uuids = new Map<string, string>();
  for (const [i, id] of wanted.entries()) {
    const at = registry.findIndex((r) => r.gpu === id);
    const entry = registry[at];
    if (!entry) return fail(`the plan uses ${id} but its registry does not list it`, "the plan is damaged");
    const live = inventory.gpus.find(
      (g) => g.backend === entry.backend && g.index === indices[i] && !g.id.includes("/mig"),
    );
    if (!live || id.includes("/mig"))
      return fail(
        `--bind-slurm-gpus: Slurm gave GPU ${indices[i]}, which this node's ${entry.backend} driver does not show${id.includes("/mig") ? " (MIG instances are not bound)" : ""}`,
        "check the node's gres.conf against nvidia-smi -L (File= in PCI order)",
      );
    if (live.name !== entry.name)
      return fail(
        `--bind-slurm-gpus: Slurm gave GPU ${indices[i]} (${displayText(live.name, 80)}), the plan's ${id} is ${displayText(entry.name, 80)}`,
        "ask for the plan's model: --gres-type 'MODEL=TYPE', or compile against this node type",
      );
    const fits = Math.floor(live.memoryBytes * plan.settings.memoryFraction);
    if (fits < entry.memoryBudgetBytes)
      return fail(
        `--bind-slurm-gpus: GPU ${indices[i]} has ${formatSize(live.memoryBytes)}; ${plan.settings.memoryFraction} of it is less than the plan's budget of ${formatSize(entry.memoryBudgetBytes)} for ${id}`,
        "compile against this node type: gpuplan detect --slurm --save NODE.json",
      );
    uuids.set(entry.uuid, live.uuid);
    // The live card's local CPUs, not the ones the plan found for another card (or none).
    const { cpuAffinity: _planned, ...rest } = entry;
    registry[at] = {
      ...rest,
      uuid: live.uuid,
      pciBusId: live.pciBusId,
      memoryBytes: live.memoryBytes,
      ...(live.cpuAffinity && live.cpuAffinity.length > 0 && { cpuAffinity: live.cpuAffinity }),
    };
  }
  const names = new Set(pipelines.map((p) => p.name));
  const rebound = plan.pipelines.map((p) =>
    names.has(p.name)
      ? {
          ...p,
          steps: p.steps.map((s) =>
            s.uuid !== null && uuids.has(s.uuid) ? { ...s, uuid: uuids.get(s.uuid)! } : s,
          ) as PlannedPipeline["steps"],
        }
      : p,
  );
  const bound: GpuplanPlan = { ...plan, registry, pipelines: rebound };
  return { plan: bound, pipelines: rebound.filter((p) => names.has(p.name)) };
}
