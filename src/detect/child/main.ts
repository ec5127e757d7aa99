/**
 * Entry of the vendor probe child process (spawned by ../spawn-child.ts, never imported; run
 * as the one-file bundle dist/detect/probe-child.cjs).
 * Vendor libraries may hang, crash or print; running them here keeps that away from gpuplan.
 * Results go to fd 3 as JSON lines, because the libraries themselves write to stdout/stderr.
 */

import { writeSync } from "node:fs";
import { resolve } from "node:path";
import { nowMs } from "../clock.js";
import type { ChildMessage, ChildRequest, ProbeResult, VendorProbeName } from "../probe-types.js";
import type { ProbeContext } from "./context.js";
import { dieWithParent } from "./ffi.js";

const RESULT_FD = 3;

function send(message: ChildMessage): void {
  writeAll(Buffer.from(`${JSON.stringify(message)}\n`));
}

function writeAll(bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) {
    try {
      written += writeSync(RESULT_FD, bytes, written);
    } catch (e) {
      // The pipe may be non-blocking: wait for the parent to read. Anything else (EPIPE: the
      // parent is gone) ends the child.
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/** "call" lines are written before every vendor call (hundreds per run): encode each once. */
const callLines = new Map<string, Buffer>();

function sendCall(probe: VendorProbeName, call: string): void {
  const key = `${probe}\0${call}`;
  let line = callLines.get(key);
  if (!line) {
    line = Buffer.from(`${JSON.stringify({ type: "call", probe, call } satisfies ChildMessage)}\n`);
    callLines.set(key, line);
  }
  writeAll(line);
}

type Probe = (ctx: ProbeContext) => ProbeResult;

/** Each probe module is imported only when asked for, so an NVIDIA-only run loads no AMD code. */
async function loadProbe(name: VendorProbeName): Promise<Probe> {
  switch (name) {
    case "nvml":
      return (await import("./nvml.js")).probeNvml;
    case "cuda":
      return (await import("./cuda.js")).probeCuda;
    case "rocm-smi":
      return (await import("./rocm-smi.js")).probeRocmSmi;
    case "amd-smi":
      return (await import("./amd-smi.js")).probeAmdSmi;
    case "hip":
      return (await import("./hip.js")).probeHip;
  }
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? "{}") as ChildRequest;
  // A child stuck in a vendor call must not outlive gpuplan (killed by a signal it cannot
  // forward, say): ask the kernel to kill it with its parent, and stop if that already happened.
  dieWithParent();
  if (process.ppid !== request.parentPid) return;
  const deferred: Deferred[] = [];
  await probeRound(request, request.probes, deferred, true);
  if (!request.serve) return runAll(deferred);
  // A sampler (`serve`) answers again for each line on stdin, until the parent closes it; the
  // libraries it reads stay initialised between rounds, and shut down only then. A probe the
  // later rounds skip (`serveProbes`: CUDA and HIP after a run's check) runs its shutdown calls now.
  const served = request.probes.filter((p) => !request.serveProbes || request.serveProbes.includes(p.name));
  const names = new Set(served.map((p) => p.name));
  runAll(deferred.filter((d) => !names.has(d.probe)));
  await serveRounds(request, served);
  runAll(deferred.filter((d) => names.has(d.probe)));
}

interface Deferred {
  probe: VendorProbeName;
  fn: () => void;
}

function runAll(deferred: Deferred[]): void {
  for (const { fn } of deferred) {
    try {
      fn();
    } catch {}
  }
}

/**
 * One round: each probe's answer sent as it comes, then `done`. With `breadcrumbs`, a `call` line
 * goes out before every vendor call, for the parent's crash and hang reports; a sampler's later
 * rounds skip them (a failed round is only retried: probe-server.ts), sparing ~30 writes per GPU.
 */
async function probeRound(
  request: ChildRequest,
  probes: ChildRequest["probes"],
  deferred: Deferred[],
  breadcrumbs: boolean,
): Promise<void> {
  let answered = !breadcrumbs;
  let nvmlListed = false;
  for (const { name, library: requested, unlessNvmlListed } of probes) {
    // The parent sends absolute paths (libraries.ts); a bare name would make dlopen search the
    // system's directories, and load a library nobody checked.
    const library = resolve(requested);
    if (unlessNvmlListed && nvmlListed) {
      send({ type: "result", result: notNeeded(name, library) });
      continue;
    }
    send({ type: "start", probe: name });
    const started = nowMs();
    let result: ProbeResult;
    try {
      const probe = await loadProbe(name);
      result = probe({
        library,
        slowInitMs: request.slowInitMs,
        amdDriverLoaded: request.amdDriverLoaded,
        track: (call) => answered || sendCall(name, call),
        defer: (fn) => deferred.push({ probe: name, fn }),
      });
    } catch (e) {
      // A library that will not load, a missing required symbol: this probe failed, the next may not.
      result = {
        name,
        status: "error",
        message: e instanceof Error ? e.message : String(e),
        library,
        version: null,
        durationMs: Math.round((nowMs() - started) * 10) / 10,
        gpus: [],
      };
    }
    if (name === "nvml" && nvmlToldAll(result)) nvmlListed = true;
    send({ type: "result", result });
  }
  send({ type: "done" });
  // The parent has every answer and stops listening; shutdown calls may now take their time.
  answered = true;
}

/**
 * NVML listed every GPU it counted with all that CUDA's probe could add (merge.ts fill): UUID, PCI
 * bus id, memory, compute capability. A driver that answers NOT_SUPPORTED for some of them
 * (unified-memory boards, old drivers) still gets CUDA's answers.
 */
function nvmlToldAll(result: ProbeResult): boolean {
  return (
    result.status === "ok" &&
    result.gpus.length > 0 &&
    !result.skippedDevices &&
    result.gpus.every((g) => g.uuid && g.pciBusId && g.memoryBytes !== null && g.computeCapability)
  );
}

function notNeeded(name: VendorProbeName, library: string): ProbeResult {
  return {
    name,
    status: "skipped",
    message:
      "not needed: NVML told all about every GPU, and no CUDA_VISIBLE_DEVICES index asks for CUDA's own order",
    library,
    version: null,
    durationMs: 0,
    gpus: [],
  };
}

/** Rounds of `probes` on request: one per line read on stdin; resolves when stdin ends. */
function serveRounds(request: ChildRequest, probes: ChildRequest["probes"]): Promise<void> {
  return new Promise((resolve) => {
    let queue = Promise.resolve();
    const round = async () => {
      // The first round's init still holds the libraries (their init calls count references):
      // a later round's shutdown calls only give back what its own init took.
      const later: Deferred[] = [];
      await probeRound(request, probes, later, false);
      runAll(later);
    };
    process.stdin.on("data", (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 10) queue = queue.then(round);
    });
    const end = () => void queue.then(resolve);
    process.stdin.on("end", end);
    process.stdin.on("error", end);
  });
}

// Not a top-level await: the child ships as one CommonJS file (scripts/bundle-detect.mjs).
// Some vendor libraries leave threads behind that would keep the process alive, hence the exit.
void main().then(() => process.exit(0));
