/**
 * The GPU slot lock on open-file-description byte-range locks: `createSlotLock()` is what
 * `gpuplan run` and `gpuplan locks` use (docs/decisions for why, docs/guides/locks.md for how).
 *
 * - One file per GPU (`<uuid>.gpu.lock`): slot i is byte i of its slot range, an exclusive step
 *   locks the whole range in one call. A lease holds one open file description and passes it to
 *   its step processes, so the slot lives exactly as long as the work: if gpuplan is killed the
 *   step keeps it, and the kernel frees it when the last holder exits.
 * - Admission by count and by memory: a pipeline is admitted when a slot is free and the live
 *   holders' reservations, the memory processes gpuplan did not start hold, and its own fit the
 *   GPU's budget, decided under the GPU's mutex byte.
 * - Fair: waiters take tickets in arrival order across processes; only the head may take.
 * - `--no-wait` (wait: false) is about other processes: a request that only this lock's own
 *   leases (the run's other pipelines) keep out queues behind them; it fails with GpuBusyError
 *   as soon as a slot another process holds stands in its way.
 * - Waiting polls on a timer (gpu-queue.ts) and never blocks the event loop.
 */
import { closeSync } from "node:fs";
import { loadOfdLocks, type OfdLocks } from "../../libc/ofd-locks.js";
import { GpuFile } from "./gpu-file.js";
import { SLOT_SPACE } from "./gpu-file-layout.js";
import { GpuQueue } from "./gpu-queue.js";
import { holdersOf, inspectDir } from "./inspect.js";
import { Lease, type LeaseOwner } from "./lease.js";
import {
  checkLockDir as checkLockDirMode,
  ensureLockDir,
  gpuLockPath,
  type LockDirMode,
  openLinkedGpuLock,
  resolveLockDir,
} from "./lock-dir.js";
import {
  GpuBusyError,
  type GpuState,
  type SlotLease,
  type SlotLock,
  type SlotRequest,
  type SlotState,
} from "./types.js";
import { SharedWaiter, UpgradeWaiter } from "./waiters.js";

export { countOtherProcesses } from "./inspect.js";
export * from "./types.js";

/** The slot lock with what `gpuplan locks` shows beyond the held slots. */
export interface InspectableSlotLock extends SlotLock {
  /** Every GPU with a lock file, in index order: holders, waiters, memory. */
  inspectGpus(): Promise<GpuState[]>;
  /** Whether the directory is shared between users or private to this one (checks it; null when it does not exist). */
  mode(): LockDirMode | null;
  /**
   * Throws now what the first acquire would: the directory untrusted or not a directory, a GPU's
   * lock file that is not one (a link, a FIFO, another user's). Creates what is missing.
   */
  check(uuids: readonly string[]): Promise<void>;
}

/**
 * The slot lock over `options.dir` (the CLI's --lock-dir / GPUPLAN_LOCK_DIR), else the default
 * (default-lock-dir.ts). Cheap: nothing is touched until used.
 */
export function createSlotLock(options: { dir?: string } = {}): InspectableSlotLock {
  return new OfdSlotLock(resolveLockDir(options.dir));
}

/** A `--no-wait` request tries twice: a `gpuplan locks` probe may hold the mutex for microseconds. */
const NO_WAIT_RETRY_MS = 2;

class OfdSlotLock implements InspectableSlotLock, LeaseOwner {
  private readonly queues = new Map<string, GpuQueue>();
  /** This lock's leases by GPU (released ones dropped at each release): what is "ours". */
  private readonly leases = new Map<string, Set<Lease>>();
  private ready: Promise<OfdLocks> | undefined;

  constructor(readonly dir: string) {}

  async acquire(request: SlotRequest): Promise<SlotLease> {
    checkRequest(request);
    request.signal?.throwIfAborted();
    const ofd = await this.prepare();
    // Aborted while the library loaded: an abort event will not fire again for the waiter.
    request.signal?.throwIfAborted();
    const started = performance.now();
    const fd = this.openFor(request.uuid);
    const lease = new Lease(
      this,
      new GpuFile(ofd, request.uuid),
      fd,
      request.gpu,
      request.maxPipelines,
      Math.max(0, Math.round(request.reservationBytes ?? 0)),
      request.budgetBytes ?? null,
      request.foreignBytes ?? noForeignMemory,
      request.holder,
    );
    this.track(lease);
    const waiter = new SharedWaiter(
      lease,
      this.queueOf(request.uuid),
      () => holdersOf(ofd, this.dir, request.uuid),
      started,
      deadline(started, request.timeoutMs),
      request.signal,
    );
    // Observed from the start: an abort (another pipeline's busy GPU under --no-wait) may settle
    // it while enqueue() still waits, before the caller has the promise (#12 item 12).
    waiter.promise.catch(() => {});
    await this.enqueue(request.uuid, waiter, request.wait, () =>
      this.busyWithOthers(ofd, lease, request.uuid, request.gpu),
    );
    return waiter.promise;
  }

