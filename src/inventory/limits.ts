/**
 * Sizes the schemas bound (their `maximum`s), restated for the checks that span several values;
 * test/schema/limits.test.ts keeps the two equal. They keep a mistaken or hostile inventory or
 * registry from making compile allocate per GPU slot without end.
 */

/** GPUs in one inventory, all entries together (inventory.schema.json `count`, `gpus`). */
export const MAX_GPUS = 1024;

/** Pipelines one GPU takes at once (pipeline.schema.json `max_pipelines_per_gpu`). */
export const MAX_SLOTS_PER_GPU = 1024;
