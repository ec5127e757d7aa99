/**
 * Turns the probes' raw answers into inventory GPUs: one entry per physical GPU even when two
 * probes saw it (matched by UUID, then PCI bus id), ordered by PCI bus id, with ids cuda:N /
 * rocm:N in that order and MIG instances as cuda:N/migK right after their parent.
 */
import type { GpuInfo, GpuProcess } from "../inventory/types.js";
import { believeCelsius, believePercent, believeWatts } from "./believe-readings.js";
import { comparePciBusId } from "./pci.js";
import { type ProbeResult, type RawGpu, type RawProcess, UNNAMED_NVIDIA_GPU } from "./probe-types.js";

const answered = (r: ProbeResult | undefined): RawGpu[] => (r?.status === "ok" ? r.gpus : []);

/** The library's view of a process; who it is (user, command, gpuplan) is filled in by processes.ts. */
const toProcesses = (list: RawProcess[] | null | undefined): GpuProcess[] | null =>
  list
    ? list.map((p) => ({
        pid: p.pid,
        usedMemoryBytes: p.usedMemoryBytes,
        user: null,
        command: null,
        gpuplan: null,
      }))
    : null;

/** UUIDs compare without their GPU-/MIG- prefix: CUDA hands back raw bytes either way. */
export const uuidKey = (uuid: string | null | undefined): string | null =>
  uuid ? uuid.replace(/^(GPU|MIG)-/i, "").toLowerCase() : null;

interface Row {
  raw: RawGpu;
  sources: string[];
  cudaIndex: number | null;
  hipIndex: number | null;
  migCudaIndex: Map<number, number>;
}

/** Find the row a GPU seen by another probe belongs to: UUID first, then PCI bus id. */
function findRow(rows: Row[], gpu: RawGpu): Row | undefined {
  const key = uuidKey(gpu.uuid);
  return (
    (key ? rows.find((r) => uuidKey(r.raw.uuid) === key) : undefined) ??
    (gpu.pciBusId ? rows.find((r) => r.raw.pciBusId === gpu.pciBusId) : undefined)
  );
}

/**
 * An NVML GPU with neither UUID nor PCI bus id (a driver without those calls, or a call that
 * failed for that GPU) that CUDA has not matched yet, of the same name and, where both know it,
 * memory (a name or a size neither library could tell matches any): CUDA sees no GPU NVML cannot,
 * so this is one of them, not another card. Where several could be, they pair in NVML's order:
 * NVML told nothing to tell them apart, and counting each card once is what matters.
 */
function findUnidentified(rows: Row[], gpu: RawGpu): Row | undefined {
  return rows.find(
    (r) =>
      !uuidKey(r.raw.uuid) &&
      !r.raw.pciBusId &&
      r.cudaIndex === null &&
      (r.raw.name === gpu.name || r.raw.name === UNNAMED_NVIDIA_GPU || gpu.name === UNNAMED_NVIDIA_GPU) &&
      (r.raw.memoryBytes == null || gpu.memoryBytes == null || r.raw.memoryBytes === gpu.memoryBytes),
  );
}

/** Copy the fields `primary` lacks from `other`. */
function fill(primary: RawGpu, other: RawGpu): void {
  if (primary.name === UNNAMED_NVIDIA_GPU) primary.name = other.name;
  const missing = Object.entries(other).filter(
    ([k, v]) => k !== "index" && k !== "migDevices" && v != null && primary[k as keyof RawGpu] == null,
  );
  Object.assign(primary, Object.fromEntries(missing));
}

