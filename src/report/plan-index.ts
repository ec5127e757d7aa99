/**
 * What a report looks up in a plan: each step by pipeline and id (with its planned start and end,
 * its steps in run order), each GPU by id, and the GPUs a set of pipelines uses.
 */
import { stepOrder } from "../plan/step-order.js";
import type { GpuplanPlan, PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../schema-types/plan.js";
import type { GpuFacts } from "./model.js";

export interface IndexedStep {
  pipeline: PlannedPipeline;
  step: PlannedStep;
  /** Planned start and end (ms from the plan's start): the pipeline's start plus the estimates before it. */
  plannedStartMs: number;
  plannedEndMs: number;
}

export interface PlanIndex {
  plan: GpuplanPlan;
  /** Steps in the plan's pipeline order, each pipeline's in run order. */
  steps: IndexedStep[];
  step(pipeline: string, step: string): IndexedStep | undefined;
  gpu(id: string): PlanRegistryEntry | undefined;
  pipeline(name: string): PlannedPipeline | undefined;
}

export function indexPlan(plan: GpuplanPlan): PlanIndex {
  const steps: IndexedStep[] = [];
  const byKey = new Map<string, IndexedStep>();
  const pipelines = new Map<string, PlannedPipeline>();
  for (const p of plan.pipelines) {
    pipelines.set(p.name, p);
    let t = p.estimatedStartMs;
    for (const s of stepOrder(p.steps)) {
      const entry = { pipeline: p, step: s, plannedStartMs: t, plannedEndMs: t + s.estimateMs };
      t += s.estimateMs;
      steps.push(entry);
      byKey.set(`${p.name}\u0000${s.id}`, entry);
    }
  }
  const gpus = new Map(plan.registry.map((r) => [r.gpu, r]));
  return {
    plan,
    steps,
    step: (pipeline, step) => byKey.get(`${pipeline}\u0000${step}`),
    gpu: (id) => gpus.get(id),
    pipeline: (name) => pipelines.get(name),
  };
}

/** The GPUs of the registry the given pipelines use (their GPUs and their steps' devices), in registry order. */
export function gpusOf(plan: GpuplanPlan, pipelines: readonly PlannedPipeline[]): PlanRegistryEntry[] {
  const used = new Set<string>();
  for (const p of pipelines) {
    for (const g of p.gpus) used.add(g);
    for (const s of p.steps) if (s.device !== "cpu") used.add(s.device);
  }
  return plan.registry.filter((r) => used.has(r.gpu));
}

export const gpuFacts = (r: PlanRegistryEntry): GpuFacts => ({
  gpu: r.gpu,
  uuid: r.uuid,
  name: r.name,
  memoryBytes: r.memoryBytes,
  budgetBytes: r.memoryBudgetBytes,
  slots: r.maxPipelines,
});

/** The argv a person would type for a step: a worker step's worker command and its task's words. */
export function stepArgv(step: PlannedStep): string[] {
  return step.worker ? [...step.worker.argv, ...step.worker.args] : [...step.argv];
}
