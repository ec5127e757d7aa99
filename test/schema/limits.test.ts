// The limits code checks across several values are the schemas' own maxima.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { MAX_GPU_MEMORY_BYTES, MAX_GPUS, MAX_SLOTS_PER_GPU } from "../../src/inventory/limits.js";

const schema = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "../../schemas", name), "utf8")) as {
    $defs: Record<string, { properties: Record<string, { maximum?: number; maxItems?: number }> }>;
  };

it("MAX_GPUS and MAX_SLOTS_PER_GPU are the schemas' maxima", () => {
  const inventory = schema("inventory.schema.json").$defs;
  expect(inventory.ShortGpu!.properties.count!.maximum).toBe(MAX_GPUS);
  expect(inventory.Inventory!.properties.gpus!.maxItems).toBe(MAX_GPUS);
  const pipeline = schema("pipeline.schema.json").$defs;
  expect(pipeline.Registry!.properties.max_pipelines_per_gpu!.maximum).toBe(MAX_SLOTS_PER_GPU);
  expect(pipeline.Pipeline!.properties.gpus!.maximum).toBe(MAX_GPUS);
});

it("MAX_GPU_MEMORY_BYTES (1 PiB) bounds every GPU memory figure of the inventory", () => {
  expect(MAX_GPU_MEMORY_BYTES).toBe(2 ** 50);
  const inventory = schema("inventory.schema.json").$defs;
  for (const field of ["memoryBytes", "freeMemoryBytes", "usedMemoryBytes"])
    expect(inventory.Gpu!.properties[field]!.maximum).toBe(MAX_GPU_MEMORY_BYTES);
  expect(inventory.GpuProcess!.properties.usedMemoryBytes!.maximum).toBe(MAX_GPU_MEMORY_BYTES);
});
