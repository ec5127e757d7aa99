/**
 * The slot lock the CLI uses: the cross-process flock lock (src/run/lock/). It loads koffi, so it
 * is imported only here, only when a selected pipeline needs a GPU.
 */
import type { SlotLock } from "./types.js";

export async function openSlotLock(dir: string): Promise<SlotLock> {
  const { createSlotLock } = await import("./index.js");
  return createSlotLock({ dir });
}
