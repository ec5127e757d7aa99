/**
 * The warm workers of one run: at most one process per (model key, device), reused by later
 * tasks with that key, evicted with a reason (sparkle_motion's vocabulary), and reported as
 * `gpu.model.*` events.
 *
 * Slots: a worker inherits the slot descriptors of the pipeline whose task started it, so it
 * lives inside that pipeline's slot (it holds the flock itself: if gpuplan dies, the slot stays
 * held until the worker has read EOF on stdin and exited). When that pipeline ends, the executor
 * hands its lease to the pool instead of releasing it (`adopt`): the idle warm worker keeps the
 * slot, the next pipeline of this run on that GPU takes the lease over (`takeLease`), and the
 * pool releases it only when the last worker bound to it is gone. A warm worker therefore
 * always counts against its GPU's slots, across processes too, and never holds a slot it did not
 * inherit.
 */
import { join } from "node:path";
import type { MemoryReading } from "../../schema-types/run-events.js";
import type { SlotLease } from "../lock/types.js";
import { type LongTimeout, setLongTimeout } from "../long-timeout.js";
import type { EventDraft, RunEventName, RunEventOf } from "../record/events.js";
import { type LazyLog, type LogLost, lazyLog } from "../record/lazy-log.js";
import { workerLogName } from "../record/log-names.js";
import { detectOom } from "../step/classify-failure.js";
import type { TaskMessage } from "./protocol.js";
import { type TaskResult, type WorkerExit, WorkerProcess } from "./worker-process.js";

/** Why a warm worker is stopped (sparkle_motion's vocabulary), as `gpu.model.cache_evict` says it. */
export type EvictReason = RunEventOf<"gpu.model.cache_evict">["reason"];

/** The run's gpu.model.* events (schemas/run-events.schema.json). */
export type ModelEventName = Extract<RunEventName, `gpu.model.${string}`>;
type ModelEventDraft = Extract<EventDraft, { event: ModelEventName }>;
/** What each gpu.model.* event says beyond the worker (key, devices) and where it belongs. */
type ModelEventFields<N extends ModelEventName> = Omit<
  Extract<ModelEventDraft, { event: N }>,
  "event" | "pipeline" | "step" | "device" | "model_key" | "allocated_devices"
>;

/** Where an event belongs: the task's pipeline and step, or none (expiry, shutdown). */
export interface ModelEventContext {
  pipeline: string | null;
  step: string | null;
}

export interface WorkerPoolOptions {
  /** Warm workers a device keeps at once (`max_warm_per_gpu`); 0: none survive their task. */
  maxWarm: number;
  /** Stop: stdin closed → this long → SIGTERM → this long → SIGKILL. */
  stopGraceMs: number;
  /** Every non-protocol line of a worker also goes to `<logDir>/<key>@<device>.log`; null: none. */
  logDir: string | null;
  /** A worker's log lost output (lazy-log.ts). */
  onLogLost?: LogLost;
  emit: (event: ModelEventDraft) => void;
  /** Memory after a worker stopped, for `gpu.model.cleanup` (null where unknown). */
  memoryAfterStop?: (uuids: string[]) => Promise<MemoryReading[] | null>;
  /** Called when the set of warm workers changes (for `gpuplan locks`). */
  onChange?: (workers: WarmWorkerInfo[]) => void;
}

export interface WarmTaskRequest {
  key: string;
  /** The step's device (cuda:0, or cpu for a CPU step or the CPU fallback). */
  device: string;
  /** UUIDs of the GPUs the worker sees (empty on the CPU). */
  uuids: string[];
  allocatedDevices: string[];
  /** CPUs a new worker is pinned to (its GPU's local CPUs), or null. */
  cpus?: readonly number[] | null;
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * The step's own `env` (the file's, not what gpuplan sets per pipeline or attempt): with argv and
   * cwd it is what the worker process is, so a task is never given to one started otherwise.
   */
  ownEnv: Readonly<Record<string, string>>;
  /** The task's pipeline's leases: a new worker inherits their descriptors and is bound to them. */
  leases: readonly SlotLease[];
  readyTimeoutMs: number;
  keepWarm: { ttlMs: number } | false;
  /** An exclusive step's worker holds every slot, so it is never kept warm. */
  exclusive: boolean;
  vramBytes: number;
  /** The device's memory budget: warm workers together never exceed it. */
  budgetBytes: number | null;
  task: TaskMessage;
  /** The step's timeout, for the task (the load has readyTimeoutMs). */
  timeoutMs: number | null;
  /** Each output line of the worker during this task; a promise returned pauses its reading until it settles. */
  onLine: (stream: "stdout" | "stderr", line: string) => Promise<void> | undefined;
  /**
   * The worker process (its own process group) that takes this task, as soon as it is chosen:
   * `reused` when it was warm already, before this task. Its VRAM is the task's (vram-watch.ts).
   */
  onWorker?: (pid: number, reused: boolean) => void;
  /**
   * Awaited when a worker's first task has answered ok and the worker stays warm, before it is
   * kept and can take the next task: that task's last VRAM reading (vram-watch.ts readNow).
   */
  onKept?: () => Promise<void>;
  signal?: AbortSignal;
}

