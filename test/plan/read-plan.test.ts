// Reading a plan file: JSON fast, syntax and schema problems located, and a plan written before
// settings.workers became settings.maxParallelPipelines still read.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readPlanFile } from "../../src/plan/read-plan.js";
import { makePlan } from "../ui/run/fixtures.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const file = (name: string, text: string) => {
  dir ??= mkdtempSync(join(tmpdir(), "gpuplan-read-plan-"));
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe("readPlanFile", () => {
  it("reads a plan", async () => {
    const read = await readPlanFile(file("plan.json", JSON.stringify(makePlan())));
    expect(read.problems).toEqual([]);
    expect(read.plan?.settings.maxParallelPipelines).toBe(4);
  });

  it("reads a plan that still calls maxParallelPipelines workers", async () => {
    const plan = makePlan();
    const { maxParallelPipelines, ...settings } = plan.settings;
    const read = await readPlanFile(
      file("old.json", JSON.stringify({ ...plan, settings: { ...settings, workers: 3 } })),
    );
    expect(read.problems).toEqual([]);
    expect(read.plan?.settings.maxParallelPipelines).toBe(3);
    expect(read.plan?.settings).not.toHaveProperty("workers");
    expect(maxParallelPipelines).toBe(4);
  });

  it("reads a plan made before memory-aware packing with what its fields meant then", async () => {
    const plan = makePlan();
    const old = JSON.parse(JSON.stringify(plan));
    for (const e of old.registry) {
      delete e.warmReserveBytes;
      e.limitedBy = "memory";
    }
    for (const p of old.pipelines) {
      delete p.reservationBytes;
      p.peakVramBytes = p.gpu ? 6 * 1024 ** 3 : 0;
    }
    delete old.summary.lowerBoundBy;
    delete old.summary.lowerBoundTerms;
    old.summary.lowerBoundMs = 5000;
    const read = await readPlanFile(file("old.json", JSON.stringify(old)));
    expect(read.problems).toEqual([]);
    expect(read.plan?.registry.map((e) => e.warmReserveBytes)).toEqual([0, 0]);
    expect(read.plan?.pipelines.map((p) => p.reservationBytes / 1024 ** 3)).toEqual([6, 6, 6, 6, 0]);
    expect(read.plan?.summary).toMatchObject({
      lowerBoundBy: "gpu-slots",
      lowerBoundTerms: { longestPipelineMs: 1000, gpuSlotsMs: 5000, gpuMemoryMs: 0, hostLanesMs: 0 },
    });
  });

  it("a torn or foreign file is problems with a code, never a plan", async () => {
    const torn = await readPlanFile(file("torn.json", JSON.stringify(makePlan()).slice(0, 100)));
    expect(torn.plan).toBeUndefined();
    expect(torn.problems.map((p) => p.code)).toEqual(["plan-truncated"]);
    const foreign = await readPlanFile(file("other.json", JSON.stringify({ schema: "gpuplan/plan@1" })));
    expect(foreign.plan).toBeUndefined();
    expect(foreign.problems[0]).toMatchObject({ code: "invalid-plan", severity: "error" });
    expect(foreign.problems.length).toBeGreaterThan(1);
  });
});
