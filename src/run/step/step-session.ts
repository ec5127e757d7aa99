/**
 * A step's whole session, not only its process group. A step is started as a session leader (its
 * pid is its session's and its group's id, start-process.ts), and what it starts may move to a
 * group of its own inside that session — GNU `timeout` does (setpgid), so does `bash` with `set -m`
 * — and so escape a signal to the step's group while it keeps the inherited GPU slot descriptors.
 * The kernel has no kill-by-session, so the session's groups are found in /proc (field 6 of
 * /proc/PID/stat). That pass costs milliseconds (~7 ms over 120 processes), so it is made only
 * when a step is being ended or when its group is gone and whether anything of it lives matters
 * (a resume, a prune); a step that simply exits pays one kill(2) as before (step-process.ts).
 * A process that calls setsid itself leaves the session, and is out of reach (docs/guides/running.md).
 */
import { readdirSync } from "node:fs";
import { isGroupAlive, processStartTicks, procStatFields } from "./process-group.js";

/** A live session member: its process group (zombies are left out: they hold no descriptor and run nothing). */
function memberGroup(fields: readonly string[] | null, sid: number): number | null {
  if (fields === null || fields[0] === "Z" || Number(fields[3]) !== sid) return null;
  const pgid = Number(fields[2]);
  return Number.isSafeInteger(pgid) && pgid > 0 ? pgid : null;
}

/** The pids in /proc, read once (a process that exits meanwhile is simply not found again). */
function procPids(): string[] {
  try {
    return readdirSync("/proc").filter((name) => name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57);
  } catch {
    return [];
  }
}

/** The process groups with a live process in session `sid`, from one pass over /proc. */
export function sessionGroups(sid: number): number[] {
  const groups = new Set<number>();
  for (const pid of procPids()) {
    const pgid = memberGroup(procStatFields(pid), sid);
    if (pgid !== null) groups.add(pgid);
  }
  return [...groups];
}

/** Every session with a live process, from one pass over /proc: for checking many steps at once. */
export function liveSessions(): Set<number> {
  const sessions = new Set<number>();
  for (const pid of procPids()) {
    const fields = procStatFields(pid);
    const sid = Number(fields?.[3]);
    if (fields && fields[0] !== "Z" && Number.isSafeInteger(sid) && sid > 0) sessions.add(sid);
  }
  return sessions;
}

/**
 * Send `signal` to every process group of session `sid`: the leader's group first, then the others
 * found in /proc. A group that is gone meanwhile is skipped; its id cannot have been given to
 * someone else's group in between (the kernel keeps a pid while it names a group or a session).
 */
export function signalSession(sid: number, signal: NodeJS.Signals): void {
  for (const pgid of new Set([sid, ...sessionGroups(sid)])) {
    try {
      process.kill(-pgid, signal);
    } catch {
      // Gone already.
    }
  }
}

/** Any process of session `sid` alive: its leader's group (one kill(2)), else a pass over /proc. */
export function isSessionAlive(sid: number): boolean {
  return isGroupAlive(sid) || sessionGroups(sid).length > 0;
}

/**
 * Anything of the step that started as session `sid` (leader started at `startTicks`, when known)
 * still runs. While the leader lives its group does (a session leader cannot leave its group), and
 * a leader with another start time is someone else. Once the group is gone, any live process of
 * session `sid` is the step's: the kernel gives no new process a pid still in use as a session id.
 * `sessions` (liveSessions) saves the pass over /proc when many steps are asked about at once.
 */
export function isStepSessionAlive(sid: number, startTicks: number | null, sessions?: Set<number>): boolean {
  if (isGroupAlive(sid)) {
    if (startTicks === null) return true;
    const now = processStartTicks(sid);
    return now === null || now === startTicks;
  }
  return sessions ? sessions.has(sid) : sessionGroups(sid).length > 0;
}
