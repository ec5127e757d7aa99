// Measuring a plan for stdout (src/plan/plan-size.ts): compile measures it before any of it goes
// out, and writes a small one from the pieces it measured instead of serialising it again.
import { describe, expect, it } from "vitest";
import { planBytesUpToLimit } from "../../src/plan/plan-size.js";

function* pieces(sizes: number[]): Generator<string> {
  for (const n of sizes) {
    yield "é".repeat(n / 2); // two bytes a character in UTF-8: bytes, not characters, are counted
  }
}

describe("planBytesUpToLimit", () => {
  it("keeps every piece, in order, while they come to at most the bytes asked for", () => {
    const r = planBytesUpToLimit(pieces([4, 6, 10]), 20);
    expect(r.bytes).toBe(20);
    expect(r.pieces).toEqual(["éé", "ééé", "ééééé"]);
  });

  it("keeps none once they come to more, and still counts them all", () => {
    const r = planBytesUpToLimit(pieces([4, 6, 12]), 20);
    expect(r).toEqual({ bytes: 22, pieces: undefined });
    expect(planBytesUpToLimit(pieces([4, 6])).pieces).toEqual(undefined);
  });
});
