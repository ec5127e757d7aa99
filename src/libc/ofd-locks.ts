/**
 * Linux open-file-description byte-range locks (fcntl F_OFD_SETLK / F_OFD_GETLK) through koffi.
 * Unlike POSIX record locks they belong to the open file description, not the process: two
 * descriptors opened separately conflict even inside one process, a child that inherits the
 * descriptor shares the lock (as with flock), and the kernel drops it when the last descriptor
 * closes. Unlike flock they lock byte ranges, so one file per GPU carries every slot.
 * Only the non-blocking form is bound: F_OFD_SETLKW would stall the event loop (waiting polls).
 *
 * x86_64 / aarch64 `struct flock` (32 bytes): l_type i16 @0, l_whence i16 @2, l_start i64 @8,
 * l_len i64 @16, l_pid i32 @24 (always -1 for an OFD lock: the kernel cannot name one process).
 */
import { constants } from "node:os";
import { VendorError } from "../problems/errors.js";
import { errnoCode, type Libc, loadLibc } from "./libc.js";

const F_OFD_GETLK = 36;
const F_OFD_SETLK = 37;
const F_RDLCK = 0;
const F_WRLCK = 1;
const F_UNLCK = 2;
const STRUCT_FLOCK_SIZE = 32;

type RangeMode = "read" | "write";

/** A lock another open file description holds (inclusive start, byte count). */
export interface HeldRange {
  start: number;
  length: number;
  mode: RangeMode;
}

export interface OfdLocks {
  /** Lock [start, start+length) on fd's open file description without waiting; false when another conflicts. */
  tryLock(fd: number, start: number, length: number, mode: RangeMode): boolean;
  /** Drop this open file description's locks over the range (also for children sharing it). */
  unlock(fd: number, start: number, length: number): void;
  /** One lock of another open file description that overlaps the range, or null (a write probe). */
  conflict(fd: number, start: number, length: number): HeldRange | null;
}

let loading: Promise<OfdLocks> | undefined;

/** The process-wide binding (src/libc's one library handle, bound once). */
export function loadOfdLocks(): Promise<OfdLocks> {
  loading ??= bind();
  return loading;
}

type Fcntl = (fd: number, cmd: number, type: string, arg: Buffer) => number;

async function bind(): Promise<OfdLocks> {
  let fcntl: Fcntl;
  let libc: Libc;
  try {
    libc = await loadLibc();
    fcntl = libc.func<Fcntl>("int fcntl(int fd, int cmd, ...)");
  } catch (e) {
    throw new VendorError(
      "cannot use fcntl(2) for the GPU slot lock",
      "lock-unavailable",
      "koffi.load(libc).func(fcntl)",
      e instanceof Error ? e.message : String(e),
    );
  }
  const { EAGAIN, EACCES, EINTR, EINVAL } = constants.errno;
  const call = (fd: number, cmd: number, arg: Buffer, what: string): number => {
    for (;;) {
      if (fcntl(fd, cmd, "void *", arg) === 0) return 0;
      const errno = libc.errno();
      if (errno === EINTR) continue;
      if (cmd === F_OFD_SETLK && (errno === EAGAIN || errno === EACCES)) return errno;
      throw new VendorError(
        errno === EINVAL
          ? "the kernel has no open-file-description locks (Linux 3.15 or later is needed)"
          : "fcntl(2) failed on a GPU lock file",
        "lock-failed",
        `fcntl(${fd}, ${what})`,
        `${errnoCode(errno)} (${errno})`,
      );
    }
  };
  return {
    tryLock(fd, start, length, mode) {
      const arg = flockStruct(mode === "write" ? F_WRLCK : F_RDLCK, start, length);
      return call(fd, F_OFD_SETLK, arg, `F_OFD_SETLK ${mode} ${start}+${length}`) === 0;
    },
    unlock(fd, start, length) {
      call(fd, F_OFD_SETLK, flockStruct(F_UNLCK, start, length), `F_OFD_SETLK unlock ${start}+${length}`);
    },
    conflict(fd, start, length) {
      const arg = flockStruct(F_WRLCK, start, length);
      call(fd, F_OFD_GETLK, arg, `F_OFD_GETLK ${start}+${length}`);
      const type = arg.readInt16LE(0);
      if (type === F_UNLCK) return null;
      return {
        start: Number(arg.readBigInt64LE(8)),
        // 0 means "to the end of the file and beyond".
        length: Number(arg.readBigInt64LE(16)) || Number.MAX_SAFE_INTEGER,
        mode: type === F_WRLCK ? "write" : "read",
      };
    },
  };
}

function flockStruct(type: number, start: number, length: number): Buffer {
  const b = Buffer.alloc(STRUCT_FLOCK_SIZE);
  b.writeInt16LE(type, 0);
  b.writeInt16LE(0, 2); // SEEK_SET
  b.writeBigInt64LE(BigInt(start), 8);
  b.writeBigInt64LE(BigInt(length), 16);
  return b;
}
