import { describe, expect, it } from "vitest";
import { stepOrder } from "../../src/plan/step-order.js";
import type { PlannedStep } from "../../src/schema-types/plan.js";

describe("step order", () => {
  it("orders steps by needs, keeping file order among ready steps", () => {
    const s = (id: string, needs: string[] = []) => ({ id, needs }) as unknown as PlannedStep;
    const order = stepOrder([s("report", ["b", "a"]), s("b", ["a"]), s("a"), s("lint")]);
    expect(order.map((x) => x.id)).toEqual(["a", "b", "report", "lint"]);
  });
});
