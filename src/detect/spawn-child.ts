/**
 * One probe child process: spawned with the vendor-narrowing variables removed, in a process
 * group of its own (probe-groups.ts: whatever a vendor library starts ends with it), read on fd 3
 * (its stdout and stderr carry vendor noise and are never shown), its group killed with SIGKILL
 * at the deadline. Returns what it answered and how it ended; the retry policy is run-child.ts's.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath } from "node:url";
import { textFromBytes } from "../text/bytes-text.js";
import { nowMs } from "./clock.js";
import { offerServing } from "./prestarted.js";
import { killGroup, SHUTDOWN_GRACE_MS, trackGroup } from "./probe-groups.js";
import type { ChildMessage, ChildRequest, ProbeResult, VendorProbeName } from "./probe-types.js";

export interface ProbeTask {
  name: VendorProbeName;
  library: string;
  /**
   * CUDA's probe, when only NVML's failure calls for it (probe-plan.ts): the child skips it once
   * NVML has told all about every GPU in the same round (child/main.ts nvmlToldAll). A child
   * restarted after NVML crashed runs it.
   */
  unlessNvmlListed?: true;
}

/** What a child is started with (the deadline comes later, see StartedChild.limit). */
export interface ChildOptions {
  env: NodeJS.ProcessEnv;
  slowInitMs: number;
  amdDriverLoaded: boolean;
  /**
   * Once it has answered, the child stays up to serve rounds of these probes to the run's memory
   * sampler, which adopts it (prestarted.ts, probe-server.ts): one Node start for a run's check
   * against the machine and its readings. Not part of the child's key: any detect() may claim it.
   */
  serve?: readonly ProbeTask[];
}

/** Variables that narrow what the libraries enumerate: the child must see every device. */
const NARROWING_VARIABLES = [
  "CUDA_VISIBLE_DEVICES",
  "CUDA_DEVICE_ORDER",
  "ROCR_VISIBLE_DEVICES",
  "HIP_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
];

/**
 * The child entry is one CommonJS file, dist/detect/probe-child.cjs (scripts/bundle-detect.mjs):
 * next to this module once built, and two levels up from the sources (tests) or from a bundle
 * chunk in dist/bundle/.
 */
export function childEntry(): string {
  const candidates = ["./probe-child.cjs", "../../dist/detect/probe-child.cjs", "../detect/probe-child.cjs"];
  const paths = candidates.map((c) => fileURLToPath(new URL(c, import.meta.url)));
  return paths.find((p) => existsSync(p)) ?? paths[1]!;
}

/** The child's environment: gpuplan's, less what would narrow or slow down the probes. */
export function childEnvironment(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...parent };
  for (const name of NARROWING_VARIABLES) delete env[name];
  // Flags meant for gpuplan itself (--inspect, --require hooks) have no business in the child.
  delete env.NODE_OPTIONS;
  // Node 20 parses this CA bundle at every start-up (~60 ms of CPU on a small VM, more than the
  // rest of the child's start); the child never opens a TLS connection.
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** Identifies what a child was asked, environment included: a pre-started child is used only for the same. */
export function childKey(tasks: ProbeTask[], options: ChildOptions): string {
  return JSON.stringify([tasks, options.slowInitMs, options.amdDriverLoaded, childEnvironment(options.env)]);
}

interface ChildRun {
  results: ProbeResult[];
  /** The probe that had started but not answered when the child ended. */
  current: { probe: VendorProbeName; call: string | null; startedAt: number } | null;
  end: { kind: "done" } | { kind: "timeout" } | { kind: "crash"; detail: string };
}

/** A running child. Its messages are read from the start; nothing kills it before `limit`. */
export interface StartedChild {
  key: string;
  pid: number | undefined;
  /** Settles once the child has answered every task, crashed, or been killed at the deadline. */
  run: Promise<ChildRun>;
  /** SIGKILL the child at `deadline` (the nowMs clock) unless it has settled by then. */
  limit(deadline: number): void;
  /** Whether the child keeps gpuplan's event loop alive; a settled child never does. */
  setRef(ref: boolean): void;
  kill(): void;
}

