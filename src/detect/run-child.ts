/**
 * Runs the vendor probes in child processes with a hard deadline. NVIDIA and AMD probes get a
 * child each, in parallel, so a wedged NVIDIA driver cannot hide the AMD GPUs. A child that
 * crashes is restarted for the probes it had not reached; one that outlives the deadline is
 * killed with SIGKILL and the probe it was in is reported as `timeout`. The child's stdout and
 * stderr (vendor noise) never reach the user; results travel on fd 3 (spawn-child.ts).
 */

import { nowMs } from "./clock.js";
import { PROBE_HINTS } from "./probe-hints.js";
import type { ProbeResult, VendorProbeName } from "./probe-types.js";
import { runChild } from "./spawn-child.js";

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

const NVIDIA: ReadonlySet<VendorProbeName> = new Set(["nvml", "cuda"]);

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
    const hints = PROBE_HINTS[current.probe];
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
