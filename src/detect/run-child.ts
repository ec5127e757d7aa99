/**
 * Runs the vendor probes in child processes with a hard deadline. NVIDIA and AMD probes get a
 * child each, in parallel, so a wedged NVIDIA driver cannot hide the AMD GPUs. A child that
 * crashes is restarted for the probes it had not reached; one that outlives the deadline is
 * killed with SIGKILL and the probe it was in is reported as `timeout`. The child's stdout and
 * stderr (vendor noise) never reach the user; results travel on fd 3.
 */

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { nowMs } from "./clock.js";
import type { ChildMessage, ChildRequest, ProbeResult, VendorProbeName } from "./probe-types.js";

export interface ProbeTask {
  name: VendorProbeName;
  library: string;
}

export interface RunProbesOptions {
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  slowInitMs: number;
  amdDriverLoaded: boolean;
}

/** Variables that narrow what the libraries enumerate: the child must see every device. */
const NARROWING_VARIABLES = [
  "CUDA_VISIBLE_DEVICES",
  "CUDA_DEVICE_ORDER",
  "ROCR_VISIBLE_DEVICES",
  "HIP_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
];

const NVIDIA: ReadonlySet<VendorProbeName> = new Set(["nvml", "cuda"]);

/**
 * The child entry is plain JS in dist/detect/child/: next to this module once built, and two
 * levels up from the sources (tests) or from a bundle chunk in dist/bundle/.
 */
export function childEntry(): string {
  const candidates = ["./child/main.js", "../../dist/detect/child/main.js", "../detect/child/main.js"];
  const paths = candidates.map((c) => fileURLToPath(new URL(c, import.meta.url)));
  return paths.find((p) => existsSync(p)) ?? paths[1]!;
}

const HINTS: Record<VendorProbeName, { timeout: string; crash: string }> = {
  nvml: {
    timeout:
      "a wedged GPU or driver can hang NVML: check `nvidia-smi` and `dmesg` for Xid errors; enable persistence mode (`sudo nvidia-smi -pm 1`) if initialization is merely slow, or raise --timeout",
    crash:
      "libnvidia-ml crashed: check the driver installation with `nvidia-smi`, or point GPUPLAN_NVML_LIBRARY at a working library",
  },
  cuda: {
    timeout: "cuInit did not return: check `nvidia-smi` and `dmesg`, or raise --timeout",
    crash:
      "libcuda crashed: check the driver installation, or point GPUPLAN_CUDA_LIBRARY at the driver's libcuda.so.1",
  },
  "rocm-smi": {
    timeout: "ROCm SMI did not answer: check `dmesg` for amdgpu errors, or raise --timeout",
    crash: "librocm_smi64 crashed: check the ROCm installation, or point GPUPLAN_ROCM_SMI_LIBRARY elsewhere",
  },
  "amd-smi": {
    timeout: "AMD SMI did not answer: check `dmesg` for amdgpu errors, or raise --timeout",
    crash: "libamd_smi crashed: check the ROCm installation, or point GPUPLAN_AMD_SMI_LIBRARY elsewhere",
  },
  hip: {
    timeout: "the HIP runtime did not initialize: check /dev/kfd and `dmesg`, or raise --timeout",
    crash: "libamdhip64 crashed: check the ROCm installation, or point GPUPLAN_HIP_LIBRARY elsewhere",
  },
};

/** Run every task; always resolves with one result per task, in task order. */
export async function runVendorProbes(tasks: ProbeTask[], options: RunProbesOptions): Promise<ProbeResult[]> {
  const deadline = nowMs() + options.timeoutMs;
  const groups = [tasks.filter((t) => NVIDIA.has(t.name)), tasks.filter((t) => !NVIDIA.has(t.name))];
  const results = (
    await Promise.all(groups.filter((g) => g.length).map((g) => runGroup(g, deadline, options)))
  ).flat();
  return tasks.map((t) => results.find((r) => r.name === t.name)!);
}

async function runGroup(
  tasks: ProbeTask[],
  deadline: number,
  options: RunProbesOptions,
): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  let remaining = tasks;
  while (remaining.length) {
    const run = await runChild(remaining, deadline, options);
    results.push(...run.results);
    const answered = new Set(run.results.map((r) => r.name));
    const current = run.current;
    if (run.end.kind === "done") {
      for (const t of remaining) {
        if (!answered.has(t.name))
          results.push(failed(t, "error", "the probe process ended without an answer", 0));
      }
      break;
    }
    if (!current) {
      // The child died outside any probe: node or koffi itself failed, or it ran out of time.
      const why = run.end.kind === "timeout" ? "ran out of time" : `failed: ${run.end.detail}`;
      for (const t of remaining.filter((r) => !answered.has(r.name)))
        results.push(
          failed(t, run.end.kind === "timeout" ? "timeout" : "error", `the probe process ${why}`, 0),
        );
      break;
    }
    const task = remaining.find((t) => t.name === current.probe)!;
    const elapsed = Math.round(nowMs() - current.startedAt);
    const hints = HINTS[current.probe];
    const rest = remaining.filter((t) => !answered.has(t.name) && t.name !== current.probe);
    if (run.end.kind === "timeout") {
      const seconds = +(options.timeoutMs / 1000).toFixed(1);
      results.push(
        failed(
          task,
          "timeout",
          `${current.call ?? "loading the library"} did not return within ${seconds} s; the probe process was killed`,
          elapsed,
          hints.timeout,
        ),
      );
      for (const t of rest)
        results.push(
          failed(t, "skipped", `not run: the ${current.probe} probe used up the ${seconds} s limit`, 0),
        );
      break;
    }
    results.push(
      failed(
        task,
        "error",
        `the probe process crashed (${run.end.detail}) in ${current.call ?? "loading the library"}`,
        elapsed,
        hints.crash,
      ),
    );
    remaining = rest;
    if (nowMs() >= deadline) {
      for (const t of rest) results.push(failed(t, "skipped", "not run: no time left after a crash", 0));
      break;
    }
  }
  return results;
}

function failed(
  task: ProbeTask,
  status: ProbeResult["status"],
  message: string,
  durationMs: number,
  hint?: string,
): ProbeResult {
  return {
    name: task.name,
    status,
    message,
    ...(hint ? { hint } : {}),
    library: task.library,
    version: null,
    durationMs,
    gpus: [],
  };
}

interface ChildRun {
  results: ProbeResult[];
  /** The probe that had started but not answered when the child ended. */
  current: { probe: VendorProbeName; call: string | null; startedAt: number } | null;
  end: { kind: "done" } | { kind: "timeout" } | { kind: "crash"; detail: string };
}

function runChild(tasks: ProbeTask[], deadline: number, options: RunProbesOptions): Promise<ChildRun> {
  const env = { ...options.env };
  for (const name of NARROWING_VARIABLES) delete env[name];
  // Flags meant for gpuplan itself (--inspect, --require hooks) have no business in the child.
  delete env.NODE_OPTIONS;
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
