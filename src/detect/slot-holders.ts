/**
 * The holders of the held GPU slots, for telling gpuplan's processes apart (processes.ts): the
 * slot lock's own inspect(), which checks each slot with flock. Loaded only when a GPU has
 * processes, since it loads koffi.
 */
import type { ReadHolders, SlotHolder } from "./processes.js";

/** Holders in the lock directory `env` names (GPUPLAN_LOCK_DIR, else the default). */
export function slotHoldersReader(env: NodeJS.ProcessEnv): ReadHolders {
  return async () => {
    const { createSlotLock, DEFAULT_LOCK_DIR } = await import("../run/lock/index.js");
    const lock = createSlotLock({ dir: env.GPUPLAN_LOCK_DIR || DEFAULT_LOCK_DIR });
    const holders: SlotHolder[] = [];
    for (const slot of await lock.inspect()) if (slot.held && slot.holder) holders.push(slot.holder);
    return holders;
  };
}
