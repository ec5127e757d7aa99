/* Generated from schemas/locks.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * Who holds it, from the holder's record; null when the record is missing or unreadable. Every string was written by some process: escape it before showing it.
 */
export type LockHolder = {
  /**
   * The process that holds the lock: the recorded gpuplan when /proc shows it holding the slot, else the visible process that does (a step that outlived gpuplan).
   */
  pid: number;
  run: string;
  pipeline: string;
  step: string | null;
  since: string;
  host?: string;
  /**
   * pid was seen holding the slot in /proc/PID/fdinfo; false when it cannot be checked (another user's process).
   */
  verified?: boolean;
  /**
   * The gpuplan pid the record names, when another process (its step) holds the slot now.
   */
  startedBy?: number;
} | null;

/**
 * What `gpuplan locks --json` prints: the lock directory and its mode, and per GPU (in index order) the slots held now, by whom, the memory they reserved, and how many wait.
 */
export interface GpuplanLocks {
  schema: "gpuplan/locks@2";
  /**
   * The lock directory (--lock-dir, GPUPLAN_LOCK_DIR, else /var/lib/gpuplan/locks when `gpuplan locks init` set it up, else /tmp/gpuplan-locks-<uid>).
   */
  dir: string;
  /**
   * shared: a root-owned directory every user's gpuplan uses (`gpuplan locks init`); private: this user's own, other users' gpuplans do not see it.
   */
  mode: "shared" | "private";
  /**
   * Every GPU with a lock file, in device index order.
   */
  gpus: LockGpu[];
  /**
   * Warm workers of running gpuplan processes (from warm.<pid>.<random>.json, or an older gpuplan's warm.<pid>.json, beside the slots or in their warm/ folder; entries of dead processes, and records not owned by root or by the user running the gpuplan they name, are left out).
   */
  workers: LockWarmWorker[];
}
export interface LockGpu {
  uuid: string;
  /**
   * Device id from a holder's record, when one is held.
   */
  gpu: string | null;
  /**
   * Pipelines in line for a slot or for the whole GPU, in every process.
   */
  waiters: number;
  /**
   * Memory the live holders reserved.
   */
  reservedBytes: number;
  /**
   * The GPU's memory budget as the holders' plans have it; null when nothing is held.
   */
  budgetBytes: number | null;
  /**
   * budgetBytes − reservedBytes − otherProcessesBytes; null when the budget is unknown.
   */
  freeBytes: number | null;
  /**
   * GPU memory a pipeline that does not hold the GPU could be admitted with now: 0 while an exclusive step holds it (its lock covers every slot; freeBytes counts only the step's own reservation, so it can be large while nothing is available), else freeBytes, 0 when that is below 0; null when the budget is unknown and no exclusive step holds it. A slot must be free as well: a GPU whose slots are all held admits nobody, whatever this says.
   */
  availableBytes: number | null;
  /**
   * GPU memory held by processes gpuplan did not start, as the driver reports it now (the processes no gpuplan holding a slot started, else the used memory less the live holders' reservations); admission counts it as taken. Absent when the driver cannot be read.
   */
  otherProcessesBytes?: number;
  slots: LockSlot[];
}
/**
 * A slot held now (free slots are not listed).
 */
export interface LockSlot {
  uuid: string;
  /**
   * Device id from the holder's record, when known.
   */
  gpu: string | null;
  slot: number;
  /**
   * From the kernel lock (always true: only held slots are listed).
   */
  held: boolean;
  holder: LockHolder;
  /**
   * The holder has every slot of the GPU (an exclusive step).
   */
  exclusive: boolean;
  /**
   * GPU memory the holder reserved (from its record; 0 when unknown).
   */
  reservedBytes: number;
}
export interface LockWarmWorker {
  /**
   * The worker's model key.
   */
  key: string;
  /**
   * Device id (cuda:N), or cpu.
   */
  gpu: string;
  /**
   * The worker process.
   */
  pid: number | null;
  /**
   * The gpuplan process that started it.
   */
  gpuplanPid: number;
  run: string;
  /**
   * Running a task now.
   */
  busy: boolean;
  /**
   * ISO 8601 time its last task ended; null while it loads or runs a task.
   */
  idleSince: string | null;
}
