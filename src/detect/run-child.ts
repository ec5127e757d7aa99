/**
 * Runs the vendor probes in child processes with a hard deadline. NVIDIA and AMD probes get a
 * child each, in parallel, so a wedged NVIDIA driver cannot hide the AMD GPUs. A child that
 * crashes is restarted for the probes it had not reached; one that outlives the deadline is
 * killed with SIGKILL and the probe it was in is reported as `timeout`. The child's stdout and
 * stderr (vendor noise) never reach the user; results travel on fd 3 (spawn-child.ts).
 */

import { nowMs } from "./clock.js";
import { claimPrestarted } from "./prestarted.js";
import { PROBE_HINTS } from "./probe-hints.js";
import type { ProbeResult, VendorProbeName } from "./probe-types.js";
import { type ChildOptions, childKey, type ProbeTask, type StartedChild, startChild } from "./spawn-child.js";

export type { ProbeTask } from "./spawn-child.js";

export interface RunProbesOptions extends ChildOptions {
  timeoutMs: number;
}

const NVIDIA: ReadonlySet<VendorProbeName> = new Set(["nvml", "cuda"]);

/** The tasks split into one group per child: NVIDIA's, then everyone else's. */
export function groupTasks(tasks: ProbeTask[]): ProbeTask[][] {
  return [tasks.filter((t) => NVIDIA.has(t.name)), tasks.filter((t) => !NVIDIA.has(t.name))].filter(
    (g) => g.length,
  );
}

/** Run every task; always resolves with one result per task, in task order. */
export async function runVendorProbes(tasks: ProbeTask[], options: RunProbesOptions): Promise<ProbeResult[]> {
  const deadline = nowMs() + options.timeoutMs;
  // Children bin/gpuplan.js started for this very request (prestart.ts); any other is killed.
  const prestarted = claimPrestarted();
  const runs = groupTasks(tasks).map((g) => {
    const key = childKey(g, options);
    const child = prestarted.get(key);
    prestarted.delete(key);
    return runGroup(g, deadline, options, child);
  });
  for (const child of prestarted.values()) child.kill();
  const results = (await Promise.all(runs)).flat();
  return tasks.map((t) => results.find((r) => r.name === t.name)!);
}

async function runGroup(
  tasks: ProbeTask[],
  deadline: number,
  options: RunProbesOptions,
  prestarted: StartedChild | undefined,
): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  let remaining = tasks;
  let next = prestarted;
  while (remaining.length) {
    const child = next ?? startChild(remaining, options);
    next = undefined;
    child.setRef(true);
    child.limit(deadline);
    const run = await child.run;
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