/** Merge NVML and CUDA. `pciOrder`: CUDA_DEVICE_ORDER=PCI_BUS_ID, so CUDA ordinals follow PCI order. */
export function mergeNvidia(
  nvml: ProbeResult | undefined,
  cuda: ProbeResult | undefined,
  pciOrder: boolean,
): GpuInfo[] {
  const fromNvml = answered(nvml);
  const base = fromNvml.length ? fromNvml : answered(cuda);
  const baseSource = fromNvml.length ? "nvml" : "cuda";
  const rows: Row[] = base.map((raw) => ({
    raw: { ...raw },
    sources: [baseSource],
    cudaIndex: baseSource === "cuda" ? raw.index : null,
    hipIndex: null,
    migCudaIndex: new Map(),
  }));
  if (baseSource === "nvml") {
    for (const c of answered(cuda)) {
      // In MIG mode CUDA enumerates MIG devices and returns their MIG UUID (ABI.md §2).
      const key = uuidKey(c.uuid);
      const parent = rows.find((r) => r.raw.migDevices?.some((m) => uuidKey(m.uuid) === key));
      if (parent && key) {
        const mig = parent.raw.migDevices!.find((m) => uuidKey(m.uuid) === key)!;
        parent.migCudaIndex.set(mig.index, c.index);
        continue;
      }
      const row = findRow(rows, c) ?? findUnidentified(rows, c);
      if (row) {
        row.cudaIndex = c.index;
        row.sources.push("cuda");
        fill(row.raw, c);
      } else {
        rows.push({
          raw: { ...c },
          sources: ["cuda"],
          cudaIndex: c.index,
          hipIndex: null,
          migCudaIndex: new Map(),
        });
      }
    }
  }
  sortRows(rows);
  if (pciOrder) {
    for (const [i, r] of rows.entries()) r.cudaIndex = i;
  }
  const driverVersion = nvml?.status === "ok" ? (nvml.driverVersion ?? null) : null;
  const gpus: GpuInfo[] = [];
  rows.forEach((row, i) => {
    const parent = toGpu(row, `cuda:${i}`, i, "cuda", driverVersion);
    gpus.push(parent);
    if (!row.raw.migEnabled) return;
    for (const m of row.raw.migDevices ?? []) {
      gpus.push({
        ...parent,
        id: `cuda:${i}/mig${m.index}`,
        name: m.name,
        uuid: m.uuid,
        memoryBytes: m.memoryBytes ?? 0,
        freeMemoryBytes: m.freeMemoryBytes ?? null,
        usedMemoryBytes: m.usedMemoryBytes ?? null,
        serial: null,
        powerWatts: null,
        temperatureC: null,
        utilizationPercent: null,
        processes: toProcesses(m.processes),
        cudaIndex: row.migCudaIndex.get(m.index) ?? null,
        mig: {
          enabled: true,
          parentUuid: parent.uuid,
          ...(m.gpuInstanceId !== null ? { gpuInstanceId: m.gpuInstanceId } : {}),
          ...(m.computeInstanceId !== null ? { computeInstanceId: m.computeInstanceId } : {}),
        },
        sources: ["nvml"],
      });
    }
  });
  return gpus;
}

/** Merge ROCm SMI, AMD SMI, HIP and sysfs: the first that answered lists the GPUs, the others fill gaps. */
export function mergeAmd(
  rocmSmi: ProbeResult | undefined,
  amdSmi: ProbeResult | undefined,
  hip: ProbeResult | undefined,
  sysfs: RawGpu[],
): GpuInfo[] {
  const sources: [string, RawGpu[]][] = [
    ["rocm-smi", answered(rocmSmi)],
    ["amd-smi", answered(amdSmi)],
    ["sysfs", sysfs],
    ["hip", answered(hip)],
  ];
  const primary = sources.find(([, list]) => list.length);
  if (!primary) return [];
  const rows: Row[] = primary[1].map((raw) => ({
    raw: { ...raw },
    sources: [primary[0]],
    cudaIndex: null,
    hipIndex: primary[0] === "hip" ? raw.index : null,
    migCudaIndex: new Map(),
  }));
  for (const [name, list] of sources) {
    if (name === primary[0]) continue;
    for (const gpu of list) {
      // HIP reports no AMD unique id, so its devices match by PCI bus id only.
      const row =
        name === "hip"
          ? rows.find((r) => gpu.pciBusId && r.raw.pciBusId === gpu.pciBusId)
          : findRow(rows, gpu);
      if (!row) continue;
      if (name === "hip") row.hipIndex = gpu.index;
      row.sources.push(name);
      fill(row.raw, gpu);
    }
  }
  sortRows(rows);
  const driverVersion =
    (rocmSmi?.status === "ok" ? rocmSmi.driverVersion : null) ??
    (amdSmi?.status === "ok" ? amdSmi.driverVersion : null) ??
    null;
  return rows.map((row, i) => toGpu(row, `rocm:${i}`, i, "rocm", driverVersion));
}

function sortRows(rows: Row[]): void {
  rows.sort(
    (a, b) =>
      comparePciBusId(a.raw.pciBusId, b.raw.pciBusId) || (a.raw.uuid ?? "").localeCompare(b.raw.uuid ?? ""),
  );
}

function toGpu(
  row: Row,
  id: string,
  index: number,
  backend: GpuInfo["backend"],
  driverVersion: string | null,
): GpuInfo {
  const r = row.raw;
  return {
    id,
    index,
    backend,
    name: r.name,
    uuid: r.uuid ?? `unknown-${r.pciBusId ?? index}`,
    pciBusId: r.pciBusId,
    memoryBytes: r.memoryBytes ?? 0,
    freeMemoryBytes: r.freeMemoryBytes ?? null,
    usedMemoryBytes: r.usedMemoryBytes ?? null,
    computeCapability: r.computeCapability ?? null,
    architecture: r.architecture ?? null,
    brand: r.brand ?? null,
    serial: r.serial ?? null,
    driverVersion,
    numaNode: r.numaNode ?? null,
    cpuAffinity: r.cpuAffinity ?? null,
    powerWatts: believeWatts(r.powerWatts),
    temperatureC: believeCelsius(r.temperatureC),
    utilizationPercent: believePercent(r.utilizationPercent),
    processes: toProcesses(r.processes),
    cudaIndex: backend === "cuda" ? row.cudaIndex : null,
    hipIndex: backend === "rocm" ? row.hipIndex : null,
    mig:
      backend === "cuda" && r.migEnabled !== undefined && r.migEnabled !== null
        ? { enabled: r.migEnabled }
        : null,
    sources: row.sources,
  };
}
