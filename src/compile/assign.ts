/**
 * Assigns every pipeline its GPU(s). All GPU steps of a pipeline share them (affinity). Pipelines
 * are placed longest first on the GPU whose earliest free slot comes first (LPT list scheduling
 * over all slots), which keeps the estimated makespan close to its lower bound; ties go to the
 * GPU with less memory committed, then fewer pipelines, then PCI order.
 */
import type { RegistryConfig, ResolvedPipeline } from "../pipeline/model.js";
import { error, type Problem, warning } from "../problems/problem.js";
import { formatSize } from "../units/size.js";
import type { RegistryEntry } from "./registry.js";
import { sharedPeakVram } from "./registry.js";
import { unmetRequirement } from "./requirements.js";

export interface Assignment {
  pipeline: ResolvedPipeline;
  /** Registry entries the pipeline runs on; empty for a CPU pipeline. */
  gpus: RegistryEntry[];
  /** The pipeline has GPU steps but runs on the CPU because they all allow it. */
  fellBackToCpu: boolean;
  /** Its GPU steps could not be placed (an error was reported); the plan is not written. */
  unplaced: boolean;
  workMs: number;
  estimatedStartMs: number;
}

interface GpuLoad {
  entry: RegistryEntry;
  pipelines: number;
  workMs: number;
  finishMs: number;
  committedVramBytes: number;
}

export interface Schedule {
  assignments: Assignment[];
  loads: GpuLoad[];
  makespanMs: number;
  lowerBoundMs: number;
}

const pipelineWorkMs = (p: ResolvedPipeline): number => p.steps.reduce((sum, s) => sum + s.estimateMs, 0);
const exclusiveMs = (p: ResolvedPipeline): number =>
  p.steps.filter((s) => s.isGpu && s.exclusive).reduce((sum, s) => sum + s.estimateMs, 0);

interface GpuState {
  entry: RegistryEntry;
  order: number;
  slots: number[];
  pipelines: number;
  workMs: number;
  committedVramBytes: number;
}

const earliest = (g: GpuState): number => Math.min(...g.slots);

