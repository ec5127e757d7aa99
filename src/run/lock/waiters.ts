/**
 * The two kinds of waiting: for one slot and its memory (acquire) and for every slot (upgrade to
 * exclusive). Both stand in the GPU's line: a ticket locked in the GPU's lock file, in arrival
 * order across processes; only the head of the line may take anything, so a pipeline that needs
 * much memory (or the whole GPU) is not passed by a stream of small ones. Every decision is made
 * under the GPU's mutex byte. Each waiter settles exactly once — taken, timed out, aborted, or
 * cancelled — and cleans up after itself.
 */
import type { GpuQueue, Waiter } from "./gpu-queue.js";
import type { Lease } from "./lease.js";
import { type HolderInfo, LockTimeoutError } from "./types.js";

/**
 * How long an upgrader not at the head of the line keeps its own slot. Two holders upgrading at
 * once would otherwise deadlock (the head waits for the other's slot, the other waits for the
 * head); the one behind gives its slot back and gets every slot once its turn comes.
 */
const YIELD_AFTER_MS = 30;

abstract class Settling<T> implements Waiter {
  readonly promise: Promise<T>;
  protected ticket: number | null = null;
  private settled = false;
  private resolveWith!: (value: T) => void;
  private rejectWith!: (error: unknown) => void;
  private readonly onAbort: (() => void) | undefined;
  /**
   * Set for a `--no-wait` waiter that only its own process's leases kept out: after each try
   * that did not take, the error to fail with when another process now stands in the way.
   */
  busyWhen: (() => Error | null) | undefined;

  constructor(
    protected readonly lease: Lease,
    private readonly queue: GpuQueue,
    private readonly holders: () => HolderInfo[],
    protected readonly started: number,
    private readonly deadline: number | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolveWith = resolve;
      this.rejectWith = reject;
    });
    if (signal) {
      this.onAbort = () => {
        this.queue.remove(this);
        this.cancel(abortError(signal));
      };
      signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  poll(now: number, head: boolean): boolean {
    if (this.settled) return true;
    try {
      if (head || this.ticket !== null ? this.tryUnderMutex(now) : this.notInLine(now)) return true;
      const busy = this.busyWhen?.();
      if (busy) {
        this.cancel(busy);
        return true;
      }
      if (this.deadline !== undefined && now >= this.deadline) {
        this.cancel(new LockTimeoutError(this.lease.gpu, Math.round(now - this.started), this.holders()));
        return true;
      }
      return false;
    } catch (e) {
      this.cancel(e);
      return true;
    }
  }

  cancel(error: unknown): void {
    if (this.settled) return;
    this.finish();
    if (this.ticket !== null && !this.lease.isReleased)
      this.lease.file.dropTicket(this.lease.fd, this.ticket);
    this.ticket = null;
    this.cleanup();
    this.rejectWith(error);
  }

  protected succeed(value: T): true {
    this.finish();
    if (this.ticket !== null) this.lease.file.dropTicket(this.lease.fd, this.ticket);
    this.ticket = null;
    this.resolveWith(value);
    return true;
  }

  /**
   * Try once, holding the mutex; call succeed() and return true when done. Without a ticket the
   * line was empty: the waiter is first in it.
   */
  protected abstract attempt(now: number): boolean;
  /** Undo a half-done attempt when giving up. */
  protected cleanup(): void {}
  /** A poll while another waiter of this process is ahead (no ticket yet). */
  protected notInLine(_now: number): boolean {
    return false;
  }

  private tryUnderMutex(now: number): boolean {
    const { file, fd } = this.lease;
    if (!file.tryMutex(fd)) return false;
    try {
      if (this.ticket === null) {
        // Nobody of any process is in line: try without a place in it, and take one only to
        // wait. A ticket taken and given back within one hold of the mutex would change nothing
        // anyone decides by, and cost four of the nine lock-file calls of an uncontended take.
        if (file.lineIsEmpty(fd)) {
          if (this.attempt(now)) return true;
          this.ticket = file.takeTicket(fd);
          return false;
        }
        this.ticket = file.takeTicket(fd);
      }
      return this.attempt(now);
    } finally {
      // The lease's descriptor may have changed (an upgrader gave its slot up): unlock the one locked.
      if (!this.lease.isReleased) file.releaseMutex(fd);
    }
  }

  private finish(): void {
    this.settled = true;
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
  }
}

