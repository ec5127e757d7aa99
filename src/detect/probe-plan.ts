/**
 * What the probe children are asked to do: one task per vendor library found, and the facts
 * the child needs. Shared by detect() and by prestart.ts, which must ask for exactly the same.
 */
import { findLibraries, type LibraryLookup } from "./libraries.js";
import type { VendorProbeName } from "./probe-types.js";
import { rootsFrom } from "./roots.js";
import type { ChildOptions, ProbeTask } from "./spawn-child.js";
import { isAmdDriverLoaded } from "./sysfs.js";
import { usesCudaOrder } from "./visibility.js";

/** nvmlInit slower than this earns the persistence-mode hint. */
export const SLOW_INIT_MS = 1_000;

export const VENDOR_PROBES: VendorProbeName[] = ["nvml", "cuda", "rocm-smi", "amd-smi", "hip"];

/**
 * The probes that report memory and processes, which a run's sampler asks again and again
 * (memory-readings.ts) — not CUDA or HIP, which would create a context on every GPU.
 */
const MEMORY_PROBES: ReadonlySet<VendorProbeName> = new Set(["nvml", "rocm-smi", "amd-smi"]);

/** `tasks` less those no sampler reads. */
export function memoryTasks(tasks: readonly ProbeTask[]): ProbeTask[] {
  return tasks.filter((t) => MEMORY_PROBES.has(t.name));
}

/**
 * What a check's child of `group` may go on serving to the run's sampler (none: it exits as it
 * answers). Not after a HIP probe: hipInit starts the ROCm runtime, which opens /dev/kfd, so the
 * child would stay a GPU compute process for the whole run — listed in ROCm SMI's process lists
 * (the sampler's own readings), its memory counted as others', the GPUs kept awake. CUDA's probe
 * stays: cuInit and the device queries create no context, and NVML lists no process without one.
 */
export function servingTasks(group: readonly ProbeTask[]): ProbeTask[] {
  return group.some((t) => t.name === "hip") ? [] : memoryTasks(group);
}

export interface VendorProbePlan {
  libraries: Record<VendorProbeName, LibraryLookup>;
  /** Whether CUDA is probed only where NVML cannot tell all (DetectOptions.cudaOnlyIfNeeded, decided). */
  cudaOnlyIfNeeded: boolean;
  /** One per library found, in VENDOR_PROBES order; none means no child at all. */
  tasks: ProbeTask[];
  child: ChildOptions;
}

/** Whether a detection asked for DetectOptions.cudaOnlyIfNeeded can leave CUDA to NVML's failure. */
export function cudaOnlyIfNeeded(
  options: { cudaOnlyIfNeeded?: boolean; all?: boolean },
  env: NodeJS.ProcessEnv,
): boolean {
  // --all applies no visibility variable, so CUDA's order matters to nothing.
  return options.cudaOnlyIfNeeded === true && (options.all === true || !usesCudaOrder(env));
}

/** `onlyIfNeeded`: cudaOnlyIfNeeded's answer for this detection. */
export function planVendorProbes(env: NodeJS.ProcessEnv, onlyIfNeeded = false): VendorProbePlan {
  const libraries = findLibraries(env);
  const tasks: ProbeTask[] = [];
  for (const name of VENDOR_PROBES) {
    const lookup = libraries[name];
    if (!lookup.found) continue;
    // NVML is probed first (VENDOR_PROBES order), in the same child.
    tasks.push(
      name === "cuda" && onlyIfNeeded
        ? { name, library: lookup.path, unlessNvmlListed: true }
        : { name, library: lookup.path },
    );
  }
  // Only a child needs the amdgpu check.
  const amdDriverLoaded = tasks.length > 0 && isAmdDriverLoaded(rootsFrom(env));
  return {
    libraries,
    cudaOnlyIfNeeded: onlyIfNeeded,
    tasks,
    child: { env, slowInitMs: SLOW_INIT_MS, amdDriverLoaded },
  };
}
