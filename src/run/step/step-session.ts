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
import { readdirSync, readFileSync, statSync } from "node:fs";
import { isFromAnotherBoot } from "./boot-id.js";
import { isGroupAlive, processStartTicks, procStatFields } from "./process-group.js";

/** A live session member: its process group (zombies are left out: they hold no descriptor and run nothing). */
function memberGroup(fields: readonly string[] | null, sid: number): number | null {
  if (fields === null || fields[0] === "Z" || Number(fields[3]) !== sid) return null;
  const pgid = Number(fields[2]);
  return Number.isSafeInteger(pgid) && pgid > 0 ? pgid : null;
}

/** The pids in /proc, read once (a process that exits meanwhile is simply not found again). */
export function procPids(): string[] {
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

/**
 * Any live process in group `pgid`: one kill(2) when nothing of it is there at all; when something
 * answers, a pass over /proc decides, since kill(2) answers for a zombie too. An orphan of the step
 * waits as a zombie in its group until its new parent reaps it: at once under a usual init, after a
 * second and more under some sandboxes' PID 1, never under a container's PID 1 that does not wait
 * (or a subreaper that does not) — and a zombie runs nothing and holds no descriptor.
 */
export function isGroupLive(pgid: number): boolean {
  if (!isGroupAlive(pgid)) return false;
  const pids = procPids();
  // Without /proc (not Linux) the group is all there is to go by.
  if (pids.length === 0) return true;
  return pids.some((pid) => {
    const fields = procStatFields(pid);
    return fields !== null && fields[0] !== "Z" && Number(fields[2]) === pgid;
  });
}

/**
 * Any live process of session `sid`, from a pass over /proc (zombies left out, as isGroupLive
 * says why); without /proc, its leader's group (one kill(2)).
 */
export function isSessionAlive(sid: number): boolean {
  if (procPids().length === 0) return isGroupAlive(sid);
  return sessionGroups(sid).length > 0;
}

/** A step attempt as the journal recorded it, and the run it belongs to (its environment says so). */
export interface RecordedStep {
  /** The step's pid: its session's id. */
  pid: number;
  /** The leader's start time (clock ticks since boot), or null where unknown. */
  startTicks: number | null;
  /** The boot the pid and start time were recorded in (boot-id.ts); absent where unknown. */
  bootId?: string | null;
  run: string;
  pipeline: string;
  step: string;
  /**
   * The attempt's log files (log-names.ts attemptLogFiles): a process whose stdout or stderr is
   * one of them is the step's even when its environment no longer says so (`env -i`). Absent: the
   * environment alone decides.
   */
  logs?: readonly string[];
}

/**
 * Anything of the recorded step still runs. While a process holds the step's pid, it is the
 * step's leader if it started when the leader did (a session leader cannot leave its group or
 * session), and someone else otherwise: the kernel gave the pid anew only once nothing used it.
 * Once the pid is free of any process, a live process of session `pid` may be a step's process
 * that outlived its leader — the case to keep waiting for — or one of a later, unrelated session
 * whose leader was given the same pid and has since exited too (a login shell whose `nohup` job
 * lives on, another run's step). Start times cannot tell them apart (both started after the
 * step's leader), so the step's own environment does: every step starts with GPUPLAN_RUN,
 * GPUPLAN_PIPELINE and GPUPLAN_STEP, which what it starts inherits, and its stdout and stderr are
 * the attempt's log files, which survive an `env -i`. A process that started before the leader, or
 * that neither names the step nor writes to its logs, is not the step's; one whose environment
 * cannot be read (another user's) is counted, as it cannot be told apart. `sessions`
 * (liveSessions) saves the pass over /proc for a step whose session has no process at all.
 * A step recorded in another boot is gone whatever holds its pid now: pids and start ticks begin
 * again at each boot, and the environment marks would match a resume's own step started since.
 */
export function isStepSessionAlive(step: RecordedStep, sessions?: Set<number>): boolean {
  if (isFromAnotherBoot(step.bootId)) return false;
  if (isGroupAlive(step.pid)) {
    const leaderTicks = processStartTicks(step.pid);
    if (leaderTicks !== null && step.startTicks !== null) return leaderTicks === step.startTicks;
    // Without /proc (not Linux) the group is all there is to go by.
    if (procPids().length === 0) return true;
    // No recorded start time (a quick exit before it was read, or an edited journal naming pid 1):
    // whoever holds the pid is the step's only if its environment or logs say so, below. Taken as
    // the step's, an init or a login shell would have been waited for by --resume for ever.
  } else if (processStartTicks(step.pid) !== null) {
    // A process holds the pid outside a group of that id: the pid was given anew, the step is gone.
    return false;
  }
  if (sessions && !sessions.has(step.pid)) return false;
  const marks = [`GPUPLAN_RUN=${step.run}`, `GPUPLAN_PIPELINE=${step.pipeline}`, `GPUPLAN_STEP=${step.step}`];
  let logs: Set<string> | undefined;
  for (const pid of procPids()) {
    const fields = procStatFields(pid);
    if (memberGroup(fields, step.pid) === null) continue;
    const started = Number(fields?.[19]);
    if (step.startTicks !== null && Number.isSafeInteger(started) && started < step.startTicks) continue;
    if (hasEnvironment(pid, marks)) return true;
    // `env -i` (or any exec with a fresh environment) drops the marks but keeps the descriptors:
    // stdout or stderr still open on the attempt's own log file says whose process it is.
    logs ??= fileIdentities(step.logs ?? []);
    if (logs.size > 0 && writesTo(pid, logs)) return true;
  }
  return false;
}

/** `dev:ino` of each file that exists: a file is known by them whatever path leads to it. */
function fileIdentities(paths: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const path of paths) {
    try {
      const s = statSync(path);
      ids.add(`${s.dev}:${s.ino}`);
    } catch {
      // Never written (a quiet attempt) or removed: nothing can hold it open.
    }
  }
  return ids;
}

/** Whether process `pid`'s stdout or stderr is one of the files `ids` names. */
function writesTo(pid: string, ids: ReadonlySet<string>): boolean {
  for (const fd of [1, 2]) {
    try {
      const s = statSync(`/proc/${pid}/fd/${fd}`);
      if (ids.has(`${s.dev}:${s.ino}`)) return true;
    } catch {
      // Closed, gone meanwhile, or not ours to look at.
    }
  }
  return false;
}

/** The most of /proc/PID/environ looked at; a larger environment is taken as the step's. */
const MAX_ENVIRON_BYTES = 1024 * 1024;

/** Whether process `pid` started with every one of `marks` (NAME=value) in its environment; true when it cannot be read. */
function hasEnvironment(pid: string, marks: readonly string[]): boolean {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch (e) {
    // Gone meanwhile: nothing of anyone's. Not ours to read (another user's, EACCES): unknown.
    return (e as NodeJS.ErrnoException).code !== "ENOENT" && (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
  if (environ.length >= MAX_ENVIRON_BYTES) return true;
  const vars = new Set(environ.toString("utf8").split("\0"));
  return marks.every((m) => vars.has(m));
}
