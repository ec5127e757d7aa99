/**
 * The executor: runs the selected pipelines of a verified plan under the GPU slot lock.
 *
 * Scheduling, in one paragraph: every pipeline starts at once as an async task. A GPU pipeline
 * first takes one slot of each of its GPUs (in UUID order, the same order in every gpuplan
 * process, so two multi-GPU pipelines can never hold one card each and wait for the other's),
 * then a worker (`settings.workers` bounds the pipelines running on the host). Waiting for a
 * slot does not hold a worker, so a busy GPU never stops CPU pipelines or other GPUs (the price:
 * with fewer workers than slots, a pipeline may hold its slot while it waits for a worker). Inside a
 * pipeline, steps run one at a time in topological order of `needs` (a pipeline is a chain of
 * framework processes sharing one memory budget; running two at once would break the budget).
 * An exclusive step upgrades every lease to all slots first and downgrades after. A failed step
 * fails its pipeline: the rest of its steps are skipped; other pipelines go on. A worker step
 * sends a task to a warm worker (warm/worker-pool.ts) instead of spawning: a lease that a live
 * worker was started with outlives its pipeline (the pool keeps it, or it goes straight to the
 * next pipeline of this run waiting for that GPU), and an exclusive step evicts its GPU's workers.
 *
 * The core never prints: everything goes out as events (`emit`) and output lines (`onOutput`).
 */
import { setMaxListeners } from "node:events";
import { join, resolve } from "node:path";
import type { GpuplanPlan, PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../schema-types/plan.js";
import { isGpuStep, planAttempts, runsOnCpu, willRetry } from "./attempts.js";
import { classifyEnding } from "./classify-failure.js";
import type { EventSink, RunEvent, RunEventName, StepStatus } from "./events.js";
import { type Journal, stepKey } from "./journal.js";
import {
  GpuBusyError,
  type HolderInfo,
  LockTimeoutError,
  type SlotLease,
  type SlotLock,
  type SlotRequest,
} from "./lock/types.js";
import { announceWait, describeHolders, holdersOf, registryEntries } from "./lock-waits.js";
import { type MemorySampler, readSnapshot } from "./memory-snapshot.js";
import { safeName } from "./run-id.js";
import { runStepProcess, type StepProcessOptions } from "./run-step.js";
import { Semaphore, topologicalOrder } from "./scheduler.js";
import { buildStepEnvironment, visibleGpus } from "./step-env.js";
import type { RunSummary } from "./ui/view.js";
import { type WarmWorkerInfo, WorkerPool } from "./warm/worker-pool.js";
import { runWorkerTask } from "./warm/worker-step.js";

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
  sampler?: MemorySampler;
  /** The environment steps inherit (default process.env). */
  env?: NodeJS.ProcessEnv;
  workers?: number;
  /** The run's warm workers, whenever they change (`gpuplan locks` reads them from info files). */
  onWarmWorkers?: (workers: WarmWorkerInfo[]) => void;
}

export interface ExecuteResult {
  summary: RunSummary;
  /** Set when `wait: false` met a busy GPU: the run stopped (exit 75). */
  busy: GpuBusyError | null;
}

type Failure = RunSummary["failures"][number];

const DEFAULT_KILL_GRACE_MS = 5000;
const FAILURE_TAIL_LINES = 10;

