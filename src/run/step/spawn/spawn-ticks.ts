/**
 * A step's start time in clock ticks since boot, as /proc/PID/stat's field 22 gives it, known from
 * the clock around its spawn instead of read back from /proc. The journal records it so that a
 * resume can tell the step from a later process given the same pid (process-group.ts). Reading
 * /proc/PID/stat right after posix_spawn cost 60 µs of CPU per step and, while the new program is
 * still being set up on the other core, waited up to a few hundred µs more (500 one-step
 * pipelines: 30–145 ms of the main thread, docs/decisions/0016-what-a-short-step-costs.md).
 *
 * The kernel stamps a new task with CLOCK_BOOTTIME inside the clone posix_spawn makes, and
 * /proc shows that stamp divided down to ticks (USER_HZ; a time namespace offsets both alike).
 * So when CLOCK_BOOTTIME read before and after the spawn falls in one tick, that tick is the
 * process's start; when the spawn straddles a tick boundary (about one spawn in ten), the
 * caller reads /proc as before.
 */
import { endianness } from "node:os";
import type { Libc } from "../../../libc/libc.js";

const CLOCK_BOOTTIME = 7;
/** glibc's _SC_CLK_TCK on Linux. */
const SC_CLK_TCK = 2;
const NS_PER_S = 1_000_000_000;

export interface SpawnTicks {
  /** CLOCK_BOOTTIME in ticks, or null where it cannot be read. */
  now(): number | null;
  /** The one tick a process started between two readings of now() began in, or null. */
  between(before: number | null, after: number | null): number | null;
}

const unknown: SpawnTicks = { now: () => null, between: () => null };

/** Where struct timespec is two little-endian 64-bit words (read below as such). */
const LP64_LITTLE_ENDIAN = new Set(["x64", "arm64", "riscv64", "loong64", "ppc64"]);

export function bindSpawnTicks(libc: Libc): SpawnTicks {
  if (!LP64_LITTLE_ENDIAN.has(process.arch) || endianness() !== "LE") return unknown;
  let clockGettime: (clock: number, ts: Buffer) => number;
  let hz: number;
  try {
    clockGettime = libc.func("int clock_gettime(int clock, void *ts)");
    hz = Number(libc.func<(name: number) => number | bigint>("long sysconf(int name)")(SC_CLK_TCK));
  } catch {
    return unknown;
  }
  // The kernel divides by NSEC_PER_SEC / USER_HZ only when that is whole (USER_HZ is 100 on
  // every Linux gpuplan runs on); any other rate is left to /proc.
  if (!Number.isSafeInteger(hz) || hz <= 0 || NS_PER_S % hz !== 0) return unknown;
  const nsPerTick = NS_PER_S / hz;
  // struct timespec on 64-bit Linux: tv_sec (int64), tv_nsec (long).
  const ts = Buffer.alloc(16);
  return {
    now() {
      if (clockGettime(CLOCK_BOOTTIME, ts) !== 0) return null;
      const seconds = ts.readUInt32LE(0) + ts.readUInt32LE(4) * 2 ** 32;
      const ns = ts.readUInt32LE(8);
      return seconds * hz + Math.floor(ns / nsPerTick);
    },
    between: (before, after) => (before !== null && before === after ? before : null),
  };
}
