/**
 * Memory types (OpenHCS vocabulary): numpy lives in host memory, the rest on a GPU. Names are
 * case-sensitive, as the frameworks' own module names are. The list is the plan schema's
 * `MemoryType` (a pipeline file may name any string, so that a typo gets a did-you-mean).
 */
import { planSchema } from "../generated/schema-values.js";
import type { MemoryType, PlannedConversion } from "../schema-types/plan.js";

export type { MemoryType };
export const MEMORY_TYPES: readonly MemoryType[] = planSchema.enums.MemoryType;
const CPU_MEMORY_TYPES: ReadonlySet<string> = new Set<MemoryType>(["numpy"]);

/** Frameworks that exchange GPU arrays zero-copy through DLPack on the same device. */
const DLPACK_TYPES: ReadonlySet<string> = new Set(["cupy", "torch", "tensorflow", "jax"]);

export const isMemoryType = (name: string): name is MemoryType =>
  (MEMORY_TYPES as readonly string[]).includes(name);
export const isGpuType = (name: string): boolean => isMemoryType(name) && !CPU_MEMORY_TYPES.has(name);

export type ConversionKind = PlannedConversion["kind"];

/**
 * How data moves from one step's output type to the next step's input type. A GPU→GPU move
 * between frameworks that cannot share through DLPack (anything with pyclesperanto) must be
 * copied to host memory and back.
 */
export function classifyConversion(from: MemoryType, to: MemoryType): ConversionKind {
  const fromGpu = isGpuType(from);
  const toGpu = isGpuType(to);
  if (from === to) return "none";
  if (!fromGpu && !toGpu) return "none";
  if (!fromGpu) return "host-to-device";
  if (!toGpu) return "device-to-host";
  return DLPACK_TYPES.has(from) && DLPACK_TYPES.has(to) ? "dlpack" : "host-roundtrip";
}
