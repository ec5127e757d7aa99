/**
 * The GPU registry: which GPUs the plan may use, how many pipelines each runs at once (its slots)
 * and how much memory they may hold together (its budget). Slots follow OpenHCS's rule
 * max(1, ceil(cpu_threads / gpu_count)), or max_pipelines_per_gpu; memory is a separate budget
 * that the schedule (and the lock at run time) admits pipelines by. One big pipeline therefore
 * costs the memory it needs on the GPU it runs on, and never the slots of every GPU.
 */
import { MAX_SLOTS_PER_GPU } from "../inventory/limits.js";
import { memorySharers } from "../inventory/mig.js";
import type { GpuInfo, Inventory } from "../inventory/types.js";
import { notAddressable, visibleName } from "../inventory/visible-name.js";
import type { RegistryConfig, ResolvedPipeline } from "../pipeline/model.js";
import { type Problem, warning } from "../problems/problem.js";
import { unmetRequirement } from "./requirements.js";

export interface RegistryEntry {
  gpu: GpuInfo;
  memoryBudgetBytes: number;
  /**
   * Registry entries whose budgets split this GPU's memory: the compute instances of one MIG GPU
   * instance (1 for any other GPU).
   */
  memorySharedBy: number;
  /**
   * Kept for warm workers (the max_warm_per_gpu largest that may run here): they live on after
   * their pipeline, so pipelines share the budget less this.
   */
  warmReserveBytes: number;
  maxPipelines: number;
  /** What set maxPipelines: the CPU share or the configured value. */
  limitedBy: "cpu-threads" | "configured";
  /** The GPU's name in *_VISIBLE_DEVICES where that is not its UUID (visible-name.ts), else null. */
  visibleAs: string | null;
}

/** GPUs work can be placed on: a MIG-enabled parent is not, its instances are. */
export function schedulableGpus(inventory: Inventory, platforms: readonly string[]): GpuInfo[] {
  return inventory.gpus.filter(
    (g) => platforms.includes(g.backend) && !(g.mig?.enabled && !g.mig.parentUuid),
  );
}

/**
 * On the machine itself, a GPU no *_VISIBLE_DEVICES value can name alone (visible-name.ts) is
 * left out, with a warning: a step placed on it would start seeing no GPU. A saved or declared
 * inventory keeps it: the plan is bound to the live cards at run time, which checks them there.
 */
function addressableGpus(inventory: Inventory, gpus: GpuInfo[], problems: Problem[]): GpuInfo[] {
  if (inventory.source !== "detect") return gpus;
  const left = gpus.filter((gpu) => visibleName(gpu, inventory.gpus) === null);
  problems.push(...notAddressable(left).map((p) => warning(p)));
  return left.length === 0 ? gpus : gpus.filter((gpu) => !left.includes(gpu));
}

/** The GPU's *_VISIBLE_DEVICES name when it is not its UUID; null when the UUID serves (or none does). */
function visibleAsOf(gpu: GpuInfo, all: readonly GpuInfo[]): string | null {
  const name = visibleName(gpu, all);
  return name === gpu.uuid ? null : name;
}

/** Peak declared VRAM a pipeline holds while sharing its GPU (exclusive steps own the card and don't count). */
export function sharedPeakVram(p: ResolvedPipeline): number {
  let peak = 0;
  for (const s of p.steps) if (s.isGpu && !s.exclusive && (s.vramBytes ?? 0) > peak) peak = s.vramBytes!;
  return peak;
}

/** Memory pipelines share on a GPU: its budget less what warm workers keep. */
export const sharedBudget = (e: RegistryEntry): number => e.memoryBudgetBytes - e.warmReserveBytes;

/**
 * What a pipeline reserves on each of its GPUs while it runs: its shared peak VRAM. A shared GPU
 * step without a `vram` estimate is assumed to fit one slot (the shared budget / slots), as the
 * missing-vram warning says. Returns the reservation for any registry entry.
 */
export function reservationFor(p: ResolvedPipeline): (e: RegistryEntry) => number {
  const peak = sharedPeakVram(p);
  const unsized = p.steps.some((s) => s.isGpu && !s.exclusive && s.vramBytes === null);
  if (!unsized) return () => peak;
  return (e) => Math.max(peak, Math.floor(sharedBudget(e) / e.maxPipelines));
}

/** VRAM of each warm worker a pipeline can leave behind (keep_warm worker steps on a GPU). */
function warmWorkerVram(p: ResolvedPipeline): number[] {
  return p.steps
    .filter((s) => s.isGpu && s.worker !== null && s.keepWarm !== false && !s.exclusive)
    .map((s) => s.vramBytes ?? 0);
}

/** The `maxWarm` largest warm workers' VRAM. */
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
  const schedulable = schedulableGpus(inventory, config.platformPriority);
  const gpus = addressableGpus(inventory, schedulable, problems);
  if (gpus.length === 0) {
    const skipped = inventory.gpus.length - gpus.length;
    // A file of CPU steps only (the Quick start's) has nothing to say about GPUs.
    if (!pipelines.some((p) => p.steps.some((s) => s.isGpu))) return { value: [], problems };
    problems.push(
      warning({
        code: "no-gpus",
        message:
          schedulable.length > 0
            ? `no usable GPU: none of the ${schedulable.length} GPU(s) found can be named to a step alone (see gpu-not-addressable)`
            : skipped > 0
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
  const sharers = memorySharers(gpus);
  const value = gpus.map((gpu): RegistryEntry => {
    // Compute instances of one GPU instance split its budget evenly, so that they can never hold
    // more than it has together — in the plan and in the lock at run time, which budgets each
    // device by itself. One pooled budget would let a big pipeline use a whole GPU instance, but
    // the lock would then need to know which devices share memory; splitting needs nothing new.
    const memorySharedBy = sharers(gpu);
    const memoryBudgetBytes = Math.floor((gpu.memoryBytes * config.memoryFraction) / memorySharedBy);
    let peak = 0;
    const warmSizes: number[] = [];
    pipelines.forEach((p, i) => {
      if (unmetRequirement(gpu, p.requires) !== undefined) return;
      if (peaks[i]! <= memoryBudgetBytes && peaks[i]! > peak) peak = peaks[i]!;
      warmSizes.push(...warm[i]!);
    });
    // Never so much that the biggest pipeline that fits the budget could not run beside the reserve.
    const warmReserveBytes = Math.max(
      0,
      Math.min(warmReserve(warmSizes, config.maxWarmPerGpu), memoryBudgetBytes - peak),
    );
    return {
      gpu,
      memoryBudgetBytes,
      memorySharedBy,
      warmReserveBytes,
      maxPipelines: config.maxPipelinesPerGpu ?? cpuShare,
      limitedBy: config.maxPipelinesPerGpu !== null ? "configured" : "cpu-threads",
      visibleAs: visibleAsOf(gpu, inventory.gpus),
    };
  });
  return { value, problems };
}
