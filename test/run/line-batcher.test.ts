import { afterEach, describe, expect, it, vi } from "vitest";
import { createLineBatcher } from "../../src/run/record/line-batcher.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("line batcher", () => {
  it("by default writes what one turn of the event loop collected, in one write", async () => {
    const writes: string[] = [];
    const lines = createLineBatcher((text) => writes.push(text));
    lines.push("a\n");
    lines.push("b\n");
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(["a\nb\n"]);
  });

  it("with a delay, lines of several turns share one write, at most that late", async () => {
    vi.useFakeTimers();
    const writes: string[] = [];
    const lines = createLineBatcher((text) => writes.push(text), 20);
    lines.push("a\n");
    await vi.advanceTimersByTimeAsync(10);
    lines.push("b\n");
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    expect(writes).toEqual(["a\nb\n"]);
    lines.push("c\n");
    await vi.advanceTimersByTimeAsync(25);
    expect(writes).toEqual(["a\nb\n", "c\n"]);
  });

  it("flush() writes at once and cancels the pending write; a 64 KiB batch goes out without waiting", async () => {
    vi.useFakeTimers();
    const writes: string[] = [];
    const lines = createLineBatcher((text) => writes.push(text), 20);
    lines.push("a\n");
    lines.flush();
    expect(writes).toEqual(["a\n"]);
    await vi.advanceTimersByTimeAsync(50);
    expect(writes).toEqual(["a\n"]);
    const big = `${"x".repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) lines.push(big);
    expect(writes).toHaveLength(2);
    expect(writes[1]).toHaveLength(64 * 1024);
  });
});
