/**
 * One step attempt as a child process: argv (or `/bin/sh -c` with shell), its own process group
 * (detached) so a timeout or Ctrl-C reaches grandchildren too, output to a log file and, line by
 * line, to the caller; the locked slot descriptors are passed as extra stdio entries so the step
 * holds its GPU slot for as long as it (or anything it started) lives, even if gpuplan dies.
 * How the process is started (posix_spawn or child_process) is spawn/start-process.ts's business.
 */
import { close, mkdirSync, openSync, write } from "node:fs";
import { dirname } from "node:path";
import type { Readable } from "node:stream";
import { startProcess } from "./spawn/start-process.js";

export interface StepProcessOptions {
  argv: readonly string[];
  shell: boolean;
  cwd: string;
  env: Record<string, string>;
  logPath: string;
  /** Locked slot descriptors; the child gets them as fds 3, 4, … */
  inheritFds?: readonly number[];
  timeoutMs?: number | null;
  /** SIGTERM → SIGKILL delay for timeouts and interrupts. */
  killGraceMs: number;
  /** Aborting forwards `interruptSignal` to the step's process group. */
  signal?: AbortSignal;
  interruptSignal?: () => NodeJS.Signals;
  /** Aborting kills the step's process group at once (a second Ctrl-C). */
  killNow?: AbortSignal;
  onLine?: (stream: "stdout" | "stderr", line: string) => void;
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

/** After the step exits, how long to wait for its pipes to close (a background grandchild may keep them open). */
const DRAIN_MS = 500;

export async function runStepProcess(options: StepProcessOptions): Promise<StepProcessResult> {
  const started = performance.now();
  const tailLimit = options.tailLines ?? 40;
  const stderrTail: string[] = [];
  const log = lazyLog(options.logPath);
  const command = options.shell ? "/bin/sh" : options.argv[0]!;
  const args = options.shell ? ["-c", options.argv.join(" ")] : options.argv.slice(1);
  const start = await startProcess({
    command,
    args,
    cwd: options.cwd,
    env: options.env,
    inheritFds: options.inheritFds ?? [],
  });
  const ended = (fields: Partial<StepProcessResult>): StepProcessResult => ({
    pid: null,
    exitCode: null,
    signal: null,
    timedOut: false,
    interrupted: false,
    stderrTail: [...stderrTail],
    durationMs: Math.round(performance.now() - started),
    ...fields,
  });
  if ("error" in start) {
    log.write(`gpuplan: could not start ${command}: ${start.error}\n`);
    const result = ended({ spawnError: start.error });
    return new Promise((resolve) => log.end(true, () => resolve(result)));
  }
  const child = start.process;
  let timedOut = false;
  let interrupted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  const terminate = (signal: NodeJS.Signals) => {
    killGroup(signal);
    killTimer ??= setTimeout(() => killGroup("SIGKILL"), options.killGraceMs);
    killTimer.unref();
  };
  const timeout =
    options.timeoutMs != null && options.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          terminate("SIGTERM");
        }, options.timeoutMs)
      : undefined;
  const onAbort = () => {
    interrupted = true;
    terminate(options.interruptSignal?.() ?? "SIGINT");
  };
  if (options.signal?.aborted) queueMicrotask(onAbort);
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const onKillNow = () => {
    interrupted = true;
    killGroup("SIGKILL");
  };
  if (options.killNow?.aborted) queueMicrotask(onKillNow);
  else options.killNow?.addEventListener("abort", onKillNow, { once: true });

  const emit = (name: "stdout" | "stderr", line: string) => {
    if (name === "stderr") {
      stderrTail.push(line);
      if (stderrTail.length > tailLimit) stderrTail.shift();
    }
    options.onLine?.(name, line);
  };
  /** Resolves when the stream has closed (EOF, or destroyed after the drain time). */
  const pipe = (stream: Readable, name: "stdout" | "stderr") =>
    new Promise<void>((resolve) => {
      let partial = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        log.write(chunk);
        const lines = (partial + chunk).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) emit(name, line);
      });
      stream.on("end", () => {
        if (partial) emit(name, partial);
        partial = "";
      });
      stream.on("error", () => {});
      stream.on("close", () => resolve());
    });
  const streams = [child.stdout, child.stderr];
  const drained = Promise.all(streams.map((stream, i) => pipe(stream, i === 0 ? "stdout" : "stderr")));

  const { exitCode, signal } = await child.exit;
  // A killed step is done when its whole group is: grandchildren get the grace period too,
  // then SIGKILL (the kill timer), so nothing of it outlives the report.
  if (timedOut || interrupted) await groupGone(child.pid, options.killGraceMs + 2000);
  // The pipes close when the step's last writer does; a daemonised grandchild can hold them open forever.
  let drain: NodeJS.Timeout | undefined;
  await Promise.race([
    drained,
    new Promise<void>((resolve) => {
      drain = setTimeout(() => {
        for (const stream of streams) stream.destroy();
        resolve();
      }, DRAIN_MS);
    }),
  ]);
  clearTimeout(drain);
  clearTimeout(timeout);
  if (killTimer && !timedOut && !interrupted) clearTimeout(killTimer);
  options.signal?.removeEventListener("abort", onAbort);
  options.killNow?.removeEventListener("abort", onKillNow);
  const result = ended({ pid: child.pid, exitCode, signal, timedOut, interrupted });
  // A failed step always has a log file (perhaps empty), so the path in its report exists.
  return new Promise((resolve) => log.end(exitCode !== 0 || signal !== null, () => resolve(result)));
}

function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    // EPERM: a member exists that we may not signal; it is still alive.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Resolves when no process of the group is left (the kill timer ends stragglers), or after limitMs. */
async function groupGone(pgid: number, limitMs: number): Promise<void> {
  // Bounded: an unreaped zombie (a container whose PID 1 never waits) still answers kill(0).
  const deadline = performance.now() + limitMs;
  while (isGroupAlive(pgid) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

export interface LazyLog {
  write(text: string): void;
  end(create: boolean, done: () => void): void;
}

/**
 * The step's log file, created at its first byte: most trivial steps print nothing, and an
 * open/close per step is a measurable share of a short step's overhead. Writes are queued in
 * order on one descriptor.
 */
export function lazyLog(path: string): LazyLog {
  let fd: number | null = null;
  let chain: Promise<void> = Promise.resolve();
  const ensure = (): number => {
    if (fd === null) {
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(path, "a");
    }
    return fd;
  };
  return {
    write(text) {
      const target = ensure();
      chain = chain.then(() => new Promise<void>((resolve) => write(target, text, () => resolve())));
    },
    end(create, done) {
      if (create) ensure();
      void chain.then(() => {
        if (fd === null) return done();
        close(fd, () => done());
      });
    },
  };
}
