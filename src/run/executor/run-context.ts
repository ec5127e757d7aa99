/**
 * What the pipelines of one run share: the options, the stop signal, the counts and failures the
 * summary is made of, the host's workers, the warm-worker pool and the slot hand-over, and the
 * memory readings still in flight. One object, so each part of the executor takes one argument
 * for all of it instead of a closure over everything.
 */
import { setMaxListeners } from "node:events";
import { join } from "node:path";
import type { GpuplanPlan, PlannedStep } from "../../schema-types/plan.js";
import type { GpuBusyError } from "../lock/types.js";
import { type EventDraft, type RunEventOf, type StepStatus, stampEvent } from "../record/events.js";
import { readSnapshot } from "../record/memory-snapshot.js";
import { WorkerPool } from "../warm/worker-pool.js";
import type { ExecuteOptions, Failure } from "./execute-options.js";
import { Semaphore } from "./scheduler.js";
import { SlotHandover } from "./slot-handover.js";

const DEFAULT_KILL_GRACE_MS = 5000;

type SkipCause = RunEventOf<"gpu.step.skip">["cause"];

export class RunContext {
  readonly plan: GpuplanPlan;
  readonly run: string;
  readonly counts = { ok: 0, failed: 0, skipped: 0 };
  readonly failures: Failure[] = [];
  /** Set when `wait: false` met a busy GPU (the first one). */
  busy: GpuBusyError | null = null;
  /** Aborted by whatever stops the run: the user's interrupt or a busy GPU. */
  readonly stopSignal: AbortSignal;
  /** The environment steps inherit, as one plain copy. */
  readonly baseEnv: NodeJS.ProcessEnv;
  /** SIGTERM → SIGKILL delay, for steps and warm workers alike. */
  readonly killGraceMs: number;
  /** Bounds the pipelines running on the host (`settings.workers`); not the warm workers. */
  readonly workers: Semaphore;
  readonly pool: WorkerPool;
  readonly slots: SlotHandover;
  private readonly stop = new AbortController();
  private readonly pending = new Set<Promise<void>>();
  private readonly onExternalAbort = () => this.stop.abort(this.options.signal?.reason);

  constructor(readonly options: ExecuteOptions) {
    this.plan = options.plan;
    this.run = options.run;
    this.stopSignal = this.stop.signal;
    // Every waiting pipeline listens for the stop (and removes its listener when it goes on).
    setMaxListeners(0, this.stopSignal);
    if (options.signal?.aborted) this.stop.abort(options.signal.reason);
    options.signal?.addEventListener("abort", this.onExternalAbort, { once: true });
    // One plain copy: reading process.env goes through a getter per variable, per step otherwise.
    this.baseEnv = { ...(options.env ?? process.env) };
    this.killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.workers = new Semaphore(Math.max(1, options.workers ?? this.plan.settings.workers));
    const sampler = options.sampler;
    this.pool = new WorkerPool({
      maxWarm: this.plan.settings.maxWarmPerGpu,
      stopGraceMs: this.killGraceMs,
      logDir: join(options.runDir, "logs", "workers"),
      emit: (draft) => this.emit(draft),
      ...(sampler && { memoryAfterStop: (uuids: string[]) => readSnapshot(sampler, "gpu", uuids) }),
      ...(options.onWarmWorkers && { onChange: options.onWarmWorkers }),
    });
    this.slots = new SlotHandover(options.lock, this.pool);
  }

  emit(draft: EventDraft): void {
    this.options.emit(stampEvent(this.run, draft));
  }

  /** Work the run waits for before it ends but no step waits for (memory readings). */
  track(p: Promise<void>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Resolves when everything tracked so far has settled. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  /** A busy GPU under `--no-wait`: remember the first and stop the whole run. */
  stopForBusyGpu(e: GpuBusyError): void {
    this.busy ??= e;
    this.stop.abort(e);
  }

  recordFailure(failure: Failure): void {
    this.counts.failed++;
    this.failures.push(failure);
  }

  /** A step that never started because its slot wait ran past `--lock-timeout`. */
  recordLockTimeout(pipeline: string, step: string, device: string, waitedMs: number, hint: string): void {
    this.emit({
      event: "gpu.step.end",
      pipeline,
      step,
      device,
      status: "lock-timeout",
      exitCode: null,
      signal: null,
      durationMs: Math.round(waitedMs),
      attempt: 1,
      hint,
      stderrTail: [],
    });
    this.recordFailure({
      pipeline,
      step,
      device,
      status: "lock-timeout",
      exitCode: null,
      signal: null,
      stderrTail: [],
      logPath: "",
      hint,
    });
  }

  /** A step that will not run; counted as skipped. */
  skip(pipeline: string, step: PlannedStep, cause: SkipCause, reason: string): void {
    if (cause === "completed") this.counts.ok++;
    else this.counts.skipped++;
    this.emit({ event: "gpu.step.skip", pipeline, step: step.id, device: step.device, reason, cause });
  }

  /** Journal one step attempt (or a skip); resolves once it is on disk. */
  journalStep(
    pipeline: string,
    step: PlannedStep,
    status: StepStatus | "skipped",
    attempt: number,
    device: string,
    exitCode: number | null,
    durationMs: number,
  ): Promise<void> {
    return this.options.journal.append({
      type: "step",
      ts: new Date().toISOString(),
      pipeline,
      step: step.id,
      status,
      attempt,
      device,
      exitCode,
      durationMs,
    });
  }

  /** The run is over: stop listening for the caller's interrupt. */
  dispose(): void {
    this.options.signal?.removeEventListener("abort", this.onExternalAbort);
  }
}
