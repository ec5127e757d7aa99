/**
 * Who holds what, read without taking anything: each slot is probed with a non-blocking
 * LOCK_SH on a fresh open file description. flock locks belong to the open file description,
 * not the process, so the probe conflicts with a lock this very process holds on another
 * descriptor and reports it correctly. A probe that succeeds holds the slot for a few
 * microseconds; an acquirer that collides with it just sees the slot as busy for one try.
 */
import { closeSync, readdirSync } from "node:fs";
import type { Flock } from "./flock.js";
import { readHolderInfo, toHolder } from "./holder-info.js";
import { openExisting, parseSlotFile, slotPath } from "./lock-dir.js";
import type { HolderInfo, SlotState } from "./types.js";

/** Whether some open file description holds a lock on the file (false when it does not exist). */
function isLocked(flock: Flock, path: string): boolean {
  const fd = openExisting(path);
  if (fd === null) return false;
  try {
    if (!flock.tryLock(fd, "shared")) return true;
    flock.unlock(fd);
    return false;
  } finally {
    closeSync(fd);
  }
}

/** The slot numbers that have a lock file for this GPU (slot files are never deleted). */
export function slotFilesOf(dir: string, uuid: string): number[] {
  return listSlotFiles(dir)
    .filter((f) => f.uuid === uuid)
    .map((f) => f.slot);
}

/** Every slot of every GPU in the directory, sorted by GPU UUID then slot. */
export function inspectDir(flock: Flock, dir: string): SlotState[] {
  return listSlotFiles(dir)
    .sort((a, b) => (a.uuid === b.uuid ? a.slot - b.slot : a.uuid < b.uuid ? -1 : 1))
    .map(({ uuid, slot }) => slotState(flock, dir, uuid, slot));
}

/** The distinct holders of a GPU's held slots (an exclusive holder appears once). */
export function holdersOf(
  flock: Flock,
  dir: string,
  uuid: string,
  except: ReadonlySet<number> = new Set(),
): HolderInfo[] {
  const seen = new Map<string, HolderInfo>();
  for (const slot of slotFilesOf(dir, uuid).sort((a, b) => a - b)) {
    if (except.has(slot)) continue;
    const holder = slotState(flock, dir, uuid, slot).holder;
    if (holder) seen.set(`${holder.pid}\0${holder.run}\0${holder.pipeline}\0${holder.host ?? ""}`, holder);
  }
  return [...seen.values()];
}

function slotState(flock: Flock, dir: string, uuid: string, slot: number): SlotState {
  // Read the label before probing: a label read after a free probe could belong to a new holder.
  const info = readHolderInfo(dir, uuid, slot);
  const held = isLocked(flock, slotPath(dir, uuid, slot));
  return { uuid, gpu: info?.gpu ?? null, slot, held, holder: held && info ? toHolder(info) : null };
}

function listSlotFiles(dir: string): { uuid: string; slot: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => parseSlotFile(name) ?? []);
}
