/**
 * The resolved pipeline model: what normalize produces from a schema-valid file. Sizes are
 * bytes, durations milliseconds, defaults applied, matrix expanded. Every object keeps the JSON
 * pointer of the source node it came from, so later rules can still point at the file.
 */

import type {
  DeviceMapSpec,
  MemoryStrategy,
  OnOom,
  Platform,
  Requirements as RequirementsSpec,
} from "../schema-types/pipeline.js";
import type { GpuplanPlan, LearnedValues, OomRung } from "../schema-types/plan.js";
import type { MemoryType } from "./memory-types.js";

/** The share of each GPU's memory a named strategy gives (the schema's MemoryStrategy says the same in words). */
export const STRATEGY_FRACTIONS: Record<Exclude<MemoryStrategy, "custom">, number> = {
  conservative: 0.6,
  balanced: 0.75,
  aggressive: 0.9,
};

/** `registry.executor`, resolved as the plan records it (settings.executor). */
type PlanExecutorSettings = NonNullable<GpuplanPlan["settings"]["executor"]>;

export interface RegistryConfig {
  memoryStrategy: MemoryStrategy;
  memoryFraction: number;
  maxPipelinesPerGpu: number | null;
  platformPriority: Platform[];
  /** Pipelines running at once on the host (`max_parallel_pipelines`; null: the usable cores). */
  maxParallelPipelines: number | null;
  contextReserveBytes: number;
  /** Warm workers each GPU keeps loaded at once (`max_warm_per_gpu`, default 1). */
  maxWarmPerGpu: number;
  /** `executor:` as the plan records it; absent when the file has none. */
  executor?: PlanExecutorSettings;
}

interface StepMemory {
  input: MemoryType;
  output: MemoryType;
  uses: MemoryType[];
}

export interface ResolvedStep {
  id: string;
  pointer: string;
  argv: string[];
  shell: boolean;
  env: Record<string, string>;
  cwd: string | null;
  memory: StepMemory;
  /** A GPU step when any declared type (input, output, uses) is a GPU type. */
  isGpu: boolean;
  /** A declared type was unknown (reported); rules about data hand-offs skip this step. */
  unknownMemoryType: boolean;
  vramBytes: number | null;
  dataBytes: number | null;
  /** Explicit `needs`, or the step before it when none are given. */
  needs: string[];
  deviceMap: DeviceMapSpec | null;
  exclusive: boolean;
  timeoutMs: number | null;
  estimateMs: number;
  /** Where estimateMs came from: the step's `estimate`, `defaults.estimate`, or the built-in default. */
  estimateFrom: "step" | "defaults" | null;
  /** Set by compile --history when earlier runs replaced estimateMs or vramBytes (src/history/). */
  learned?: LearnedValues;
  /** `ladder` only when the file wrote one (retries and fallback are then what it adds up to). */
  onOom: {
    retries: number;
    fallback: NonNullable<OnOom["fallback"]> | null;
    ladder?: [OomRung, ...OomRung[]];
  };
  keepWarm: { ttlMs: number } | false;
  /** A worker step: its long-lived process; `argv` above is then the worker's too when `run` is absent. */
  worker: ResolvedWorker | null;
}

/** A worker step's process: started once per (key, GPU), fed one task per line. */
interface ResolvedWorker {
  argv: string[];
  key: string;
  readyTimeoutMs: number;
  /** The step's own `run` words: sent with every task as args.argv. */
  args: string[];
}

export interface Requirements {
  backend: NonNullable<RequirementsSpec["backend"]> | null;
  minMemoryBytes: number | null;
  computeCapability: string | null;
  namePattern: string | null;
}

export interface ResolvedPipeline {
  name: string;
  /** The pipeline entry in the file this one was expanded from. */
  template: string;
  pointer: string;
  matrix: Record<string, string>;
  requires: Requirements;
  gpus: number;
  allowHostRoundtrip: boolean;
  steps: ResolvedStep[];
}

export interface ResolvedFile {
  name: string;
  registry: RegistryConfig;
  pipelines: ResolvedPipeline[];
}
