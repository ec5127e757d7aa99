/**
 * What detection reads from sysfs: AMD GPUs for machines without ROCm libraries (every
 * /sys/class/drm/cardN whose device has PCI vendor 0x1002 and the amdgpu `mem_info_vram_total`
 * file), whether the amdgpu driver is loaded, and the CPU side of each GPU: its NUMA node and
 * local CPUs.
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { GpuInfo, ProbeReport } from "../inventory/types.js";
import { textFromBytes } from "../text/bytes-text.js";
import { parseCpuList } from "../units/cpu-list.js";
import { believeMemory } from "./believe-memory.js";
import { nowMs } from "./clock.js";
import { normalizePciBusId } from "./pci.js";
import type { RawGpu } from "./probe-types.js";
import type { Roots } from "./roots.js";

const AMD_VENDOR = "0x1002";

/** A sysfs file as text; a product name from the GPU's firmware need not be UTF-8 (src/text/bytes-text.ts). */
const read = (file: string): string | null => {
  try {
    return textFromBytes(readFileSync(file)).trim();
  } catch {
    return null;
  }
};

/** A decimal byte count from a sysfs file, exact; null when the file holds something else. */
const bytesFrom = (text: string | null): bigint | null =>
  text !== null && /^\d+$/.test(text) ? BigInt(text) : null;

/** Whether the amdgpu kernel module is loaded (without it no AMD library can see a GPU). */
export function isAmdDriverLoaded(roots: Roots): boolean {
  return existsSync(join(roots.sys, "module/amdgpu"));
}

/** Scan /sys/class/drm for AMD GPUs. */
export function probeAmdSysfs(roots: Roots): { probe: ProbeReport; gpus: RawGpu[] } {
  const started = nowMs();
  const drm = join(roots.sys, "class/drm");
  const done = (status: ProbeReport["status"], message: string, gpus: RawGpu[] = []) => ({
    probe: {
      name: "sysfs" as const,
      status,
      message,
      durationMs: Math.round((nowMs() - started) * 10) / 10,
    },
    gpus,
  });
  let cards: string[];
  try {
    cards = readdirSync(drm).filter((n) => /^card\d+$/.test(n));
  } catch {
    return done("no-devices", `${drm} does not exist`);
  }
  const gpus: RawGpu[] = [];
  const notes: string[] = [];
  for (const card of cards.sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)))) {
    const dev = join(drm, card, "device");
    if (read(join(dev, "vendor"))?.toLowerCase() !== AMD_VENDOR) continue;
    const total = read(join(dev, "mem_info_vram_total"));
    if (total === null) continue;
    const mem = believeMemory(
      { total: bytesFrom(total), used: bytesFrom(read(join(dev, "mem_info_vram_used"))) },
      card,
      (n) => notes.push(n),
    );
    const slot = /PCI_SLOT_NAME=(\S+)/.exec(read(join(dev, "uevent")) ?? "");
    const deviceId = read(join(dev, "device"));
    const uniqueId = read(join(dev, "unique_id"));
    const numa = Number(read(join(dev, "numa_node")) ?? "-1");
    gpus.push({
      index: gpus.length,
      name: read(join(dev, "product_name")) || `AMD GPU ${deviceId ?? ""}`.trim(),
      uuid: uniqueId ? `GPU-${uniqueId.toLowerCase().padStart(16, "0")}` : null,
      pciBusId: normalizePciBusId(slot?.[1]),
      memoryBytes: mem.total,
      usedMemoryBytes: mem.used,
      // believeMemory keeps used only where it is at most the total.
      freeMemoryBytes: mem.total !== null && mem.used !== null ? mem.total - mem.used : null,
      numaNode: Number.isInteger(numa) && numa >= 0 ? numa : null,
    });
  }
  return gpus.length
    ? done(
        "ok",
        [`${gpus.length} AMD GPU${gpus.length === 1 ? "" : "s"} in ${drm}`, ...notes].join("; "),
        gpus,
      )
    : done("no-devices", `no AMD GPU in ${drm}`);
}

/** The CPU-side NUMA node of a PCI device (-1 in sysfs means none): null when unknown. */
function readPciNumaNode(roots: Roots, pciBusId: string): number | null {
  const text = read(join(roots.sys, "bus/pci/devices", pciBusId, "numa_node"));
  const n = Number(text ?? "-1");
  return Number.isInteger(n) && n >= 0 ? n : null;
}

/** The CPUs local to a PCI device (`local_cpulist`), or null when sysfs does not say. */
function readPciLocalCpus(roots: Roots, pciBusId: string): number[] | null {
  const text = read(join(roots.sys, "bus/pci/devices", pciBusId, "local_cpulist"));
  const cpus = text ? parseCpuList(text) : [];
  return cpus.length > 0 ? cpus : null;
}

/**
 * Set each GPU's NUMA node from its PCI device, the CPU side that matters for placement
 * (nvmlDeviceGetNumaNodeId is the GPU's own node on Grace-like systems, ABI.md §1), and its
 * local CPUs where the probe gave none (NVML's CPU affinity comes first; ROCm has no such call,
 * so this is where AMD GPUs get theirs — `gpuplan run` pins steps to them). A MIG instance takes
 * its parent's. The probe's values stay where sysfs does not know.
 */
export function fillNumaNodes(gpus: GpuInfo[], roots: Roots): void {
  for (const gpu of gpus) {
    if (gpu.pciBusId && !gpu.mig?.parentUuid) {
      gpu.numaNode = readPciNumaNode(roots, gpu.pciBusId) ?? gpu.numaNode ?? null;
      if (!gpu.cpuAffinity?.length) gpu.cpuAffinity = readPciLocalCpus(roots, gpu.pciBusId);
    }
  }
  for (const gpu of gpus) {
    const parent = gpu.mig?.parentUuid;
    if (!parent) continue;
    const physical = gpus.find((p) => p.uuid === parent);
    gpu.numaNode = physical?.numaNode ?? gpu.numaNode ?? null;
    if (!gpu.cpuAffinity?.length) gpu.cpuAffinity = physical?.cpuAffinity ?? null;
  }
}

const NVIDIA_VENDOR = "0x10de";

/**
 * Whether the PCI bus has an NVIDIA display or 3D controller (class 0x03xxxx). Tells "no
 * NVIDIA driver because there is no NVIDIA GPU" from "the GPU's driver is not loaded".
 */
export function hasNvidiaPciDevice(roots: Roots): boolean {
  const base = join(roots.sys, "bus/pci/devices");
  let devices: string[];
  try {
    devices = readdirSync(base);
  } catch {
    return false;
  }
  return devices.some(
    (d) =>
      read(join(base, d, "vendor"))?.toLowerCase() === NVIDIA_VENDOR &&
      (read(join(base, d, "class")) ?? "").startsWith("0x03"),
  );
}
