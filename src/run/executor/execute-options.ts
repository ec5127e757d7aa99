/**
 * What the executor is given and what it gives back. Kept apart from the executor's parts so that
 * each of them can name the options without importing the orchestrator (src/run/executor/execute-run.ts,
 * which re-exports these types for the CLI and the tests).
 */
import type { GpuplanPlan, PlannedPipeline } from "../../schema-types/plan.js";
import type { RunStartBinding } from "../../schema-types/run-events.js";
import type { GpuBusyError, SlotLock } from "../lock/types.js";
import type { RunSummary } from "../outcome/run-tally.js";
import type { EventSink } from "../record/events.js";
import type { Journal } from "../record/journal.js";
import type { LogLost } from "../record/lazy-log.js";
import type { MemorySampler } from "../record/memory-snapshot.js";
import type { SpawnMethod } from "../step/spawn/start-process.js";
import type { WarmWorkerInfo } from "../warm/worker-pool.js";

export interface ExecuteOptions {
  plan: GpuplanPlan;
  /** The selected pipelines, in plan order. */
  pipelines: readonly PlannedPipeline[];
  run: string;
  /** `.gpuplan/runs/<run>` (as it should appear in messages). */
  runDir: string;
  /** Directory step `cwd`s are relative to: the pipeline file's directory. */
  baseDir: string;
  lock: SlotLock;
  emit: EventSink;
  onOutput?: (pipeline: string, step: string, stream: "stdout" | "stderr", line: string) => void;
  journal: Journal;
  /** Steps finished ok in an earlier attempt of this run (`--resume`), keyed by stepKey. */
  completed?: ReadonlySet<string>;
  /** The highest attempt number each step used in earlier sessions (`--resume`): attempts go on from it. */
  earlierAttempts?: ReadonlyMap<string, number>;
  /** false: a busy GPU ends the run at once (`--no-wait`). */
  wait: boolean;
  lockTimeoutMs?: number;
  /** Interrupt (SIGINT/SIGTERM): running steps get `interruptSignal()` (default SIGINT). */
  signal?: AbortSignal;
  interruptSignal?: () => NodeJS.Signals;
  /** Aborting SIGKILLs running steps without the grace period (a second Ctrl-C). */
  killNow?: AbortSignal;
  /** SIGTERM → SIGKILL delay; default 5 s. */
  killGraceMs?: number;
  /** false: GPU steps keep gpuplan's CPUs instead of their GPU's local ones (default true). */
  cpuPinning?: boolean;
  /** How steps are started: posix_spawn where it works (`auto`, the default), or Node's child_process. */
  spawn?: SpawnMethod;
  sampler?: MemorySampler;
  /** The environment steps inherit (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Pipelines running at once on the host; default: the plan's `settings.maxParallelPipelines`. */
  maxParallelPipelines?: number;
  /** How the plan's GPUs were bound to this machine's (run.start carries them). */
  bindings?: readonly RunStartBinding[];
  /** A log gpuplan writes itself (a worker's, a worker task's) lost output: it could not be opened or written. */
  onLogLost?: LogLost;
  /** The run's warm workers, whenever they change (`gpuplan locks` reads them from info files). */
  onWarmWorkers?: (workers: WarmWorkerInfo[]) => void;
}

export interface ExecuteResult {
  /** Made from the run's events by the tally the views keep too (outcome/run-tally.ts). */
  summary: RunSummary;
  /** Set when `wait: false` met a busy GPU: the run stopped (exit 75). */
  busy: GpuBusyError | null;
}
