/**
 * flock(2) through koffi, loaded on first use so that `gpuplan --help` and `compile` never load a
 * native module (STYLE.md §2). Only the non-blocking form is exposed: a blocking flock would stall
 * the event loop (or, as a koffi async call, pin a libuv pool thread that cannot be cancelled on
 * timeout or abort), so waiting is done by polling in waiters.ts.
 */
import { constants } from "node:os";
import { errnoCode, type Libc, loadLibc } from "../../libc/libc.js";
import { VendorError } from "../../problems/errors.js";

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

export type LockMode = "shared" | "exclusive";

export interface Flock {
  /** Take the lock on this open file description without waiting; false when another one holds it. */
  tryLock(fd: number, mode: LockMode): boolean;
  /** Drop this descriptor's lock. Never use on a slot fd a child may share: it would free the child's slot. */
  unlock(fd: number): void;
}

let loading: Promise<Flock> | undefined;

/** The process-wide flock binding (src/libc's one library handle, bound once). */
export function loadFlock(): Promise<Flock> {
  loading ??= bind();
  return loading;
}

async function bind(): Promise<Flock> {
  let flock: (fd: number, operation: number) => number;
  let libc: Libc;
  try {
    libc = await loadLibc();
    flock = libc.func("int flock(int fd, int operation)");
  } catch (e) {
    throw new VendorError(
      "cannot use flock(2) for the GPU slot lock",
      "flock-unavailable",
      "koffi.load(libc).func(flock)",
      e instanceof Error ? e.message : String(e),
      "the GPU slot lock needs a libc with flock(2) (Linux or macOS)",
    );
  }
  const { EWOULDBLOCK, EAGAIN, EINTR } = constants.errno;
  return {
    tryLock(fd, mode) {
      const operation = (mode === "shared" ? LOCK_SH : LOCK_EX) | LOCK_NB;
      for (;;) {
        if (flock(fd, operation) === 0) return true;
        const errno = libc.errno();
        if (errno === EWOULDBLOCK || errno === EAGAIN) return false;
        if (errno === EINTR) continue;
        throw new VendorError(
          "flock(2) failed on a GPU slot lock file",
          "flock-failed",
          `flock(${fd}, ${operation})`,
          errnoName(errno),
        );
      }
    },
    unlock(fd) {
      flock(fd, LOCK_UN);
    },
  };
}

function errnoName(errno: number): string {
  const code = errnoCode(errno);
  return code.startsWith("E") ? `${code} (${errno})` : code;
}