export interface WarmTaskOutcome {
  status: RunEventOf<"gpu.model.inference_end">["status"];
  phase: "load" | "task";
  /** The task went to a warm worker (no load). */
  reused: boolean;
  /** The worker's error text or what broke. */
  message: string | null;
  result: unknown;
  exit: WorkerExit | null;
  stderrTail: string[];
  durationMs: number;
}

/** A warm worker as `gpuplan locks` shows it. */
export interface WarmWorkerInfo {
  key: string;
  device: string;
  pid: number | null;
  busy: boolean;
  /** When its last task ended (ms since the epoch); null while loading or busy. */
  idleSince: number | null;
}

interface Entry {
  id: string;
  key: string;
  device: string;
  uuids: string[];
  /** argv, cwd and the step's own env (launchKeyOf): a task of another launch needs another process. */
  launchKey: string;
  allocatedDevices: string[];
  process: WorkerProcess;
  leases: SlotLease[];
  vramBytes: number;
  ttlMs: number | null;
  /**
   * When its last task ended, on the monotonic clock (performance.now): what its TTL counts from.
   * A wall-clock step (NTP, an admin's `date -s`) must not keep an idle model on its GPU past its
   * TTL, nor throw a warm one away early.
   */
  lastUsed: number;
  /** The same moment on the wall clock (Date.now), for `gpuplan locks` (idleSince). */
  lastUsedWallMs: number;
  busy: boolean;
  /** Evict once the running task ends (another key needed the place while this one was busy). */
  evictAfter: EvictReason | null;
  timer: LongTimeout | undefined;
  sink: WarmTaskRequest["onLine"] | null;
  log: LazyLog | null;
}

export class WorkerPool {
  /** Workers that take tasks, by `key@device`. */
  private readonly entries = new Map<string, Entry>();
  /** Every worker process still alive, stopping ones included: they still hold their slots. */
  private readonly live = new Set<Entry>();
  private readonly adopted = new Set<SlotLease>();
  private readonly chains = new Map<string, Promise<unknown>>();
  private oneOffs = 0;

  constructor(private readonly options: WorkerPoolOptions) {}

  /** Runs one task on the warm worker for its key and device, starting one when needed. */
  run(request: WarmTaskRequest): Promise<WarmTaskOutcome> {
    const id = `${request.key}@${request.device}`;
    // A worker stopped after its task serves nobody else, so tasks of the same key need not
    // queue for it: each gets its own (a warm one of that key is still used when there is one).
    if (!this.keeps(request) && !this.entries.has(id) && !this.chains.has(id)) {
      const own = `${id}#${++this.oneOffs}`;
      return this.serialize(own, () => this.runNow(own, request));
    }
    return this.serialize(id, () => this.runNow(id, request));
  }

  /** A live worker was started with this lease's descriptors. */
  isBound(lease: SlotLease): boolean {
    for (const e of this.live) if (e.leases.includes(lease)) return true;
    return false;
  }

  /** Take over a lease whose pipeline ended: it is released when its last worker is gone. */
  adopt(lease: SlotLease): void {
    if (this.isBound(lease)) this.adopted.add(lease);
    else lease.release();
  }

  /** A lease of this GPU held only for warm workers, handed to a pipeline that needs the GPU. */
  takeLease(uuid: string): SlotLease | null {
    for (const lease of this.adopted) {
      if (lease.uuid !== uuid) continue;
      this.adopted.delete(lease);
      return lease;
    }
    return null;
  }

  /** Evict every worker on this GPU (an exclusive step needs the card); busy ones after their task. */
  async evictGpu(uuid: string, reason: EvictReason): Promise<void> {
    const stops: Promise<void>[] = [];
    for (const e of this.entries.values()) {
      if (!e.uuids.includes(uuid) && !e.leases.some((l) => l.uuid === uuid)) continue;
      if (e.busy) e.evictAfter = reason;
      else stops.push(this.evict(e, reason, { pipeline: null, step: null }));
    }
    await Promise.all(stops);
  }

