/* Generated from schemas/plan.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * Share of each GPU's memory the plan may use: conservative 0.60, balanced 0.75, aggressive 0.90, custom = memory_fraction.
 */
export type MemoryStrategy = "conservative" | "balanced" | "aggressive" | "custom";
/**
 * Where a step runs: a GPU backend (GpuBackend) or the CPU.
 */
export type Platform = "cuda" | "rocm" | "cpu";
/**
 * A GPU's software stack: cuda (NVIDIA) or rocm (AMD).
 */
export type GpuBackend = "cuda" | "rocm";
/**
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "MemoryType".
 */
export type MemoryType = "numpy" | "cupy" | "torch" | "tensorflow" | "jax" | "pyclesperanto";
/**
 * The ids of the runs the samples came from, sorted.
 *
 * @minItems 1
 *
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "LearnedRuns".
 */
export type LearnedRuns = [string, ...string[]];
/**
 * A rung of the on_oom ladder.
 */
export type OomRungKind = "retry" | "wait" | "exclusive" | "other-gpu" | "smaller" | "cpu";

/**
 * What `gpuplan compile` decided: every pipeline's GPU, every step's device, argv, environment and budget. Self-contained: another engine can execute it without the pipeline file. Deterministic: the same pipeline, inventory and gpuplan version give the same bytes. Format 2 leaves out a field whose value is its `default` (or what its `x-default` says it is when absent); a reader puts it back. Format 1 plans wrote every field and are read as well.
 */
export interface GpuplanPlan {
  /**
   * The plan format: 2 leaves out defaults; 1 (gpuplan before it) wrote every field.
   */
  schema: "gpuplan/plan@2" | "gpuplan/plan@1";
  gpuplanVersion: string;
  name: string;
  source: {
    /**
     * The pipeline file, relative to the plan file's folder (the pipeline's own folder when the plan went to a pipe), with / separators; plans from before recorded it as given to compile.
     */
    file: string;
    sha256: string;
  };
  inventory: {
    /**
     * target:NAME, file:PATH (relative to the plan file's folder) or detect
     */
    label: string;
    fingerprint: string;
    gpus: number;
  };
  settings: {
    memoryStrategy: MemoryStrategy;
    memoryFraction: number;
    platformPriority: Platform[];
    /**
     * Pipelines running at once on the host (registry.max_parallel_pipelines).
     */
    maxParallelPipelines: number;
    contextReserveBytes: number;
    /**
     * Warm workers each GPU keeps loaded at once (registry.max_warm_per_gpu).
     */
    maxWarmPerGpu: number;
    /**
     * registry.executor of the pipeline file, when it has one.
     */
    executor?: {
      slurm?: PlanSlurmSettings;
    };
  };
  registry: PlanRegistryEntry[];
  pipelines: PlannedPipeline[];
  summary: PlanSummary;
  /**
   * The warnings compile found (a plan is only written without errors), each at its file relative to the plan's folder, as `source.file` is.
   */
  diagnostics: ReportedProblem[];
}
/**
 * registry.executor.slurm, resolved: only what the pipeline file sets.
 *
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "SlurmSettings".
 */
export interface PlanSlurmSettings {
  partition?: string;
  account?: string;
  qos?: string;
  /**
   * GPU model name (`*`: every model) → GRES type (`any`: untyped).
   */
  gresTypes?: {
    [k: string]: string;
  };
  throttle?: number;
  timeFactor?: number;
  timeMs?: number;
  cpusPerTask?: number;
  memPerTaskBytes?: number;
  shards?: boolean;
  sbatchArgs?: string[];
}
/**
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "RegistryEntry".
 */
