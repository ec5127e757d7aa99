/**
 * The cross-process GPU slot lock. Each GPU (by UUID) has one lock file in the lock directory and
 * `maxPipelines` slots in it (byte ranges) and a memory budget. A running pipeline holds one slot
 * of its GPU and reserves its memory; an exclusive step holds every slot while it runs. Locks are
 * open-file-description locks: the kernel drops them when the last process holding the open file
 * description exits, so a lock can never outlive its holder (no stale locks, no cleanup).
 */
import type { LockGpu, LockHolder, LockSlot } from "../../schema-types/locks.js";

/**
 * Who holds a slot (`since`: ISO 8601 time it was taken); written to a small info file beside the
 * slot while it is held. The shape `gpuplan locks --json` shows, from schemas/locks.schema.json.
 */
export type HolderInfo = NonNullable<LockHolder>;

export interface SlotRequest {
  /** The GPU's UUID: slot files are named by UUID so indices can't be confused across processes. */
  uuid: string;
  /** Device id, for messages and info files (cuda:3). */
  gpu: string;
  /** Slots the GPU has (from the plan's registry). */
  maxPipelines: number;
  /** GPU memory this pipeline reserves while it holds the slot (0: none counted). */
  reservationBytes?: number;
  /** The GPU's memory budget: admitted only while the live holders' reservations and this one fit. */
  budgetBytes?: number | null;
  /**
   * GPU memory that processes gpuplan did not start hold on this GPU now (a recent reading;
   * 0 when unknown): taken, as far as admission goes, whenever anyone holds a slot of the GPU.
   * Read under the GPU's mutex, so it must answer at once.
   */
  foreignBytes?: () => number;
  holder: HolderInfo;
  /** false: fail at once with GpuBusyError when no slot is free (`--no-wait`). */
  wait: boolean;
  /** Give up with LockTimeoutError after this long (`--lock-timeout`); undefined = forever. */
  timeoutMs?: number;
  /** Abort waiting (SIGINT): rejects with an AbortError. */
  signal?: AbortSignal;
}

export interface SlotLease {
  uuid: string;
  gpu: string;
  /** Slot numbers held now (one normally; all while exclusive). */
  readonly slots: readonly number[];
  /** The open, locked file descriptor (one per lease, whatever the slots): pass it to step
   * processes (stdio fds ≥ 3) so a step keeps its slots even if gpuplan dies. */
  readonly fds: readonly number[];
  /** Update the holder info (e.g. the current step). */
  setHolder(holder: HolderInfo): void;
  /** Take every other slot of the GPU too (exclusive step). Waiters are served writer-first. */
  upgrade(options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /** Give back every slot but one. */
  downgrade(): void;
  /** Give back every slot (closes the descriptors). Idempotent. */
  release(): void;
}

export interface SlotLock {
  /** The lock directory in use (GPUPLAN_LOCK_DIR or the default). */
  readonly dir: string;
  acquire(request: SlotRequest): Promise<SlotLease>;
  /** The held slots of every GPU in the lock directory, now (for busy messages and tests). */
  inspect(): Promise<SlotState[]>;
}

/** One held slot as `gpuplan locks --json` shows it (schemas/locks.schema.json). */
export type SlotState = LockSlot;

/** One GPU as `gpuplan locks --json` shows it: its holders, waiters and memory. */
export type GpuState = LockGpu;

export class GpuBusyError extends Error {
  override name = "GpuBusyError";
  constructor(
    readonly gpu: string,
    readonly holders: HolderInfo[],
  ) {
    super(`GPU ${gpu} is busy`);
  }
}

export class LockTimeoutError extends Error {
  override name = "LockTimeoutError";
  constructor(
    readonly gpu: string,
    readonly waitedMs: number,
    readonly holders: HolderInfo[],
  ) {
    super(`timed out after ${waitedMs} ms waiting for GPU ${gpu}`);
  }
}