  /** Stop the workers bound to this lease (so it can be released now). */
  async evictLease(lease: SlotLease, reason: EvictReason): Promise<void> {
    const stops: Promise<void>[] = [];
    for (const e of this.entries.values()) {
      if (!e.leases.includes(lease)) continue;
      if (e.busy) e.evictAfter = reason;
      else stops.push(this.evict(e, reason, { pipeline: null, step: null }));
    }
    await Promise.all(stops);
    await this.stopped();
  }

  /** Evict one worker by key and device (`manual`); false when there is none. */
  async evictKey(key: string, device: string, reason: EvictReason = "manual"): Promise<boolean> {
    const id = `${key}@${device}`;
    return this.serialize(id, async () => {
      const e = this.entries.get(id);
      if (!e) return false;
      await this.evict(e, reason, { pipeline: null, step: null });
      return true;
    });
  }

  /** End of the run: stop every worker and give back every slot the pool holds. */
  async shutdown(): Promise<void> {
    await Promise.all(
      [...this.entries.values()].map((e) => this.evict(e, "shutdown", { pipeline: null, step: null })),
    );
    await this.stopped();
    for (const lease of this.adopted) lease.release();
    this.adopted.clear();
  }

  list(): WarmWorkerInfo[] {
    return [...this.entries.values()].map((e) => ({
      key: e.key,
      device: e.device,
      pid: e.process.pid,
      busy: e.busy,
      idleSince: e.busy ? null : e.lastUsedWallMs,
    }));
  }

  private async runNow(id: string, request: WarmTaskRequest): Promise<WarmTaskOutcome> {
    const started = performance.now();
    const context = { pipeline: request.task.pipeline, step: request.task.step };
    let entry = this.entries.get(id);
    // A worker that died while idle, or another command (argv, cwd or env) under the same key, is not reused.
    if (entry && !entry.process.alive) await this.evict(entry, "error", context);
    else if (entry && entry.process.broken !== null) {
      // It broke the protocol after its last task (a second reply to it): this task is not to
      // blame, so it starts a fresh worker, as after any error; both logs say why.
      const why = `gpuplan: the warm worker ${entry.key} (pid ${entry.process.pid ?? "?"}) broke the protocol after its last task: ${entry.process.broken}; a fresh one is started`;
      entry.log?.write(`${why}\n`);
      void request.onLine("stderr", why);
      await this.evict(entry, "error", context);
    } else if (entry && entry.launchKey !== launchKeyOf(request))
      await this.evict(entry, "replacement", context);
    else if (entry && entry.ttlMs !== null && performance.now() - entry.lastUsed > entry.ttlMs)
      await this.evict(entry, "expired", context);
    entry = this.entries.get(id);
    const reused = entry !== undefined;
    if (entry) {
      entry.timer?.clear();
      this.emit("gpu.model.cache_reuse", entry, context, {
        idle_ms: Math.round(performance.now() - entry.lastUsed),
      });
      if (entry.process.pid !== null) request.onWorker?.(entry.process.pid, true);
    } else {
      // A worker stopped after its task takes no warm place: it lives within its task's slot.
      if (this.keeps(request)) await this.makeRoom(request, context);
      entry = this.start(id, request);
      entry.busy = true;
      entry.sink = request.onLine;
      // Listed while it loads (`gpuplan locks`): a model can take its GPU slot for minutes first.
      this.changed();
      if (entry.process.pid !== null) request.onWorker?.(entry.process.pid, false);
      this.emit("gpu.model.load_start", entry, context, { ready_timeout_ms: request.readyTimeoutMs });
      const load = await entry.process.ready(request.readyTimeoutMs, request.signal);
      if (load.type !== "ready") {
        const outcome = this.loadFailure(entry, load, started);
        await this.evict(entry, load.type === "aborted" ? "shutdown" : "error", context);
        return outcome;
      }
      this.emit("gpu.model.load_complete", entry, context, {
        duration_ms: Math.round(performance.now() - started),
        pid: entry.process.pid,
      });
    }
    entry.busy = true;
    entry.sink = request.onLine;
    entry.process.resetTail();
    this.changed();
    this.emit("gpu.model.inference_start", entry, context, { task: request.task.id });
    const taskStart = performance.now();
    const reply = await entry.process.send(request.task, request.timeoutMs, request.signal);
    const outcome = this.taskOutcome(entry, reply, reused, started);
    this.emit("gpu.model.inference_end", entry, context, {
      task: request.task.id,
      duration_ms: Math.round(performance.now() - taskStart),
      status: outcome.status,
    });
    entry.busy = false;
    entry.sink = null;
    entry.lastUsed = performance.now();
    entry.lastUsedWallMs = Date.now();
    if (outcome.status === "interrupted") await this.evict(entry, "shutdown", context);
    else if (outcome.status !== "ok") await this.evict(entry, "error", context);
    else if (entry.evictAfter) await this.evict(entry, entry.evictAfter, context);
    else if (request.keepWarm === false || !this.keeps(request))
      await this.evict(entry, "caller_disabled", context);
    else {
      if (!reused) await request.onKept?.();
      // Idle while it was read: another key's load may have evicted it.
      if (this.entries.get(entry.id) === entry) this.store(entry, request.keepWarm.ttlMs, context);
    }
    return outcome;
  }

