/** Inventory types follow schemas/inventory.schema.json (generated into src/schema-types). */
export type {
  CpuInfo,
  Drivers,
  GpuInfo,
  GpuProcess,
  Inventory,
  ProbeReport,
  ShortInventory,
  Visibility,
} from "../schema-types/inventory.js";

import type { Inventory } from "../schema-types/inventory.js";

export const INVENTORY_SCHEMA = "gpuplan/inventory@1" as const;

export interface DetectOptions {
  /** Ignore CUDA_VISIBLE_DEVICES and friends: report every GPU on the host. */
  all?: boolean;
  /** Hard limit for the vendor probe child process, in milliseconds. */
  timeoutMs?: number;
  /** The environment whose visibility variables apply (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** The GPU slot lock directory, to tell gpuplan's own processes on a GPU (default /tmp/gpuplan-locks). */
  lockDir?: string;
  /**
   * Probe CUDA only where NVML cannot tell all about the GPUs (one left out, or its UUID, PCI bus
   * id, memory or compute capability unknown), or where CUDA_VISIBLE_DEVICES names devices
   * by index (CUDA's own order, unless CUDA_DEVICE_ORDER=PCI_BUS_ID): compile and a run's check
   * need nothing else of it, and cuInit costs ~200 ms on a real GPU. The CUDA probe then reports
   * `skipped`. `gpuplan detect` probes it always (its report shows CUDA's order and version).
   */
  cudaOnlyIfNeeded?: boolean;
}

/** Hardware behind an interface (STYLE.md §9): compile and run only see this. */
export type DetectInventory = (options?: DetectOptions) => Promise<Inventory>;
