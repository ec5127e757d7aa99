/**
 * The flock moves on one GPU's files, all synchronous and non-blocking.
 *
 * Fairness (writer preference) rests on the GPU's gate file: a shared acquirer holds the gate
 * LOCK_SH only while it grabs a slot, and an exclusive upgrader holds it LOCK_EX while it collects
 * every other slot. Once an upgrader has the gate, no new shared holder can enter anywhere on the
 * host, so it waits only for the holders already running, never for a stream of newcomers.
 */
import { closeSync } from "node:fs";
import type { Flock } from "./flock.js";
import { GpuQueue } from "./gpu-queue.js";
import { holdersOf, slotFilesOf } from "./inspect.js";
import type { Lease } from "./lease.js";
import { gatePath, openShared, slotPath } from "./lock-dir.js";
import type { HolderInfo } from "./types.js";

export class GpuSlots {
  readonly queue = new GpuQueue();
  /** This process's descriptor for momentary shared gate locks (never the upgrader's: see tryGate). */
  private sharedGate: number | undefined;

  constructor(
    readonly dir: string,
    readonly uuid: string,
    readonly flock: Flock,
  ) {}

  /** Take one free slot among 0..maxPipelines-1 for the lease, unless an upgrader holds the gate. */
  tryShared(lease: Lease, maxPipelines: number): boolean {
    this.sharedGate ??= openShared(gatePath(this.dir, this.uuid), "read");
    if (!this.flock.tryLock(this.sharedGate, "shared")) return false;
    try {
      for (let slot = 0; slot < maxPipelines; slot++) if (this.tryTake(lease, slot)) return true;
      return false;
    } finally {
      // Unlocking is safe here: the gate descriptor is close-on-exec and never given to a step.
      this.flock.unlock(this.sharedGate);
    }
  }

  /**
   * The gate, exclusively, on a descriptor of its own: taking LOCK_EX on the shared-gate
   * descriptor would merely convert that open file description's lock, and the next momentary
   * LOCK_SH by a local acquirer would silently turn it back. Returns the descriptor (close it to
   * open the gate) or null.
   */
  tryGate(): number | null {
    const fd = openShared(gatePath(this.dir, this.uuid), "read");
    if (this.flock.tryLock(fd, "exclusive")) return fd;
    closeSync(fd);
    return null;
  }

  /** Every slot an exclusive holder must own: its own count, and any slot file another plan made. */
  exclusiveTargets(maxPipelines: number): number[] {
    const all = new Set(slotFilesOf(this.dir, this.uuid));
    for (let slot = 0; slot < maxPipelines; slot++) all.add(slot);
    return [...all].sort((a, b) => a - b);
  }

  /** Take whichever of `targets` are free now; true once the lease holds them all. */
  tryCollect(lease: Lease, targets: readonly number[]): boolean {
    let complete = true;
    for (const slot of targets) {
      if (lease.holds(slot)) continue;
      if (!this.tryTake(lease, slot)) complete = false;
    }
    return complete;
  }

  /** Who holds this GPU's slots, for busy and timeout errors (`except`: slots of the asking lease). */
  holders(except?: ReadonlySet<number>): HolderInfo[] {
    return holdersOf(this.flock, this.dir, this.uuid, except);
  }

  private tryTake(lease: Lease, slot: number): boolean {
    const fd = openShared(slotPath(this.dir, this.uuid, slot), "read");
    if (this.flock.tryLock(fd, "exclusive")) {
      lease.add(slot, fd);
      return true;
    }
    closeSync(fd);
    return false;
  }
}