/** Waits for one slot of the GPU and room in its memory budget. */
export class SharedWaiter extends Settling<Lease> {
  protected attempt(): boolean {
    const lease = this.lease;
    const { file, fd } = lease;
    if (this.ticket !== null && !file.isHead(fd, this.ticket)) return false;
    const slot = admit(lease);
    if (slot === null || !file.trySlot(fd, slot)) return false;
    lease.took(slot);
    return this.succeed(lease);
  }

  /** A wait that failed gives its descriptor back. */
  protected override cleanup(): void {
    this.lease.release();
  }
}

/** Waits for every slot of the GPU, in line like the others. */
export class UpgradeWaiter extends Settling<void> {
  constructor(...args: ConstructorParameters<typeof SharedWaiter>) {
    super(...args);
    this.lease.pendingUpgrade = this;
  }

  protected attempt(now: number): boolean {
    const lease = this.lease;
    const { file, fd } = lease;
    if (this.ticket !== null && !file.isHead(fd, this.ticket)) return this.notInLine(now);
    if (!file.tryAllSlots(fd)) return false;
    if (lease.slot === null) lease.took(0);
    lease.tookAll();
    lease.pendingUpgrade = undefined;
    return this.succeed();
  }

  /** Not first in line for a while: give the slot back (no step of the pipeline runs meanwhile). */
  protected override notInLine(now: number): false {
    const lease = this.lease;
    if (now - this.started >= YIELD_AFTER_MS && lease.slot !== null) {
      lease.file.giveSlot(lease.fd, lease.slot);
      lease.slot = null;
    }
    return false;
  }

  /** A failed upgrade leaves the lease with one slot when it can get one back now. */
  protected override cleanup(): void {
    const lease = this.lease;
    lease.pendingUpgrade = undefined;
    if (lease.isReleased || lease.slot !== null) return;
    const { file, fd } = lease;
    try {
      if (!file.tryMutex(fd)) return;
      try {
        const slot = admit(lease);
        if (slot !== null && file.trySlot(fd, slot)) lease.took(slot);
      } finally {
        file.releaseMutex(fd);
      }
    } catch {
      // The caller is told the upgrade failed; an empty lease is what it releases.
    }
  }
}

/**
 * The slot this lease may take now (under the mutex), or null: fewer live holders than its slots,
 * no exclusive holder, and the holders' reservations, what processes gpuplan did not start hold,
 * and its own reservation within the budget. A pipeline alone on the GPU is admitted whatever it
 * asks: compile has checked it fits the budget, and a process outside gpuplan that never ends
 * must not keep a run waiting forever (it is what `--lock-timeout` is for otherwise).
 */
function admit(lease: Lease): number | null {
  const holders = lease.file.holders(lease.fd);
  if (holders.length >= lease.maxPipelines || holders.some((h) => h.exclusive)) return null;
  if (lease.budgetBytes !== null && holders.length > 0) {
    const reserved = holders.reduce((sum, h) => sum + (h.record?.reservedBytes ?? 0), 0);
    const foreign = Math.max(0, lease.foreignBytes());
    if (reserved + foreign + lease.reservationBytes > lease.budgetBytes) return null;
  }
  const taken = new Set(holders.map((h) => h.slot));
  for (let slot = 0; ; slot++) if (!taken.has(slot)) return slot;
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return Object.assign(new Error("the wait for a GPU slot was aborted", { cause: reason }), {
    name: "AbortError",
  });
}
