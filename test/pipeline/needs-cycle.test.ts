// One cycle finder for compile's needs-graph rule and a hand-edited plan's invariants; depth-first
// without recursion, so a long chain (each step needing the next) cannot overflow the stack.
import { describe, expect, it } from "vitest";
import { findNeedsCycle } from "../../src/pipeline/needs-cycle.js";

const step = (id: string, ...needs: string[]) => ({ id, needs });

describe("findNeedsCycle", () => {
  it("names the cycle, first id repeated at the end; none for a DAG", () => {
    expect(findNeedsCycle([step("a"), step("b", "a"), step("c", "b", "a")])).toBeUndefined();
    expect(findNeedsCycle([step("a", "c"), step("b", "a"), step("c", "b")])).toEqual(["a", "c", "b", "a"]);
    expect(findNeedsCycle([step("x"), step("a", "b"), step("b", "a")])).toEqual(["a", "b", "a"]);
  });

  it("ignores needs naming no step (said on their own)", () => {
    expect(findNeedsCycle([step("a", "nope"), step("b", "a")])).toBeUndefined();
  });

  it("200,000 steps each needing the next: no stack overflow, and the closing need is found", () => {
    const n = 200_000;
    const chain = Array.from({ length: n }, (_, i) => step(`s${i}`, ...(i + 1 < n ? [`s${i + 1}`] : [])));
    expect(findNeedsCycle(chain)).toBeUndefined();
    chain[n - 1]!.needs.push("s0");
    expect(findNeedsCycle(chain)).toHaveLength(n + 1);
  });
});