export interface PlanRegistryEntry {
  /**
   * Device id: cuda:N, rocm:N, cuda:N/migK.
   */
  gpu: string;
  uuid: string;
  name: string;
  backend: GpuBackend;
  pciBusId: string | null;
  memoryBytes: number;
  /**
   * Memory the pipelines on this GPU may hold together: the memory strategy's fraction of its memory, split evenly between the compute instances of one MIG GPU instance (each reports the GPU instance's whole memory, which they share).
   */
  memoryBudgetBytes: number;
  /**
   * Part of the budget kept for warm workers (the max_warm_per_gpu largest that may run here); pipelines share the rest. 0 in plans made before it existed.
   */
  warmReserveBytes: number;
  /**
   * Slots: pipelines that may hold this GPU at once, if their reservations fit the budget.
   */
  maxPipelines: number;
  /**
   * What set maxPipelines: the CPU share or max_pipelines_per_gpu (memory: plans made before memory-aware packing, whose slots the biggest pipeline bounded).
   */
  limitedBy: "cpu-threads" | "configured" | "memory";
  /**
   * CUDA compute capability ("9.0") or AMD gfx target ("gfx942"), when the inventory knows it: a GPU standing in for this one at run time must have the same. Plans from before have none; their GPUs bind by backend, model name and memory.
   */
  computeCapability?: string | null;
  /**
   * The GPU's local CPUs, when the inventory knows them: gpuplan run pins the steps on this GPU to them (GPUPLAN_CPU_PINNING=off to not).
   */
  cpuAffinity?: number[];
  /**
   * What a step's CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES names this GPU by when not its uuid: its index in the runtime's order, for a GPU whose UUID is unknown or not one the runtime accepts. gpuplan run sets it anew from the live GPU the plan is bound to; absent, the uuid names it.
   */
  visibleAs?: string;
}
/**
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "PlannedPipeline".
 */
export interface PlannedPipeline {
  name: string;
  /**
   * The pipeline entry (before matrix expansion) it comes from.
   */
  template: string;
  matrix: {
    [k: string]: string;
  };
  /**
   * The pipeline's (first) GPU, or null for a CPU pipeline.
   */
  gpu: string | null;
  /**
   * All its GPUs (gpus: N).
   */
  gpus: string[];
  backend: Platform;
  fellBackToCpu: boolean;
  estimateMs: number;
  estimatedStartMs: number;
  /**
   * Most VRAM its steps declare while sharing the GPU.
   */
  peakVramBytes: number;
  /**
   * VRAM it reserves on each of its GPUs from its start to its end: its peak, or a slot's share of the budget when a shared GPU step has no `vram` (on several GPUs, the least of their shares); 0 on the CPU. Plans made before it existed are read with their peakVramBytes.
   */
  reservationBytes: number;
  /**
   * Where the pipeline is written: the pipeline file and a JSON pointer, e.g. pipeline.yaml#/pipelines/0 (matrix expansions share it). Plans from before have none.
   */
  source?: string;
  /**
   * @minItems 1
   */
  steps: [PlannedStep, ...PlannedStep[]];
}
/**
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "PlannedStep".
 */
export interface PlannedStep {
  id: string;
  /**
   * cuda:N, rocm:N, cuda:N/migK or cpu.
   */
  device: string;
  /**
   * UUID of the step's GPU; null on the CPU.
   */
  uuid: string | null;
  /**
   * @minItems 1
   */
  argv: [string, ...string[]];
  shell: boolean;
  /**
   * Relative to the pipeline file's directory; null = that directory.
   */
  cwd: string | null;
  env: {
    [k: string]: string;
  };
  memory: StepMemory;
  /**
   * A GPU step (any GPU memory type).
   */
  gpu: boolean;
  vramBytes: number | null;
  /**
   * GPU memory the step may use on each of its GPUs: its pipeline's reservation, or the whole budget when exclusive (on several GPUs, the least of their budgets: one limit that fits on each).
   */
  memoryBudgetBytes: number | null;
  dataBytes: number | null;
  needs: string[];
  conversions: PlannedConversion[];
  deviceMap: {
    preset: string | null;
    map: {
      [k: string]: string;
    };
    bytesByDevice: {
      [k: string]: number;
    };
  } | null;
  exclusive: boolean;
  /**
   * At most 365 days, as a pipeline file's durations (export sums them into Slurm's --time).
   */
  timeoutMs: number | null;
  estimateMs: number;
  learned?: LearnedValues;
  onOom: {
    /**
     * At most 100, as the pipeline file's: run lays out an attempt per retry before the step starts.
     */
    retries: number;
    fallback: "cpu" | null;
    /**
     * The pipeline file's on_oom ladder, in order (absent: `retries` retries, then the CPU with fallback cpu). retries counts its GPU rungs and fallback is cpu when it ends on the CPU.
     *
     * @minItems 1
     * @maxItems 100
     */
    ladder?: [OomRung, ...OomRung[]];
  };
  keepWarm:
    | false
    | {
        ttlMs: number;
      };
  /**
   * A worker step: the long-lived process serving its tasks; null for a plain step.
   */
  worker: null | {
    /**
     * @minItems 1
     */
    argv: [string, ...string[]];
    /**
     * The step's own `run` words, sent with each task as args.argv.
     */
    args: string[];
    key: string;
    readyTimeoutMs: number;
  };
  /**
   * Where the step is written: the pipeline file and a JSON pointer, e.g. pipeline.yaml#/pipelines/0/steps/2.
   */
  source: string;
}
/**
 * The memory types a step takes, gives and uses.
 *
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "StepMemory".
 */
