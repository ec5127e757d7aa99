/**
 * A long-lived probe child for readings taken again and again (GPU memory while a run goes on):
 * one child per run answers a round of probes for each request, instead of a Node start per
 * reading. It keeps the isolation of the one-shot child (spawn-child.ts): its own process
 * group, fd 3 for answers, a deadline per request; a child that misses it (a wedged driver) or
 * dies is killed with its group, and the next request starts a fresh one — until it has failed
 * MAX_FAILURES times in a row, after which the server answers null without trying again.
 * Its first child may be adopted: a run's check against the machine, which has answered and
 * waits to serve (spawn-child.ts `serve`), so that a GPU run starts one probe child, not two.
 */
import type { ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { killGroup, letGo, trackGroup } from "./probe-groups.js";
import type { ChildMessage, ChildRequest, ProbeResult } from "./probe-types.js";
import { type ChildOptions, childEntry, childEnvironment, type ProbeTask } from "./spawn-child.js";

const MAX_FAILURES = 3;

interface Pending {
  results: ProbeResult[];
  resolve(results: ProbeResult[] | null): void;
  timer: NodeJS.Timeout;
}

export class ProbeServer {
  private child: ChildProcess | null = null;
  private pending: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** A child that has not yet answered its start-up round (which it runs unasked). */
  private fresh: ChildProcess | null = null;
  private failures = 0;
  private closed = false;
  /** Children started so far (the first, and each restart). */
  started = 0;

  constructor(
    private readonly tasks: readonly ProbeTask[],
    private readonly options: ChildOptions,
    private readonly timeoutMs: number,
    adopted: ChildProcess | null = null,
  ) {
    // Its start-up round was someone else's: every round of ours is asked for.
    if (adopted) this.attach(adopted);
  }

  /** One round of every task's probe; null when the child failed or missed the deadline. Requests queue. */
  read(): Promise<ProbeResult[] | null> {
    const next = this.queue.then(() => this.round());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Let the child go: it runs its libraries' shutdown calls and exits (or is killed with gpuplan).
   * A round still waiting is answered null at once, and the child no longer keeps gpuplan alive: a
   * run that ended before its sampler's first reading used to wait out the reading's deadline
   * (5 s after every short GPU run; seen on an H100, docs/real-gpu-check.md).
   */
  close(): void {
    this.closed = true;
    this.settle(null);
    const child = this.child;
    this.child = null;
    this.fresh = null;
    if (!child) return;
    this.setRef(child, false);
    letGo(child);
  }

  private round(): Promise<ProbeResult[] | null> {
    if (this.closed || this.failures >= MAX_FAILURES) return Promise.resolve(null);
    const child = this.child ?? this.spawn();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.fail(), this.timeoutMs);
      this.pending = { results: [], resolve, timer };
      this.setRef(child, true);
      // The first round runs at start-up, unasked; each later one is a line on stdin.
      if (child !== this.fresh) child.stdin?.write("\n");
      this.fresh = null;
    });
  }

  private spawn(): ChildProcess {
    const request: ChildRequest = {
      probes: [...this.tasks],
      slowInitMs: this.options.slowInitMs,
      amdDriverLoaded: this.options.amdDriverLoaded,
      parentPid: process.pid,
      serve: true,
    };
    const { spawn } = process.getBuiltinModule("node:child_process");
    const child = spawn(process.execPath, [childEntry(), JSON.stringify(request)], {
      env: childEnvironment(this.options.env),
      stdio: ["pipe", "ignore", "ignore", "pipe"],
      windowsHide: true,
      detached: true,
    });
    this.started++;
    if (child.pid !== undefined) trackGroup(child.pid);
    this.attach(child);
    this.fresh = child;
    return child;
  }

  /** Read `child`'s answers and watch it; it becomes this server's child. */
  private attach(child: ChildProcess): void {
    let buffered = "";
    // A character split between two chunks must not become two U+FFFD.
    const decoder = new StringDecoder("utf8");
    child.stdio[3]!.on("data", (chunk: Buffer) => {
      buffered += decoder.write(chunk);
      let nl = buffered.indexOf("\n");
      while (nl !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.includes('"result"') || line.includes('"done"')) this.onMessage(child, line);
        nl = buffered.indexOf("\n");
      }
    });
    // A write to a child that has just died: its exit settles the request.
    child.stdin?.on("error", () => undefined);
    child.on("error", () => this.child === child && this.fail());
    child.on("exit", () => this.child === child && this.fail());
    this.child = child;
    // Idle between requests, it must not keep gpuplan alive.
    this.setRef(child, false);
  }

  private onMessage(child: ChildProcess, line: string): void {
    let message: ChildMessage;
    try {
      message = JSON.parse(line) as ChildMessage;
    } catch {
      return;
    }
    const pending = this.pending;
    if (child !== this.child || !pending) return;
    if (message.type === "result") pending.results.push(message.result);
    else if (message.type === "done") {
      this.failures = 0;
      this.settle(pending.results);
    }
  }

  private settle(results: ProbeResult[] | null): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    clearTimeout(pending.timer);
    if (this.child) this.setRef(this.child, false);
    pending.resolve(results);
  }

  /** The child missed its deadline or died: kill its group; the next request starts another. */
  private fail(): void {
    const child = this.child;
    this.child = null;
    this.fresh = null;
    this.failures++;
    if (child?.pid !== undefined) killGroup(child.pid);
    this.settle(null);
  }

  /** An idle child never keeps gpuplan alive; one with a request in flight does. */
  private setRef(child: ChildProcess, ref: boolean): void {
    for (const handle of [child, child.stdin, child.stdio[3]] as ({ ref(): void; unref(): void } | null)[]) {
      if (ref) handle?.ref();
      else handle?.unref();
    }
  }
}
