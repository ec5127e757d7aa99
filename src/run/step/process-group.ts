/**
 * Is a step's process group still alive, and is it still the one gpuplan started? A step runs in
 * a group of its own (its pid is the group's id); the journal records the pid and, on Linux, the
 * process's start time, so that a resume after `kill -9` of gpuplan can tell a step still running
 * from a pid the kernel has since given to someone else.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { constants } from "node:os";
import type { Libc } from "../../libc/libc.js";

let kill: ((pid: number, signal: number) => number) | null = null;
let errno: (() => number) | null = null;

/**
 * kill(2) through the C library once it is loaded (posix-spawn.ts): a group that is gone is then a
 * return value, not an ErrnoException built with its stack (~10–35 µs, twice per step).
 */
export function signalThroughLibc(libc: Libc): void {
  kill = libc.func<(pid: number, signal: number) => number>("int kill(int pid, int sig)");
  errno = libc.errno;
}

/** Any process of group `pgid` alive (EPERM: one we may not signal, alive all the same). */
export function isGroupAlive(pgid: number): boolean {
  if (kill && errno) return kill(-pgid, 0) === 0 || errno() === constants.errno.EPERM;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

const statBuffer = Buffer.alloc(4096);

/** The process's start time in clock ticks since boot (/proc/PID/stat, field 22), or null. */
export function processStartTicks(pid: number): number | null {
  try {
    // One open, read and close (a step's stat line is a few hundred bytes): this runs once per step.
    const fd = openSync(`/proc/${pid}/stat`, "r");
    let stat: string;
    try {
      stat = statBuffer.toString("latin1", 0, readSync(fd, statBuffer, 0, statBuffer.length, 0));
    } finally {
      closeSync(fd);
    }
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/**
 * The group a step started as `pgid` (leader started at `startTicks`, when known) still has a
 * process. A pid in use as a group id is never given to a new process, so a group whose leader has
 * exited but whose members live on is still the step's; a leader with another start time is not.
 */
export function isStepGroupAlive(pgid: number, startTicks: number | null): boolean {
  if (!isGroupAlive(pgid)) return false;
  if (startTicks === null) return true;
  const now = processStartTicks(pgid);
  return now === null || now === startTicks;
}
