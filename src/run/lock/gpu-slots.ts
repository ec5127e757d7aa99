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
import { gatePath, isStillLinked, openShared, slotPath } from "./lock-dir.js";
import type { HolderInfo } from "./types.js";

export class GpuSlots {
  readonly queue = new GpuQueue();
  constructor(
    readonly dir: string,
    readonly uuid: string,
    readonly flock: Flock,
  ) {}

  /** Take one free slot among 0..maxPipelines-1 for the lease, unless an upgrader holds the gate. */
  tryShared(lease: Lease, maxPipelines: number): boolean {
    // A fresh descriptor each time (a few µs): one kept open would go on locking a gate file a
    // cleaner had removed, while everyone else locks its replacement.
    const gate = openShared(gatePath(this.dir, this.uuid), "read");
    try {
      if (!this.flock.tryLock(gate, "shared")) return false;
      for (let slot = 0; slot < maxPipelines; slot++) if (this.tryTake(lease, slot)) return true;
      return false;
    } finally {
      // Closing drops the momentary LOCK_SH; the gate descriptor is never given to a step.
      closeSync(gate);
    }
  }

  /** The gate, exclusively, on a descriptor of its own; returns it (close it to open the gate) or null. */
  tryGate(): number | null {
    const path = gatePath(this.dir, this.uuid);
    const fd = openShared(path, "read");
    if (this.flock.tryLock(fd, "exclusive") && isStillLinked(fd, path)) return fd;
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
    const path = slotPath(this.dir, this.uuid, slot);
    // Twice at most: the second open finds the file that replaced one removed under us.
    for (let attempt = 0; attempt < 2; attempt++) {
      const fd = openShared(path, "read");
      if (!this.flock.tryLock(fd, "exclusive")) {
        closeSync(fd);
        return false;
      }
      if (isStillLinked(fd, path)) {
        lease.add(slot, fd);
        return true;
      }
      closeSync(fd);
    }
    return false;
  }
}
