/**
 * Which boot of the machine this is. A recorded pid and start time (clock ticks since boot) name a
 * process only within the boot they were recorded in: after a reboot the kernel hands out the same
 * pids again, with start times as small as the old ones, so a journal records the boot id beside
 * them and a process recorded under another boot is gone (step-session.ts).
 */
import { closeSync, constants, openSync, readSync } from "node:fs";

/** The kernel's id of the current boot: a random UUID made anew at each boot. */
const BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id";

/** A UUID as the kernel prints it (lower-case hex); anything else is not trusted as a boot id. */
const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The file is 37 bytes; more than this means it is not the kernel's (a bind mount, a fake /proc). */
const MAX_BOOT_ID_BYTES = 64;

/** Whether `value` is a boot id as gpuplan records it. */
export const isBootId = (value: unknown): value is string => typeof value === "string" && BOOT_ID.test(value);

/**
 * The boot id in `path`, or null where there is none to trust: no such file (not Linux, a
 * container without it), unreadable, longer than a boot id, or not a UUID. Read with one bounded
 * read, so a FIFO or a device in its place (a container's own /proc) can neither hang nor flood gpuplan.
 */
export function readBootId(path: string = BOOT_ID_PATH): string | null {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO at the path opens without waiting for a writer (and reads nothing).
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(MAX_BOOT_ID_BYTES + 1);
    const n = readSync(fd, buffer, 0, buffer.length, null);
    if (n > MAX_BOOT_ID_BYTES) return null;
    const text = buffer.toString("latin1", 0, n).replace(/\n$/, "");
    return isBootId(text) ? text : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

let current: string | null | undefined;

/** This boot's id (read once per process: it cannot change while gpuplan runs), or null where unknown. */
export function currentBootId(): string | null {
  if (current === undefined) current = readBootId();
  return current;
}

/**
 * Whether a process recorded under `recorded` belongs to a boot that has ended. A record without a
 * boot id (an older gpuplan's), or a machine whose boot id cannot be read, cannot tell: false, and
 * the pid and start time decide as before.
 */
export function isFromAnotherBoot(recorded: string | null | undefined): boolean {
  if (!isBootId(recorded)) return false;
  const now = currentBootId();
  return now !== null && now !== recorded;
}

/** `{ bootId }` for a journal entry, or nothing where this boot's id is unknown (the field is optional). */
export function bootIdEntry(): { bootId?: string } {
  const bootId = currentBootId();
  return bootId === null ? {} : { bootId };
}
