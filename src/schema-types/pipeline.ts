/* Generated from schemas/pipeline.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * Share of each GPU's memory the plan may use: conservative 0.60, balanced 0.75, aggressive 0.90, custom = memory_fraction.
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "MemoryStrategy".
 */
export type MemoryStrategy = "conservative" | "balanced" | "aggressive" | "custom";
/**
 * Where a step runs: a GPU backend (GpuBackend) or the CPU.
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Platform".
 */
export type Platform = "cuda" | "rocm" | "cpu";
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "SlurmName".
 */
export type SlurmName = string;
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "GresType".
 */
export type GresType = string;
/**
 * Memory type of the step's data: one type (input = output) or {input, output}. Known: numpy (CPU); cupy, torch, tensorflow, jax, pyclesperanto (GPU).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Memory".
 */
export type Memory =
  | string
  | {
      input: string;
      output: string;
    };
/**
 * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Size".
 */
export type Size = number | string;
/**
 * Milliseconds, or a duration like 30s, 15m, 2h; at most 365 days (365d).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Duration".
 */
export type Duration = number | string;
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "OomRung".
 */
export type OomRung =
  | OomRungKind
  | {
      /**
       * The factor GPUPLAN_OOM_SCALE is multiplied by.
       */
      smaller: number;
    }
  | {
      /**
       * Milliseconds, or a duration like 30s, 15m, 2h; at most 365 days (365d).
       */
      wait: number | string;
    };
/**
 * A rung of the on_oom ladder.
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "OomRungKind".
 */
export type OomRungKind = "retry" | "wait" | "exclusive" | "other-gpu" | "smaller" | "cpu";
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "KeepWarm".
 */
export type KeepWarm =
  | boolean
  | {
      ttl: Duration;
    };
/**
 * A GPU's software stack: cuda (NVIDIA) or rocm (AMD).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "GpuBackend".
 */
export type GpuBackend = "cuda" | "rocm";
/**
 * cuda:N (the pipeline's N-th GPU), cpu or disk.
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "DeviceTarget".
 */
export type DeviceTarget = string;

/**
 * Pipelines of steps, each a command with memory types, a VRAM estimate and a device map. gpuplan compile turns it into a plan.
 */
export interface GpuplanPipelineFile {
  $schema?: string;
  /**
   * File format version. Only 1 exists.
   */
  version: 1;
  /**
   * The plan's name.
   */
  name?: string;
  description?: string;
  registry?: RegistrySettings;
  defaults?: StepDefaults;
  limits?: Limits;
  /**
   * @minItems 1
   */
  pipelines: [PipelineSpec, ...PipelineSpec[]];
}
/**
 * How many pipelines each GPU takes, and how much of its memory they may use.
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Registry".
 */
export interface RegistrySettings {
  memory_strategy?: MemoryStrategy & string;
  /**
   * With memory_strategy: custom, the share in [0.1, 1.0].
   */
  memory_fraction?: number;
  /**
   * Slots per GPU: pipelines that may run on it at once, while their reserved VRAM fits its memory budget. Default: max(1, ceil(cpu_threads / gpus)).
   */
  max_pipelines_per_gpu?: number;
  /**
   * Warm workers (keep_warm worker steps) each GPU keeps loaded at once; 0 keeps none. Their VRAM is reserved in the GPU's memory budget.
   */
  max_warm_per_gpu?: number;
  /**
   * Backends in order of preference; a backend not listed is never used.
   *
   * @minItems 1
   */
  platform_priority?: [Platform, ...Platform[]];
  /**
   * Pipelines running at once on the host. Default: the usable CPU cores.
   */
  max_parallel_pipelines?: number;
  /**
   * @deprecated
   * The old name of max_parallel_pipelines, still read (with a deprecated-key warning).
   */
  workers?: number;
  /**
   * GPU memory kept free for the CUDA/HIP context when filling automatic device maps.
   */
  context_reserve?: number | string;
  executor?: ExecutorSettings;
}
/**
 * How to run the plan somewhere other than this machine. The command line's flags win over these.
 */