export async function executeRun(options: ExecuteOptions): Promise<ExecuteResult> {
  const started = performance.now();
  const { plan, run } = options;
  // One controller for everything that stops the run: the user's interrupt or a busy GPU.
  const stop = new AbortController();
  // Every waiting pipeline listens for the stop (and removes its listener when it goes on).
  setMaxListeners(0, stop.signal);
  const onExternalAbort = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) stop.abort(options.signal.reason);
  options.signal?.addEventListener("abort", onExternalAbort, { once: true });
  let busy: GpuBusyError | null = null;

  const counts = { ok: 0, failed: 0, skipped: 0 };
  const failures: Failure[] = [];
  const pending = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const emit = (
    name: RunEventName,
    pipeline: string | null,
    step: string | null,
    device: string | null,
    fields: Record<string, unknown> = {},
  ) => {
    const event: RunEvent = {
      ts: new Date().toISOString(),
      event: name,
      run,
      pipeline,
      step,
      device,
      ...fields,
    };
    options.emit(event);
  };
  // One plain copy: reading process.env goes through a getter per variable, per step otherwise.
  const baseEnv: NodeJS.ProcessEnv = { ...(options.env ?? process.env) };
  const workers = new Semaphore(Math.max(1, options.workers ?? plan.settings.workers));
  const pool = new WorkerPool({
    maxWarm: plan.settings.maxWarmPerGpu,
    stopGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    logDir: join(options.runDir, "logs", "workers"),
    emit: (name, context, device, fields) => emit(name, context.pipeline, context.step, device, fields),
    ...(options.sampler && {
      memoryAfterStop: (uuids: string[]) => readSnapshot(options.sampler!, "gpu", uuids),
    }),
    ...(options.onWarmWorkers && { onChange: options.onWarmWorkers }),
  });
  // Pipelines of this run waiting for a GPU: a lease kept for a warm worker goes to them directly.
  const slotWaiters = new Map<string, ((lease: SlotLease) => boolean)[]>();
  // Exclusive steps waiting for every slot of a GPU (by UUID): warm workers there are not kept.
  const exclusiveWaits = new Map<string, number>();

  /** A slot of the request's GPU: one the pool keeps for warm workers, a handed-over one, or the lock's. */
  const acquireSlot = async (request: SlotRequest): Promise<SlotLease> => {
    const kept = pool.takeLease(request.uuid);
    if (kept) {
      kept.setHolder(request.holder);
      return kept;
    }
    let done = false;
    let handedOver = false;
    let resolveHanded!: (lease: SlotLease) => void;
    const handed = new Promise<SlotLease>((resolve) => {
      resolveHanded = resolve;
    });
    const take = (lease: SlotLease) => {
      if (done) return false;
      done = true;
      handedOver = true;
      resolveHanded(lease);
      return true;
    };
    const queue = slotWaiters.get(request.uuid) ?? [];
    queue.push(take);
    slotWaiters.set(request.uuid, queue);
    const local = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, local.signal]) : local.signal;
    const acquiring = options.lock.acquire({ ...request, signal }).then((lease) => {
      // A lease handed over first wins; this one goes straight back.
      if (done) {
        lease.release();
        return null;
      }
      done = true;
      return lease;
    });
    try {
      const first = await Promise.race([acquiring, handed]);
      if (!handedOver) return first!;
      // Stop waiting in the lock (a lease it grants meanwhile goes back, above).
      local.abort();
      acquiring.catch(() => {});
      return await handed;
    } finally {
      const q = slotWaiters.get(request.uuid);
      const i = q?.indexOf(take) ?? -1;
      if (i >= 0) q!.splice(i, 1);
    }
  };

  /** The pipeline is done with this lease: keep it for its warm workers, or give it back. */
  const giveBackSlot = async (lease: SlotLease, holder: HolderInfo): Promise<void> => {
    if (!pool.isBound(lease)) return lease.release();
    if ((exclusiveWaits.get(lease.uuid) ?? 0) > 0) {
      await pool.evictLease(lease, "replacement");
      return pool.adopt(lease);
    }
    const waiting = slotWaiters.get(lease.uuid) ?? [];
    while (waiting.length > 0) if (waiting.shift()!(lease)) return;
    lease.setHolder({ ...holder, step: "(warm workers)" });
    pool.adopt(lease);
  };

  emit("run.start", null, null, null, {
    pipelines: options.pipelines.map((p) => p.name),
    runDir: options.runDir,
  });

  const runPipeline = async (pipeline: PlannedPipeline): Promise<void> => {
    const steps = topologicalOrder(pipeline.steps);
    const todo = steps.filter((s) => !options.completed?.has(stepKey(pipeline.name, s.id)));
    for (const s of steps) {
      if (todo.includes(s)) continue;
      counts.ok++;
      emit("gpu.step.skip", pipeline.name, s.id, s.device, { reason: "completed in an earlier run" });
    }
    if (todo.length === 0 || stop.signal.aborted) return;

    const entries = registryEntries(plan, pipeline);
    const leases: { entry: PlanRegistryEntry; lease: SlotLease }[] = [];
    let releaseWorker: (() => void) | undefined;
    const holder = (step: string | null): HolderInfo => ({
      pid: process.pid,
      run,
      pipeline: pipeline.name,
      step,
      since: new Date().toISOString(),
    });
    try {
      for (const entry of entries) {
        const waitStart = performance.now();
        // The lock queues this process's waiters first come, first served; `--lock-timeout` and
        // `--no-wait` apply to in-process and cross-process contention alike.
        const lease = await announceWait(
          acquireSlot({
            uuid: entry.uuid,
            gpu: entry.gpu,
            maxPipelines: entry.maxPipelines,
            holder: holder(null),
            wait: options.wait,
            ...(options.lockTimeoutMs !== undefined && { timeoutMs: options.lockTimeoutMs }),
            signal: stop.signal,
          }),
          async () => {
            // Who holds the slots, for the view; looked up only when there is a wait.
            const holders = await holdersOf(options.lock, entry.uuid);
            if (!leases.some((l) => l.entry === entry))
              emit("gpu.lock.wait", pipeline.name, null, entry.gpu, { gpu: entry.gpu, slots: 1, holders });
          },
        );
        leases.push({ entry, lease });
        emit("gpu.lock.acquired", pipeline.name, null, entry.gpu, {
          gpu: entry.gpu,
          slots: [...lease.slots],
          waitedMs: Math.round(performance.now() - waitStart),
        });
      }
      releaseWorker = await workers.acquire(stop.signal);
      // While an exclusive step waits for the rest of its GPU it runs nothing, so it gives its
      // worker back: a pipeline that holds a slot and waits for a worker could otherwise wait
      // for this one, which waits for that slot (a deadlock when workers < slots). A pipeline
      // that holds a worker is therefore always running a step, and every slot wait ends.
      const worker = {
        whileWaiting: async <T>(wait: () => Promise<T>): Promise<T> => {
          releaseWorker?.();
          releaseWorker = undefined;
          try {
            return await wait();
          } finally {
            releaseWorker = await workers.acquire(stop.signal);
          }
        },
      };

      for (let i = 0; i < todo.length; i++) {
        const step = todo[i]!;
        if (stop.signal.aborted) return;
        const status = await runStep(pipeline, step, leases, holder, worker);
        if (status === "interrupted") return;
        if (status !== "ok") {
          for (const later of todo.slice(i + 1)) {
            counts.skipped++;
            const reason = `needs ${pipeline.name}/${step.id}, which failed`;
            emit("gpu.step.skip", pipeline.name, later.id, later.device, { reason });
            await options.journal.append(
              journalStep(pipeline.name, later, "skipped", 0, later.device, null, 0),
            );
          }
          return;
        }
      }
    } catch (e) {
      if (e instanceof GpuBusyError) {
        busy ??= e;
        stop.abort(e);
      } else if (e instanceof LockTimeoutError) {
        counts.failed++;
        const step = todo[0]!;
        failures.push({
          pipeline: pipeline.name,
          step: step.id,
          device: e.gpu,
          status: "lock-timeout",
          exitCode: null,
          signal: null,
          stderrTail: [],
          logPath: "",
          hint: `waited ${e.waitedMs} ms for a slot of ${e.gpu}${describeHolders(e.holders)}; raise --lock-timeout or see gpuplan locks`,
        });
        for (const later of todo.slice(1)) {
          counts.skipped++;
          emit("gpu.step.skip", pipeline.name, later.id, later.device, { reason: `no slot of ${e.gpu}` });
        }
      } else if (!stop.signal.aborted) {
        throw e;
      }
    } finally {
      releaseWorker?.();
      for (const { entry, lease } of leases.reverse()) {
        const slots = [...lease.slots];
        await giveBackSlot(lease, holder(null));
        emit("gpu.lock.released", pipeline.name, null, entry.gpu, { gpu: entry.gpu, slots });
      }
    }
  };

  /** One step with its OOM retries and CPU fallback; resolves with the final status. */
  const runStep = async (
    pipeline: PlannedPipeline,
    step: PlannedStep,
    leases: { entry: PlanRegistryEntry; lease: SlotLease }[],
    holder: (step: string | null) => HolderInfo,
    worker: { whileWaiting: <T>(wait: () => Promise<T>) => Promise<T> },
  ): Promise<StepStatus> => {
    for (const { lease } of leases) lease.setHolder(holder(step.id));
    let upgraded: SlotLease[] = [];
    const onGpu = isGpuStep(step);
    const waitingExclusive: string[] = [];
    try {
      if (step.exclusive && onGpu) {
        for (const { entry, lease } of leases) {
          const waitStart = performance.now();
          // Warm workers hold slots (and VRAM) of this GPU: the card is this step's alone.
          exclusiveWaits.set(lease.uuid, (exclusiveWaits.get(lease.uuid) ?? 0) + 1);
          waitingExclusive.push(lease.uuid);
          await pool.evictGpu(lease.uuid, "replacement");
          // Always waits (bounded by --lock-timeout): --no-wait is about starting on a busy GPU;
          // once running, the other holders are often this run's own pipelines, which will finish.
          await announceWait(
            worker.whileWaiting(() =>
              lease.upgrade({
                wait: true,
                ...(options.lockTimeoutMs !== undefined && { timeoutMs: options.lockTimeoutMs }),
                signal: stop.signal,
              }),
            ),
            () =>
              emit("gpu.lock.wait", pipeline.name, step.id, entry.gpu, {
                gpu: entry.gpu,
                slots: entry.maxPipelines,
                exclusive: true,
              }),
          );
          upgraded.push(lease);
          emit("gpu.lock.acquired", pipeline.name, step.id, entry.gpu, {
            gpu: entry.gpu,
            slots: [...lease.slots],
            waitedMs: Math.round(performance.now() - waitStart),
            exclusive: true,
          });
        }
      }
      const held = leases.map(({ lease }) => lease);
      const { total } = planAttempts(step);
      // A worker that does not load in time gets one more try (like sparkle_motion's
      // ModelLoadTimeoutError); it does not use up an on_oom attempt, so log numbers run ahead.
      let loadRetry = step.worker !== null;
      let extra = 0;
      for (let planned = 1; planned <= total; planned++) {
        const attempt = planned + extra;
        const onCpu = runsOnCpu(step, planned);
        const status = await runAttempt(pipeline, step, attempt, planned, onCpu, held, loadRetry);
        if (status === "load-timeout" && loadRetry && !stop.signal.aborted) {
          loadRetry = false;
          extra++;
          planned--;
          emit("gpu.step.retry", pipeline.name, step.id, onCpu ? "cpu" : step.device, {
            attempt: attempt + 1,
            of: total + extra,
            reason: "load-timeout",
          });
          continue;
        }
        if (!willRetry(step, planned, status) || stop.signal.aborted) return status;
        const nextOnCpu = runsOnCpu(step, planned + 1);
        emit("gpu.step.retry", pipeline.name, step.id, nextOnCpu ? "cpu" : step.device, {
          attempt: attempt + 1,
          of: total + extra,
          reason: "oom",
          ...(nextOnCpu && { nextDevice: "cpu" }),
        });
      }
      return "error";
    } catch (e) {
      if (e instanceof LockTimeoutError) {
        counts.failed++;
        failures.push({
          pipeline: pipeline.name,
          step: step.id,
          device: step.device,
          status: "lock-timeout",
          exitCode: null,
          signal: null,
          stderrTail: [],
          logPath: "",
          hint: `the exclusive step waited ${e.waitedMs} ms for every slot of ${e.gpu}${describeHolders(e.holders)}`,
        });
        return "error";
      }
      if (stop.signal.aborted && !(e instanceof GpuBusyError)) return "interrupted";
      throw e;
    } finally {
      for (const uuid of waitingExclusive) exclusiveWaits.set(uuid, (exclusiveWaits.get(uuid) ?? 1) - 1);
      for (const lease of upgraded) {
        const before = [...lease.slots];
        lease.downgrade();
        const kept = new Set(lease.slots);
        const given = before.filter((n) => !kept.has(n));
        // A one-slot GPU gives nothing back (and an empty list would read as "all of them").
        if (given.length > 0) {
          emit("gpu.lock.released", pipeline.name, step.id, lease.gpu, {
            gpu: lease.gpu,
            slots: given,
            exclusive: true,
          });
        }
      }
      upgraded = [];
    }
  };

  /** One attempt of one step: spawn, wait, classify, journal, report. */
  const runAttempt = async (
    pipeline: PlannedPipeline,
    step: PlannedStep,
    attempt: number,
    planned: number,
    onCpu: boolean,
    leases: readonly SlotLease[],
    loadRetry: boolean,
  ): Promise<StepStatus> => {
    const device = onCpu ? "cpu" : step.device;
    // Created with the log file, at the step's first output (run-step.ts).
    const logDir = join(options.runDir, "logs", safeName(pipeline.name));
    const logPath = join(logDir, `${safeName(step.id)}${attempt > 1 ? `.attempt${attempt}` : ""}.log`);
    const env = buildStepEnvironment({ run, pipeline, step, registry: plan.registry, onCpu }, baseEnv);
    emit("gpu.step.start", pipeline.name, step.id, device, { attempt, logPath });
    snapshot(pipeline, step, device, onCpu, "step.start");
    const cwd = resolve(options.baseDir, step.cwd ?? ".");
    const onLine = (stream: "stdout" | "stderr", line: string) =>
      options.onOutput?.(pipeline.name, step.id, stream, line);
    const { result, verdict } = step.worker
      ? await runWorkerTask(pool, {
          worker: step.worker,
          pipeline,
          step,
          attempt,
          device,
          gpus: visibleGpus({ run, pipeline, step, registry: plan.registry, onCpu }),
          leases: onCpu ? [] : leases,
          env,
          cwd,
          logPath,
          signal: stop.signal,
          onLine,
        })
      : await runPlainStep(step, device, {
          argv: step.argv,
          shell: step.shell,
          cwd,
          env,
          logPath,
          inheritFds: leases.flatMap((l) => [...l.fds]),
          timeoutMs: step.timeoutMs,
          killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
          signal: stop.signal,
          ...(options.interruptSignal && { interruptSignal: options.interruptSignal }),
          ...(options.killNow && { killNow: options.killNow }),
          onLine,
        });
    snapshot(pipeline, step, device, onCpu, verdict.status === "oom" ? "oom" : "step.end");
    if (verdict.status === "timeout") {
      emit("gpu.step.timeout", pipeline.name, step.id, device, { timeoutMs: step.timeoutMs, attempt });
    }
    if (verdict.status === "oom") {
      emit("gpu.step.oom", pipeline.name, step.id, device, { framework: verdict.framework, attempt });
    }
    // Flushed before the step is reported done: a resume never redoes a step reported ok.
    await options.journal.append(
      journalStep(pipeline.name, step, verdict.status, attempt, device, result.exitCode, result.durationMs),
    );
    emit("gpu.step.end", pipeline.name, step.id, device, {
      status: verdict.status,
      exitCode: result.exitCode,
      signal: result.signal,
      durationMs: result.durationMs,
      attempt,
      logPath,
      ...(verdict.framework && { framework: verdict.framework }),
    });
    if (verdict.status === "ok") counts.ok++;
    else if (
      verdict.status !== "interrupted" &&
      !willRetry(step, planned, verdict.status) &&
      !(verdict.status === "load-timeout" && loadRetry)
    ) {
      counts.failed++;
      failures.push({
        pipeline: pipeline.name,
        step: step.id,
        device,
        status: verdict.status,
        exitCode: result.exitCode,
        signal: result.signal,
        stderrTail: result.stderrTail.slice(-FAILURE_TAIL_LINES),
        logPath,
        hint: verdict.hint,
      });
    }
    return verdict.status;
  };

  /** Memory at a step's start/end, emitted when the reading comes (never awaited by the step). */
  const snapshot = (
    pipeline: PlannedPipeline,
    step: PlannedStep,
    device: string,
    onCpu: boolean,
    at: string,
  ) => {
    if (!options.sampler) return;
    const uuids =
      device === "cpu"
        ? []
        : visibleGpus({ run, pipeline, step, registry: plan.registry, onCpu }).map((g) => g.uuid);
    track(
      readSnapshot(options.sampler, device, uuids).then((gpus) => {
        if (gpus) emit("gpu.memory.snapshot", pipeline.name, step.id, device, { at, gpus });
      }),
    );
  };

  try {
    const tasks = options.pipelines.map((p) => runPipeline(p));
    const outcomes = await Promise.allSettled(tasks);
    await Promise.allSettled([...pending]);
    const bug = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (bug) throw bug.reason;
  } finally {
    // Every pipeline is done: warm workers stop (`shutdown`) and give back the slots they kept.
    await pool.shutdown();
    await Promise.allSettled([...pending]);
    options.signal?.removeEventListener("abort", onExternalAbort);
  }
  const interrupted = options.signal?.aborted === true;
  const durationMs = Math.round(performance.now() - started);
  await options.journal.append({ type: "end", ts: new Date().toISOString(), interrupted, ...counts });
  emit("run.end", null, null, null, {
    durationMs,
    status: interrupted || busy ? "interrupted" : counts.failed > 0 ? "failed" : "ok",
    ...counts,
  });
  return {
    summary: { run, runDir: options.runDir, ...counts, interrupted, durationMs, failures },
    busy,
  };
}

/** A plain step: its own process, classified by how it ended. */
async function runPlainStep(step: PlannedStep, device: string, process: StepProcessOptions) {
  const result = await runStepProcess(process);
  return { result, verdict: classifyEnding(result, step.timeoutMs, device) };
}

function journalStep(
  pipeline: string,
  step: PlannedStep,
  status: StepStatus | "skipped",
  attempt: number,
  device: string,
  exitCode: number | null,
  durationMs: number,
) {
  return {
    type: "step" as const,
    ts: new Date().toISOString(),
    pipeline,
    step: step.id,
    status,
    attempt,
    device,
    exitCode,
    durationMs,
  };
}