  /** Whether this task's worker stays warm after it. */
  private keeps(request: WarmTaskRequest): boolean {
    return request.keepWarm !== false && !request.exclusive && this.options.maxWarm > 0;
  }

  private start(id: string, request: WarmTaskRequest): Entry {
    const log =
      this.options.logDir === null
        ? null
        : lazyLog(
            join(this.options.logDir, workerLogName(request.key, request.device)),
            this.options.onLogLost,
            // logs/workers/: both made on the first line, neither the run folder above them.
            2,
          );
    const entry: Entry = {
      id,
      key: request.key,
      device: request.device,
      uuids: request.uuids,
      launchKey: launchKeyOf(request),
      allocatedDevices: request.allocatedDevices,
      leases: [...request.leases],
      vramBytes: request.vramBytes,
      ttlMs: null,
      lastUsed: performance.now(),
      lastUsedWallMs: Date.now(),
      busy: false,
      evictAfter: null,
      timer: undefined,
      sink: null,
      log,
      process: undefined as unknown as WorkerProcess,
    };
    entry.process = new WorkerProcess({
      argv: request.argv,
      cwd: request.cwd,
      env: request.env,
      inheritFds: request.leases.flatMap((l) => [...l.fds]),
      cpus: request.cpus ?? null,
      onLine: (stream, line) => {
        const waits: Promise<void>[] = [];
        if (entry.log && !entry.log.write(`${line}\n`)) waits.push(entry.log.drained());
        const sunk = entry.sink?.(stream, line);
        if (sunk) waits.push(sunk);
        return waits.length > 0 ? Promise.all(waits).then(() => undefined) : undefined;
      },
    });
    this.entries.set(id, entry);
    this.live.add(entry);
    return entry;
  }

  /** Keep the worker for `ttlMs` of idleness; it is evicted once idle strictly longer. */
  private store(entry: Entry, ttlMs: number, context: ModelEventContext): void {
    entry.ttlMs = ttlMs;
    this.emit("gpu.model.cache_store", entry, context, { ttl_s: ttlMs / 1000 });
    entry.timer = setLongTimeout(() => {
      void this.serialize(entry.id, async () => {
        if (this.entries.get(entry.id) !== entry || entry.busy) return;
        if (performance.now() - entry.lastUsed > ttlMs)
          await this.evict(entry, "expired", { pipeline: null, step: null });
      });
    }, ttlMs + 1).unref();
    this.changed();
  }

  /** Evict idle workers on the device until the new one fits the warm places and the budget. */
  private async makeRoom(request: WarmTaskRequest, context: ModelEventContext): Promise<void> {
    const places = Math.max(1, this.options.maxWarm);
    // One-off workers (`key@device#n`, stopped after their task anyway) hold no warm place.
    const others = () =>
      [...this.entries.values()].filter(
        (e) => e.device === request.device && !e.evictAfter && e.id === `${e.key}@${e.device}`,
      );
    const tooMany = () => {
      const list = others();
      const bytes = list.reduce((sum, e) => sum + e.vramBytes, 0) + request.vramBytes;
      return (
        list.length >= places ||
        (request.budgetBytes !== null && list.length > 0 && bytes > request.budgetBytes)
      );
    };
    while (tooMany()) {
      const idle = others()
        .filter((e) => !e.busy)
        .sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (!idle) {
        // Busy workers give their place up after their task; the new one starts meanwhile.
        for (const e of others()) e.evictAfter = "replacement";
        return;
      }
      await this.evict(idle, "replacement", context);
    }
  }

