/**
 * What one node of the type a plan was compiled for has: CPUs, memory, GPUs, shards per GPU and
 * the GRES type of each GPU model. Task requests are shares of it (a GPU's share of the CPUs and
 * memory), so they fit the nodes the tasks land on.
 */
import type { Inventory, ShortInventory } from "../inventory/types.js";

export interface NodeShape {
  /** Where the figures come from, said in the scripts: `node type h100x4-16cpu-16000mib`. */
  label: string;
  cpus: number;
  memoryBytes: number;
  /** Physical GPUs (MIG instances are part of theirs). */
  gpus: number;
  shardsPerGpu: number | null;
  /** GPU model name → GRES type (null: untyped), as `detect --slurm` found them. */
  gresTypes: ReadonlyMap<string, string | null>;
}

/** The node an inventory describes; `slurm` is the annotation `detect --slurm --save` writes. */
export function nodeShape(inventory: Inventory, label: string, slurm?: ShortInventory["slurm"]): NodeShape {
  return {
    label: slurm ? `node type ${slurm.node_type}` : label,
    cpus: inventory.cpu.usableCores,
    memoryBytes: inventory.cpu.memoryBytes,
    gpus: inventory.gpus.filter((g) => !g.mig?.parentUuid).length,
    shardsPerGpu: slurm?.shards_per_gpu ?? null,
    gresTypes: new Map((slurm?.gres ?? []).map((g) => [g.model, g.type])),
  };
}
