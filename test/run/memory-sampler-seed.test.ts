// The run's memory sampler answers its first readings from verification's (prepare-run.ts
// gpuReading) while that is as young as a reading of its own would be reused (200 ms), so the
// first steps do not wait for the sampler's child to start; after that, and for every prefetch,
// it asks its child (src/run/record/memory-snapshot.ts).
import { describe, expect, it } from "vitest";
import type { GpuMemoryReader } from "../../src/detect/memory-readings.js";
import type { GpuInfo } from "../../src/inventory/types.js";
import { createMemorySampler } from "../../src/run/record/memory-snapshot.js";
import { inventory } from "../helpers/inventory.js";

const [verified] = inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" }]).gpus as [GpuInfo];
const seedGpu: GpuInfo = { ...verified, usedMemoryBytes: 1_000, freeMemoryBytes: 2_000, processes: [] };
const childGpu: GpuInfo = { ...verified, usedMemoryBytes: 5_000, freeMemoryBytes: 6_000, processes: [] };

function countingReader(): GpuMemoryReader & { reads: number } {
  const reader = {
    reads: 0,
    async read() {
      reader.reads++;
      return [childGpu];
    },
    children: () => 1,
    close() {},
  };
  return reader;
}

const labels = new Map([[verified.uuid, "gpu0"]]);

describe("a memory sampler seeded with verification's reading", () => {
  it("answers from a fresh seed without asking its child", async () => {
    const reader = countingReader();
    const sampler = createMemorySampler(reader, labels, { gpus: [seedGpu], at: performance.now() });
    expect(await sampler.gpus()).toEqual([
      {
        gpu: "gpu0",
        uuid: verified.uuid,
        totalBytes: verified.memoryBytes,
        usedBytes: 1_000,
        freeBytes: 2_000,
        processes: [],
      },
    ]);
    expect(reader.reads).toBe(0);
  });

  it("asks its child when the seed is older than a reading would be reused", async () => {
    const reader = countingReader();
    const sampler = createMemorySampler(reader, labels, { gpus: [seedGpu], at: performance.now() - 250 });
    expect((await sampler.gpus())?.[0]?.usedBytes).toBe(5_000);
    expect(reader.reads).toBe(1);
  });

  it("a prefetch asks the child at once, and its answer replaces the seed", async () => {
    const reader = countingReader();
    const sampler = createMemorySampler(reader, labels, { gpus: [seedGpu], at: performance.now() });
    sampler.prefetch();
    expect(reader.reads).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect((await sampler.gpus())?.[0]?.usedBytes).toBe(5_000);
    expect(reader.reads).toBe(1);
  });

  it("without a reader, or with an empty seed, nothing is made up", async () => {
    expect(
      await createMemorySampler(null, labels, { gpus: [seedGpu], at: performance.now() }).gpus(),
    ).toBeNull();
    const reader = countingReader();
    const sampler = createMemorySampler(reader, labels, { gpus: [], at: performance.now() });
    expect((await sampler.gpus())?.[0]?.usedBytes).toBe(5_000);
    expect(reader.reads).toBe(1);
  });
});
