/**
 * What the parts of the executor are handed. A step's attempt needs the run's identity and
 * directories, the environment to start from, how to stop it, the warm workers and where its
 * events and journal entries go: StepContext, nothing more. A pipeline also takes slots, waits
 * and a permit to run, and may stop the run for a busy GPU: PipelineContext. Both are plain
 * objects that execute-run.ts builds once per run.
 */
import type { GpuplanPlan, PlannedStep, PlanRegistryEntry } from "../../schema-types/plan.js";
import type { GpuBusyError, SlotLock } from "../lock/types.js";
import type { EventDraft, StepStatus } from "../record/events.js";
import type { Journal } from "../record/journal.js";
import type { LogLost } from "../record/lazy-log.js";
import type { MemorySampler } from "../record/memory-snapshot.js";
import type { SpawnMethod } from "../step/spawn/start-process.js";
import type { WorkerPool } from "../warm/worker-pool.js";
import type { ForeignWatch } from "./foreign-watch.js";
import type { GpuTurns } from "./gpu-turns.js";
import type { Semaphore } from "./semaphore.js";
import type { SlotHandover } from "./slot-handover.js";
import type { VramWatch } from "./vram-watch.js";

export interface StepContext {
  readonly run: string;
  /** `.gpuplan/runs/<run>` (as it should appear in messages). */
  readonly runDir: string;
  /** Directory step `cwd`s are relative to. */
  readonly baseDir: string;
  /** The plan's GPUs: what a step sees and is pinned to. */
  readonly registry: readonly PlanRegistryEntry[];
  /** The environment steps inherit, as one plain copy. */
  readonly env: NodeJS.ProcessEnv;
  /** SIGTERM → SIGKILL delay, for steps and warm workers alike. */
  readonly killGraceMs: number;
  /** Pin GPU steps to their GPU's local CPUs. */
  readonly cpuPinning: boolean;
  /** How steps are started (posix_spawn where it works, or child_process). */
  readonly spawn: SpawnMethod;
  /** Aborted by whatever stops the run: the user's interrupt or a busy GPU. */
  readonly stop: AbortSignal;
  /** The signal forwarded to running steps at an interrupt (SIGINT unless told). */
  readonly interruptSignal?: () => NodeJS.Signals;
  /** Aborted at a second interrupt: kill at once. */
  readonly killNow?: AbortSignal;
  readonly pool: WorkerPool;
  readonly sampler?: MemorySampler;
  /** Per-process readings while GPU attempts run: each attempt's peak VRAM. */
  readonly vram?: VramWatch;
  readonly journal: Journal;
  readonly onOutput?: (pipeline: string, step: string, stream: "stdout" | "stderr", line: string) => void;
  /** A worker task's log lost output (ExecuteOptions.onLogLost). */
  readonly onLogLost?: LogLost;
  /** Stamp and send an event (and fold it into the run's tally). */
  emit(draft: EventDraft): void;
  /** Work the run waits for before it ends but no step waits for (memory readings). */
  track(work: Promise<void>): void;
}

export interface PipelineContext extends StepContext {
  readonly plan: GpuplanPlan;
  readonly lock: SlotLock;
  readonly slots: SlotHandover;
  /** What processes gpuplan did not start hold on each GPU, for admission (absent without memory readings). */
  readonly foreign?: ForeignWatch;
  /** Each GPU's lock asked by at most as many of the run's pipelines at once as it has slots. */
  readonly turns: GpuTurns;
  /** Bounds the pipelines running at once on the host (the plan's `settings.maxParallelPipelines`). */
  readonly permits: Semaphore;
  /** false: a busy GPU ends the run at once (`--no-wait`). */
  readonly wait: boolean;
  readonly lockTimeoutMs: number | undefined;
  /** Steps an earlier attempt of this run finished ok, by stepKey. */
  readonly completed: ReadonlySet<string>;
  /** The highest attempt number each step used in earlier sessions, by stepKey. */
  readonly earlierAttempts: ReadonlyMap<string, number>;
  /** A busy GPU under `--no-wait`: remember the first and stop the whole run. */
  stopForBusyGpu(e: GpuBusyError): void;
}

/** Journal one attempt (or a skip); resolves once it is on disk. */
export function journalStep(
  ctx: StepContext,
  pipeline: string,
  step: PlannedStep,
  entry: {
    status: StepStatus | "skipped";
    attempt: number;
    device: string;
    exitCode: number | null;
    durationMs: number;
  },
): Promise<void> {
  return ctx.journal.append({
    type: "step",
    ts: new Date().toISOString(),
    pipeline,
    step: step.id,
    ...entry,
  });
}
