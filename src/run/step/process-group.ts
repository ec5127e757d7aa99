/**
 * Is a step's process group still alive, and is it still the one gpuplan started? A step runs in
 * a group of its own (its pid is the group's id); the journal records the pid and, on Linux, the
 * process's start time, so that a resume after `kill -9` of gpuplan can tell a step still running
 * from a pid the kernel has since given to someone else.
 */
import { readFileSync } from "node:fs";

/** Any process of group `pgid` alive (EPERM: one we may not signal, alive all the same). */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The process's start time in clock ticks since boot (/proc/PID/stat, field 22), or null. */
export function processStartTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
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
