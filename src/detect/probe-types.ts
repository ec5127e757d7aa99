/**
 * What the vendor probe child reports to the parent, one JSON object per line on fd 3.
 * Shared by both sides; the child imports these as types only, so nothing here loads.
 */
import type { ProbeReport } from "../inventory/types.js";

type ProbeName = ProbeReport["name"];
export type ProbeStatus = ProbeReport["status"];
/** The probes that call a vendor library, and so run in the child process. */
export type VendorProbeName = "nvml" | "cuda" | "rocm-smi" | "amd-smi" | "hip";

/** A GPU (or MIG instance) as one vendor library describes it, before merging. */
/** The name a GPU gets when its library cannot tell it (no such call, or the call failed). */
export const UNNAMED_NVIDIA_GPU = "NVIDIA GPU";

export interface RawGpu {
  /** The library's own enumeration index. */
  index: number;
  name: string;
  uuid: string | null;
  pciBusId: string | null;
  memoryBytes: number | null;
  freeMemoryBytes?: number | null;
  usedMemoryBytes?: number | null;
  computeCapability?: string | null;
  architecture?: string | null;
  brand?: string | null;
  serial?: string | null;
  numaNode?: number | null;
  cpuAffinity?: number[] | null;
  powerWatts?: number | null;
  temperatureC?: number | null;
  utilizationPercent?: number | null;
  /** NVML: null when MIG is unsupported or unknown. */
  migEnabled?: boolean | null;
  /** NVML: the MIG instances of a MIG-enabled GPU, in NVML's MIG index order. */
  migDevices?: RawMigDevice[];
  /** Compute processes on the GPU; null when the library cannot say (not [] — that means none). */
  processes?: RawProcess[] | null;
}

/** A process the vendor library says uses a GPU: only what the library knows (who it is comes from /proc). */
export interface RawProcess {
  pid: number;
  /** Null when the library does not know (NVML_VALUE_NOT_AVAILABLE, or a process on several AMD GPUs). */
  usedMemoryBytes: number | null;
  /** NVML on a MIG-enabled GPU: the MIG instance the process runs in. */
  gpuInstanceId?: number | null;
  computeInstanceId?: number | null;
}

export interface RawMigDevice {
  /** Index passed to nvmlDeviceGetMigDeviceHandleByIndex. */
  index: number;
  name: string;
  uuid: string;
  memoryBytes: number | null;
  freeMemoryBytes?: number | null;
  usedMemoryBytes?: number | null;
  gpuInstanceId: number | null;
  computeInstanceId: number | null;
  processes?: RawProcess[] | null;
}

/** One probe's answer. */
export interface ProbeResult {
  name: ProbeName;
  status: ProbeStatus;
  message: string;
  hint?: string;
  library?: string | null;
  version?: string | null;
  durationMs: number;
  /** Driver version as the library reports it (NVML, ROCm SMI kernel driver). */
  driverVersion?: string | null;
  /** The CUDA version the driver supports, "12.4" (NVML, or the CUDA driver API itself). */
  cudaVersion?: string | null;
  /** The vendor's return code of the failed init call, for the parent's second look. */
  initCode?: number;
  /** NVML: GPUs it counted but could not get a handle for (left out of `gpus`). */
  skippedDevices?: number;
  gpus: RawGpu[];
}

/** What the parent asks the child to do (argv[2], JSON). */
export interface ChildRequest {
  probes: { name: VendorProbeName; library: string; unlessNvmlListed?: true }[];
  /** An init call slower than this gets a hint (persistence mode for NVML). */
  slowInitMs: number;
  /** Whether the amdgpu kernel driver is loaded (read from sysfs by the parent). */
  amdDriverLoaded: boolean;
  /** The parent's pid: a child whose parent already died stops at once. */
  parentPid: number;
  /** A sampler: probe again for each line on stdin, until stdin ends (probe-server.ts). */
  serve?: boolean;
  /**
   * With `serve`: the probes the later rounds run (all of them when absent). A run's check
   * against the machine asks every probe once, then its child serves the sampler's memory
   * readings (run-prestart.ts, spawn-child.ts).
   */
  serveProbes?: VendorProbeName[];
}

/** Lines the child writes to fd 3. `call` marks the vendor call in flight, for crash reports. */
export type ChildMessage =
  | { type: "start"; probe: VendorProbeName }
  | { type: "call"; probe: VendorProbeName; call: string }
  | { type: "result"; result: ProbeResult }
  | { type: "done" };
