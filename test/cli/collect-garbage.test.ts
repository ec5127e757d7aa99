// A big compile collects garbage between its phases (src/cli/collect-garbage.ts): what nothing
// references any more is gone after collectGarbage(), without --expose-gc on the command line.
import { expect, it } from "vitest";
import { collectGarbage } from "../../src/cli/collect-garbage.js";

it("frees 200 MB that nothing references, without --expose-gc", async () => {
  expect(process.execArgv).not.toContain("--expose-gc");
  await collectGarbage();
  const before = process.memoryUsage().heapUsed;
  let garbage: number[][] | undefined = Array.from({ length: 200 }, () => new Array(125_000).fill(1.5));
  const held = process.memoryUsage().heapUsed;
  expect(held - before).toBeGreaterThan(150e6);
  garbage = undefined;
  expect(garbage).toBeUndefined();
  await collectGarbage();
  expect(process.memoryUsage().heapUsed - before).toBeLessThan(50e6);
});
