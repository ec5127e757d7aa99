/**
 * GPU memory, read again and again while a run goes on (memory snapshots, per-process VRAM):
 * only the probes that report memory and processes (NVML, ROCm SMI, AMD SMI — not CUDA or HIP,
 * which would create a context on every GPU), answered by one long-lived child per vendor group
 * (probe-server.ts), merged as detection merges them. Who the processes are is not looked up:
 * readings need pids and bytes only. Where the run's check against the machine left its child
 * serving these very probes (prestarted.ts), that child is the one.
 */
import type { GpuInfo } from "../inventory/types.js";
import { mergeAmd, mergeNvidia } from "./merge.js";
import { claimServing } from "./prestarted.js";
import { memoryTasks, planVendorProbes } from "./probe-plan.js";
import { ProbeServer } from "./probe-server.js";
import type { ProbeResult } from "./probe-types.js";
import { groupTasks } from "./run-child.js";
import { childKey } from "./spawn-child.js";

export interface GpuMemoryReader {
  /** Every GPU (and MIG instance) the libraries list, with memory and processes; null when none answered. */
  read(): Promise<GpuInfo[] | null>;
  /** Sampler children started so far (1 per vendor group, more after a restart; none for an adopted one). */
  children(): number;
  close(): void;
}

/** A reader over the vendor libraries `env` names or the system has; null when there are none. */
export function openGpuMemoryReader(env: NodeJS.ProcessEnv, timeoutMs = 5000): GpuMemoryReader | null {
  const plan = planVendorProbes(env);
  const tasks = memoryTasks(plan.tasks);
  if (tasks.length === 0) return null;
  const servers = groupTasks(tasks).map(
    (group) => new ProbeServer(group, plan.child, timeoutMs, claimServing(childKey(group, plan.child))),
  );
  return {
    async read() {
      const answers = await Promise.all(servers.map((s) => s.read()));
      if (answers.every((a) => a === null)) return null;
      const results = new Map<string, ProbeResult>(answers.flatMap((a) => a ?? []).map((r) => [r.name, r]));
      const gpus = [
        ...mergeNvidia(results.get("nvml"), undefined, true),
        ...mergeAmd(results.get("rocm-smi"), results.get("amd-smi"), undefined, []),
      ];
      return gpus.length > 0 ? gpus : null;
    },
    children: () => servers.reduce((n, s) => n + s.started, 0),
    close() {
      for (const s of servers) s.close();
    },
  };
}