/** Start one child for `tasks`. */
export function startChild(tasks: ProbeTask[], options: ChildOptions): StartedChild {
  const request: ChildRequest = {
    probes: tasks,
    slowInitMs: options.slowInitMs,
    amdDriverLoaded: options.amdDriverLoaded,
    parentPid: process.pid,
  };
  const serve = options.serve?.length ? options.serve : null;
  if (serve) {
    request.serve = true;
    request.serveProbes = serve.map((t) => t.name);
  }
  // Loaded on first use: a machine without vendor libraries never spawns.
  const { spawn } = process.getBuiltinModule("node:child_process");
  const child = spawn(process.execPath, [childEntry(), JSON.stringify(request)], {
    env: childEnvironment(options.env),
    // A serving child takes its requests on stdin.
    stdio: [serve ? "pipe" : "ignore", "ignore", "pipe", "pipe"],
    windowsHide: true,
    detached: true,
  });
  // Out of descriptors (EMFILE, ENFILE: a low `ulimit -n`), Node makes no pipes and reports the
  // failure as an 'error' event only: the child never ran.
  if (child.stdio === undefined) return unstartedChild(child, childKey(tasks, options));
  const pid = child.pid;
  if (pid !== undefined) trackGroup(pid);
  const killAll = () => (pid === undefined ? child.kill("SIGKILL") : killGroup(pid));
  const streams = [child.stdio[2], child.stdio[3]] as ({ ref(): void; unref(): void } | null)[];
  const run: ChildRun = { results: [], current: null, end: { kind: "done" } };
  let stderrTail = "";
  let buffered = "";
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  let settled = false;
  let resolveRun: (run: ChildRun) => void = () => {};
  const promise = new Promise<ChildRun>((resolve) => {
    resolveRun = resolve;
  });

  const finish = (code: number | null, signal: NodeJS.Signals | null) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    if (timedOut) run.end = { kind: "timeout" };
    else if (signal) run.end = { kind: "crash", detail: signal };
    else if (code !== 0 || run.current) {
      const last = stderrTail.trim().split("\n").pop() ?? "";
      run.end = { kind: "crash", detail: `exit code ${code}${last ? `: ${last.slice(0, 200)}` : ""}` };
    }
    resolveRun(run);
  };
  const refHandles = (ref: boolean) => {
    for (const handle of [child, child.stdin, ...streams] as ({ ref(): void; unref(): void } | null)[]) {
      if (ref) handle?.ref();
      else handle?.unref();
    }
  };
  const onMessage = (message: ChildMessage) => {
    if (message.type === "start") run.current = { probe: message.probe, call: null, startedAt: nowMs() };
    else if (message.type === "call" && run.current) run.current.call = message.call;
    else if (message.type === "result") {
      run.results.push(message.result);
      run.current = null;
    } else if (message.type === "done") {
      // Every answer is in: do not wait for the child's exit (node's teardown, threads a
      // library left behind). It ends on its own, with us (PR_SET_PDEATHSIG, probe-groups.ts),
      // or, should its library's shutdown call hang, after a grace period. A serving child
      // waits for the sampler instead (it is killed with gpuplan if none adopts it).
      finish(0, null);
      refHandles(false);
      // Only after a round that ended well: a deadline that fired as `done` came in has killed it.
      if (serve && run.end.kind === "done") handOver(serve);
      else setTimeout(killAll, SHUTDOWN_GRACE_MS).unref();
    }
  };
  const handOver = (tasks: readonly ProbeTask[]) => {
    child.stdio[3]!.off("data", onAnswer);
    child.stderr!.off("data", onStderr);
    // Vendor noise must still drain, or a full pipe would stall the sampler's rounds.
    child.stderr!.resume();
    offerServing(childKey([...tasks], options), child);
  };
  // A character split between two chunks must not become two U+FFFD (and an unreadable inventory).
  const decoder = new StringDecoder("utf8");
  const onAnswer = (chunk: Buffer) => {
    buffered += decoder.write(chunk);
    let nl = buffered.indexOf("\n");
    while (nl !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        onMessage(JSON.parse(line) as ChildMessage);
      } catch {
        // A line we cannot read is not ours to trust; ignore it.
      }
      nl = buffered.indexOf("\n");
    }
  };
  const onStderr = (chunk: Buffer) => {
    // Vendor noise need not be UTF-8: its bytes are read as detect reads the libraries' strings.
    stderrTail = (stderrTail + textFromBytes(chunk)).slice(-2000);
  };
  child.stdio[3]!.on("data", onAnswer);
  child.stderr!.on("data", onStderr);
  child.on("error", (e) => {
    stderrTail += e.message;
    finish(1, null);
  });
  // 'close' waits for fd 3 to drain; a library that forked a helper holding the pipe
  // open must not stall us, so 'exit' settles too after a short grace.
  child.on("close", finish);
  child.on("exit", (code, signal) => {
    // The child is gone: so is anything its libraries left in its group.
    if (pid !== undefined) killGroup(pid);
    setTimeout(() => finish(code, signal), 100).unref();
  });

  return {
    key: childKey(tasks, options),
    pid,
    run: promise,
    limit(deadline) {
      if (settled) return;
      clearTimeout(timer);
      timer = setTimeout(
        () => {
          timedOut = true;
          killAll();
        },
        Math.max(0, deadline - nowMs()),
      );
    },
    setRef(ref) {
      if (!settled || !ref) refHandles(ref);
    },
    kill() {
      killAll();
    },
  };
}

/** A child Node could not start: its run is a crash that names the system's error. */
function unstartedChild(child: ChildProcess, key: string): StartedChild {
  const run = new Promise<ChildRun>((resolve) =>
    child.once("error", (e) =>
      resolve({
        results: [],
        current: null,
        end: { kind: "crash", detail: `could not start: ${e.message}` },
      }),
    ),
  );
  return { key, pid: undefined, run, limit() {}, setRef() {}, kill() {} };
}
