/**
 * The hand-written inventory short form (`{ gpus: [{ name, memory, count }], cpu: { threads } }`)
 * expanded into a full inventory. GPUs without declared UUIDs get stable synthetic ones, so the
 * same file always gives the same plan.
 */
import { inventorySchema } from "../generated/schema-values.js";
import { sha256Hex } from "../text/sha256.js";
import { parseSize } from "../units/size.js";
import { VERSION } from "../version.js";
import { type GpuInfo, INVENTORY_SCHEMA, type Inventory, type ShortInventory } from "./types.js";

/** Defaults come from the schema (`default` keywords), never restated here. */
const { ShortGpu: GPU_DEFAULTS, ShortCpu: CPU_DEFAULTS } = inventorySchema.defaults;

/**
 * The seed of an inventory file's synthetic UUIDs. Never its path: `inv.yaml`, `./inv.yaml`, an
 * absolute path or one through a linked folder name the same file, yet gave other UUIDs, so another
 * fingerprint and a plan `--check` called stale. A UUID stays unique in its inventory by its
 * device id, and no synthetic one names a live GPU (a run binds them by model).
 */
export const INVENTORY_FILE_SEED = "file";

function syntheticUuid(seed: string): string {
  const h = sha256Hex(seed);
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function expandShortInventory(
  short: ShortInventory,
  source: "file" | "target",
  seed: string,
): Inventory {
  const gpus: GpuInfo[] = [];
  const perBackend = { cuda: 0, rocm: 0 };
  for (const kind of short.gpus ?? []) {
    const backend = kind.backend ?? GPU_DEFAULTS.backend;
    for (let i = 0; i < (kind.count ?? GPU_DEFAULTS.count); i++) {
      const index = perBackend[backend]++;
      gpus.push({
        id: `${backend}:${index}`,
        index,
        backend,
        name: kind.name,
        uuid: kind.uuids?.[i] ?? syntheticUuid(`${seed}|${backend}:${index}|${kind.name}`),
        pciBusId: null,
        memoryBytes: parseSize(kind.memory) ?? 0,
        freeMemoryBytes: null,
        computeCapability: kind.compute_capability ?? null,
        mig: null,
      });
    }
  }
  return {
    schema: INVENTORY_SCHEMA,
    gpuplanVersion: VERSION,
    source,
    cpu: {
      model: short.cpu.model ?? CPU_DEFAULTS.model,
      logicalCores: short.cpu.threads,
      usableCores: short.cpu.threads,
      memoryBytes: parseSize(short.cpu.memory ?? CPU_DEFAULTS.memory) ?? 0,
    },
    gpus,
    probes: [],
  };
}
