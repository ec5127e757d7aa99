/**
 * The two kinds of waiting: for one slot (acquire) and for every slot (upgrade to exclusive).
 * Each settles exactly once — taken, timed out, aborted, or cancelled — and cleans up after itself.
 */
import { closeSync } from "node:fs";
import type { Waiter } from "./gpu-queue.js";
import type { GpuSlots } from "./gpu-slots.js";
import type { Lease } from "./lease.js";
import { LockTimeoutError } from "./types.js";

/**
 * How long an upgrader that has not got the gate keeps its own slot. Two holders upgrading at
 * once would otherwise deadlock (each waits for the other's slot); the one without the gate gives
 * its slot back and collects all of them once it has the gate. Shared acquirers hold the gate for
 * microseconds, so a gate still closed after this long belongs to another upgrader.
 */
const YIELD_AFTER_MS = 30;

abstract class Settling<T> implements Waiter {
  readonly promise: Promise<T>;
  private settled = false;
  private resolveWith!: (value: T) => void;
  private rejectWith!: (error: unknown) => void;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    protected readonly slots: GpuSlots,
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
        this.slots.queue.remove(this);
        this.cancel(abortError(signal));
      };
      signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  poll(atHead: boolean, now: number): boolean {
    if (this.settled) return true;
    try {
      if (this.attempt(atHead, now)) return true;
      if (this.deadline !== undefined && now >= this.deadline) {
        this.cancel(new LockTimeoutError(this.gpu, Math.round(now - this.started), this.slots.holders()));
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
    this.cleanup();
    this.rejectWith(error);
  }

  protected succeed(value: T): true {
    this.finish();
    this.resolveWith(value);
    return true;
  }

  protected abstract readonly gpu: string;
  /** Try once; call succeed() and return true when done. */
  protected abstract attempt(atHead: boolean, now: number): boolean;
  /** Undo a half-done attempt when giving up. */
  protected cleanup(): void {}

  private finish(): void {
    this.settled = true;
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
  }
}

/** Waits for one slot of the GPU. */
export class SharedWaiter extends Settling<Lease> {
  constructor(
    slots: GpuSlots,
    private readonly lease: Lease,
    started: number,
    deadline: number | undefined,
    signal: AbortSignal | undefined,
  ) {
    super(slots, started, deadline, signal);
  }

  protected get gpu(): string {
    return this.lease.gpu;
  }

  protected attempt(atHead: boolean): boolean {
    return atHead && this.slots.tryShared(this.lease, this.lease.maxPipelines) && this.succeed(this.lease);
  }
}

/** Waits for every slot of the GPU: first the gate, then each slot as its holder lets go. */
export class UpgradeWaiter extends Settling<void> {
  private gate: number | null = null;
  private targets: number[] = [];

  constructor(
    slots: GpuSlots,
    private readonly lease: Lease,
    started: number,
    deadline: number | undefined,
    signal: AbortSignal | undefined,
  ) {
    super(slots, started, deadline, signal);
    lease.pendingUpgrade = this;
  }

  protected get gpu(): string {
    return this.lease.gpu;
  }

  protected attempt(atHead: boolean, now: number): boolean {
    if (this.gate === null) {
      if (atHead) this.gate = this.slots.tryGate();
      if (this.gate === null) {
        if (now - this.started >= YIELD_AFTER_MS) this.lease.keep(0);
        return false;
      }
      this.targets = this.slots.exclusiveTargets(this.lease.maxPipelines);
    }
    if (!this.slots.tryCollect(this.lease, this.targets)) return false;
    this.openGate();
    this.lease.pendingUpgrade = undefined;
    return this.succeed();
  }

  /** A failed upgrade leaves the lease with one slot when it can (see createSlotLock's doc). */
  protected override cleanup(): void {
    this.lease.pendingUpgrade = undefined;
    this.openGate();
    if (this.lease.isReleased) return;
    this.lease.keep(1);
    if (this.lease.slots.length === 0) {
      try {
        this.slots.tryShared(this.lease, this.lease.maxPipelines);
      } catch {
        // The caller is told the upgrade failed; an empty lease is what it releases.
      }
    }
  }

  private openGate(): void {
    if (this.gate === null) return;
    // Closing the gate's only descriptor drops its LOCK_EX.
    closeSync(this.gate);
    this.gate = null;
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return Object.assign(new Error("the wait for a GPU slot was aborted", { cause: reason }), {
    name: "AbortError",
  });
}
