/**
 * The CPU quota and memory limit a container or systemd slice puts on this process, from
 * cgroup v2 (cpu.max, memory.max) or v1 (cpu.cfs_quota_us / cpu.cfs_period_us,
 * memory.limit_in_bytes). Limits are taken as the tightest along the path to the root, since
 * a parent's limit binds its children too.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Roots } from "./roots.js";

export interface CgroupLimits {
  version: 1 | 2;
  /** CPUs' worth of time per period (1.5 = one and a half CPUs); null when unlimited. */
  cpuQuota: number | null;
  memoryLimitBytes: number | null;
  /** Memory the cgroup uses now, for "available" under a limit. */
  memoryUsageBytes: number | null;
}

/** /proc/self/cgroup: the v2 path (`0::/x`) and the v1 path of each controller. */
export function parseProcCgroup(text: string): { unified: string | null; controllers: Map<string, string> } {
  let unified: string | null = null;
  const controllers = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === "0" && m[2] === "") unified = m[3]!;
    else for (const c of m[2]!.split(",")) if (c) controllers.set(c, m[3]!);
  }
  return { unified, controllers };
}

/** `max 100000` → null, `150000 100000` → 1.5 (cgroup v2 cpu.max). */
export function parseCpuMax(text: string): number | null {
  const [quota, period] = text.trim().split(/\s+/);
  if (!quota || quota === "max") return null;
  const q = Number(quota);
  const p = Number(period ?? "100000");
  return q > 0 && p > 0 ? q / p : null;
}

/** A byte limit, or null for `max` and the v1 "unlimited" values near 2^63. */
export function parseMemoryLimit(text: string): number | null {
  const t = text.trim();
  if (t === "" || t === "max" || t === "-1") return null;
  const n = Number(t);
  return Number.isFinite(n) && n >= 0 && n < 2 ** 53 ? n : null;
}

const read = (file: string): string | null => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
};

/** Directories from `leaf` up to `root`, leaf first; the root alone when `leaf` is not under it. */
function ancestry(root: string, path: string): string[] {
  // In a cgroup namespace /proc/self/cgroup may name a path that is not mounted here.
  let dir = join(root, path);
  if (!existsSync(dir)) dir = root;
  const dirs = [dir];
  while (dir !== root && dir.startsWith(root)) {
    dir = dirname(dir);
    dirs.push(dir);
  }
  return dirs;
}

const tightest = (values: (number | null)[]): number | null => {
  const set = values.filter((v): v is number => v !== null);
  return set.length ? Math.min(...set) : null;
};

/** Read this process's cgroup limits; null when there is no cgroup file system. */
export function readCgroupLimits(roots: Roots): CgroupLimits | null {
  const self = read(join(roots.proc, "self/cgroup"));
  if (self === null) return null;
  const { unified, controllers } = parseProcCgroup(self);
  if (unified !== null && existsSync(join(roots.cgroup, "cgroup.controllers"))) {
    const dirs = ancestry(roots.cgroup, unified);
    return {
      version: 2,
      cpuQuota: tightest(dirs.map((d) => parseCpuMaxFile(join(d, "cpu.max")))),
      memoryLimitBytes: tightest(dirs.map((d) => parseMemoryFile(join(d, "memory.max")))),
      memoryUsageBytes: parseMemoryFile(join(dirs[0]!, "memory.current")),
    };
  }
  if (!controllers.size) return null;
  const cpuMount = ["cpu,cpuacct", "cpu", "cpuacct,cpu"]
    .map((m) => join(roots.cgroup, m))
    .find((d) => existsSync(d));
  const memMount = join(roots.cgroup, "memory");
  const cpuDirs = cpuMount ? ancestry(cpuMount, controllers.get("cpu") ?? "/") : [];
  const memDirs = existsSync(memMount) ? ancestry(memMount, controllers.get("memory") ?? "/") : [];
  return {
    version: 1,
    cpuQuota: tightest(
      cpuDirs.map((d) => {
        const quota = Number(read(join(d, "cpu.cfs_quota_us"))?.trim() ?? "-1");
        const period = Number(read(join(d, "cpu.cfs_period_us"))?.trim() ?? "100000");
        return quota > 0 && period > 0 ? quota / period : null;
      }),
    ),
    memoryLimitBytes: tightest(memDirs.map((d) => parseMemoryFile(join(d, "memory.limit_in_bytes")))),
    memoryUsageBytes: memDirs.length ? parseMemoryFile(join(memDirs[0]!, "memory.usage_in_bytes")) : null,
  };
}

function parseCpuMaxFile(file: string): number | null {
  const text = read(file);
  return text === null ? null : parseCpuMax(text);
}

function parseMemoryFile(file: string): number | null {
  const text = read(file);
  return text === null ? null : parseMemoryLimit(text);
}
