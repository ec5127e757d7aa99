/**
 * One warm worker process: spawned in its own process group with the step environment and the
 * slot descriptors (so it holds its GPU slot like a step), read line by line, stopped politely.
 * gpuplan's end closes the worker's stdin, which is how a worker knows to exit even when gpuplan
 * is killed with SIGKILL: no stdin, no worker, no slot.
 * Its end is its exit, not its pipes' close: something it started in a session of its own (setsid)
 * keeps the pipes open for as long as it lives. After the exit what is left in the pipes is read
 * briefly, then they are closed, so such an escaped process neither delays a stop nor keeps
 * gpuplan alive (it keeps its inherited slot descriptor: docs/guides/locks.md).
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { type LongTimeout, setLongTimeout } from "../long-timeout.js";
import { startPinned } from "../step/spawn/cpu-affinity.js";
import {
  clipWorkerText,
  encodeTask,
  MAX_WORKER_LINE_CHARS,
  parseWorkerLine,
  type TaskMessage,
  type WorkerMessage,
} from "./protocol.js";

export interface WorkerProcessOptions {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Locked slot descriptors; the worker gets them as fds 3, 4, … */
  inheritFds: readonly number[];
  /** CPUs to pin the worker to from its start (its GPU's local CPUs), or null. */
  cpus?: readonly number[] | null;
  /**
   * Ordinary output lines (not protocol). A promise returned means "slow down": the stream is not
   * read until it settles, so the worker blocks on its own writes, as a plain step does when its
   * log is slow, and gpuplan's memory stays bounded whatever the worker sends.
   */
  onLine: (stream: "stdout" | "stderr", line: string) => Promise<void> | undefined;
}

/** How a worker ended: its exit, or why it could not start. */
export interface WorkerExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  spawnError?: string;
}

export type LoadResult =
  | { type: "ready" }
  | { type: "timeout" }
  | { type: "exited"; exit: WorkerExit }
  | { type: "invalid"; reason: string }
  | { type: "aborted" };

export type TaskResult =
  | Extract<WorkerMessage, { type: "reply" }>
  | { type: "exited"; exit: WorkerExit }
  | { type: "invalid"; reason: string }
  | { type: "timeout" }
  | { type: "aborted" };

/** After the exit: output is read until the pipes are quiet this long, or for at most DRAIN_LIMIT_MS. */
const DRAIN_QUIET_MS = 100;
const DRAIN_LIMIT_MS = 1000;

type Waiter = (message: WorkerMessage | { type: "exited"; exit: WorkerExit }) => void;

export class WorkerProcess {
  readonly pid: number | null;
  /** The last stderr lines since `resetTail`: an OOM message there classifies the failure. */
  readonly stderrTail: string[] = [];
  private readonly child: ChildProcess;
  private exit: WorkerExit | null = null;
  private readonly exited: Promise<WorkerExit>;
  private waiter: Waiter | null = null;
  /** A protocol line that came while nothing was awaited: the next wait reports it. */
  private stray: string | null = null;
  /** The id of the last task whose reply was taken: a second reply for it is told apart from a stray id. */
  private answered: string | null = null;
  /** Passes on each stream's unfinished last line once its pipe is closed. */
  private readonly flushers: (() => void)[] = [];

