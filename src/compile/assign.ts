/**
 * Assigns every pipeline its GPU(s) and an estimated start. All GPU steps of a pipeline share
 * them (affinity). Which GPUs a pipeline may use (requirements, platform_priority, memory) and the
 * problems when none can hold it are decided here; when and where it runs is the memory-aware
 * list schedule's (list-schedule.ts), which host pipelines join as jobs for a host lane.
 */
import { isMigInstance } from "../inventory/mig.js";
import type { RegistryConfig, ResolvedPipeline } from "../pipeline/model.js";
import { error, type Problem, warning } from "../problems/problem.js";
import { formatSize } from "../units/size.js";
import { listSchedule, type ScheduleGpu, type ScheduleJob } from "./list-schedule.js";
import { type LowerBound, scheduleLowerBound } from "./lower-bound.js";
import type { RegistryEntry } from "./registry.js";
import { reservationFor, sharedBudget } from "./registry.js";
import { unmetRequirement } from "./requirements.js";

export interface Assignment {
  pipeline: ResolvedPipeline;
  /** Registry entries the pipeline runs on; empty for a CPU pipeline. */
  gpus: RegistryEntry[];
  /** VRAM it reserves on each of its GPUs while it runs (0 on the CPU). */
  reservationBytes: number;
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

export interface Schedule extends LowerBound {
  assignments: Assignment[];
  loads: GpuLoad[];
  makespanMs: number;
}

const pipelineWorkMs = (p: ResolvedPipeline): number => p.steps.reduce((sum, s) => sum + s.estimateMs, 0);
const exclusiveMs = (p: ResolvedPipeline): number =>
  p.steps.filter((s) => s.isGpu && s.exclusive).reduce((sum, s) => sum + s.estimateMs, 0);

export function assignGpus(
  pipelines: readonly ResolvedPipeline[],
  registry: readonly RegistryEntry[],
  config: RegistryConfig,
  file: string,
  usableCores: number,
): { value: Schedule; problems: Problem[] } {
  const problems: Problem[] = [];
  const assignments: Assignment[] = [];
  const jobs: ScheduleJob[] = [];
  for (const p of pipelines) {
    const workMs = pipelineWorkMs(p);
    const cpu: Assignment = {
      pipeline: p,
      gpus: [],
      reservationBytes: 0,
      fellBackToCpu: false,
      unplaced: false,
      workMs,
      estimatedStartMs: 0,
    };
    const hostJob: ScheduleJob = { workMs, gpus: 0, eligible: [], reservation: [], exclusiveMs: 0 };
    const candidates = p.steps.some((s) => s.isGpu) ? eligibleGpus(p, registry, config) : undefined;
    if (candidates === undefined) {
      assignments.push(cpu);
      jobs.push(hostJob);
    } else if (candidates.length < p.gpus) {
      const fallback = explainUnplaced(p, registry, config, file, problems);
      assignments.push({ ...cpu, fellBackToCpu: fallback, unplaced: !fallback });
      jobs.push(hostJob);
    } else {
      assignments.push(cpu);
      const reserve = reservationFor(p);
      jobs.push({
        workMs,
        gpus: p.gpus,
        eligible: candidates,
        reservation: candidates.map((g) => reserve(registry[g]!)),
        exclusiveMs: exclusiveMs(p),
      });
    }
  }
  const gpus: ScheduleGpu[] = registry.map((e) => ({
    capacityBytes: sharedBudget(e),
    slots: e.maxPipelines,
  }));
  const lanes = config.maxParallelPipelines ?? Math.max(1, usableCores);
  const schedule = listSchedule(jobs, gpus, lanes);
  const loads: GpuLoad[] = registry.map((entry) => ({
    entry,
    pipelines: 0,
    workMs: 0,
    finishMs: 0,
    committedVramBytes: 0,
  }));
  assignments.forEach((a, i) => {
    a.estimatedStartMs = schedule.startMs[i]!;
    a.reservationBytes = schedule.reservedBytes[i]!;
    a.gpus = schedule.placedOn[i]!.map((g) => registry[g]!);
    for (const g of schedule.placedOn[i]!) {
      const load = loads[g]!;
      load.pipelines++;
      load.workMs += a.workMs;
      load.finishMs = Math.max(load.finishMs, a.estimatedStartMs + a.workMs);
      load.committedVramBytes += a.reservationBytes;
    }
  });
  return {
    value: {
      assignments,
      loads,
      makespanMs: schedule.makespanMs,
      ...scheduleLowerBound(jobs, gpus, lanes),
    },
    problems,
  };
}

/**
 * Why a pipeline with GPU steps has no GPU: a warning when it falls back to the CPU (returns
 * true), else an error at each GPU step that strands it.
 */
function explainUnplaced(
  p: ResolvedPipeline,
  registry: readonly RegistryEntry[],
  config: RegistryConfig,
  file: string,
  problems: Problem[],
): boolean {
  const why = explainNoGpu(p, registry, config);
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
    return true;
  }
  // Too few GPUs at once is fixed on the `gpus:` line, not at any step: one error, there.
  if (why.atGpus) {
    problems.push(
      error({
        code: "no-usable-gpu",
        message: `pipeline \`${p.name}\` has too few GPUs to run on: ${why.reason}`,
        hint: why.hint,
        file,
        pointer: `${p.pointer}/gpus`,
      }),
    );
    return false;
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
  return false;
}

/** Registry indexes of the GPUs of the first backend in platform_priority that can hold the pipeline. */
function eligibleGpus(
  p: ResolvedPipeline,
  registry: readonly RegistryEntry[],
  config: RegistryConfig,
): number[] {
  for (const backend of config.platformPriority) {
    if (backend === "cpu") continue;
    const fit: number[] = [];
    registry.forEach((e, i) => {
      if (e.gpu.backend === backend && fits(p, e)) fit.push(i);
    });
    if (fit.length >= p.gpus) return fit;
  }
  return [];
}

/** The most VRAM any of the pipeline's GPU steps declares. */
function largestGpuStepVram(p: ResolvedPipeline): number {
  let need = 0;
  for (const s of p.steps) if (s.isGpu && (s.vramBytes ?? 0) > need) need = s.vramBytes!;
  return need;
}

const fits = (p: ResolvedPipeline, e: RegistryEntry): boolean => unfitReason(p, e) === undefined;

/** Why a GPU's budget is smaller than its memory suggests, when compute instances split it. */
const sharedNote = (e: RegistryEntry): string =>
  e.memorySharedBy > 1
    ? `, split between the ${e.memorySharedBy} compute instances of its MIG GPU instance`
    : "";

/** Why a pipeline on several GPUs may not use a MIG instance (src/inventory/mig.ts). */
const ON_ONE_MIG_INSTANCE = "a MIG instance, and a CUDA process can use only one MIG instance";

/** Why a GPU cannot be one of the pipeline's GPUs (read after its id), or undefined when it can. */
function unfitReason(
  p: ResolvedPipeline,
  e: RegistryEntry,
  need = largestGpuStepVram(p),
): string | undefined {
  const unmet = unmetRequirement(e.gpu, p.requires);
  if (unmet !== undefined) return unmet;
  if (p.gpus > 1 && isMigInstance(e.gpu)) return ON_ONE_MIG_INSTANCE;
  if (need > e.memoryBudgetBytes)
    return `a budget of ${formatSize(e.memoryBudgetBytes)} of ${formatSize(e.gpu.memoryBytes)}${sharedNote(e)}, less than the ${formatSize(need)} it needs`;
  return undefined;
}

/** A reason a person can act on: no GPUs at all, requirements, or memory. */
function explainNoGpu(
  p: ResolvedPipeline,
  registry: readonly RegistryEntry[],
  config: RegistryConfig,
): { reason: string; hint: string; maxBytes?: number; atGpus?: boolean } {
  if (registry.length === 0) {
    return {
      reason: "no GPUs available",
      hint: "to plan for a machine with GPUs: gpuplan compile FILE --target NAME (or --inventory FILE)",
    };
  }
  const reasons = new Map<string, number>();
  for (const e of registry) {
    const why = unmetRequirement(e.gpu, p.requires);
    if (why) reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  const meeting = registry.filter((e) => unmetRequirement(e.gpu, p.requires) === undefined);
  if (meeting.length === 0) {
    const list = [...reasons].map(([r, n]) => `${n} GPU(s): ${r}`).join("; ");
    return {
      reason: `no GPU meets its requirements (${list})`,
      hint: "relax `requires` or target other hardware",
    };
  }
  const need = largestGpuStepVram(p);
  const best = meeting.reduce((a, b) => (b.memoryBudgetBytes > a.memoryBudgetBytes ? b : a));
  if (need > best.memoryBudgetBytes) {
    return {
      maxBytes: best.memoryBudgetBytes,
      reason: `it needs ${formatSize(need)} of VRAM but the largest budget is ${formatSize(best.memoryBudgetBytes)} (${config.memoryStrategy}: ${config.memoryFraction} of ${formatSize(best.gpu.memoryBytes)} on ${best.gpu.name}${sharedNote(best)})`,
      hint: "lower the step's `vram`, raise `registry.memory_strategy` (aggressive, or custom with memory_fraction), or use a larger GPU",
    };
  }
  return { ...explainTooFew(p, registry, config), atGpus: true };
}

/** At most this many GPU ids in one list of a message; the rest are counted. */
const LISTED_GPUS = 4;

const listIds = (ids: readonly string[]): string =>
  ids.length <= LISTED_GPUS
    ? ids.join(", ")
    : `${ids.slice(0, LISTED_GPUS).join(", ")} and ${ids.length - LISTED_GPUS} more`;

/**
 * A pipeline on several GPUs with too few of one backend that can hold it: which GPUs can, and
 * why each other one cannot — counting only those that meet its requirements would claim GPUs
 * its memory rules out ("needs 2 but only 2").
 */
function explainTooFew(
  p: ResolvedPipeline,
  registry: readonly RegistryEntry[],
  config: RegistryConfig,
): { reason: string; hint: string } {
  const need = largestGpuStepVram(p);
  const usable: RegistryEntry[] = [];
  const unfit = new Map<string, string[]>();
  for (const e of registry) {
    const why = unfitReason(p, e, need);
    if (why === undefined) usable.push(e);
    else {
      const ids = unfit.get(why) ?? [];
      ids.push(`${e.gpu.id} (${e.gpu.name})`);
      unfit.set(why, ids);
    }
  }
  const named = (es: readonly RegistryEntry[]) =>
    listIds(es.map((e) => `${e.gpu.id} (${e.gpu.name}, budget ${formatSize(e.memoryBudgetBytes)})`));
  let reason: string;
  if (usable.length >= p.gpus) {
    // Enough in all, but split over backends: a pipeline's GPUs are one backend's (one
    // CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES).
    const perBackend = config.platformPriority
      .map((b) => ({ backend: b, es: usable.filter((e) => e.gpu.backend === b) }))
      .filter((x) => x.es.length > 0)
      .map((x) => `${x.backend} only ${x.es.length}: ${named(x.es)}`);
    reason = `it needs ${p.gpus} GPUs of one backend at once but no backend has ${p.gpus} that can hold it (${perBackend.join("; ")})`;
  } else {
    reason = `it needs ${p.gpus} GPUs at once but ${usable.length === 0 ? "none" : `only ${usable.length}`} can hold it${usable.length > 0 ? `: ${named(usable)}` : ""}`;
  }
  const others = [...unfit].map(([why, ids]) => `${listIds(ids)}: ${why}`);
  if (others.length > 0) reason += `; not ${others.join("; ")}`;
  const hint = unfit.has(ON_ONE_MIG_INSTANCE)
    ? "lower `gpus` (a pipeline on a MIG instance has that one only), or target GPUs with MIG disabled"
    : "lower `gpus` or target a machine with more GPUs of one backend that can hold it";
  return { reason, hint };
}
