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
  // `op` names the call in an error, with the range read back from the struct (made only then).
  const call = (fd: number, cmd: number, arg: Buffer, op: string): number => {
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
        `fcntl(${fd}, ${op} ${readInt64(arg, 8)}+${readInt64(arg, 16)})`,
        `${errnoCode(errno)} (${errno})`,
      );
    }
  };
  // One struct for every call: the calls are synchronous, and a run makes ~9 per pipeline, where
  // a fresh Buffer and three BigInts each were a measurable part of the GPU path's cost (#17).
  const arg = Buffer.alloc(STRUCT_FLOCK_SIZE);
  return {
    tryLock(fd, start, length, mode) {
      fillFlock(arg, mode === "write" ? F_WRLCK : F_RDLCK, start, length);
      return call(fd, F_OFD_SETLK, arg, mode === "write" ? "F_OFD_SETLK write" : "F_OFD_SETLK read") === 0;
    },
    unlock(fd, start, length) {
      fillFlock(arg, F_UNLCK, start, length);
      call(fd, F_OFD_SETLK, arg, "F_OFD_SETLK unlock");
    },
    conflict(fd, start, length) {
      fillFlock(arg, F_WRLCK, start, length);
      call(fd, F_OFD_GETLK, arg, "F_OFD_GETLK");
      const type = arg.readInt16LE(0);
      if (type === F_UNLCK) return null;
      return {
        start: readInt64(arg, 8),
        // 0 means "to the end of the file and beyond".
        length: readInt64(arg, 16) || Number.MAX_SAFE_INTEGER,
        mode: type === F_WRLCK ? "write" : "read",
      };
    },
  };
}

/** struct flock for [start, start+length) (offsets below 2^53: the lock file's layout is). */
function fillFlock(b: Buffer, type: number, start: number, length: number): void {
  b.fill(0);
  b.writeInt16LE(type, 0);
  b.writeInt16LE(0, 2); // SEEK_SET
  writeInt64(b, 8, start);
  writeInt64(b, 16, length);
}

const TWO_32 = 2 ** 32;

function writeInt64(b: Buffer, at: number, n: number): void {
  b.writeUInt32LE(n % TWO_32, at);
  b.writeUInt32LE(Math.floor(n / TWO_32), at + 4);
}

/** An off_t the kernel wrote: exact up to 2^53, which the layout's offsets stay under. */
function readInt64(b: Buffer, at: number): number {
  return b.readInt32LE(at + 4) * TWO_32 + b.readUInt32LE(at);
}
