/**
 * The environment a step starts with: which GPUs it sees, how much memory its framework may take,
 * and who it is. Pure (a table-tested function of the plan entries), so `--dry-run`, the executor
 * and the tests agree byte for byte. Set before the process starts because JAX, TensorFlow and
 * CuPy read these variables once, at import.
 */
import { DEVICE_VARIABLES } from "../../inventory/device-variables.js";
import type { PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../../schema-types/plan.js";

export interface StepEnvInput {
  run: string;
  pipeline: PlannedPipeline;
  step: PlannedStep;
  /** The plan's registry (GPU uuid, backend, total memory). */
  registry: readonly PlanRegistryEntry[];
  /** Run this attempt on the CPU (the `on_oom: { fallback: cpu }` rerun). */
  onCpu?: boolean;
  /** The attempt's number (GPUPLAN_OOM_ATTEMPT; 1 unless given). */
  attempt?: number;
  /** GPUPLAN_OOM_SCALE: 1, or less after the on_oom ladder's smaller rungs. */
  oomScale?: number;
}

/** Variables inherited from gpuplan's own environment that would contradict the step's view. */
const CONFLICTING: readonly string[] = DEVICE_VARIABLES;

export interface StepEnv {
  /** What gpuplan sets (before the step's own env, which wins). */
  set: Record<string, string>;
  /** Inherited variables gpuplan removes (unless the step's env sets them). */
  unset: string[];
}

/** The devices a step sees, in the order it sees them (its cuda:0, cuda:1, …). */
export function visibleGpus(input: StepEnvInput): PlanRegistryEntry[] {
  if (input.onCpu || !input.step.gpu || input.step.uuid === null) return [];
  const ids = input.pipeline.gpus.length > 0 ? input.pipeline.gpus : [input.step.device];
  // The step's own device first: a single-GPU step of a pipeline that has several still sees "its" GPU as 0.
  const ordered = [input.step.device, ...ids.filter((id) => id !== input.step.device)];
  const found: PlanRegistryEntry[] = [];
  for (const id of ordered) {
    const entry = input.registry.find((r) => r.gpu === id);
    if (entry) found.push(entry);
  }
  return found;
}

/** The GPU's name in *_VISIBLE_DEVICES: its index where its UUID is none the runtime accepts. */
const visibleAs = (g: PlanRegistryEntry): string => g.visibleAs ?? g.uuid;

/** The variables gpuplan sets for one step attempt, and the inherited ones it removes. */
export function computeStepEnv(input: StepEnvInput): StepEnv {
  const { step, pipeline } = input;
  const gpus = visibleGpus(input);
  const device = gpus.length === 0 ? "cpu" : step.device;
  const set: Record<string, string> = { CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
  const unset = [...CONFLICTING];
  const backend = gpus[0]?.backend;
  if (backend === "rocm") {
    // Never both AMD variables: HIP_VISIBLE_DEVICES indexes within ROCR's set, so both together can hide every GPU.
    set.ROCR_VISIBLE_DEVICES = gpus.map(visibleAs).join(",");
  } else {
    // Empty for CPU steps: a framework that finds no device cannot grab one by accident.
    set.CUDA_VISIBLE_DEVICES = gpus.map(visibleAs).join(",");
  }
  set.GPUPLAN_RUN = input.run;
  set.GPUPLAN_PIPELINE = pipeline.name;
  set.GPUPLAN_STEP = step.id;
  set.GPUPLAN_DEVICE = device;
  // What a step may read to shrink its work after running out of memory (the on_oom ladder).
  set.GPUPLAN_OOM_ATTEMPT = String(input.attempt ?? 1);
  set.GPUPLAN_OOM_SCALE = String(input.oomScale ?? 1);
  // A budget of 0 is none (a plan from before compile refused `vram: 0`), never CUPY_GPU_MEMORY_LIMIT=0:
  // CuPy reads 0 as no limit at all.
  const budget =
    gpus.length > 0 && step.memoryBudgetBytes !== null && step.memoryBudgetBytes > 0
      ? step.memoryBudgetBytes
      : null;
  if (budget !== null) set.GPUPLAN_MEMORY_BUDGET_BYTES = String(budget);
  if (step.deviceMap) set.GPUPLAN_DEVICE_MAP = JSON.stringify(localDeviceMap(step.deviceMap.map, gpus));
  set.GPUPLAN_MEMORY_TYPES = memoryTypes(step).join(",");
  if (budget !== null) Object.assign(set, frameworkMemoryEnv(budget, smallestMemory(gpus)));
  for (const name of Object.keys(set)) {
    const i = unset.indexOf(name);
    if (i >= 0) unset.splice(i, 1);
  }
  return { set, unset: unset.filter((name) => !(name in step.env)) };
}

/** process env − conflicting inherited variables + gpuplan's variables + the step's own env (which wins). */
export function buildStepEnvironment(
  input: StepEnvInput,
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const { set, unset } = computeStepEnv(input);
  // One pass, nothing deleted: this runs for every step, and `delete` plus spreads of ~40
  // variables cost more than the rest of the step's set-up. No prototype, so that a variable
  // named `__proto__` is a key like any other instead of a prototype assignment that drops it.
  const env: Record<string, string> = Object.create(null);
  for (const k in base) {
    const v = base[k];
    if (v !== undefined && !Object.hasOwn(set, k) && !unset.includes(k)) env[k] = v;
  }
  for (const k in set) env[k] = set[k]!;
  for (const k in input.step.env) env[k] = input.step.env[k]!;
  return env;
}

/**
 * Framework limits from the step's budget (bytes on each of its GPUs, more than 0). JAX takes
 * one fraction for every device, of each one's own memory: `totalBytes` is the smallest card the
 * step sees, so that every card gives at least the budget — taken of the largest, a 24 GiB card
 * beside an 80 GiB one got a quarter of it. A larger card's cap is looser than the budget, which
 * costs nothing while preallocation is off and the step keeps to its budget. Null `totalBytes`
 * (no card's memory known): no fraction, rather than one of nothing.
 */
export function frameworkMemoryEnv(budgetBytes: number, totalBytes: number | null): Record<string, string> {
  return {
    XLA_PYTHON_CLIENT_PREALLOCATE: "false",
    ...(totalBytes !== null && { XLA_PYTHON_CLIENT_MEM_FRACTION: memoryFraction(budgetBytes, totalBytes) }),
    TF_FORCE_GPU_ALLOW_GROWTH: "true",
    CUPY_GPU_MEMORY_LIMIT: String(budgetBytes),
    PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True",
  };
}

/**
 * `budget ÷ total` rounded down, so that it never exceeds the budget, to 3 decimals or as many
 * more as 3 significant digits need: to 3 decimals, 64 MiB of an 80 GiB card was 0.000, and JAX
 * (which parses any float) could allocate nothing.
 */
function memoryFraction(budgetBytes: number, totalBytes: number): string {
  const fraction = Math.min(1, budgetBytes / totalBytes);
  const decimals = Math.max(3, 2 - Math.floor(Math.log10(fraction)));
  const scale = 10 ** decimals;
  return (Math.floor(fraction * scale) / scale).toFixed(decimals);
}

/** The memory of the smallest card among `gpus` whose memory is known; null when none is. */
function smallestMemory(gpus: readonly PlanRegistryEntry[]): number | null {
  const known = gpus.map((g) => g.memoryBytes).filter((bytes) => bytes > 0);
  return known.length > 0 ? Math.min(...known) : null;
}

/**
 * The plan's device map in the step's own view: the step sees only its GPUs, renumbered from 0
 * in CUDA_VISIBLE_DEVICES order, so the plan's cuda:3 is the process's cuda:0. On the CPU every
 * GPU entry becomes cpu. AMD GPUs are `cuda:N` too: PyTorch on ROCm (and accelerate's and
 * diffusers' device_map with it) names them so and refuses `rocm:N`; the plan's `rocm:N` is
 * gpuplan's own name for the card, not a framework's.
 */
export function localDeviceMap(
  map: Record<string, string>,
  gpus: readonly PlanRegistryEntry[],
): Record<string, string> {
  // No prototype: a component named `__proto__` is a key, not a prototype assignment.
  const out: Record<string, string> = Object.create(null);
  for (const [component, device] of Object.entries(map)) {
    if (device === "cpu" || device === "disk") {
      out[component] = device;
      continue;
    }
    const index = gpus.findIndex((g) => g.gpu === device);
    if (index >= 0) out[component] = `cuda:${index}`;
    else out[component] = gpus.length === 0 ? "cpu" : device;
  }
  return out;
}

function memoryTypes(step: PlannedStep): string[] {
  return [...new Set([step.memory.input, step.memory.output, ...step.memory.uses])];
}
