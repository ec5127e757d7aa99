/**
 * Live detection entry point. Until the vendor probes land this reports the CPU only, behind
 * the same interface compile and run use.
 */
import { availableParallelism, cpus, hostname, totalmem } from "node:os";
import type { DetectOptions, Inventory } from "../inventory/types.js";
import { INVENTORY_SCHEMA } from "../inventory/types.js";
import { VERSION } from "../version.js";

export async function detectInventory(_options: DetectOptions = {}): Promise<Inventory> {
  const logical = cpus().length || 1;
  return {
    schema: INVENTORY_SCHEMA,
    gpuplanVersion: VERSION,
    source: "detect",
    host: { hostname: hostname(), platform: process.platform, arch: process.arch },
    cpu: {
      model: cpus()[0]?.model ?? "unknown",
      logicalCores: logical,
      usableCores: availableParallelism(),
      memoryBytes: totalmem(),
    },
    gpus: [],
    probes: [],
  };
}
