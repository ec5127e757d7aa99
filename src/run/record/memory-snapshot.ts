/**
 * Memory at step start and end, for the `gpu.memory.snapshot` event and OOM reports: per GPU
 * free/used from the run's one long-lived sampler child (detect/memory-readings.ts: NVML or the
 * AMD libraries, isolated from a hanging driver, and never on a step's critical path: the caller
 * does not await it before starting the step), and /proc/meminfo for the CPU. Concurrent
 * requests share one reading, and a reading younger than 200 ms is reused.
 */
import { readFile } from "node:fs/promises";
import type { GpuMemoryReader } from "../../detect/memory-readings.js";
import type { GpuInfo } from "../../inventory/types.js";
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
  /** Start a reading from the sampler's child now, whatever the latest one's age (its child comes up meanwhile). */
  prefetch(): void;
  /** A reading started after this call: not the latest one, nor one already in flight. */
  fresh(): Promise<GpuMemory[] | null>;
}

const CPU_READING_TTL_MS = 250;
/** Steps starting or ending within this share one reading (a round of vendor calls). */
const GPU_READING_TTL_MS = 200;

/**
 * A sampler over the run's memory reader; `null` answers where nothing is known (no vendor
 * library, no /proc). `labels` names GPUs by UUID as the plan does (its registry's ids). `seed`:
 * GPUs as the run's verification read them, and when (performance.now()); answered like a
 * reading of the sampler's own while it is as young as one would be reused — the first steps
 * then do not wait for the sampler's child to start (a Node start and the vendor libraries).
 */
export function createMemorySampler(
  reader: GpuMemoryReader | null,
  labels: ReadonlyMap<string, string> = new Map(),
  seed?: { gpus: readonly GpuInfo[]; at: number },
): MemorySampler {
  const toMemory = (list: readonly GpuInfo[]): GpuMemory[] =>
    list.map((g) => ({
      gpu: labels.get(g.uuid) ?? g.id,
      uuid: g.uuid,
      totalBytes: g.memoryBytes,
      usedBytes: g.usedMemoryBytes ?? null,
      freeBytes: g.freeMemoryBytes ?? null,
      processes: g.processes?.map((p) => ({ pid: p.pid, usedBytes: p.usedMemoryBytes })) ?? null,
    }));
  let inFlight: Promise<GpuMemory[] | null> | null = null;
  let last: { at: number; value: GpuMemory[] } | null =
    reader && seed && seed.gpus.length > 0 ? { at: seed.at, value: toMemory(seed.gpus) } : null;
  // Host memory moves slowly next to step lengths: one /proc read serves every step within 250 ms.
  let cpuReading: { at: number; value: Promise<CpuMemory | null> } | null = null;
  const read = (): Promise<GpuMemory[] | null> => {
    if (!reader) return Promise.resolve(null);
    inFlight ??= reader
      .read()
      .then((list) => toMemory(list ?? []))
      .then((list) => {
        // Nothing answered this time (a sampler restarting): ask again at the next reading.
        last = { at: performance.now(), value: list };
        return list;
      })
      .catch(() => null)
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  return {
    gpus() {
      if (!reader) return Promise.resolve(null);
      if (last && performance.now() - last.at < GPU_READING_TTL_MS) return Promise.resolve(last.value);
      return read();
    },
    prefetch() {
      void read();
    },
    fresh() {
      if (!reader) return Promise.resolve(null);
      // A reading in flight began before this call: the one after it is fresh.
      return inFlight ? inFlight.then(read, read) : read();
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
