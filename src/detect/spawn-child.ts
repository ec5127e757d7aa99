/**
 * One probe child process: spawned with the vendor-narrowing variables removed, read on fd 3
 * (its stdout and stderr carry vendor noise and are never shown), killed with SIGKILL at the
 * deadline. Returns what it answered and how it ended; the retry policy is run-child.ts's.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { nowMs } from "./clock.js";
import type { ChildMessage, ChildRequest, ProbeResult, VendorProbeName } from "./probe-types.js";
import type { ProbeTask, RunProbesOptions } from "./run-child.js";

/** Variables that narrow what the libraries enumerate: the child must see every device. */
const NARROWING_VARIABLES = [
  "CUDA_VISIBLE_DEVICES",
  "CUDA_DEVICE_ORDER",
  "ROCR_VISIBLE_DEVICES",
  "HIP_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
];

/**
 * The child entry is one CommonJS file, dist/detect/probe-child.cjs (scripts/bundle-probe-child.mjs):
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

export interface ChildRun {
  results: ProbeResult[];
  /** The probe that had started but not answered when the child ended. */
  current: { probe: VendorProbeName; call: string | null; startedAt: number } | null;
  end: { kind: "done" } | { kind: "timeout" } | { kind: "crash"; detail: string };
}

/** Run one child for `tasks` until it has answered them all, crashed, or reached `deadline`. */
export function runChild(tasks: ProbeTask[], deadline: number, options: RunProbesOptions): Promise<ChildRun> {
  const env = childEnvironment(options.env);
  const request: ChildRequest = {
    probes: tasks,
    slowInitMs: options.slowInitMs,
    amdDriverLoaded: options.amdDriverLoaded,
    parentPid: process.pid,
  };
  const run: ChildRun = { results: [], current: null, end: { kind: "done" } };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [childEntry(), JSON.stringify(request)], {
      env,
      stdio: ["ignore", "ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    let stderrTail = "";
    let buffered = "";
    let timedOut = false;
    let settled = false;
    const onMessage = (message: ChildMessage) => {
      if (message.type === "start") run.current = { probe: message.probe, call: null, startedAt: nowMs() };
      else if (message.type === "call" && run.current) run.current.call = message.call;
      else if (message.type === "result") {
        run.results.push(message.result);
        run.current = null;
      } else if (message.type === "done") {
        // Every answer is in: do not wait for the child's exit (node's teardown, threads a
        // library left behind). It ends on its own, or with us (PR_SET_PDEATHSIG).
        finish(0, null);
        child.unref();
        for (const stream of [child.stdio[2], child.stdio[3]])
          (stream as { unref?: () => void } | null)?.unref?.();
      }
    };
    child.stdio[3]!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
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
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString("utf8")).slice(-2000);
    });
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill("SIGKILL");
      },
      Math.max(0, deadline - nowMs()),
    );
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
      resolve(run);
    };
    child.on("error", (e) => {
      stderrTail += e.message;
      finish(1, null);
    });
    // 'close' waits for fd 3 to drain; a library that forked a helper holding the pipe
    // open must not stall us, so 'exit' settles too after a short grace.
    child.on("close", finish);
    child.on("exit", (code, signal) => setTimeout(() => finish(code, signal), 100).unref());
  });
}
