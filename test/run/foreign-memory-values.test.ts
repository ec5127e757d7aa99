// What a driver says other processes hold is bounded by the card (#16 item 3): a process list
// entry of 2⁶⁴−2 bytes (a driver bug, a value NVML means as "not available" but spelt otherwise)
// counts as the whole card taken, never as more — so `gpuplan locks` and the admission see 80 GiB,
// not 16 million TiB, and the JSON stays a number a reader can use. The process is this test's
// own (a real pid /proc describes), which no gpuplan slot holder started.
import { describe, expect, it } from "vitest";
import { foreignMemory } from "../../src/run/foreign-memory.js";
import type { GpuMemory } from "../../src/run/record/memory-snapshot.js";

const GiB = 1024 ** 3;
const card = (processes: GpuMemory["processes"], usedBytes: number | null = 2 * GiB): GpuMemory => ({
  gpu: "cuda:0",
  uuid: "GPU-aaaa",
  totalBytes: 80 * GiB,
  usedBytes,
  freeBytes: null,
  processes,
});

describe("foreign memory from hostile driver values", () => {
  it("a process said to hold 2⁶⁴−2 bytes counts as the whole card", async () => {
    const m = await foreignMemory([card([{ pid: process.pid, usedBytes: 2 ** 64 - 2 }])], [], process.env);
    expect(m.get("GPU-aaaa")).toBe(80 * GiB);
  });

  it("processes whose sum passes the card count as the card; a sane one as itself", async () => {
    const many = [1, 2, 3].map(() => ({ pid: process.pid, usedBytes: 50 * GiB }));
    expect((await foreignMemory([card(many)], [], process.env)).get("GPU-aaaa")).toBe(80 * GiB);
    const sane = await foreignMemory([card([{ pid: process.pid, usedBytes: 3 * GiB }])], [], process.env);
    expect(sane.get("GPU-aaaa")).toBe(3 * GiB);
  });

  it("without a process list, a used figure past the card counts as the card", async () => {
    const m = await foreignMemory([card(null, 2 ** 64)], [], process.env);
    expect(m.get("GPU-aaaa")).toBe(80 * GiB);
  });
});
