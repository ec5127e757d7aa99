/* Generated from schemas/targets.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * A GPU's software stack: cuda (NVIDIA) or rocm (AMD).
 */
export type GpuBackend = "cuda" | "rocm";

/**
 * What `gpuplan targets --json` prints: the built-in inventories `compile --target NAME` plans against, each in the short inventory form `compile --inventory` also reads.
 */
export interface GpuplanTargets {
  schema: "gpuplan/targets@1";
  targets: Target[];
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
