/**
 * Where detection reads the kernel's files. Tests point these at fixture folders; a user
 * never needs to (GPUPLAN_PROC_ROOT, GPUPLAN_SYSFS_ROOT, GPUPLAN_CGROUP_ROOT).
 */
import { join } from "node:path";

export interface Roots {
  proc: string;
  sys: string;
  cgroup: string;
}

/** The /proc, /sys and cgroup roots for this environment. */
export function rootsFrom(env: NodeJS.ProcessEnv): Roots {
  const sys = env.GPUPLAN_SYSFS_ROOT || "/sys";
  return {
    proc: env.GPUPLAN_PROC_ROOT || "/proc",
    sys,
    cgroup: env.GPUPLAN_CGROUP_ROOT || join(sys, "fs/cgroup"),
  };
}
