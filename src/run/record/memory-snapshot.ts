/**
 * Memory at step start and end, for the `gpu.memory.snapshot` event and OOM reports: per GPU
 * free/used through detection (NVML in the probe child, so never on a step's critical path: the
 * caller does not await it before starting the step), and /proc/meminfo for the CPU. Concurrent
 * requests share one probe, and a reading younger than 200 ms is reused.
 */
import { readFile } from "node:fs/promises";
import type { DetectInventory } from "../../inventory/types.js";
import type { MemoryReading } from "../../schema-types/run-events.js";

export interface GpuMemory {
  gpu: string;
  uuid: string;
  totalBytes: number;
  usedBytes: number | null;
  freeBytes: number | null;
  /** The compute processes on it and their memory, when the driver lists them (NVML, ROCm SMI). */
  processes?: { pid: number; usedBytes: number | null }[] | null;
}

interface CpuMemory {
  totalBytes: number;
  availableBytes: number;
}

export interface MemorySampler {
  gpus(): Promise<GpuMemory[] | null>;
  cpu(): Promise<CpuMemory | null>;
}

const CPU_READING_TTL_MS = 250;
/** A probe is a child process: steps starting or ending within this share one reading. */
const GPU_READING_TTL_MS = 200;

/** A sampler over live detection; `null` answers where nothing is known (no NVML, no /proc). */
export function createMemorySampler(detect: DetectInventory | null, timeoutMs = 5000): MemorySampler {
  let inFlight: Promise<GpuMemory[] | null> | null = null;
  let last: { at: number; value: GpuMemory[] } | null = null;
  let gpusUnknown = false;
  // Host memory moves slowly next to step lengths: one /proc read serves every step within 250 ms.
  let cpuReading: { at: number; value: Promise<CpuMemory | null> } | null = null;
  return {
    gpus() {
      if (!detect || gpusUnknown) return Promise.resolve(null);
      const now = performance.now();
      if (last && now - last.at < GPU_READING_TTL_MS) return Promise.resolve(last.value);
      inFlight ??= detect({ timeoutMs })
        .then((inv) =>
          inv.gpus.map((g) => ({
            gpu: g.id,
            uuid: g.uuid,
            totalBytes: g.memoryBytes,
            usedBytes: g.usedMemoryBytes ?? null,
            freeBytes: g.freeMemoryBytes ?? null,
            processes: g.processes?.map((p) => ({ pid: p.pid, usedBytes: p.usedMemoryBytes })) ?? null,
          })),
        )
        .then((list) => {
          // No GPU answered (no NVML, a failed probe): stop asking, each probe is a child process.
          if (list.length === 0) gpusUnknown = true;
          last = { at: performance.now(), value: list };
          return list;
        })
        .catch(() => {
          gpusUnknown = true;
          return null;
        })
        .finally(() => {
          inFlight = null;
        });
      return inFlight;
    },
    cpu() {
      const now = performance.now();
      if (!cpuReading || now - cpuReading.at > CPU_READING_TTL_MS)
        cpuReading = { at: now, value: readMeminfo() };
      return cpuReading.value;
    },
  };
}

async function readMeminfo(): Promise<CpuMemory | null> {
  try {
    const text = await readFile("/proc/meminfo", "utf8");
    const kib = (key: string) =>
      Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? Number.NaN) * 1024;
    const totalBytes = kib("MemTotal");
    const availableBytes = kib("MemAvailable");
    return Number.isFinite(totalBytes) && Number.isFinite(availableBytes)
      ? { totalBytes, availableBytes }
      : null;
  } catch {
    return null;
  }
}

/** The readings for a step on `device` that sees the GPUs `uuids`; null when nothing is known. */
export async function readSnapshot(
  sampler: MemorySampler,
  device: string,
  uuids: readonly string[],
): Promise<MemoryReading[] | null> {
  if (device === "cpu") {
    const m = await sampler.cpu();
    if (!m) return null;
    return [
      {
        gpu: "cpu",
        usedBytes: m.totalBytes - m.availableBytes,
        freeBytes: m.availableBytes,
        totalBytes: m.totalBytes,
      },
    ];
  }
  const list = await sampler.gpus();
  const wanted = new Set(uuids);
  const gpus = (list ?? [])
    .filter((g) => wanted.has(g.uuid))
    .map((g) => ({
      gpu: g.gpu,
      uuid: g.uuid,
      usedBytes: g.usedBytes,
      freeBytes: g.freeBytes,
      totalBytes: g.totalBytes,
    }));
  return gpus.length > 0 ? gpus : null;
}