  async upgrade(
    lease: Lease,
    options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<void> {
    options.signal?.throwIfAborted();
    const ofd = await this.prepare();
    options.signal?.throwIfAborted();
    if (lease.pendingUpgrade) throw new Error("upgrade() while an upgrade of the same lease waits");
    if (lease.isReleased) throw new Error("upgrade() on a released GPU slot lease");
    const started = performance.now();
    const others = () => holdersOf(ofd, this.dir, lease.uuid, new Set(lease.slots));
    const waiter = new UpgradeWaiter(
      lease,
      this.queueOf(lease.uuid),
      others,
      started,
      deadline(started, options.timeoutMs),
      options.signal,
    );
    waiter.promise.catch(() => {});
    await this.enqueue(lease.uuid, waiter, options.wait, () =>
      this.busyWithOthers(ofd, lease, lease.uuid, lease.gpu),
    );
    return waiter.promise;
  }

  async inspect(): Promise<SlotState[]> {
    return (await this.inspectGpus()).flatMap((g) => g.slots);
  }

  async inspectGpus(): Promise<GpuState[]> {
    return inspectDir(await loadOfdLocks(), this.dir);
  }

  mode(): LockDirMode | null {
    return checkLockDirMode(this.dir);
  }

  async check(uuids: readonly string[]): Promise<void> {
    await this.prepare();
    for (const uuid of uuids) closeSync(this.openFor(uuid));
  }

  freed(uuid: string): void {
    // Released leases leave the tracking here, so a long run keeps only its live ones.
    const leases = this.leases.get(uuid);
    if (leases) for (const lease of leases) if (lease.isReleased) leases.delete(lease);
    this.queues.get(uuid)?.kick();
  }

  /** A fresh open file description of the GPU's file (a lock belongs to one), still the file at its name. */
  private openFor(uuid: string): number {
    return openLinkedGpuLock(gpuLockPath(this.dir, uuid));
  }

  /**
   * Try at once when no local waiter is ahead (the uncontended path has no timer); else queue up.
   * Without `wait`, a request another process keeps out fails now; one that only this lock's own
   * leases keep out queues like any other, and fails once another process's slot is in its way
   * (`busy`, judged at each poll that did not take).
   */
  private async enqueue(
    uuid: string,
    waiter: SharedWaiter | UpgradeWaiter,
    wait: boolean,
    busy: () => GpuBusyError | null,
  ): Promise<void> {
    const queue = this.queueOf(uuid);
    if (queue.idle && waiter.poll(performance.now(), true)) return;
    if (!wait) {
      await new Promise((resolve) => setTimeout(resolve, NO_WAIT_RETRY_MS));
      if (queue.idle && waiter.poll(performance.now(), true)) return;
      const now = busy();
      if (now) {
        waiter.cancel(now);
        return;
      }
      waiter.busyWhen = busy;
    }
    queue.add(waiter);
  }

  /**
   * A GpuBusyError naming the holders of the GPU that are not this lock's leases, or null when
   * none is: only the run's own pipelines stand in the way, and they end (`--no-wait` is about
   * other processes — a run whose pipelines outnumber a GPU's slots must still run them all).
   */
  private busyWithOthers(ofd: OfdLocks, lease: Lease, uuid: string, gpu: string): GpuBusyError | null {
    const own = this.ownSlots(uuid);
    const others = lease.file
      .holders(lease.fd)
      .filter((h) => (h.exclusive ? !own.exclusive : !own.slots.has(h.slot)));
    if (others.length === 0) return null;
    return new GpuBusyError(gpu, holdersOf(ofd, this.dir, uuid, own.slots));
  }

  /** The slots this lock's live leases hold on the GPU, and whether one holds it whole. */
  private ownSlots(uuid: string): { slots: Set<number>; exclusive: boolean } {
    const slots = new Set<number>();
    let exclusive = false;
    const leases = this.leases.get(uuid) ?? new Set<Lease>();
    for (const lease of leases) {
      if (lease.isReleased) leases.delete(lease);
      else {
        for (const slot of lease.slots) slots.add(slot);
        exclusive ||= lease.exclusive;
      }
    }
    return { slots, exclusive };
  }

  private track(lease: Lease): void {
    let leases = this.leases.get(lease.uuid);
    if (!leases) {
      leases = new Set();
      this.leases.set(lease.uuid, leases);
    }
    leases.add(lease);
  }

  private prepare(): Promise<OfdLocks> {
    this.ready ??= loadOfdLocks().then((ofd) => {
      ensureLockDir(this.dir);
      return ofd;
    });
    // A failure (say, an untrusted directory) is reported now and retried by the next call.
    this.ready.catch(() => {
      this.ready = undefined;
    });
    return this.ready;
  }

  private queueOf(uuid: string): GpuQueue {
    let queue = this.queues.get(uuid);
    if (!queue) {
      queue = new GpuQueue();
      this.queues.set(uuid, queue);
    }
    return queue;
  }
}

const noForeignMemory = () => 0;

function checkRequest(request: SlotRequest): void {
  if (
    !Number.isInteger(request.maxPipelines) ||
    request.maxPipelines < 1 ||
    request.maxPipelines > SLOT_SPACE
  )
    throw new RangeError(
      `maxPipelines must be an integer from 1 to ${SLOT_SPACE}, got ${request.maxPipelines}`,
    );
  if (request.uuid === "") throw new RangeError("a GPU slot request needs the GPU's UUID");
}

function deadline(started: number, timeoutMs: number | undefined): number | undefined {
  return timeoutMs === undefined ? undefined : started + Math.max(0, timeoutMs);
}
