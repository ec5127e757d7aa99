/**
 * Slots that outlive their pipeline. A lease a live warm worker was started with is not given
 * back to the lock when its pipeline ends: it goes straight to the next pipeline of this run
 * waiting for that GPU, or the worker pool keeps it until its workers stop. This module decides
 * where a lease comes from and where it goes; the lock itself knows nothing of warm workers.
 */
import type { HolderInfo, SlotLease, SlotLock, SlotRequest } from "../lock/types.js";
import type { WorkerPool } from "../warm/worker-pool.js";

export class SlotHandover {
  // Pipelines of this run waiting for a GPU: a lease kept for a warm worker goes to them directly.
  private readonly waiters = new Map<string, ((lease: SlotLease) => boolean)[]>();
  // Exclusive steps wanting every slot of a GPU (by UUID): warm workers there are not kept.
  private readonly exclusive = new Map<string, number>();

  constructor(
    private readonly lock: SlotLock,
    private readonly pool: WorkerPool,
    /**
     * Whether the run has worker steps. Without, no lease is ever kept or handed over, and a
     * pipeline waits in the lock alone: no race, no second abort signal (an AbortSignal.any per
     * pipeline was a measurable part of a GPU run's cost: issue #17).
     */
    private readonly handsOver = true,
  ) {}

  /** A slot of the request's GPU: one the pool keeps for warm workers, a handed-over one, or the lock's. */
  async acquire(request: SlotRequest): Promise<SlotLease> {
    if (!this.handsOver) return this.lock.acquire(request);
    const kept = this.pool.takeLease(request.uuid);
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
    const queue = this.waiters.get(request.uuid) ?? [];
    queue.push(take);
    this.waiters.set(request.uuid, queue);
    const local = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, local.signal]) : local.signal;
    const acquiring = this.lock.acquire({ ...request, signal }).then((lease) => {
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
      const q = this.waiters.get(request.uuid);
      const i = q?.indexOf(take) ?? -1;
      if (i >= 0) q!.splice(i, 1);
    }
  }

  /** The pipeline is done with this lease: keep it for its warm workers, or give it back. */
  async giveBack(lease: SlotLease, holder: HolderInfo): Promise<void> {
    if (!this.pool.isBound(lease)) return lease.release();
    if ((this.exclusive.get(lease.uuid) ?? 0) > 0) {
      await this.pool.evictLease(lease, "replacement");
      return this.pool.adopt(lease);
    }
    const waiting = this.waiters.get(lease.uuid) ?? [];
    while (waiting.length > 0) if (waiting.shift()!(lease)) return;
    lease.setHolder({ ...holder, step: "(warm workers)" });
    this.pool.adopt(lease);
  }

  /** An exclusive step wants (and then holds) every slot of this GPU: leases given back there are not kept. */
  beginExclusive(uuid: string): void {
    this.exclusive.set(uuid, (this.exclusive.get(uuid) ?? 0) + 1);
  }

  /** The exclusive step of beginExclusive is done with the GPU. */
  endExclusive(uuid: string): void {
    this.exclusive.set(uuid, (this.exclusive.get(uuid) ?? 1) - 1);
  }
}