export function assignGpus(
  pipelines: readonly ResolvedPipeline[],
  registry: readonly RegistryEntry[],
  config: RegistryConfig,
  file: string,
): { value: Schedule; problems: Problem[] } {
  const problems: Problem[] = [];
  const states: GpuState[] = registry.map((entry, order) => ({
    entry,
    order,
    slots: new Array<number>(entry.maxPipelines).fill(0),
    pipelines: 0,
    workMs: 0,
    committedVramBytes: 0,
  }));
  const byName = new Map<string, Assignment>();
  // Longest first; names break ties so the plan is deterministic.
  const order = [...pipelines].sort((a, b) => pipelineWorkMs(b) - pipelineWorkMs(a) || cmp(a.name, b.name));
  for (const p of order) {
    const workMs = pipelineWorkMs(p);
    const cpu: Assignment = {
      pipeline: p,
      gpus: [],
      fellBackToCpu: false,
      unplaced: false,
      workMs,
      estimatedStartMs: 0,
    };
    if (!p.steps.some((s) => s.isGpu)) {
      byName.set(p.name, cpu);
      continue;
    }
    const candidates = eligibleGpus(p, states, config);
    if (candidates.length < p.gpus) {
      const why = explainNoGpu(p, states, config);
      // When memory is the reason, name only the steps that are too big; otherwise every GPU step.
      const stranded = p.steps.filter(
        (s) =>
          s.isGpu &&
          s.onOom.fallback !== "cpu" &&
          (why.maxBytes === undefined || (s.vramBytes ?? 0) > why.maxBytes),
      );
      if (stranded.length === 0 && config.platformPriority.includes("cpu")) {
        problems.push(
          warning({
            code: "gpu-fallback-cpu",
            message: `pipeline \`${p.name}\` runs on the CPU: ${why.reason}`,
            hint: why.hint,
            file,
            pointer: p.pointer,
            at: "key",
          }),
        );
        byName.set(p.name, { ...cpu, fellBackToCpu: true, unplaced: false });
        continue;
      }
      for (const step of stranded.length ? stranded : p.steps.filter((s) => s.isGpu)) {
        problems.push(
          error({
            code: "no-usable-gpu",
            message: `GPU step \`${step.id}\` of pipeline \`${p.name}\` has no GPU to run on: ${why.reason}`,
            hint: `${why.hint}; or let the step run on the CPU with \`on_oom: { fallback: cpu }\``,
            file,
            pointer: step.pointer,
          }),
        );
      }
      byName.set(p.name, { ...cpu, unplaced: true });
      continue;
    }
    // Each candidate's earliest free slot, once (the comparator would recompute it per comparison).
    const free = new Map(candidates.map((g) => [g, earliest(g)]));
    const chosen = [...candidates]
      .sort(
        (a, b) =>
          free.get(a)! - free.get(b)! ||
          a.committedVramBytes - b.committedVramBytes ||
          a.pipelines - b.pipelines ||
          a.order - b.order,
      )
      .slice(0, p.gpus)
      .sort((a, b) => a.order - b.order);
    const start = Math.max(...chosen.map(earliest));
    const peak = sharedPeakVram(p);
    const blocked = exclusiveMs(p);
    for (const g of chosen) {
      const slot = g.slots.indexOf(earliest(g));
      g.slots[slot] = start + workMs;
      // An exclusive step holds every slot of the card while it runs.
      if (blocked > 0) g.slots = g.slots.map((t, i) => (i === slot ? t : Math.max(t, start) + blocked));
      g.pipelines++;
      g.workMs += workMs;
      g.committedVramBytes += peak;
    }
    byName.set(p.name, {
      pipeline: p,
      gpus: chosen.map((g) => g.entry),
      fellBackToCpu: false,
      unplaced: false,
      workMs,
      estimatedStartMs: start,
    });
  }
  const loads = states.map((g) => ({
    entry: g.entry,
    pipelines: g.pipelines,
    workMs: g.workMs,
    finishMs: Math.max(0, ...g.slots),
    committedVramBytes: g.committedVramBytes,
  }));
  const gpuAssignments = [...byName.values()].filter((a) => a.gpus.length > 0);
  const totalWork = gpuAssignments.reduce((s, a) => s + a.workMs * a.gpus.length, 0);
  const totalSlots = Math.min(
    states.reduce((s, g) => s + g.slots.length, 0),
    config.maxParallelPipelines ?? Number.POSITIVE_INFINITY,
  );
  const longest = Math.max(0, ...gpuAssignments.map((a) => a.workMs));
  return {
    value: {
      assignments: pipelines.map((p) => byName.get(p.name)!),
      loads,
      makespanMs: Math.max(0, ...loads.map((l) => l.finishMs)),
      lowerBoundMs: totalSlots > 0 ? Math.max(Math.ceil(totalWork / totalSlots), longest) : 0,
    },
    problems,
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** GPUs of the first backend in platform_priority that can hold the pipeline. */
function eligibleGpus(p: ResolvedPipeline, states: GpuState[], config: RegistryConfig): GpuState[] {
  for (const backend of config.platformPriority) {
    if (backend === "cpu") continue;
    const fit = states.filter((g) => g.entry.gpu.backend === backend && fits(p, g.entry));
    if (fit.length >= p.gpus) return fit;
  }
  return [];
}

function fits(p: ResolvedPipeline, e: RegistryEntry): boolean {
  if (unmetRequirement(e.gpu, p.requires) !== undefined) return false;
  return p.steps.every((s) => !s.isGpu || (s.vramBytes ?? 0) <= e.memoryBudgetBytes);
}

/** A reason a person can act on: no GPUs at all, requirements, or memory. */
function explainNoGpu(
  p: ResolvedPipeline,
  states: GpuState[],
  config: RegistryConfig,
): { reason: string; hint: string; maxBytes?: number } {
  if (states.length === 0) {
    return {
      reason: "no GPUs available",
      hint: "to plan for a machine with GPUs: gpuplan compile FILE --target NAME (or --inventory FILE)",
    };
  }
  const reasons = new Map<string, number>();
  for (const g of states) {
    const why = unmetRequirement(g.entry.gpu, p.requires);
    if (why) reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  const meeting = states.filter((g) => unmetRequirement(g.entry.gpu, p.requires) === undefined);
  if (meeting.length === 0) {
    const list = [...reasons].map(([r, n]) => `${n} GPU(s): ${r}`).join("; ");
    return {
      reason: `no GPU meets its requirements (${list})`,
      hint: "relax `requires` or target other hardware",
    };
  }
  const need = Math.max(...p.steps.filter((s) => s.isGpu).map((s) => s.vramBytes ?? 0));
  const best = meeting.reduce((a, b) =>
    b.entry.memoryBudgetBytes > a.entry.memoryBudgetBytes ? b : a,
  ).entry;
  if (need > best.memoryBudgetBytes) {
    return {
      maxBytes: best.memoryBudgetBytes,
      reason: `it needs ${formatSize(need)} of VRAM but the largest budget is ${formatSize(best.memoryBudgetBytes)} (${config.memoryStrategy}: ${config.memoryFraction} of ${formatSize(best.gpu.memoryBytes)} on ${best.gpu.name})`,
      hint: "lower the step's `vram`, raise `registry.memory_strategy` (aggressive, or custom with memory_fraction), or use a larger GPU",
    };
  }
  return {
    reason: `it needs ${p.gpus} GPUs at once but only ${meeting.length} meet its requirements`,
    hint: "lower `gpus` or target a machine with more GPUs",
  };
}
