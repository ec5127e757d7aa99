/* Generated from schemas/targets.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * A GPU's software stack: cuda (NVIDIA) or rocm (AMD).
 */
export type GpuBackend = "cuda" | "rocm";

/**
 * What `gpuplan targets --json` prints: the built-in inventories `compile --target NAME` plans against, each in the short inventory form `compile --inventory` also reads, then the custom ones, and the problems of the custom target files.
 */
export interface GpuplanTargets {
  schema: "gpuplan/targets@1";
  targets: Target[];
  /**
   * What is wrong with the custom target files (an invalid inventory, a file of another kind), located in their files; a file with errors is left out of `targets`, and the command exits 1.
   */
  problems: ReportedProblem[];
}
export interface Target {
  /**
   * What --target takes (case-insensitive).
   */
  name: string;
  /**
   * The machine, with its vendor's figures.
   */
  description: string;
  inventory: ShortInventory;
}
/**
 * Hand-written inventory: GPU kinds with counts, and the CPU.
 */
export interface ShortInventory {
  gpus?: ShortInventoryGpu[];
  cpu: ShortInventoryCpu;
  slurm?: ShortInventorySlurm;
}
/**
 * One kind of GPU in the short form: `count` identical cards.
 */
export interface ShortInventoryGpu {
  name: string;
  /**
   * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
   */
  memory: number | string;
  /**
   * Identical cards of this kind; an inventory holds at most 1024 GPUs in all.
   */
  count?: number;
  backend?: GpuBackend & string;
  compute_capability?: string;
  /**
   * The cards' UUIDs: one per card (`count` of them), none twice in the inventory; without them each gets a stable synthetic one.
   */
  uuids?: string[];
}
export interface ShortInventoryCpu {
  threads: number;
  /**
   * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
   */
  memory?: number | string;
  model?: string;
}
/**
 * Set by `gpuplan detect --slurm`: the Slurm node type these figures describe, and how its GPUs are asked for (`--gres=gpu:TYPE:N`, `--gres=shard:TYPE:K`).
 */
export interface ShortInventorySlurm {
  node_type: string;
  partitions?: string[];
  nodes?: string[];
  gres: {
    /**
     * The `gpus[].name` this GRES is.
     */
    model: string;
    /**
     * The GRES type; null when the cluster's GPUs are untyped.
     */
    type: string | null;
    count: number;
  }[];
  /**
   * Shards (GPU sharing GRES) each GPU of the node has.
   */
  shards_per_gpu?: number;
}
/**
 * One problem gpuplan found in its input, located in its file: the same shape in a compile report's `problems` and a plan's `diagnostics`. Tools match on `code`, never on `message`.
 */
export interface ReportedProblem {
  /**
   * Stable kebab-case code, e.g. unknown-memory-type.
   */
  code: string;
  severity: "error" | "warning";
  message: string;
  /**
   * How to fix it.
   */
  hint?: string;
  /**
   * The file the problem is in, as the user named it.
   */
  file?: string;
  line?: number;
  column?: number;
  /**
   * RFC 6901 JSON pointer into the parsed file.
   */
  pointer?: string;
}
