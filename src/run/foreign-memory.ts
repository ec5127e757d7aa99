/**
 * GPU memory held by processes gpuplan did not start (#16 item 3): on a shared server not
 * everything goes through gpuplan, and what the others hold is not there for its pipelines. Where
 * the driver lists a GPU's processes (NVML, ROCm SMI), it is the memory of those that no gpuplan
 * holding a slot started (detect/processes.ts tells them apart by their ancestors, checked against
 * the lock); elsewhere, or where /proc cannot say who a process is (another pid namespace), the
 * GPU's used memory less what gpuplan's live holders reserved. Memory not known to be gpuplan's
 * counts as someone else's: counting too much delays a pipeline, too little can run it out of memory.
 */
import { describeProcesses } from "../detect/processes.js";
import { rootsFrom } from "../detect/roots.js";
import type { GpuProcess } from "../schema-types/inventory.js";
import type { SlotState } from "./lock/types.js";
import { createMemorySampler, type GpuMemory } from "./record/memory-snapshot.js";

/** Bytes held by others on each GPU of the readings (by UUID); GPUs the readings say nothing of are left out. */
export async function foreignMemory(
  readings: readonly GpuMemory[],
  slots: readonly SlotState[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, number>> {
  const listed = readings.map((g) => ({
    reading: g,
    processes: (g.processes ?? []).map(
      (p): GpuProcess => ({
        pid: p.pid,
        usedMemoryBytes: p.usedBytes,
        user: null,
        command: null,
        gpuplan: null,
      }),
    ),
  }));
  const holders = slots.flatMap((s) => (s.held && s.holder ? [s.holder] : []));
  if (listed.some((g) => g.processes.length > 0))
    await describeProcesses(listed, rootsFrom(env), async () => holders);
  const out = new Map<string, number>();
  for (const { reading, processes } of listed) {
    // /proc named none of them: who they are is unknown here (a container with the host's pids).
    const known =
      reading.processes != null &&
      (processes.length === 0 || processes.some((p) => p.user !== null || p.command !== null));
    if (known) {
      const sum = processes.reduce((n, p) => n + (p.gpuplan === null ? (p.usedMemoryBytes ?? 0) : 0), 0);
      out.set(reading.uuid, withinCard(sum, reading));
    } else if (reading.usedBytes !== null) {
      const reserved = slots.reduce((sum, s) => sum + (s.uuid === reading.uuid ? s.reservedBytes : 0), 0);
      out.set(reading.uuid, withinCard(reading.usedBytes - reserved, reading));
    }
  }
  return out;
}

/**
 * No process holds more than the card has: a driver that answers 2⁶⁴−2 bytes for a process (or a
 * sum past the card) is read as the whole card taken — admission waits the same, and `gpuplan
 * locks` says "80 GiB" instead of millions of TiB.
 */
function withinCard(bytes: number, reading: GpuMemory): number {
  const cap = reading.totalBytes > 0 ? reading.totalBytes : Number.POSITIVE_INFINITY;
  return Number.isFinite(bytes) ? Math.min(Math.max(0, bytes), cap) : Number.isFinite(cap) ? cap : 0;
}

/** One reading through the vendor libraries `env` names or the system has (`gpuplan locks`); empty when none answers. */
export async function readForeignMemory(
  slots: readonly SlotState[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, number>> {
  const { openGpuMemoryReader } = await import("../detect/memory-readings.js");
  const reader = openGpuMemoryReader(env);
  if (!reader) return new Map();
  try {
    const readings = await createMemorySampler(reader).gpus();
    return readings ? await foreignMemory(readings, slots, env) : new Map();
  } finally {
    reader.close();
  }
}