export interface ExecutorSettings {
  slurm?: SlurmSettingsSpec;
}
/**
 * For `gpuplan export --to slurm`: what every array task asks sbatch for, beyond the resources gpuplan derives from the plan.
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "SlurmSettings".
 */
export interface SlurmSettingsSpec {
  partition?: SlurmName;
  account?: SlurmName;
  qos?: SlurmName;
  /**
   * The GRES type to ask for: one for every GPU model, or one per model name (`NVIDIA H100 80GB HBM3: h100`). `any` asks for untyped `gpu:N`. Default: the node type's own type, else gpuplan's model table.
   */
  gres_type?:
    | GresType
    | {
        [k: string]: GresType;
      };
  /**
   * At most this many tasks of each job array run at once (`--array=…%N`). Default: no limit.
   */
  throttle?: number;
  /**
   * --time for a step without a timeout is this many times its estimate.
   */
  time_factor?: number;
  /**
   * --time for every task instead of the derived one.
   */
  time?: number | string;
  /**
   * Instead of the node type's share.
   */
  cpus_per_task?: number;
  /**
   * --mem for every task instead of the node type's share.
   */
  mem_per_task?: number | string;
  /**
   * Where the plan lets pipelines share a GPU and the node type has Slurm shards, ask for shards (`--gres=shard:K`); false: one pipeline per GPU.
   */
  shards?: boolean;
  /**
   * More sbatch options, one per item (e.g. `--constraint=ib`), after gpuplan's own so they win.
   */
  sbatch_args?: string[];
}
/**
 * Values every step gets unless it sets its own (env is merged, the step's keys win).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "StepDefaults".
 */
export interface StepDefaults {
  env?: Env;
  cwd?: string;
  shell?: boolean;
  memory?: Memory;
  vram?: Size;
  /**
   * Stop the step after this long; 0 or left out: no limit (as Slurm's --time=0).
   */
  timeout?: number | string;
  estimate?: Duration;
  on_oom?: OnOom;
  keep_warm?: KeepWarm;
}
/**
 * Environment variables, over those gpuplan sets (the step's win). CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL are refused: gpuplan sets them to the GPUs it binds and locks (env-sets-devices).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Env".
 */
export interface Env {
  [k: string]: string | number | boolean;
}
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "OnOom".
 */
export interface OnOom {
  /**
   * Reruns after an out-of-memory failure.
   */
  retries?: number;
  /**
   * After the retries, run on the CPU. Also lets compile place the step on the CPU when no GPU fits.
   */
  fallback?: "cpu";
  /**
   * What to try after an out-of-memory failure, in order, one attempt per rung (at most 100, as `retries`; instead of `retries` and `fallback`): retry (the same again), wait (until the GPU has the step's reservation free, or for up to the duration given), exclusive (the whole GPU), other-gpu (a GPU of the run with more free memory, when a slot there is free at once; else the same GPU), smaller (GPUPLAN_OOM_SCALE times the scale, 0.5 unless given, for the step to apply to its batch or tile size), cpu (last: the CPU; also lets compile place the step on the CPU when no GPU fits). Every attempt sees GPUPLAN_OOM_ATTEMPT (1, 2, …) and GPUPLAN_OOM_SCALE (1 until a smaller rung).
   *
   * @minItems 1
   * @maxItems 100
   */
  ladder?: [OomRung, ...OomRung[]];
}
/**
 * How large the file may grow once matrices are expanded. Compile counts before it expands, so a mistaken or hostile matrix is an error, not a machine out of memory; raise a limit for a file that really is that large.
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Limits".
 */
export interface Limits {
  /**
   * Pipelines after matrix expansion, all templates together. A file that writes out more pipelines than this is not refused for it: the limit is on what matrices add.
   */
  max_pipelines?: number;
  /**
   * Steps after matrix expansion (each pipeline's steps, all pipelines together). A file that writes out more steps than this is not refused for it: the limit is on what matrices add.
   */
  max_steps?: number;
}
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Pipeline".
 */
