/* Generated from schemas/locks.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

export type LockHolder = {
  pid: number;
  run: string;
  pipeline: string;
  step: string | null;
  since: string;
  host?: string;
} | null;

/**
 * What `gpuplan locks --json` prints: every GPU slot in the lock directory, held or free, and who holds it.
 */
export interface GpuplanLocks {
  schema: "gpuplan/locks@1";
  /**
   * The lock directory (GPUPLAN_LOCK_DIR or /tmp/gpuplan-locks).
   */
  dir: string;
  slots: LockSlot[];
  /**
   * Warm workers of running gpuplan processes (from warm.<pid>.json beside the slots; entries of dead processes are left out).
   */
  workers: LockWarmWorker[];
}
export interface LockSlot {
  uuid: string;
  /**
   * Device id from the holder info, when known.
   */
  gpu: string | null;
  slot: number;
  /**
   * From the kernel lock, not from the info file.
   */
  held: boolean;
  holder: LockHolder;
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
