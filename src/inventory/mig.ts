/**
 * MIG instances. A CUDA process can use only one MIG instance, whatever CUDA_VISIBLE_DEVICES
 * names (NVIDIA MIG user guide, "CUDA Device Enumeration"), so a pipeline on several GPUs must
 * not be given any: all but one of its GPUs would sit unused while their slots and memory stay
 * held, and code that spreads over the GPUs it was told about fails.
 */
import type { GpuInfo } from "./types.js";

/** A device id (cuda:N/migK) or UUID (MIG-…) that names a MIG instance, as inventories and plans write them. */
export const isMigDevice = (id: string, uuid: string): boolean =>
  /\/mig[0-9]+$/.test(id) || uuid.startsWith("MIG-");

/** An inventory GPU that is a MIG instance (not a MIG-enabled parent, which is never scheduled). */
export const isMigInstance = (gpu: GpuInfo): boolean =>
  Boolean(gpu.mig?.parentUuid) || isMigDevice(gpu.id, gpu.uuid);

/**
 * How many of these GPUs share each one's memory: the compute instances of one MIG GPU instance
 * each report the GPU instance's whole memory (NVML does), yet hold it together. 1 for any other
 * GPU, and for a MIG instance whose GPU instance id the inventory does not give.
 */
export function memorySharers(gpus: readonly GpuInfo[]): (gpu: GpuInfo) => number {
  const gpuInstanceOf = (g: GpuInfo): string | undefined =>
    g.mig?.parentUuid && g.mig.gpuInstanceId !== undefined
      ? `${g.mig.parentUuid}/${g.mig.gpuInstanceId}`
      : undefined;
  const counts = new Map<string, number>();
  for (const g of gpus) {
    const key = gpuInstanceOf(g);
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return (g) => {
    const key = gpuInstanceOf(g);
    return key === undefined ? 1 : (counts.get(key) ?? 1);
  };
}
