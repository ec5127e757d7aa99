/**
 * The holders of the held GPU slots, for telling gpuplan's processes apart (processes.ts): the
 * slot lock's own inspect(), which checks each slot with flock. Loaded only when a GPU has
 * processes, since it loads koffi.
 */
import type { ReadHolders, SlotHolder } from "./processes.js";

/** Holders in the lock directory given (the CLI's --lock-dir / GPUPLAN_LOCK_DIR), else the default. */
export function slotHoldersReader(lockDir: string | undefined): ReadHolders {
  return async () => {
    const { createSlotLock } = await import("../run/lock/index.js");
    const lock = createSlotLock(lockDir === undefined ? {} : { dir: lockDir });
    const holders: SlotHolder[] = [];
    for (const slot of await lock.inspect()) if (slot.held && slot.holder) holders.push(slot.holder);
    return holders;
  };
}
