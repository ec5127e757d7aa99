/**
 * Pinning a step to its GPU's local CPUs (the NUMA node the GPU hangs off), race-free: a child
 * inherits the CPU mask of the thread that starts it, so the starting thread takes the step's
 * mask for the length of the (synchronous) spawn call and gets its own back right after. The
 * step has its mask from its first instruction, before any runtime (OpenMP, PyTorch, nproc)
 * reads it to size its thread pools; setting it after the start would race with them.
 *
 * Linux with glibc only, through src/libc (sched_getaffinity/sched_setaffinity on the calling
 * thread, pid 0). Elsewhere, or when koffi cannot load, nothing is pinned.
 */
import { isMainThread } from "node:worker_threads";
import { loadLibc } from "../../../libc/libc.js";

/** cpu_set_t of 1024 CPUs, glibc's size; the kernel accepts any multiple of the word size. */
const MASK_BYTES = 128;

export interface AffinityControl {
  /** The CPUs this thread may run on now. */
  allowed(): number[];
  /** Runs `start` with this thread's mask narrowed to `cpus`, then restores it. */
  withCpus<T>(cpus: readonly number[], start: () => T): T;
}

let loading: Promise<AffinityControl | null> | undefined;
let loaded: AffinityControl | null = null;

export function loadAffinityControl(): Promise<AffinityControl | null> {
  loading ??= bind()
    .catch(() => null)
    .then((control) => {
      loaded = control;
      return control;
    });
  return loading;
}

/**
 * Runs a synchronous `start` pinned to `cpus` with the control loaded before (whoever chose the
 * CPUs did, through loadAffinityControl); unpinned when there is none.
 */
export function startPinned<T>(cpus: readonly number[] | null | undefined, start: () => T): T {
  return cpus?.length && loaded ? loaded.withCpus(cpus, start) : start();
}

async function bind(): Promise<AffinityControl | null> {
  // A worker thread's mask is its own, not the one the spawning code would change.
  if (process.platform !== "linux" || !isMainThread) return null;
  const libc = await loadLibc();
  if (!libc.glibc) return null;
  const getAffinity = libc.func<(pid: number, size: number, mask: Buffer) => number>(
    "int sched_getaffinity(int pid, size_t size, _Out_ uint8_t *mask)",
  );
  const setAffinity = libc.func<(pid: number, size: number, mask: Buffer) => number>(
    "int sched_setaffinity(int pid, size_t size, const uint8_t *mask)",
  );
  const own = Buffer.alloc(MASK_BYTES);
  if (getAffinity(0, MASK_BYTES, own) !== 0) return null;
  return {
    allowed() {
      const now = Buffer.alloc(MASK_BYTES);
      return getAffinity(0, MASK_BYTES, now) === 0 ? maskToCpus(now) : maskToCpus(own);
    },
    withCpus(cpus, start) {
      const saved = Buffer.alloc(MASK_BYTES);
      if (getAffinity(0, MASK_BYTES, saved) !== 0 || setAffinity(0, MASK_BYTES, cpusToMask(cpus)) !== 0) {
        // Not allowed here (a cpuset without them): start unpinned rather than not at all.
        return start();
      }
      try {
        return start();
      } finally {
        setAffinity(0, MASK_BYTES, saved);
      }
    },
  };
}

export function cpusToMask(cpus: readonly number[]): Buffer {
  const mask = Buffer.alloc(MASK_BYTES);
  for (const cpu of cpus) {
    if (cpu >= 0 && cpu < MASK_BYTES * 8) mask[cpu >> 3]! |= 1 << (cpu & 7);
  }
  return mask;
}

export function maskToCpus(mask: Buffer): number[] {
  const cpus: number[] = [];
  for (let i = 0; i < mask.length * 8; i++) if (mask[i >> 3]! & (1 << (i & 7))) cpus.push(i);
  return cpus;
}

/**
 * The CPUs to pin a step to: the local CPUs of every GPU it uses (their union), within the CPUs
 * gpuplan itself may use. null — do not pin — when a GPU's are unknown, when none of them is
 * allowed here, or when they are all the allowed CPUs anyway.
 */
export function stepCpus(
  gpuCpus: readonly (readonly number[] | undefined)[],
  allowed: readonly number[],
): number[] | null {
  if (gpuCpus.length === 0 || gpuCpus.some((c) => !c || c.length === 0)) return null;
  const wanted = new Set(gpuCpus.flatMap((c) => [...c!]));
  const cpus = allowed.filter((cpu) => wanted.has(cpu));
  return cpus.length === 0 || cpus.length === allowed.length ? null : cpus;
}
