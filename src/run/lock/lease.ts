/**
 * A held set of slots of one GPU. The slot descriptors are the lock: they are closed, never
 * LOCK_UN'd, because a step process that inherited one shares its open file description and an
 * unlock would free the slot under the running step. Closing only drops gpuplan's reference; the
 * kernel frees the slot when the last process holding it (gpuplan or the step) lets go.
 */
import { closeSync } from "node:fs";
import { writeHolderInfo } from "./holder-info.js";
import type { HolderInfo, SlotLease } from "./types.js";

export interface LeaseOwner {
  readonly dir: string;
  upgrade(lease: Lease, options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /** Slots of this GPU were freed in this process: local waiters may go now. */
  freed(uuid: string): void;
}

export class Lease implements SlotLease {
  private readonly held = new Map<number, { fd: number; since: string }>();
  private released = false;
  /** Set while an upgrade waits, so that release() can cancel it. */
  pendingUpgrade: { cancel(error: Error): void } | undefined;

  constructor(
    private readonly owner: LeaseOwner,
    readonly uuid: string,
    readonly gpu: string,
    readonly maxPipelines: number,
    private holder: HolderInfo,
  ) {}

  get slots(): readonly number[] {
    return [...this.held.keys()];
  }

  get fds(): readonly number[] {
    return [...this.held.values()].map((h) => h.fd);
  }

  get isReleased(): boolean {
    return this.released;
  }

  holds(slot: number): boolean {
    return this.held.has(slot);
  }

  /** Record a slot just locked on `fd` and label it. `since` is stamped here: the lock knows when. */
  add(slot: number, fd: number): void {
    const since = new Date().toISOString();
    this.held.set(slot, { fd, since });
    this.label(slot, since);
  }

  setHolder(holder: HolderInfo): void {
    this.holder = holder;
    for (const [slot, { since }] of this.held) this.label(slot, since);
  }

  upgrade(options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal }): Promise<void> {
    if (this.released) return Promise.reject(new Error("upgrade() on a released GPU slot lease"));
    return this.owner.upgrade(this, options);
  }

  downgrade(): void {
    this.keep(1);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.pendingUpgrade?.cancel(new Error("the GPU slot lease was released while its upgrade waited"));
    this.keep(0);
  }

  /** Close all but the first `count` slots (the oldest first: the pipeline's own slot survives). */
  keep(count: number): void {
    const drop = [...this.held.entries()].slice(count);
    if (drop.length === 0) return;
    for (const [slot, { fd }] of drop) {
      this.held.delete(slot);
      closeSync(fd);
    }
    this.owner.freed(this.uuid);
  }

  private label(slot: number, since: string): void {
    const { pid, run, pipeline, step, host } = this.holder;
    writeHolderInfo(this.owner.dir, {
      uuid: this.uuid,
      gpu: this.gpu,
      slot,
      pid,
      run,
      pipeline,
      step,
      since,
      ...(host === undefined ? {} : { host }),
    });
  }
}
