/**
 * What one array task asks Slurm for, from its pipeline in the plan:
 * - GPUs: `--gres=gpu:TYPE:N` for its N GPUs (TYPE from the plan's GPU model: `--gres-type`,
 *   else the node type's own GRES type, else the model table, else untyped); a pipeline the plan
 *   lets share its GPU with others (the GPU's maxPipelines K > 1) asks for `shard:S` with
 *   S = ceil(shards per GPU / K) where the node type has shards — so at most K tasks share one
 *   GPU, as the plan's memory budgets assume — else for a whole GPU (one pipeline per GPU).
 *   Nothing GPU for a CPU pipeline.
 * - CPUs and memory: its share of the node: a whole GPU's share (node / GPUs × N), a shard
 *   task's (node / (GPUs × tasks per GPU)), a CPU pipeline's (node / the plan's maxParallelPipelines), or
 *   what --cpus-per-task / --mem say. Without a known node type: Slurm's defaults.
 * - time: see time-limit.ts.
 */
import { type Problem, warning } from "../problems/problem.js";
import type { GpuplanPlan, PlannedPipeline, PlanRegistryEntry } from "../schema-types/plan.js";
import { countNoun } from "../text/count-noun.js";
import { displayText } from "../text/safe-text.js";
import { formatSize } from "../units/size.js";
import { GPU_MODELS, MiB } from "./gpu-models.js";
import type { NodeShape } from "./node-shape.js";
import { formatSlurmTime, pipelineTimeLimitMinutes } from "./time-limit.js";

export interface SlurmTaskOptions {
  /** GPU model name (or `*` for any) → GRES type, `any` for untyped. */
  gresTypes: Readonly<Record<string, string>>;
  timeFactor: number;
  /** Overrides of the derived values. */
  timeMinutes?: number;
  cpusPerTask?: number;
  memPerTaskBytes?: number;
  /** Share GPUs through shards where the node type has them (default true). */
  shards: boolean;
}

export interface TaskRequest {
  /** `gpu:h100:1`, `shard:h100:2`, `gpu:a100:1,gpu:l4:1`; null for a CPU pipeline. */
  gres: string | null;
  /** GPUs the task must see in SLURM_JOB_GPUS (a shard task: its one GPU). */
  gpus: number;
  sharing: "cpu" | "whole-gpu" | "shard";
  cpusPerTask: number;
  /** null: the cluster's default (DefMemPerCPU and friends). */
  memMiB: number | null;
  timeMinutes: number;
  /** One line per request, saying where it comes from (the scripts' comments). */
  why: string[];
}

