/**
 * Slurm gives every task of a job array the same resource request, while a plan's pipelines may
 * need different ones (GPU or not, one GPU or two, a shard or a whole GPU, their own time
 * limits). So the plan becomes one array per distinct request, tasks in plan order, and arrays
 * larger than Slurm's default MaxArraySize (1001: indices 0–1000) are split. The reasons, and
 * what was weighed, are in docs/decisions (Slurm job arrays).
 */
import type { GpuplanPlan } from "../schema-types/plan.js";
import type { NodeShape } from "./node-shape.js";
import { type SlurmTaskOptions, type TaskRequest, taskRequest } from "./task-resources.js";

/** Tasks per array: Slurm's default MaxArraySize is 1001, the largest index 1000. */
export const MAX_ARRAY_TASKS = 1000;

export interface JobArrayPlan {
  /** 1-based, in submission order. */
  index: number;
  /** Pipeline names, array task i runs pipelines[i]. */
  pipelines: string[];
  request: TaskRequest;
}

export function planJobArrays(
  plan: GpuplanPlan,
  node: NodeShape | null,
  options: SlurmTaskOptions,
  maxTasks = MAX_ARRAY_TASKS,
): JobArrayPlan[] {
  const groups = new Map<string, { request: TaskRequest; pipelines: string[] }>();
  for (const pipeline of plan.pipelines) {
    const request = taskRequest(plan, pipeline, node, options);
    const key = JSON.stringify([request.gres, request.cpusPerTask, request.memMiB, request.timeMinutes]);
    const group = groups.get(key);
    if (group) group.pipelines.push(pipeline.name);
    else groups.set(key, { request, pipelines: [pipeline.name] });
  }
  const arrays: JobArrayPlan[] = [];
  for (const { request, pipelines } of groups.values()) {
    for (let i = 0; i < pipelines.length; i += maxTasks) {
      arrays.push({ index: arrays.length + 1, pipelines: pipelines.slice(i, i + maxTasks), request });
    }
  }
  return arrays;
}
