/**
 * The executor: runs the selected pipelines of a verified plan under the GPU slot lock. Every
 * pipeline starts at once; its steps run one at a time in `needs` order, each with a permit to
 * run (`settings.maxParallelPipelines`), a GPU step also with a slot of each of the pipeline's
 * GPUs (UUID order, the same in every gpuplan process), held only while GPU steps run; a failed
 * step skips the rest of its pipeline
 * (docs/decisions/0004-how-pipelines-share-gpus-and-the-host.md). The core never prints: events
 * (`emit`) and output lines (`onOutput`) go out, and the summary it returns is the tally of those
 * events (outcome/run-tally.ts). The parts: contexts, run-pipeline (pipeline-slots,
 * pipeline-permit), settle-step (exclusive-upgrade), run-attempt (memory-snapshots), slot-handover.
 */

import { setMaxListeners } from "node:events";
import { join } from "node:path";
import type { GpuBusyError } from "../lock/types.js";
import { createTally, type RunTally, summarize, tallyEvent } from "../outcome/run-tally.js";
import { type EventDraft, RUN_EVENTS_SCHEMA, stampEvent } from "../record/events.js";
import { readSnapshot } from "../record/memory-snapshot.js";
import { recordRunEnd } from "../record/record-run-end.js";
import { reapAdoptedOrphans } from "../step/adopted-orphans.js";
import { closeInheritedFdsOnExec } from "../step/spawn/inherited-fds.js";
import { WorkerPool } from "../warm/worker-pool.js";
import type { PipelineContext } from "./contexts.js";
import type { ExecuteOptions, ExecuteResult } from "./execute-options.js";
import { ForeignWatch } from "./foreign-watch.js";
import { GpuTurns } from "./gpu-turns.js";
import { DEFAULT_CPU_PINNING, DEFAULT_KILL_GRACE_MS, DEFAULT_SPAWN } from "./run-defaults.js";
import { runPipeline } from "./run-pipeline.js";
import { Semaphore } from "./semaphore.js";
import { SlotHandover } from "./slot-handover.js";
import { VramWatch } from "./vram-watch.js";

export type { ExecuteOptions, ExecuteResult } from "./execute-options.js";

/** Run the pipelines to the end (or to a stop) and say how it went; bugs reject. */
export async function executeRun(options: ExecuteOptions): Promise<ExecuteResult> {
  const started = performance.now();
  // Before any step or warm worker starts: what gpuplan inherited is not theirs.
  await closeInheritedFdsOnExec();
  // As a container's PID 1, the steps' orphans are gpuplan's to reap (adopted-orphans.ts).
  const stopReaping = await reapAdoptedOrphans();
  const { plan, run, runDir } = options;
  // Aborted by whatever stops the run: the caller's interrupt, or a busy GPU under --no-wait.
  const stop = new AbortController();
  // Every waiting pipeline listens for the stop (and removes its listener when it goes on).
  setMaxListeners(0, stop.signal);
  const onInterrupt = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) onInterrupt();
  else options.signal?.addEventListener("abort", onInterrupt, { once: true });
  let busy: GpuBusyError | null = null;
  let tally: RunTally = createTally(options.pipelines, run, runDir);
  const emit = (draft: EventDraft): void => {
    const event = stampEvent(run, draft);
    tally = tallyEvent(tally, event);
    options.emit(event);
  };
  // Work the run waits for before it ends but no step waits for (memory readings).
  const pending = new Set<Promise<void>>();
  const settle = () => Promise.allSettled([...pending]);
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const { sampler } = options;
  const pool = new WorkerPool({
    maxWarm: plan.settings.maxWarmPerGpu,
    stopGraceMs: killGraceMs,
    logDir: join(runDir, "logs", "workers"),
    ...(options.onLogLost && { onLogLost: options.onLogLost }),
    emit,
    ...(sampler && { memoryAfterStop: (uuids: string[]) => readSnapshot(sampler, "gpu", uuids) }),
    ...(options.onWarmWorkers && { onChange: options.onWarmWorkers }),
  });
  const vram = sampler
    ? new VramWatch(
        () => sampler.gpus(),
        undefined,
        undefined,
        () => sampler.fresh(),
      )
    : undefined;
  const env = { ...(options.env ?? process.env) };
  const ctx: PipelineContext = {
    run,
    runDir,
    baseDir: options.baseDir,
    registry: plan.registry,
    // One plain copy: reading process.env goes through a getter per variable, per step otherwise.
    env,
    killGraceMs,
    cpuPinning: options.cpuPinning ?? DEFAULT_CPU_PINNING,
    spawn: options.spawn ?? DEFAULT_SPAWN,
    stop: stop.signal,
    ...(options.interruptSignal && { interruptSignal: options.interruptSignal }),
    ...(options.killNow && { killNow: options.killNow }),
    pool,
    ...(sampler && { sampler }),
    ...(vram && { vram }),
    journal: options.journal,
    ...(options.onOutput && { onOutput: options.onOutput }),
    ...(options.onLogLost && { onLogLost: options.onLogLost }),
    emit,
    track(work) {
      pending.add(work);
      void work.finally(() => pending.delete(work));
    },
    plan,
    lock: options.lock,
    slots: new SlotHandover(
      options.lock,
      pool,
      plan.pipelines.some((p) => p.steps.some((step) => Boolean(step.worker))),
    ),
    ...(sampler && { foreign: new ForeignWatch(sampler, options.lock, env) }),
    turns: new GpuTurns(),
    permits: new Semaphore(Math.max(1, options.maxParallelPipelines ?? plan.settings.maxParallelPipelines)),
    wait: options.wait,
    lockTimeoutMs: options.lockTimeoutMs,
    completed: options.completed ?? new Set(),
    earlierAttempts: options.earlierAttempts ?? new Map(),
    stopForBusyGpu(e) {
      busy ??= e;
      stop.abort(e);
    },
  };

  emit({
    event: "run.start",
    pipeline: null,
    step: null,
    device: null,
    schema: RUN_EVENTS_SCHEMA,
    pipelines: options.pipelines.map((p) => p.name),
    runDir,
    ...(options.bindings?.length && { bindings: [...options.bindings] }),
  });
  try {
    const outcomes = await Promise.allSettled(options.pipelines.map((p) => runPipeline(ctx, p)));
    await settle();
    const bug = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (bug) throw bug.reason;
  } finally {
    // Every pipeline is done: warm workers stop (`shutdown`) and give back the slots they kept.
    await pool.shutdown();
    vram?.close();
    await settle();
    stopReaping();
    options.signal?.removeEventListener("abort", onInterrupt);
  }
  const interrupted = options.signal?.aborted === true || busy !== null;
  await recordRunEnd(options.journal, emit, {
    pipelines: options.pipelines.map((p) => p.name),
    interrupted,
    tally,
    startedMs: started,
  });
  return { summary: summarize(tally), busy };
}