  constructor(private readonly options: WorkerProcessOptions) {
    const [command, ...args] = options.argv;
    this.child = startPinned(options.cpus, () =>
      spawn(command!, args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe", ...options.inheritFds],
      }),
    );
    this.pid = this.child.pid ?? null;
    // A worker that exits while we write gets EPIPE on its stdin: the exit is what we report.
    this.child.stdin?.on("error", () => {});
    this.exited = new Promise((resolve) => {
      let spawnError: string | undefined;
      this.child.on("error", (e) => {
        spawnError = e.message;
        if (this.child.pid === undefined) this.finish({ exitCode: null, signal: null, spawnError }, resolve);
      });
      this.child.once("exit", (exitCode, signal) => {
        void this.drain().then(() =>
          this.finish({ exitCode, signal, ...(spawnError !== undefined && { spawnError }) }, resolve),
        );
      });
    });
    this.pipe(this.child.stdout, "stdout");
    this.pipe(this.child.stderr, "stderr");
  }

  get alive(): boolean {
    return this.exit === null;
  }

  /** How it broke the protocol while no task ran (a second reply), or null: such a worker is not reused. */
  get broken(): string | null {
    return this.stray;
  }

  resetTail(): void {
    this.stderrTail.length = 0;
  }

  /** Waits for `{"ready": true}`. */
  ready(timeoutMs: number, signal?: AbortSignal): Promise<LoadResult> {
    return this.await(timeoutMs, signal, (m) => {
      if (m.type === "ready" || m.type === "exited" || m.type === "invalid") return m;
      return { type: "invalid", reason: `a reply (id ${clipWorkerText(m.id)}) before {"ready": true}` };
    });
  }

  /** Sends one task and waits for its reply. */
  send(task: TaskMessage, timeoutMs: number | null, signal?: AbortSignal): Promise<TaskResult> {
    // A protocol break that came while idle fails this task before it is sent: the worker is broken
    // and replaced, and the task must not run in it meanwhile.
    const broken = this.stray !== null;
    const done = this.await(timeoutMs, signal, (m): TaskResult => {
      if (m.type === "ready") return { type: "invalid", reason: '{"ready": true} while a task ran' };
      if (m.type === "reply" && m.id !== task.id)
        return {
          type: "invalid",
          reason:
            m.id === this.answered
              ? `${secondReply(m.id)}, while task ${task.id} ran`
              : `a reply for task ${clipWorkerText(m.id)} while task ${task.id} ran`,
        };
      if (m.type === "reply") this.answered = m.id;
      return m;
    });
    if (this.alive && !broken) this.child.stdin?.write(encodeTask(task));
    return done;
  }

  /** Close stdin, then SIGTERM and SIGKILL to its process group after `graceMs` each. */
  async stop(graceMs: number): Promise<WorkerExit> {
    this.child.stdin?.end();
    if (await this.exitsWithin(graceMs)) return this.exit!;
    this.signalGroup("SIGTERM");
    if (await this.exitsWithin(graceMs)) return this.exit!;
    this.signalGroup("SIGKILL");
    // Bounded: an unreaped process (a container whose PID 1 never waits) never reports its exit.
    await this.exitsWithin(graceMs + 2000);
    return this.exit ?? { exitCode: null, signal: "SIGKILL" };
  }

  private await<T>(
    timeoutMs: number | null,
    signal: AbortSignal | undefined,
    map: (m: WorkerMessage | { type: "exited"; exit: WorkerExit }) => T,
  ): Promise<T | { type: "timeout" } | { type: "aborted" } | { type: "exited"; exit: WorkerExit }> {
    if (this.exit) return Promise.resolve({ type: "exited", exit: this.exit });
    if (signal?.aborted) return Promise.resolve({ type: "aborted" });
    if (this.stray !== null) {
      const reason = this.stray;
      this.stray = null;
      return Promise.resolve(map({ type: "invalid", reason }));
    }
    return new Promise((resolve) => {
      let timer: LongTimeout | undefined;
      const settle = (value: T | { type: "timeout" } | { type: "aborted" }) => {
        timer?.clear();
        signal?.removeEventListener("abort", onAbort);
        this.waiter = null;
        resolve(value);
      };
      const onAbort = () => settle({ type: "aborted" });
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== null && timeoutMs > 0)
        timer = setLongTimeout(() => settle({ type: "timeout" }), timeoutMs);
      this.waiter = (m) => settle(map(m));
    });
  }

  private finish(exit: WorkerExit, resolve: (exit: WorkerExit) => void): void {
    if (this.exit) return;
    this.exit = exit;
    resolve(exit);
    this.waiter?.({ type: "exited", exit });
  }

  /**
   * What the exited worker wrote is still in its pipes: read it until they close or go quiet (an
   * escaped process may hold them open forever), then close them so nothing keeps Node's loop alive.
   */
  private async drain(): Promise<void> {
    const open = [this.child.stdout, this.child.stderr].filter((s): s is Readable => s !== null && !s.closed);
    if (open.length > 0) {
      await new Promise<void>((resolve) => {
        let closed = 0;
        const done = () => {
          clearTimeout(quiet);
          clearTimeout(limit);
          for (const s of open) {
            s.off("data", onData);
            s.off("close", onClose);
          }
          resolve();
        };
        let quiet = setTimeout(done, DRAIN_QUIET_MS);
        const limit = setTimeout(done, DRAIN_LIMIT_MS);
        const onData = () => {
          clearTimeout(quiet);
          quiet = setTimeout(done, DRAIN_QUIET_MS);
        };
        const onClose = () => {
          if (++closed === open.length) done();
        };
        for (const s of open) {
          s.on("data", onData);
          s.once("close", onClose);
        }
      });
    }
    for (const flush of this.flushers) flush();
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }

  private async exitsWithin(ms: number): Promise<boolean> {
    if (this.exit) return true;
    let timer: LongTimeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setLongTimeout(() => resolve(false), ms);
    });
    const result = await Promise.race([this.exited.then(() => true), timeout]);
    timer?.clear();
    return result;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.pid === null) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // The group is gone already.
    }
  }

  /**
   * Lines of a stream, each held until its newline but never beyond MAX_WORKER_LINE_CHARS (see
   * protocol.ts): only each new chunk is searched, so a long line costs its length, not its square.
   */
  private pipe(stream: Readable | null, name: "stdout" | "stderr"): void {
    if (!stream) return;
    let pieces: string[] = [];
    let size = 0;
    /** What the lines of the current chunk asked to wait for. */
    let waits: Promise<void>[] = [];
    const line = (text: string) => {
      const wait = this.line(name, text);
      if (wait) waits.push(wait);
    };
    /** Dropping the rest of an over-long stdout line, up to its newline. */
    let dropping = false;
    const take = (chunk: string, ended: boolean) => {
      if (dropping) {
        dropping = !ended;
        return;
      }
      let text = chunk;
      if (size + text.length > MAX_WORKER_LINE_CHARS) {
        if (name === "stdout") {
          pieces = [];
          size = 0;
          dropping = !ended;
          this.overlong();
          return;
        }
        // Ordinary output: passed on in pieces of the limit.
        while (size + text.length > MAX_WORKER_LINE_CHARS) {
          const room = MAX_WORKER_LINE_CHARS - size;
          pieces.push(text.slice(0, room));
          line(pieces.join(""));
          pieces = [];
          size = 0;
          text = text.slice(room);
        }
        if (ended && text === "") return;
      }
      if (!ended) {
        pieces.push(text);
        size += text.length;
        return;
      }
      const whole = pieces.length > 0 ? pieces.join("") + text : text;
      pieces = [];
      size = 0;
      line(whole);
    };
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      let start = 0;
      for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", start)) {
        take(chunk.slice(start, nl), true);
        start = nl + 1;
      }
      if (start < chunk.length) take(chunk.slice(start), false);
      if (waits.length === 0) return;
      // A protocol reply behind the paused output still comes, once the log has taken what is before it.
      const pending = waits;
      waits = [];
      stream.pause();
      void Promise.all(pending).then(() => {
        if (!stream.destroyed) stream.resume();
      });
    });
    // At the end of the stream, or when drain() closes a pipe an escaped process still holds.
    const flush = () => {
      if (size > 0) take("", true);
      dropping = false;
      waits = []; // Nothing is read after the end.
    };
    stream.on("end", flush);
    this.flushers.push(flush);
  }

  /** A stdout line past the limit: a protocol break, reported to the task it came during. */
  private overlong(): void {
    const reason = `a stdout line longer than ${MAX_WORKER_LINE_CHARS / (1024 * 1024)} MiB without a newline (a reply must fit in one line of at most that); the rest of it was dropped`;
    if (this.waiter) this.waiter({ type: "invalid", reason });
    else this.stray ??= reason;
  }

  private line(stream: "stdout" | "stderr", line: string): Promise<void> | undefined {
    if (stream === "stdout") {
      const message = parseWorkerLine(line);
      if (message) {
        // A protocol line nobody waits for is a protocol break too: it is reported with the next wait.
        if (this.waiter) this.waiter(message);
        else
          this.stray ??=
            message.type === "reply" && message.id === this.answered
              ? `${secondReply(message.id)}, after that task had ended`
              : `an unexpected protocol line: ${line.trim().slice(0, 200)}`;
        return undefined;
      }
    } else {
      this.stderrTail.push(line);
      if (this.stderrTail.length > 40) this.stderrTail.shift();
    }
    return this.options.onLine(stream, line);
  }
}

/** A reply for a task the worker had answered already: its fault against that task's id, said so. */
const secondReply = (id: string): string =>
  `the worker answered task ${clipWorkerText(id)} a second time (one reply per task)`;
