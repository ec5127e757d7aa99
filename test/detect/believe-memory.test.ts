import { describe, expect, it } from "vitest";
import { believeMemory, believeProcessBytes } from "../../src/detect/believe-memory.js";
import { MAX_GPU_MEMORY_BYTES } from "../../src/inventory/limits.js";

const check = (raw: Parameters<typeof believeMemory>[0]) => {
  const notes: string[] = [];
  return { ...believeMemory(raw, "GPU 1", (n) => notes.push(n)), notes };
};

describe("believeMemory", () => {
  it("keeps plausible figures exactly, 1 PiB included", () => {
    expect(check({ total: 85899345920n, free: 80000000000n, used: 5899345920n })).toEqual({
      total: 85899345920,
      free: 80000000000,
      used: 5899345920,
      notes: [],
    });
    expect(check({ total: BigInt(MAX_GPU_MEMORY_BYTES) }).total).toBe(2 ** 50);
  });

  it("leaves a figure above 1 PiB unknown, with a note naming the GPU and the figure", () => {
    expect(check({ total: 2n ** 64n - 5n, free: 2n ** 64n - 5n, used: 0n })).toEqual({
      total: null,
      free: null,
      used: 0,
      notes: [
        "GPU 1: memory total 18446744073709551611 bytes (above 1 PiB), free 18446744073709551611 bytes (above 1 PiB) not believed: left unknown",
      ],
    });
    expect(check({ total: BigInt(MAX_GPU_MEMORY_BYTES) + 1n }).total).toBeNull();
  });

  it("leaves free or used above the total unknown (ROCm SMI and AMD SMI derive free from them)", () => {
    const r = check({ total: 1000n, used: 2000n });
    expect(r).toMatchObject({ total: 1000, used: null, free: null });
    expect(r.notes).toEqual(["GPU 1: memory used 2000 bytes (above the total) not believed: left unknown"]);
  });

  it("a process's bytes above 1 PiB are unknown", () => {
    expect(believeProcessBytes(123n)).toBe(123);
    expect(believeProcessBytes(2n ** 64n - 1n)).toBeNull();
  });
});
