/**
 * One step attempt as a child process: argv (or `/bin/sh -c` with shell), its own process group
 * (detached) so a timeout or Ctrl-C reaches grandchildren too, stdout and stderr into their log
 * files (written by the step itself, step-output.ts) and, line by line, to the caller; the locked
 * slot descriptors are passed as extra stdio entries so the step holds its GPU slot for as long
 * as it (or anything it started) lives, even if gpuplan dies. When it exits, what it left running
 * in its group is ended too. A step is ended — timeout, interrupt, leftovers — through its whole
 * session (step-session.ts): what moved to a group of its own inside it is ended too.
 * How the process is started (posix_spawn or child_process) is spawn/start-process.ts's business.
 */
import { closeSync, writeSync } from "node:fs";
import { constants } from "node:os";
import { dirname } from "node:path";
import { STOP_SIGNALS } from "../interrupt-signals.js";
import { type LongTimeout, setLongTimeout } from "../long-timeout.js";
import { isGroupAlive } from "./process-group.js";
import { type SpawnMethod, startProcess } from "./spawn/start-process.js";
import { ensureDir, follow, OutputFile, openOutputInFolder, unfollow } from "./step-output.js";
import { isGroupLive, isSessionAlive, signalSession } from "./step-session.js";

export interface StepProcessOptions {
  argv: readonly string[];
  shell: boolean;
  cwd: string;
  env: Record<string, string>;
  /** Where the step's stdout goes. */
  logPath: string;
  /** Where its stderr goes. */
  stderrPath: string;
  /** Locked slot descriptors; the child gets them as fds 3, 4, … */
  inheritFds?: readonly number[];
  /** CPUs to pin the step to (its GPU's local CPUs), or null. */
  cpus?: readonly number[] | null;
  /** How to start it (start-process.ts); default `auto`. */
  spawn?: SpawnMethod;
  timeoutMs?: number | null;
  /** SIGTERM → SIGKILL delay for timeouts and interrupts. */
  killGraceMs: number;
  /** Aborting forwards `interruptSignal` to the step's process group. */
  signal?: AbortSignal;
  interruptSignal?: () => NodeJS.Signals;
  /** Aborting kills the step's process group at once (a second Ctrl-C). */
  killNow?: AbortSignal;
  onLine?: (stream: "stdout" | "stderr", line: string) => void;
  /**
   * Called once the process has started, with its pid (its process group's id too) and, where the
   * starter knows it, its start time in clock ticks since boot (else null: read it from /proc).
   */
  onStart?: (pid: number, startTicks: number | null) => void;
  /** How many stderr lines to keep for classification and the failure report. */
  tailLines?: number;
}

export interface StepProcessResult {
  pid: number | null;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  interrupted: boolean;
  stderrTail: string[];
  durationMs: number;
  spawnError?: string;
}

/**
 * gpuplan's own line in a step's stderr log. The disk may refuse it (full, over quota, `ulimit
 * -f`): the journal and the events say the same, so the line is let go rather than thrown — a
 * throw here would leave the step unrecorded and, for leftovers, still running.
 */
function noteInLog(fd: number, text: string): void {
  try {
    writeSync(fd, text);
  } catch {
    // Said by the step's record instead (spawnError, the leftovers' end).
  }
}