export interface PipelineSpec {
  /**
   * Unique name; with a matrix, use {var} placeholders so every expansion is unique.
   */
  name: string;
  description?: string;
  /**
   * Cartesian expansion: one pipeline per combination; {var} is substituted in name, run, env and cwd.
   */
  matrix?: {
    /**
     * @minItems 1
     */
    [k: string]: [string | number | boolean, ...(string | number | boolean)[]];
  };
  requires?: Requirements;
  /**
   * GPUs this pipeline needs at once (multi-GPU device maps, data parallel).
   */
  gpus?: number;
  /**
   * Allow GPU-to-GPU conversions that must go through host memory (e.g. pyclesperanto <-> torch).
   */
  allow_host_roundtrip?: boolean;
  env?: Env;
  /**
   * @minItems 1
   */
  steps: [StepSpec, ...StepSpec[]];
}
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Requirements".
 */
export interface Requirements {
  backend?: GpuBackend;
  /**
   * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
   */
  min_memory?: number | string;
  /**
   * CUDA compute capability constraint(s), e.g. ">=8.0" or ">=8.0, <10".
   */
  compute_capability?: string;
  /**
   * GPU name glob, case-insensitive, e.g. "*A100*".
   */
  name?: string;
}
/**
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Step".
 */
export interface StepSpec {
  id: string;
  description?: string;
  /**
   * The command: an argv array (no shell). A single string only with shell: true. Required unless the step has `worker`; with one, extra arguments sent with each task (args.argv).
   */
  run?: [string | number, ...(string | number)[]] | string;
  /**
   * Run `run` through /bin/sh -c.
   */
  shell?: boolean;
  env?: Env;
  /**
   * Working directory, relative to the pipeline file.
   */
  cwd?: string;
  memory?: Memory;
  /**
   * Other memory types (frameworks) used inside the step; any GPU type makes it a GPU step.
   */
  uses?: string[];
  /**
   * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
   */
  vram?: number | string;
  /**
   * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
   */
  data?: number | string;
  /**
   * Step ids that must finish first. Without needs a step follows the one before it.
   */
  needs?: string[];
  device_map?: DeviceMapSpec;
  /**
   * Own the whole GPU (every slot) while this step runs.
   */
  exclusive?: boolean;
  /**
   * Milliseconds, or a duration like 30s, 15m, 2h; at most 365 days (365d).
   */
  timeout?: number | string;
  /**
   * Milliseconds, or a duration like 30s, 15m, 2h; at most 365 days (365d).
   */
  estimate?: number | string;
  on_oom?: OnOom;
  keep_warm?: KeepWarm;
  worker?: WorkerSpec;
}
/**
 * Where each model component lives: a named preset with overrides, or components with sizes filled automatically (accelerate's vocabulary).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "DeviceMap".
 */
export interface DeviceMapSpec {
  /**
   * Preset name, case-insensitive (see `gpuplan presets`).
   */
  preset?: string;
  /**
   * component -> device; wins over the preset and may add components.
   */
  overrides?: {
    [k: string]: DeviceTarget;
  };
  /**
   * component -> size, placed automatically in declaration order.
   */
  components?: {
    [k: string]: Size;
  };
  strategy?: "sequential" | "balanced";
  /**
   * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
   */
  reserve?: number | string;
  /**
   * Spill to disk when CPU memory is full too.
   */
  allow_disk?: boolean;
}
/**
 * A long-lived process that loads its model once and serves one task per JSON line on stdin (the README's worker protocol).
 *
 * This interface was referenced by `GpuplanPipelineFile`'s JSON-Schema
 * via the `definition` "Worker".
 */
export interface WorkerSpec {
  /**
   * The worker's argv (no shell).
   *
   * @minItems 1
   */
  run: [string | number, ...(string | number)[]];
  /**
   * Model key: tasks with the same key on the same GPU share one warm worker. Default: the step id.
   */
  key?: string;
  /**
   * Milliseconds, or a duration like 30s, 15m, 2h; at most 365 days (365d).
   */
  ready_timeout?: number | string;
}
