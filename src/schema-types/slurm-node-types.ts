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
  problems: ReportedProblem[];
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
