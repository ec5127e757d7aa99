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
   * Reserved for warm workers.
   *
   * @maxItems 0
   */
  workers: [];
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