export interface StepMemory {
  input: MemoryType;
  output: MemoryType;
  uses: MemoryType[];
}
/**
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "Conversion".
 */
export interface PlannedConversion {
  fromStep: string;
  from: MemoryType;
  to: MemoryType;
  kind: "none" | "dlpack" | "host-to-device" | "device-to-host" | "host-roundtrip";
  bytes: number | null;
  transferMs: number | null;
}
/**
 * Present only when `compile --history` replaced the step's estimateMs or vramBytes by what earlier runs measured: where each learned value came from, beside the value the pipeline file gave.
 *
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "LearnedValues".
 */
export interface LearnedValues {
  /**
   * estimateMs is the median duration of the step's ok attempts in these runs.
   */
  estimateMs?: {
    /**
     * The estimate the pipeline file gave (or its default).
     */
    fromFile: number;
    /**
     * Ok attempts measured.
     */
    samples: number;
    runs: LearnedRuns;
  };
  /**
   * vramBytes is the highest peak the step's attempts held (gpu.step.end peakVramBytes) plus headroom, rounded up to a MiB.
   */
  vramBytes?: {
    /**
     * The vram the pipeline file gave (or its default); null when it gave none.
     */
    fromFile: number | null;
    /**
     * The highest peak measured.
     */
    peakBytes: number;
    /**
     * The share added to the peak (0.1 = 10%).
     */
    headroom: number;
    /**
     * Attempts with a peak reading.
     */
    samples: number;
    runs: LearnedRuns;
  };
}
/**
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "OomRung".
 */
export interface OomRung {
  kind: OomRungKind;
  /**
   * smaller: the factor GPUPLAN_OOM_SCALE is multiplied by.
   */
  scale?: number;
  /**
   * wait: the longest wait for free memory.
   */
  waitMs?: number;
}
/**
 * This interface was referenced by `GpuplanPlan`'s JSON-Schema
 * via the `definition` "Summary".
 */
export interface PlanSummary {
  pipelines: number;
  gpuPipelines: number;
  cpuPipelines: number;
  steps: number;
  /**
   * Estimated end of the last pipeline (GPU or host), from step estimates, GPU slots and budgets and the host's lanes.
   */
  makespanMs: number;
  /**
   * No schedule can end sooner: the largest of lowerBoundTerms.
   */
  lowerBoundMs: number;
  /**
   * The term of lowerBoundTerms that binds.
   */
  lowerBoundBy: "longest-pipeline" | "gpu-slots" | "gpu-memory" | "host-lanes";
  lowerBoundTerms: {
    /**
     * The longest pipeline.
     */
    longestPipelineMs: number;
    /**
     * GPU work (× GPUs per pipeline) ÷ all GPUs' slots.
     */
    gpuSlotsMs: number;
    /**
     * Σ work × reservation (an exclusive step: × the whole shared budget) ÷ Σ shared budgets.
     */
    gpuMemoryMs: number;
    /**
     * All pipelines' work ÷ the host's lanes (maxParallelPipelines).
     */
    hostLanesMs: number;
  };
  gpus: {
    gpu: string;
    pipelines: number;
    workMs: number;
    finishMs: number;
    committedVramBytes: number;
  }[];
}
/**
 * One problem gpuplan found in its input, located in its file: the same shape in a compile report's `problems` and a plan's `diagnostics`. Tools match on `code`, never on `message`.
 */
export interface ReportedProblem {
  /**
   * Stable kebab-case code, e.g. unknown-memory-type.
   */
  code: string;
  severity: "error" | "warning";
  message: string;
  /**
   * How to fix it.
   */
  hint?: string;
  /**
   * The file the problem is in, as the user named it.
   */
  file?: string;
  line?: number;
  column?: number;
  /**
   * RFC 6901 JSON pointer into the parsed file.
   */
  pointer?: string;
}
