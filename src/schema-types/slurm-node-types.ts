/* Generated from schemas/slurm-node-types.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What `gpuplan detect --slurm --json` prints: the partitions this user can submit to, and the cluster's node types (nodes with the same GPUs, shards, CPUs and memory), each with the inventory `compile --inventory` plans against.
 */
export interface GpuplanSlurmNodeTypes {
  schema: "gpuplan/slurm-node-types@1";
  /**
   * --partition, or null for every partition this user can submit to.
   */
  partition: string | null;
  partitions: SlurmPartition[];
  nodeTypes: SlurmNodeType[];
  problems: SlurmProblem[];
}
export interface SlurmPartition {
  name: string;
  isDefault: boolean;
  /**
   * sinfo's availability: up, down, drain, inact.
   */
  available: string;
}
export interface SlurmNodeType {
  /**
   * GPUs, CPUs and memory in one word, e.g. h100x4-16cpu-16000mib (--node-type).
   */
  name: string;
  nodes: string[];
  /**
   * Nodes where new jobs can start now (not down, drained, failing or not responding).
   */
  usableNodes: number;
  partitions: string[];
  cpus: number;
  /**
   * RealMemory less MemSpecLimit.
   */
  memoryBytes: number;
  gpus: NodeTypeGpu[];
  shardsPerGpu: number | null;
  /**
   * The short-form inventory for compile --inventory (schemas/inventory.schema.json); null when a GPU model is unknown.
   */
  inventory: null | {};
}
export interface NodeTypeGpu {
  /**
   * null for untyped GPUs (gpu:N).
   */
  gresType: string | null;
  count: number;
  /**
   * null when the GRES type names no known model.
   */
  model: string | null;
  memoryBytes: number | null;
}
export interface SlurmProblem {
  code: string;
  severity: "error" | "warning";
  message: string;
  hint?: string;
}