export async function runStepProcess(options: StepProcessOptions): Promise<StepProcessResult> {
  const started = performance.now();
  // Enough for the exception a step ended with, chained causes included (classify-failure.ts);
  // reports show the last few.
  const tailLimit = options.tailLines ?? 400;
  const ended = (fields: Partial<StepProcessResult>): StepProcessResult => ({
    pid: null,
    exitCode: null,
    signal: null,
    timedOut: false,
    interrupted: false,
    stderrTail: [],
    durationMs: Math.round(performance.now() - started),
    ...fields,
  });
  let outFd: number;
  let errFd: number;
  try {
    ensureDir(dirname(options.logPath));
    ensureDir(dirname(options.stderrPath));
    outFd = openOutputInFolder(options.logPath);
    try {
      errFd = openOutputInFolder(options.stderrPath);
    } catch (e) {
      closeSync(outFd);
      throw e;
    }
  } catch (e) {
    // A full disk or an unwritable run directory: the step cannot start, and says why.
    const error = e as NodeJS.ErrnoException;
    // ENOENT here: the run folder itself is gone (openOutputInFolder makes logs/ again, not it).
    const why =
      error.code === "ELOOP"
        ? "it is a symbolic link"
        : error.code === "ENOENT"
          ? "its run folder was removed (ENOENT)"
          : (error.code ?? error.message);
    const path = error.code === "ENOENT" ? options.logPath : (error.path ?? options.logPath);
    return ended({
      spawnError: `cannot open its log file ${path}: ${why}`,
    });
  }
  const onLine = options.onLine;
  const out = new OutputFile(options.logPath, outFd, onLine ? (line) => onLine("stdout", line) : null);
  const err = new OutputFile(options.stderrPath, errFd, onLine ? (line) => onLine("stderr", line) : null);
  const command = options.shell ? "/bin/sh" : options.argv[0]!;
  const args = options.shell ? ["-c", options.argv.join(" ")] : options.argv.slice(1);
  const start = await startProcess({
    command,
    args,
    cwd: options.cwd,
    env: options.env,
    stdout: out.fd,
    stderr: err.fd,
    inheritFds: options.inheritFds ?? [],
    cpus: options.cpus ?? null,
    ...(options.spawn && { spawn: options.spawn }),
  }).catch((e: unknown) => {
    out.close(false);
    err.close(false);
    throw e;
  });
  if ("error" in start) {
    // A failed step keeps both files, so the paths in its report exist.
    noteInLog(err.fd, `gpuplan: could not start ${command}: ${start.error}\n`);
    out.close(false);
    err.close(false);
    return ended({ spawnError: start.error });
  }
  const child = start.process;
  options.onStart?.(child.pid, child.startTicks ?? null);
  if (onLine) {
    follow(out);
    follow(err);
  }
  let timedOut = false;
  let interrupted = false;
  let killTimer: LongTimeout | undefined;
  let killed = false;
  const kill = () => {
    killed = true;
    signalSession(child.pid, "SIGKILL");
  };
  const terminate = (signal: NodeJS.Signals) => {
    signalSession(child.pid, signal);
    killTimer ??= setLongTimeout(kill, options.killGraceMs).unref();
  };
  const timeout =
    options.timeoutMs != null && options.timeoutMs > 0
      ? setLongTimeout(() => {
          timedOut = true;
          terminate("SIGTERM");
        }, options.timeoutMs)
      : undefined;
  // Once the step's process has exited (and a stop signal that ended it had its moment, below),
  // or its timeout has fired, its ending is its own: an interrupt only hurries the end of what is
  // left of it, and the attempt stays ok, failed or timed out — or --resume would run a step that
  // succeeded again, and a timeout would not be said to be one.
  let exited = false;
  const interruptCounts = () => !exited && !timedOut;
  const onAbort = () => {
    if (interruptCounts()) interrupted = true;
    terminate(options.interruptSignal?.() ?? "SIGINT");
  };
  if (options.signal?.aborted) queueMicrotask(onAbort);
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const onKillNow = () => {
    if (interruptCounts()) interrupted = true;
    kill();
  };
  if (options.killNow?.aborted) queueMicrotask(onKillNow);
  else options.killNow?.addEventListener("abort", onKillNow, { once: true });

  const { exitCode, signal } = await child.exit;
  // An exited step does not time out while its leftovers are ended.
  timeout?.clear();
  // A scheduler stops a whole job at once (Slurm's node failure, scancel, a time limit): the step
  // may be reaped before gpuplan's own handler for that signal has run, and would read as failed
  // (exit 143) where it was interrupted with the run. A step that a stop signal ended waits a
  // moment for the run's interrupt; onAbort marks it interrupted if it comes.
  if (!interrupted && !timedOut && options.signal && endedByStopSignal(exitCode, signal))
    await abortedWithin(options.signal, STOP_SIGNAL_GRACE_MS);
  exited = true;
  // What the step left in its process group ends with it — SIGTERM, SIGKILL after the grace
  // period — as a cluster scheduler ends a job's processes at its end: nothing of it keeps the
  // GPU slot (the inherited lock descriptors) or writes to its log after it is reported.
  const leftBehind = !timedOut && !interrupted && isGroupLive(child.pid);
  if (leftBehind) {
    noteInLog(err.fd, "gpuplan: the step exited with processes of its group still running; ending them\n");
    terminate("SIGTERM");
  }
  // A killed step is done when its whole session is: grandchildren get the grace period too,
  // then SIGKILL (the kill timer), so nothing of it outlives the report.
  if (timedOut || interrupted || leftBehind)
    await sessionGone(child.pid, options.killGraceMs + 2000, () => killed && kill());
  // Once the session is gone its id may be reused: no late SIGKILL for someone else's.
  if (killTimer && !isSessionAlive(child.pid)) killTimer.clear();
  options.signal?.removeEventListener("abort", onAbort);
  options.killNow?.removeEventListener("abort", onKillNow);
  unfollow(out);
  unfollow(err);
  out.finish();
  err.finish();
  const failed = exitCode !== 0 || signal !== null || timedOut || interrupted;
  const stderrTail = failed ? err.tailLines(tailLimit) : [];
  // An ok step that printed nothing leaves no empty files behind, unless something it started
  // still runs (it escaped the SIGKILL: a zombie) and may yet write to them. A failed step keeps
  // both, so its report's paths exist.
  const drop = !failed && !leftBehind && !isGroupLive(child.pid);
  out.close(drop);
  err.close(drop);
  return ended({ pid: child.pid, exitCode, signal, timedOut, interrupted, stderrTail });
}

/**
 * Resolves when no process of the session is left (the kill timer ends stragglers), or after
 * limitMs. `again` runs at each look: once the SIGKILL has gone out, it goes to any group the
 * session made since.
 */
async function sessionGone(sid: number, limitMs: number, again: () => void): Promise<void> {
  // Bounded, should /proc be unreadable and a zombie the only thing left (kill(2) answers for one).
  const deadline = performance.now() + limitMs;
  for (let look = 1; performance.now() < deadline; look++) {
    // The leader's group is looked at every 25 ms with one kill(2). That answers for a zombie too —
    // an orphan of the step that its new parent has not reaped yet, or never will (a container's
    // PID 1 that does not wait) — so the pass over /proc, which leaves zombies out, decides every
    // 100 ms, and whenever the group is gone.
    const group = isGroupAlive(sid);
    if ((!group || look % 4 === 0) && !isSessionAlive(sid)) return;
    await new Promise((r) => setTimeout(r, group ? 25 : 100));
    again();
  }
}

/** How long a step a stop signal ended waits for the run's own interrupt (see runStepProcess). */
const STOP_SIGNAL_GRACE_MS = 250;

/** Ended by a signal that stops a run, or by a shell that reports one (128 + its number). */
function endedByStopSignal(exitCode: number | null, signal: NodeJS.Signals | null): boolean {
  return STOP_SIGNALS.some((s) => s === signal || exitCode === 128 + constants.signals[s]);
}

/** Resolves when `signal` aborts or `ms` have passed, whichever is first. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