export function taskRequest(
  plan: GpuplanPlan,
  pipeline: PlannedPipeline,
  node: NodeShape | null,
  options: SlurmTaskOptions,
): TaskRequest {
  const entries = pipeline.gpus
    .map((id) => plan.registry.find((r) => r.gpu === id))
    .filter((e): e is PlanRegistryEntry => e !== undefined);
  const why: string[] = [];
  let gres: string | null = null;
  let sharing: TaskRequest["sharing"] = "cpu";
  let share: { of: number; reason: string } | null = null;
  if (entries.length > 0) {
    const types = entries.map((e) => gresTypeFor(e.name, node, options.gresTypes));
    const slots = Math.max(...entries.map((e) => e.maxPipelines));
    const shardsPerGpu = node?.shardsPerGpu ?? null;
    if (entries.length === 1 && slots > 1 && options.shards && shardsPerGpu !== null) {
      const shards = Math.ceil(shardsPerGpu / slots);
      const perGpu = Math.floor(shardsPerGpu / shards);
      gres = `shard${types[0] ? `:${types[0].type}` : ""}:${shards}`;
      sharing = "shard";
      why.push(
        `--gres=${gres}: the plan lets ${slots} pipelines share a GPU; ${shards} of its ${shardsPerGpu} shards → at most ${perGpu} tasks per GPU`,
      );
      share = node ? { of: node.gpus * perGpu, reason: `${node.gpus} GPUs × ${perGpu} tasks each` } : null;
    } else {
      const counts = new Map<string, number>();
      for (const t of types) counts.set(t?.type ?? "", (counts.get(t?.type ?? "") ?? 0) + 1);
      gres = [...counts].map(([type, n]) => `gpu${type ? `:${type}` : ""}:${n}`).join(",");
      sharing = "whole-gpu";
      const models = [
        ...new Set(
          entries.map(
            (e, i) =>
              `${displayText(e.name, 60)} → ${types[i]?.type ?? "any type"}${types[i] ? ` (${types[i]!.from})` : ""}`,
          ),
        ),
      ];
      why.push(`--gres=${gres}: the plan's GPU model ${models.join(", ")}`);
      if (slots > 1)
        why.push(
          `  (the plan lets ${slots} pipelines share a GPU, but ${options.shards ? "the node type has no shards" : "shards are off"}: one pipeline per GPU)`,
        );
      share =
        node && node.gpus > 0
          ? { of: node.gpus / entries.length, reason: `${node.gpus} GPUs / ${entries.length}` }
          : null;
    }
  } else if (node) {
    const parallel = plan.settings.maxParallelPipelines;
    share = { of: parallel, reason: `the plan's ${countNoun(parallel, "pipeline")} at once` };
  }
  let cpusPerTask = 1;
  if (options.cpusPerTask !== undefined) {
    cpusPerTask = options.cpusPerTask;
    why.push(`--cpus-per-task=${cpusPerTask}: as given`);
  } else if (node && share) {
    cpusPerTask = Math.max(1, Math.floor(node.cpus / share.of));
    why.push(`--cpus-per-task=${cpusPerTask}: ${node.label}'s ${node.cpus} CPUs / (${share.reason})`);
  } else {
    why.push("--cpus-per-task=1: no node type known (Slurm's default)");
  }
  let memMiB: number | null = null;
  if (options.memPerTaskBytes !== undefined) {
    memMiB = Math.max(1, Math.ceil(options.memPerTaskBytes / MiB));
    why.push(`--mem=${memMiB}M: as given`);
  } else if (node && share && node.memoryBytes > 0) {
    memMiB = Math.max(1, Math.floor(node.memoryBytes / MiB / share.of));
    why.push(`--mem=${memMiB}M: ${node.label}'s ${formatSize(node.memoryBytes)} / (${share.reason})`);
  } else {
    why.push("no --mem: no node type known (the cluster's default memory per CPU applies)");
  }
  const timeMinutes = options.timeMinutes ?? pipelineTimeLimitMinutes(pipeline, options.timeFactor);
  why.push(
    options.timeMinutes !== undefined
      ? `--time=${formatSlurmTime(timeMinutes)}: as given`
      : `--time=${formatSlurmTime(timeMinutes)}: the steps' timeouts where set, else ${options.timeFactor} × their estimates, × OOM attempts, + 1 min to start`,
  );
  return {
    gres,
    gpus: entries.length,
    sharing,
    cpusPerTask,
    memMiB,
    timeMinutes,
    why,
  };
}

/** The GRES type to ask for a GPU model; null asks for any GPU (untyped). */
function gresTypeFor(
  model: string,
  node: NodeShape | null,
  chosen: Readonly<Record<string, string>>,
): { type: string; from: string } | null {
  const given = chosen[model] ?? chosen["*"];
  if (given !== undefined) return given === "any" ? null : { type: given, from: "--gres-type" };
  const nodeType = node?.gresTypes.get(model);
  if (nodeType !== undefined) return nodeType === null ? null : { type: nodeType, from: node!.label };
  const known = GPU_MODELS.find((m) => m.name === model);
  return known ? { type: known.gresType, from: "gpuplan's model table" } : null;
}

/** Warnings about GPU models no GRES type is known for (the tasks then ask for any GPU). */
export function untypedModelProblems(
  plan: GpuplanPlan,
  node: NodeShape | null,
  chosen: Readonly<Record<string, string>>,
): Problem[] {
  const used = new Set(plan.pipelines.flatMap((p) => p.gpus));
  const models = new Set(plan.registry.filter((r) => used.has(r.gpu)).map((r) => r.name));
  return [...models]
    .filter((m) => gresTypeFor(m, node, chosen) === null && (chosen[m] ?? chosen["*"]) !== "any")
    .map((m) =>
      warning({
        code: "slurm-unknown-gres-type",
        message: `no GRES type is known for the plan's GPU model ${displayText(m, 80)}: its tasks ask for any GPU (--gres=gpu:N)`,
        hint: `name the cluster's type: --gres-type '${displayText(m, 80)}=TYPE' (gpuplan detect --slurm shows them)`,
      }),
    );
}
