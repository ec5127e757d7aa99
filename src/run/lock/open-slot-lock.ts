/**
 * The slot lock the CLI uses: the cross-process flock lock (src/run/lock/). It loads koffi, so it
 * is imported only here, only when a selected pipeline needs a GPU.
 */
import type { SlotLock } from "./types.js";

/**
 * The lock over `dir`, checked before the run starts: the directory is trusted (created if need
 * be), and each GPU's lock file in `uuids` opens as one. Else the run would start its CPU steps
 * and stop at its first GPU slot (an attack found steps run, then "done", then the error).
 */
export async function openSlotLock(dir: string, uuids: readonly string[] = []): Promise<SlotLock> {
  const { createSlotLock } = await import("./index.js");
  const lock = createSlotLock({ dir });
  await lock.check(uuids);
  return lock;
}
