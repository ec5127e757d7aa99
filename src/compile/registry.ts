/**
 * The GPU registry: which GPUs the plan may use and how many pipelines each takes at once.
 * OpenHCS's rule max(1, ceil(cpu_threads / gpu_count)), bounded by how many of the pipelines'
 * peak VRAM fit the GPU's memory budget — and, unlike OpenHCS, enforced by `gpuplan run`.
 */
import { MAX_SLOTS_PER_GPU } from "../inventory/limits.js";
import type { GpuInfo, Inventory } from "../inventory/types.js";
import type { RegistryConfig, ResolvedPipeline } from "../pipeline/model.js";
import { type Problem, warning } from "../problems/problem.js";
import { unmetRequirement } from "./requirements.js";

export interface RegistryEntry {
  gpu: GpuInfo;
  memoryBudgetBytes: number;
  maxPipelines: number;
  /** What bounded maxPipelines: the CPU share, the configured value, or the memory budget. */
  limitedBy: "cpu-threads" | "configured" | "memory";
}

/** GPUs work can be placed on: a MIG-enabled parent is not, its instances are. */
export function schedulableGpus(inventory: Inventory, platforms: readonly string[]): GpuInfo[] {
  return inventory.gpus.filter(
    (g) => platforms.includes(g.backend) && !(g.mig?.enabled && !g.mig.parentUuid),
  );
}

/** Peak VRAM a pipeline holds while sharing its GPU (exclusive steps own the card and don't count). */
export function sharedPeakVram(p: ResolvedPipeline): number {
  return Math.max(0, ...p.steps.filter((s) => s.isGpu && !s.exclusive).map((s) => s.vramBytes ?? 0));
}

/** VRAM of each warm worker a pipeline can leave behind (keep_warm worker steps on a GPU). */
function warmWorkerVram(p: ResolvedPipeline): number[] {
  return p.steps
    .filter((s) => s.isGpu && s.worker !== null && s.keepWarm !== false && !s.exclusive)
    .map((s) => s.vramBytes ?? 0);
}

/**
 * VRAM a GPU keeps for warm workers: the `maxWarm` largest of those that may run on it. A warm
 * worker lives on in its slot after its task, so it is counted once here, beside every slot's
 * shared peak, rather than in one pipeline's peak.
 */
function warmReserve(sizes: readonly number[], maxWarm: number): number {
  return [...sizes]
    .sort((a, b) => b - a)
    .slice(0, maxWarm)
    .reduce((sum, n) => sum + n, 0);
}

export function buildRegistry(
  inventory: Inventory,
  config: RegistryConfig,
  pipelines: readonly ResolvedPipeline[],
): { value: RegistryEntry[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const gpus = schedulableGpus(inventory, config.platformPriority);
  if (gpus.length === 0) {
    const skipped = inventory.gpus.length - gpus.length;
    // A file of CPU steps only (the Quick start's) has nothing to say about GPUs.
    if (!pipelines.some((p) => p.steps.some((s) => s.isGpu))) return { value: [], problems };
    problems.push(
      warning({
        code: "no-gpus",
        message:
          skipped > 0
            ? `no usable GPU: ${skipped} GPU(s) found but none of a backend in platform_priority (${config.platformPriority.join(", ")})`
            : "no GPUs in the inventory: every pipeline runs on the CPU",
        hint: "to plan for a machine with GPUs: gpuplan compile FILE --target NAME (or --inventory FILE)",
      }),
    );
    return { value: [], problems };
  }
  const cpuShare = Math.min(
    MAX_SLOTS_PER_GPU,
    Math.max(1, Math.ceil(inventory.cpu.usableCores / gpus.length)),
  );
  // Computed once: the registry looks at every pipeline for every GPU.
  const peaks = pipelines.map(sharedPeakVram);
  const warm = pipelines.map(warmWorkerVram);
  const value = gpus.map((gpu): RegistryEntry => {
    const memoryBudgetBytes = Math.floor(gpu.memoryBytes * config.memoryFraction);
    const base = config.maxPipelinesPerGpu ?? cpuShare;
    let peak = 0;
    const warmSizes: number[] = [];
    pipelines.forEach((p, i) => {
      if (unmetRequirement(gpu, p.requires) !== undefined) return;
      if (peaks[i]! > peak) peak = peaks[i]!;
      warmSizes.push(...warm[i]!);
    });
    const shared = memoryBudgetBytes - warmReserve(warmSizes, config.maxWarmPerGpu);
    const memorySlots = peak > 0 ? Math.max(1, Math.floor(shared / peak)) : Number.POSITIVE_INFINITY;
    const maxPipelines = Math.min(base, memorySlots);
    return {
      gpu,
      memoryBudgetBytes,
      maxPipelines,
      limitedBy:
        memorySlots < base ? "memory" : config.maxPipelinesPerGpu !== null ? "configured" : "cpu-threads",
    };
  });
  return { value, problems };
}
