/**
 * The GPU slot lock on flock(2): `createSlotLock()` is what `gpuplan run` and `gpuplan locks` use.
 *
 * - One file per slot (`<uuid>.slot<N>.lock`); a holder keeps an open, LOCK_EX'd descriptor on it
 *   and passes it to its step processes, so the slot lives exactly as long as the work: if gpuplan
 *   is killed the step keeps it, and the kernel frees it when the last holder exits.
 * - Waiting polls with LOCK_NB on a timer (gpu-queue.ts) and never blocks the event loop. Within
 *   a process, waiters for a GPU are served first come, first served; across processes an
 *   exclusive upgrader closes the GPU's gate to newcomers (gpu-slots.ts), so it is not starved.
 * - A failed or cancelled upgrade leaves the lease holding one slot when it can get one back;
 *   while an upgrade waits behind another upgrader it may hold none (waiters.ts, YIELD_AFTER_MS).
 */
import type { Flock } from "./flock.js";
import { loadFlock } from "./flock.js";
import { GpuSlots } from "./gpu-slots.js";
import { inspectDir } from "./inspect.js";
import { Lease, type LeaseOwner } from "./lease.js";
import { ensureLockDir, resolveLockDir } from "./lock-dir.js";
import { GpuBusyError, type SlotLease, type SlotLock, type SlotRequest, type SlotState } from "./types.js";
import { SharedWaiter, UpgradeWaiter } from "./waiters.js";

export { DEFAULT_LOCK_DIR } from "./lock-dir.js";
export * from "./types.js";

/**
 * The slot lock over `options.dir` (the CLI's --lock-dir / GPUPLAN_LOCK_DIR), else
 * /tmp/gpuplan-locks. Cheap: nothing is touched until used. `flock` stands in for flock(2) where a
 * test needs to decide who holds what.
 */
export function createSlotLock(options: { dir?: string; flock?: Flock } = {}): SlotLock {
  return new FlockSlotLock(resolveLockDir(options.dir), options.flock);
}

/** A `--no-wait` request tries twice: a `gpuplan locks` probe can hold a free slot for microseconds. */
const NO_WAIT_RETRY_MS = 2;

class FlockSlotLock implements SlotLock, LeaseOwner {
  private readonly gpus = new Map<string, GpuSlots>();
  private ready: Promise<Flock> | undefined;

  constructor(
    readonly dir: string,
    private readonly flock?: Flock,
  ) {}

  async acquire(request: SlotRequest): Promise<SlotLease> {
    checkRequest(request);
    request.signal?.throwIfAborted();
    const slots = this.slotsOf(request.uuid, await this.prepare());
    // Aborted while the library loaded: an abort event will not fire again for the waiter.
    request.signal?.throwIfAborted();
    const started = performance.now();
    const lease = new Lease(this, request.uuid, request.gpu, request.maxPipelines, request.holder);
    const waiter = new SharedWaiter(
      slots,
      lease,
      started,
      deadline(started, request.timeoutMs),
      request.signal,
    );
    await this.enqueue(slots, waiter, request.wait, () => new GpuBusyError(request.gpu, slots.holders()));
    return waiter.promise;
  }

  async upgrade(
    lease: Lease,
    options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<void> {
    options.signal?.throwIfAborted();
    const slots = this.slotsOf(lease.uuid, await this.prepare());
    options.signal?.throwIfAborted();
    if (lease.pendingUpgrade) throw new Error("upgrade() while an upgrade of the same lease waits");
    if (lease.isReleased) throw new Error("upgrade() on a released GPU slot lease");
    const started = performance.now();
    const waiter = new UpgradeWaiter(
      slots,
      lease,
      started,
      deadline(started, options.timeoutMs),
      options.signal,
    );
    await this.enqueue(
      slots,
      waiter,
      options.wait,
      () => new GpuBusyError(lease.gpu, othersOf(slots, lease)),
    );
    return waiter.promise;
  }

  async inspect(): Promise<SlotState[]> {
    return inspectDir(this.flock ?? (await loadFlock()), this.dir);
  }

  freed(uuid: string): void {
    this.gpus.get(uuid)?.queue.kick();
  }

  /** Try at once when no local waiter is ahead (the uncontended path has no timer); else queue up. */
  private async enqueue(
    slots: GpuSlots,
    waiter: SharedWaiter | UpgradeWaiter,
    wait: boolean,
    busy: () => Error,
  ): Promise<void> {
    if (slots.queue.idle && waiter.poll(true, performance.now())) return;
    if (wait) {
      slots.queue.add(waiter);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, NO_WAIT_RETRY_MS));
    if (slots.queue.idle && waiter.poll(true, performance.now())) return;
    waiter.cancel(busy());
  }

  private prepare(): Promise<Flock> {
    this.ready ??= (this.flock ? Promise.resolve(this.flock) : loadFlock()).then((flock) => {
      ensureLockDir(this.dir);
      return flock;
    });
    // A failure (say, an unwritable directory) is reported now and retried by the next call.
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  private slotsOf(uuid: string, flock: Flock): GpuSlots {
    let slots = this.gpus.get(uuid);
    if (!slots) {
      slots = new GpuSlots(this.dir, uuid, flock);
      this.gpus.set(uuid, slots);
    }
    return slots;
  }
}

function checkRequest(request: SlotRequest): void {
  if (!Number.isInteger(request.maxPipelines) || request.maxPipelines < 1)
    throw new RangeError(`maxPipelines must be a positive integer, got ${request.maxPipelines}`);
  if (request.uuid === "") throw new RangeError("a GPU slot request needs the GPU's UUID");
}

function deadline(started: number, timeoutMs: number | undefined): number | undefined {
  return timeoutMs === undefined ? undefined : started + Math.max(0, timeoutMs);
}

/** Holders other than the lease itself (an upgrader is busy because of the others). */
const othersOf = (slots: GpuSlots, lease: Lease) => slots.holders(new Set(lease.slots));
