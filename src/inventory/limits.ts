/**
 * Sizes the schemas bound (their `maximum`s), restated for the checks that span several values;
 * test/schema/limits.test.ts keeps the two equal. They keep a mistaken or hostile inventory or
 * registry from making compile allocate per GPU slot without end.
 */

/** GPUs in one inventory, all entries together (inventory.schema.json `count`, `gpus`). */
export const MAX_GPUS = 1024;

/** Pipelines one GPU takes at once (pipeline.schema.json `max_pipelines_per_gpu`). */
export const MAX_SLOTS_PER_GPU = 1024;

/**
 * Bytes of memory a GPU, a MIG instance or a process on one may have: 1 PiB (2^50), well above
 * the largest GPU (a few hundred GB) and well inside exact JSON numbers (inventory.schema.json
 * `memoryBytes`, `freeMemoryBytes`, `usedMemoryBytes`). Detection leaves a larger figure unknown.
 */
export const MAX_GPU_MEMORY_BYTES = 2 ** 50;
