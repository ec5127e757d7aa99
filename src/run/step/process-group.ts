/**
 * Is a step's process group still alive, and when did a process start? A step runs in a group of
 * its own (its pid is the group's id); the journal records the pid and, on Linux, the process's
 * start time, so that a resume after `kill -9` of gpuplan can tell a step still running from a pid
 * the kernel has since given to someone else (step-session.ts).
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

/**
 * The fields of /proc/PID/stat after the command name — state, ppid, pgrp, session, … (so field
 * N of proc(5) is index N - 3) — or null when the process is gone or the line is not readable.
 */
export function procStatFields(pid: number | string): string[] | null {
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
    const close = stat.lastIndexOf(")");
    return close < 0 ? null : stat.slice(close + 2).split(" ");
  } catch {
    return null;
  }
}

/** The process's start time in clock ticks since boot (/proc/PID/stat, field 22), or null. */
export function processStartTicks(pid: number): number | null {
  const ticks = Number(procStatFields(pid)?.[19]);
  return Number.isSafeInteger(ticks) ? ticks : null;
}
