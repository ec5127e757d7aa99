/**
 * The CPU side of the inventory: model, logical cores, the cores this process may really use
 * (affinity mask, then the cgroup CPU quota), memory under the cgroup limit, and NUMA nodes.
 * Plain file reads: no child process, no library.
 */

import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";
import { join } from "node:path";
import type { CpuInfo, ProbeReport } from "../inventory/types.js";
import { textFromBytes } from "../text/bytes-text.js";
import { parseCpuList } from "../units/cpu-list.js";
import { type CgroupLimits, readCgroupLimits } from "./cgroup.js";
import { nowMs } from "./clock.js";
import type { Roots } from "./roots.js";

/** A /proc or /sys file as text; a model name from firmware need not be UTF-8 (src/text/bytes-text.ts). */
const read = (file: string): string | null => {
  try {
    return textFromBytes(readFileSync(file));
  } catch {
    return null;
  }
};

/** Model name and logical CPU count from /proc/cpuinfo (x86 `model name`, arm `CPU part` etc.). */
export function parseCpuinfo(text: string): { model: string | null; logical: number } {
  let model: string | null = null;
  let logical = 0;
  for (const line of text.split("\n")) {
    const m = /^([^:]+?)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === "processor") logical++;
    else if (
      !model &&
      (m[1] === "model name" || m[1] === "Model" || m[1] === "cpu model" || m[1] === "Hardware")
    ) {
      model = m[2]!.trim() || null;
    }
  }
  return { model, logical };
}

/** `MemTotal:  24684092 kB` lines of /proc/meminfo (or a NUMA node's meminfo), in bytes. */
export function parseMeminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const m = /(\w+):\s+(\d+)(?:\s*kB)?\s*$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * (line.trimEnd().endsWith("kB") ? 1024 : 1);
  }
  return out;
}

/** Usable cores: the affinity count, capped by the cgroup quota rounded up, at least 1. */
export function usableCores(affinity: number, cpuQuota: number | null): number {
  const capped = cpuQuota === null ? affinity : Math.min(affinity, Math.ceil(cpuQuota - 1e-9));
  return Math.max(1, capped);
}

/** Probe the CPU and memory. */
export function probeCpu(roots: Roots): { cpu: CpuInfo; probe: ProbeReport } {
  const started = nowMs();
  const info = parseCpuinfo(read(join(roots.proc, "cpuinfo")) ?? "");
  const logical = info.logical || cpus().length || 1;
  const allowed = /Cpus_allowed_list:\s*(\S+)/.exec(read(join(roots.proc, "self/status")) ?? "");
  const affinity = allowed ? parseCpuList(allowed[1]!).length : availableParallelism();
  const cgroup: CgroupLimits | null = readCgroupLimits(roots);
  const meminfo = parseMeminfo(read(join(roots.proc, "meminfo")) ?? "");
  const physical = meminfo.MemTotal ?? totalmem();
  const limit = cgroup?.memoryLimitBytes ?? null;
  const memoryBytes = limit === null ? physical : Math.min(physical, limit);
  let available = meminfo.MemAvailable ?? null;
  if (limit !== null && limit < physical) {
    const headroom = Math.max(0, limit - (cgroup?.memoryUsageBytes ?? 0));
    available = available === null ? headroom : Math.min(available, headroom);
  }
  const usable = usableCores(Math.min(affinity, logical), cgroup?.cpuQuota ?? null);
  const cpu: CpuInfo = {
    model: info.model ?? cpus()[0]?.model ?? "unknown",
    logicalCores: logical,
    usableCores: usable,
    memoryBytes,
    availableMemoryBytes: available,
    numaNodes: readNumaNodes(roots),
    cgroup: cgroup && {
      version: cgroup.version,
      cpuQuota: cgroup.cpuQuota,
      memoryLimitBytes: cgroup.memoryLimitBytes,
    },
  };
  const limits = [
    usable < logical ? `${usable} of ${logical} cores usable` : `${logical} cores`,
    cgroup?.cpuQuota != null ? `cgroup v${cgroup.version} quota ${+cgroup.cpuQuota.toFixed(2)} CPUs` : null,
    limit !== null && limit < physical ? `cgroup memory limit` : null,
  ].filter(Boolean);
  return {
    cpu,
    probe: {
      name: "cpu",
      status: "ok",
      message: limits.join(", "),
      durationMs: Math.round((nowMs() - started) * 10) / 10,
    },
  };
}

/** NUMA nodes from /sys/devices/system/node/nodeN/{cpulist,meminfo}. */
function readNumaNodes(roots: Roots): NonNullable<CpuInfo["numaNodes"]> {
  const base = join(roots.sys, "devices/system/node");
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => /^node\d+$/.test(n));
  } catch {
    return [];
  }
  return names
    .map((n) => {
      const id = Number(n.slice(4));
      const mem = parseMeminfo((read(join(base, n, "meminfo")) ?? "").replace(/^Node \d+ /gm, ""));
      return {
        id,
        cpus: parseCpuList(read(join(base, n, "cpulist")) ?? ""),
        memoryBytes: mem.MemTotal ?? null,
      };
    })
    .sort((a, b) => a.id - b.id);
}
