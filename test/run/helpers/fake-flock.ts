/**
 * flock(2) in memory, for executor tests that need to decide who holds a slot: the real slot lock
 * (files, descriptors, gates, waiters) runs on top of it, only the kernel's part is played here.
 * Locks belong to a descriptor of a file (by device and inode) as they belong to an open file
 * description in the kernel; a descriptor closed since (or now naming another file) holds nothing.
 * `holdOutside` plays another process holding a file, until `releaseOutside`.
 */
import { fstatSync, statSync } from "node:fs";
import type { Flock, LockMode } from "../../../src/run/lock/flock.js";

interface Holder {
  /** The descriptor, or null for a holder outside this process. */
  fd: number | null;
  mode: LockMode;
}

export interface FakeFlock extends Flock {
  holdOutside(path: string, mode?: LockMode): void;
  releaseOutside(path: string): void;
}

export function createFakeFlock(): FakeFlock {
  const files = new Map<string, Holder[]>();
  const idOf = (st: { dev: number; ino: number }) => `${st.dev}:${st.ino}`;
  const fileOf = (fd: number): string | null => {
    try {
      return idOf(fstatSync(fd));
    } catch {
      return null;
    }
  };
  const live = (file: string): Holder[] => {
    // A descriptor closed since (or reused for another file) no longer holds this one.
    const holders = (files.get(file) ?? []).filter((h) => h.fd === null || fileOf(h.fd) === file);
    files.set(file, holders);
    return holders;
  };
  return {
    tryLock(fd, mode) {
      const file = fileOf(fd);
      if (file === null) throw new Error(`fake flock: descriptor ${fd} is not open`);
      const others = live(file).filter((h) => h.fd !== fd);
      if (others.some((h) => h.mode === "exclusive" || mode === "exclusive")) return false;
      files.set(file, [...others, { fd, mode }]);
      return true;
    },
    unlock(fd) {
      const file = fileOf(fd);
      if (file !== null)
        files.set(
          file,
          live(file).filter((h) => h.fd !== fd),
        );
    },
    holdOutside(path, mode = "exclusive") {
      const file = idOf(statSync(path));
      files.set(file, [...live(file), { fd: null, mode }]);
    },
    releaseOutside(path) {
      const file = idOf(statSync(path));
      files.set(
        file,
        live(file).filter((h) => h.fd !== null),
      );
    },
  };
}
