/**
 * The slots of one GPU that one pipeline holds, through one open file description of the GPU's
 * lock file (so a lease needs one descriptor, however many slots it holds). The descriptor is the
 * lock: it is closed, never unlocked, when the lease ends, because a step process that inherited
 * it shares the description, and an unlock would free the slot under the running step. Closing
 * only drops gpuplan's reference; the kernel frees the slot (and so its memory reservation) when
 * the last process holding it lets go.
 */
import { closeSync } from "node:fs";
import type { GpuFile } from "./gpu-file.js";
import { writeRecord } from "./holder-info.js";
import type { HolderInfo, SlotLease } from "./types.js";

export interface LeaseOwner {
  upgrade(lease: Lease, options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /** Slots of this GPU were freed in this process: local waiters may go now. */
  freed(uuid: string): void;
}

export class Lease implements SlotLease {
  /** The slot this lease holds (null: none yet, or given up while an upgrade waits). */
  slot: number | null = null;
  exclusive = false;
  private since = "";
  private released = false;
  /** Set while an upgrade waits, so that release() can cancel it. */
  pendingUpgrade: { cancel(error: Error): void } | undefined;

  constructor(
    private readonly owner: LeaseOwner,
    readonly file: GpuFile,
    public fd: number,
    readonly gpu: string,
    readonly maxPipelines: number,
    readonly reservationBytes: number,
    readonly budgetBytes: number | null,
    /** What processes gpuplan did not start hold on the GPU now (SlotRequest.foreignBytes). */
    readonly foreignBytes: () => number,
    private holder: HolderInfo,
  ) {}

  get uuid(): string {
    return this.file.uuid;
  }

  get slots(): readonly number[] {
    if (this.slot === null) return [];
    if (!this.exclusive) return [this.slot];
    return Array.from({ length: this.maxPipelines }, (_, i) => i);
  }

  get fds(): readonly number[] {
    return this.slot === null || this.released ? [] : [this.fd];
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** The slot was just locked on this lease's descriptor (under the GPU's mutex): label it. */
  took(slot: number): void {
    this.slot = slot;
    this.since = new Date().toISOString();
    this.label();
  }

  /** Every slot was just locked (under the mutex). */
  tookAll(): void {
    this.exclusive = true;
    this.label();
  }

  /** A new holder is written to the lock file; the same one again (the step it was taken for) is not. */
  setHolder(holder: HolderInfo): void {
    const same =
      holder.pid === this.holder.pid &&
      holder.run === this.holder.run &&
      holder.pipeline === this.holder.pipeline &&
      holder.step === this.holder.step &&
      holder.host === this.holder.host;
    this.holder = holder;
    if (!same) this.label();
  }

  upgrade(options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal }): Promise<void> {
    if (this.released) return Promise.reject(new Error("upgrade() on a released GPU slot lease"));
    return this.owner.upgrade(this, options);
  }

  /** Back to the lease's own slot. (The step that had the GPU has ended; the kernel splits the range.) */
  downgrade(): void {
    if (!this.exclusive || this.slot === null) return;
    this.file.keepOnly(this.fd, this.slot);
    this.exclusive = false;
    this.label();
    this.owner.freed(this.uuid);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.pendingUpgrade?.cancel(new Error("the GPU slot lease was released while its upgrade waited"));
    this.slot = null;
    this.exclusive = false;
    closeSync(this.fd);
    this.owner.freed(this.uuid);
  }

  private label(): void {
    if (this.slot === null || this.released) return;
    const { pid, run, pipeline, step, host } = this.holder;
    const record = {
      uuid: this.uuid,
      gpu: this.gpu,
      slot: this.slot,
      pid,
      run,
      pipeline,
      step,
      since: this.since,
      ...(host === undefined ? {} : { host }),
      reservedBytes: this.reservationBytes,
      budgetBytes: this.budgetBytes,
      exclusive: this.exclusive,
      maxPipelines: this.maxPipelines,
    };
    writeRecord(this.fd, record);
    // An exclusive holder's lock starts at slot 0, where a reader of the range looks for its record.
    if (this.exclusive && this.slot !== 0) writeRecord(this.fd, { ...record, slot: 0 });
  }
}
