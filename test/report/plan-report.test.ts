// A plan's report before it runs (src/report/plan-report.ts): planned bars per GPU slot from the
// pipelines' estimated starts, the memory reserved on each GPU against its budget, and why each
// pipeline is where it is.
import { afterAll, describe, expect, it } from "vitest";
import { buildPlanReport } from "../../src/report/plan-report.js";
import { tempDir } from "../helpers/cli.js";
import { compileMixed } from "./helpers/mixed-plan.js";

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

describe("plan report model", () => {
  it("puts every pipeline in a slot of its GPU from its estimated start, steps one after the other", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { plan } = await compileMixed(t.dir);
    const model = buildPlanReport(plan!, "plan.json");
    const slots = plan!.registry.reduce((n, g) => n + g.maxPipelines, 0);
    expect(model.lanes.filter((l) => l.kind === "slot")).toHaveLength(slots);
    expect(model.lanes.filter((l) => l.kind === "host")).toHaveLength(1);
    expect(model.bars).toHaveLength(plan!.summary.steps);
    expect(model.bars.every((b) => b.outcome === "planned")).toBe(true);
    const big = plan!.pipelines.find((p) => p.name === "big")!;
    const bars = model.bars.filter((b) => model.pipelines[model.rows[b.row]!.pipeline] === "big");
    expect(bars.map((b) => [b.start, b.end])).toEqual([
      [big.estimatedStartMs, big.estimatedStartMs + 600_000],
      [big.estimatedStartMs + 600_000, big.estimatedStartMs + 720_000],
    ]);
    // Two pipelines never share a slot at the same time.
    for (const lane of model.lanes.keys()) {
      const mine = model.holds
        .filter((h) => h.lane === lane && h.kind === "slot")
        .sort((a, b) => a.start - b.start);
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.start).toBeGreaterThanOrEqual(mine[i - 1]!.end);
    }
    // The exclusive step holds its GPU's other slots while it runs.
    expect(model.holds.filter((h) => h.kind === "exclusive")).toHaveLength(
      plan!.registry.find((g) => g.gpu === big.gpu)!.maxPipelines - 1,
    );
    expect(model.header).toMatchObject({
      kind: "plan",
      planMakespanMs: plan!.summary.makespanMs,
      input: "plan.json",
    });
  });

  it("draws the memory each GPU's pipelines reserve over time, within its budget", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { plan } = await compileMixed(t.dir);
    const model = buildPlanReport(plan!, "plan.json");
    expect(model.memory.map((s) => s.gpu)).toEqual(plan!.registry.map((g) => g.gpu));
    for (const s of model.memory) {
      const g = plan!.registry.find((r) => r.gpu === s.gpu)!;
      expect(s).toMatchObject({
        kind: "reserved",
        budgetBytes: g.memoryBudgetBytes,
        totalBytes: g.memoryBytes,
      });
      for (const [, v] of s.points) expect(v).toBeLessThanOrEqual(g.memoryBudgetBytes);
      expect(s.points.at(-1)![1]).toBe(0);
    }
    // The A100 holds the 30 GiB pipeline: its reservation shows.
    const big = plan!.pipelines.find((p) => p.name === "big")!;
    const a100 = model.memory.find((s) => s.gpu === big.gpu)!;
    expect(Math.max(...a100.points.map((p) => p[1]))).toBeGreaterThanOrEqual(30 * 1024 ** 3);
  });

  it("says why each pipeline is where it is: a GPU too small, one it could use, the host", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { plan } = await compileMixed(t.dir);
    const model = buildPlanReport(plan!, "plan.json");
    const of = (name: string) => model.placements.find((p) => model.pipelines[p.pipeline] === name)!;
    const l4 = plan!.registry.find((g) => g.name === "NVIDIA L4")!;
    expect(of("big").notOn).toEqual([
      {
        gpu: l4.gpu,
        reason: expect.stringMatching(/^too small: step `train` needs 30 GiB, its budget is 18 GiB$/),
      },
    ]);
    const small = of("small-1");
    expect(small.notOn).toEqual([{ gpu: expect.any(String), reason: expect.stringMatching(/could run it/) }]);
    expect(of("tally")).toMatchObject({ gpus: [], notOn: [], note: "no GPU step: it runs on the host" });
  });
});