  private async evict(entry: Entry, reason: EvictReason, context: ModelEventContext): Promise<void> {
    if (this.entries.get(entry.id) !== entry) return;
    this.entries.delete(entry.id);
    entry.timer?.clear();
    this.emit("gpu.model.cache_evict", entry, context, { reason });
    this.changed();
    const exit = await entry.process.stop(this.options.stopGraceMs);
    await new Promise<void>((resolve) => (entry.log ? entry.log.end(false, resolve) : resolve()));
    this.live.delete(entry);
    for (const lease of entry.leases) {
      if (this.adopted.has(lease) && !this.isBound(lease)) {
        this.adopted.delete(lease);
        lease.release();
      }
    }
    const memory = entry.uuids.length > 0 ? await this.options.memoryAfterStop?.(entry.uuids) : null;
    this.emit("gpu.model.cleanup", entry, context, {
      reason,
      exitCode: exit.exitCode,
      signal: exit.signal,
      ...(memory ? { memory } : {}),
    });
  }

  /** Resolves when every stopping worker is gone. */
  private async stopped(): Promise<void> {
    while ([...this.live].some((e) => !this.entries.has(e.id) || this.entries.get(e.id) !== e)) {
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private loadFailure(
    entry: Entry,
    load: Exclude<Awaited<ReturnType<WorkerProcess["ready"]>>, { type: "ready" }>,
    started: number,
  ): WarmTaskOutcome {
    const tail = [...entry.process.stderrTail];
    const base = { phase: "load" as const, reused: false, result: null, stderrTail: tail };
    const durationMs = Math.round(performance.now() - started);
    switch (load.type) {
      case "timeout":
        return {
          ...base,
          status: "load-timeout",
          message: 'no {"ready": true} within ready_timeout',
          exit: null,
          durationMs,
        };
      case "aborted":
        return { ...base, status: "interrupted", message: null, exit: null, durationMs };
      case "invalid":
        return { ...base, status: "error", message: `protocol: ${load.reason}`, exit: null, durationMs };
      case "exited":
        return {
          ...base,
          status: detectOom(tail) ? "oom" : "error",
          message: load.exit.spawnError ?? `the worker exited while loading (${describeExit(load.exit)})`,
          exit: load.exit,
          durationMs,
        };
    }
  }

  private taskOutcome(entry: Entry, reply: TaskResult, reused: boolean, started: number): WarmTaskOutcome {
    const tail = [...entry.process.stderrTail];
    const base = {
      phase: "task" as const,
      reused,
      stderrTail: tail,
      durationMs: Math.round(performance.now() - started),
    };
    switch (reply.type) {
      case "reply":
        return reply.ok
          ? { ...base, status: "ok", message: null, result: reply.result, exit: null }
          : {
              ...base,
              status: reply.kind === "oom" || detectOom([reply.error]) ? "oom" : "error",
              message: reply.error,
              result: null,
              exit: null,
            };
      case "exited":
        return {
          ...base,
          status: detectOom(tail) ? "oom" : "error",
          message: `the worker exited without answering its task (${describeExit(reply.exit)})`,
          result: null,
          exit: reply.exit,
        };
      case "invalid":
        return { ...base, status: "error", message: `protocol: ${reply.reason}`, result: null, exit: null };
      case "timeout":
        return {
          ...base,
          status: "timeout",
          message: "the task ran past the step's timeout",
          result: null,
          exit: null,
        };
      case "aborted":
        return { ...base, status: "interrupted", message: null, result: null, exit: null };
    }
  }

  private emit<N extends ModelEventName>(
    name: N,
    entry: Entry,
    context: ModelEventContext,
    fields: ModelEventFields<N>,
  ): void {
    // One member of the union, put together from its parts (TypeScript cannot follow N through the spread).
    this.options.emit({
      event: name,
      pipeline: context.pipeline,
      step: context.step,
      device: entry.device,
      model_key: entry.key,
      allocated_devices: entry.allocatedDevices,
      ...fields,
    } as unknown as ModelEventDraft);
  }

  private changed(): void {
    this.options.onChange?.(this.list());
  }

  /** Runs `work` after everything queued for this worker id (one task at a time per worker). */
  private serialize<T>(id: string, work: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(id) ?? Promise.resolve();
    const next = previous.then(work);
    const tail = next.catch(() => {});
    this.chains.set(id, tail);
    void tail.finally(() => {
      if (this.chains.get(id) === tail) this.chains.delete(id);
    });
    return next;
  }
}

/**
 * What a worker was started as: two steps under one key that differ in `cwd` or `env` (a model
 * path in MODEL, say) must not serve each other's tasks from the first one's process.
 */
const launchKeyOf = (request: WarmTaskRequest): string =>
  JSON.stringify([
    request.argv,
    request.cwd,
    Object.entries(request.ownEnv).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ]);

const describeExit = (exit: WorkerExit): string =>
  exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.exitCode ?? "unknown"}`;
