// compile --history (src/history/): estimates and VRAM learned from run folders, with provenance,
// the warnings (estimate off by more than 2×, VRAM over budget and what that changes), and the
// same plan bytes for the same runs in any order.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compilePlan } from "../../src/compile/compile.js";
import { learnEstimates, learnedVramBytes, median } from "../../src/history/learn-estimates.js";
import type { History } from "../../src/history/read-history.js";
import { stepKey } from "../../src/history/step-key.js";
import { loadPipelineFile } from "../../src/pipeline/load-pipeline.js";
import { checkPlan, parsePlanText } from "../../src/plan/read-plan.js";
import { readRunFolder } from "../../src/report/run-folder.js";
import { buildRunReport } from "../../src/report/run-report.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import { tempDir } from "../helpers/cli.js";
import { choose, GiB, inventory } from "../helpers/inventory.js";
import { end, events, runEnd, runStart, start } from "../report/helpers/events.js";
import { compileWithHistory, planFor, writeRun } from "./helpers.js";

const PIPELINE = `version: 1
name: learn
registry: { max_pipelines_per_gpu: 4 }
pipelines:
  - name: seg-{n}
    matrix: { n: [1, 2] }
    steps:
      - { id: load, run: [x], memory: numpy, estimate: 1s }
      - { id: segment, run: [x], memory: torch, vram: 4GiB, estimate: 10s, needs: [load] }
  - name: train
    steps:
      - { id: fit, run: [x], memory: torch, vram: 8GiB, estimate: 1m }
`;

// The L4 first: with the file's 8 GiB, train goes there; it really needs 21 GiB, more than its 18 GiB budget.
const MACHINE = choose(
  inventory([
    { name: "NVIDIA L4", memory: "24GiB", compute_capability: "8.9" },
    { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", compute_capability: "8.0" },
  ]),
);

const RUN_A = "20261123T100000Z-aaaaaa";
const RUN_B = "20261124T100000Z-bbbbbb";

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

async function setUp() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const file = join(t.dir, "learn.yaml");
  writeFileSync(file, PIPELINE);
  const runsDir = join(t.dir, ".gpuplan/runs");
  const plan = await planFor(file, MACHINE);
  const gpuOf = (name: string) => plan.pipelines.find((p) => p.name === name)!.steps.at(-1)!.device;
  const peak = (gib: number) => ({ peakVramBytes: Math.round(gib * GiB) });
  writeRun(
    runsDir,
    RUN_A,
    plan,
    file,
    events([
      [0, runStart(["seg-1", "seg-2", "train"])],
      [1, start("seg-1", "load", "cpu")],
      [2, end("seg-1", "load", "cpu", 1200)],
      [3, start("seg-2", "load", "cpu")],
      [4, end("seg-2", "load", "cpu", 800)],
      [5, start("seg-1", "segment", gpuOf("seg-1"))],
      [6, end("seg-1", "segment", gpuOf("seg-1"), 30_000, "ok", 1, peak(3))],
      [7, start("seg-2", "segment", gpuOf("seg-2"))],
      // A failed attempt's peak counts (it held that much), its duration does not.
      [8, end("seg-2", "segment", gpuOf("seg-2"), 5_000, "error", 1, peak(3.5))],
      [9, start("train", "fit", gpuOf("train"))],
      [10, end("train", "fit", gpuOf("train"), 50_000, "ok", 1, peak(20))],
      [11, runEnd(90_000, "failed", 4, 1)],
    ]),
  );
  writeRun(
    runsDir,
    RUN_B,
    plan,
    file,
    events([
      [0, runStart(["seg-1", "train"])],
      [1, start("seg-1", "load", "cpu")],
      [2, end("seg-1", "load", "cpu", 1000)],
      [3, start("seg-1", "segment", gpuOf("seg-1"))],
      [4, end("seg-1", "segment", gpuOf("seg-1"), 32_000, "ok", 1, peak(2))],
      [5, start("train", "fit", gpuOf("train"))],
      [6, end("train", "fit", gpuOf("train"), 70_000, "ok", 1, peak(21))],
      [7, runEnd(110_000, "ok", 3)],
    ]),
  );
  return { dir: t.dir, file, runsDir, typedPlan: plan };
}

const stepOf = (plan: GpuplanPlan, pipeline: string, step: string) =>
  plan.pipelines.find((p) => p.name === pipeline)!.steps.find((s) => s.id === step)!;

describe("compile --history", () => {
  it("replaces each step's estimate by the median of its ok attempts and its VRAM by the peak plus 10%, saying where each came from", async () => {
    const { file, runsDir } = await setUp();
    const r = await compileWithHistory(file, MACHINE, [RUN_B, RUN_A], runsDir);
    expect(r.history.runs).toEqual([RUN_A, RUN_B]);
    const plan = r.plan!;
    // Both expansions of the template learn the same values.
    for (const name of ["seg-1", "seg-2"]) {
      expect(stepOf(plan, name, "load")).toMatchObject({
        estimateMs: 1000,
        vramBytes: null,
        learned: { estimateMs: { fromFile: 1000, samples: 3, runs: [RUN_A, RUN_B] } },
      });
      expect(stepOf(plan, name, "load").learned!.vramBytes).toBeUndefined();
      expect(stepOf(plan, name, "segment")).toMatchObject({
        estimateMs: 31_000,
        vramBytes: learnedVramBytes(3.5 * GiB),
        learned: {
          estimateMs: { fromFile: 10_000, samples: 2, runs: [RUN_A, RUN_B] },
          vramBytes: {
            fromFile: 4 * GiB,
            peakBytes: 3.5 * GiB,
            headroom: 0.1,
            samples: 3,
            runs: [RUN_A, RUN_B],
          },
        },
      });
    }
    expect(stepOf(plan, "train", "fit")).toMatchObject({
      estimateMs: 60_000,
      vramBytes: learnedVramBytes(21 * GiB),
      learned: { vramBytes: { fromFile: 8 * GiB, peakBytes: 21 * GiB, samples: 2 } },
    });
    // The pipelines' estimates are the learned steps' sums.
    expect(plan.pipelines.find((p) => p.name === "seg-1")!.estimateMs).toBe(32_000);
    expect(learnedVramBytes(21 * GiB)).toBe(Math.ceil(21 * 1024 * 1.1) * 1024 ** 2);
    expect(median([5, 1, 3, 2])).toBe(3);
    expect(median([7])).toBe(7);
  });

  it("a peak of 0 is not a measurement: the typed vram stays (it learned vram: 0, which ran with no memory limit)", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "learn.yaml");
    writeFileSync(file, PIPELINE);
    const runsDir = join(t.dir, ".gpuplan/runs");
    const plan = await planFor(file, MACHINE);
    const gpu = stepOf(plan, "train", "fit").device;
    writeRun(
      runsDir,
      RUN_A,
      plan,
      file,
      events([
        [0, runStart(["train"])],
        [1, start("train", "fit", gpu)],
        [2, end("train", "fit", gpu, 50_000, "ok", 1, { peakVramBytes: 0 })],
        [3, runEnd(60_000, "ok", 1)],
      ]),
    );
    const r = await compileWithHistory(file, MACHINE, [RUN_A], runsDir);
    const fit = stepOf(r.plan!, "train", "fit");
    expect(fit.vramBytes).toBe(8 * GiB);
    expect(fit.learned).toEqual({ estimateMs: { fromFile: 60_000, samples: 1, runs: [RUN_A] } });
  });

  it("a peak larger than the pipeline's largest GPU is not learned, and said: one such reading set vram past every card", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "learn.yaml");
    writeFileSync(file, PIPELINE);
    const runsDir = join(t.dir, ".gpuplan/runs");
    const plan = await planFor(file, MACHINE);
    const gpu = stepOf(plan, "train", "fit").device;
    const card = plan.registry.find((r) => r.gpu === gpu)!.memoryBytes;
    writeRun(
      runsDir,
      RUN_A,
      plan,
      file,
      events([
        [0, runStart(["train"])],
        [1, start("train", "fit", gpu)],
        [2, end("train", "fit", gpu, 50_000, "ok", 1, { peakVramBytes: card + GiB })],
        [3, start("train", "fit", gpu, 2)],
        [4, end("train", "fit", gpu, 50_000, "ok", 2, { peakVramBytes: 12 * GiB })],
        [5, runEnd(60_000, "ok", 1)],
      ]),
    );
    const r = await compileWithHistory(file, MACHINE, [RUN_A], runsDir);
    expect(r.plan, r.problems.map((p) => p.message).join("\n")).toBeDefined();
    const fit = stepOf(r.plan!, "train", "fit");
    expect(fit.learned?.vramBytes).toMatchObject({ peakBytes: 12 * GiB, samples: 1 });
    expect(r.history.notes).toContain(
      `run ${RUN_A}: 1 peak reading(s) larger than the pipeline's largest GPU were not learned`,
    );
  });

  it("reads attempts as the report does: attempt 1's end out of place after attempt 2 started is not learned", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "learn.yaml");
    writeFileSync(file, PIPELINE);
    const runsDir = join(t.dir, ".gpuplan/runs");
    const plan = await planFor(file, MACHINE);
    const gpu = stepOf(plan, "train", "fit").device;
    const folder = writeRun(
      runsDir,
      RUN_A,
      plan,
      file,
      events([
        [0, runStart(["train"])],
        [1, start("train", "fit", gpu)],
        [2, end("train", "fit", gpu, 20_000, "oom", 1, { peakVramBytes: 10 * GiB })],
        [3, start("train", "fit", gpu, 2)],
        [4, end("train", "fit", gpu, 40_000, "ok", 2, { peakVramBytes: 12 * GiB })],
        // Attempt 1's end again, out of place (a merged or edited events.jsonl), saying otherwise.
        [5, end("train", "fit", gpu, 900_000, "ok", 1, { peakVramBytes: 20 * GiB })],
        [6, runEnd(60_000, "ok", 1)],
      ]),
    );
    const r = await compileWithHistory(file, MACHINE, [RUN_A], runsDir);
    const fit = stepOf(r.plan!, "train", "fit");
    expect(fit.estimateMs).toBe(40_000);
    expect(fit.learned).toMatchObject({
      estimateMs: { samples: 1 },
      vramBytes: { peakBytes: 12 * GiB, samples: 2 },
    });
    // What the report shows of the same run: the attempts history learned from.
    const report = buildRunReport(await readRunFolder(folder));
    expect(report.bars.map((b) => [b.attempt, b.status, b.durationMs])).toEqual([
      [1, "oom", 20_000],
      [2, "ok", 40_000],
    ]);
  });

  it("warns at the estimate that was off by more than 2×, and at a step over its VRAM budget with what changes", async () => {
    const { file, runsDir, typedPlan } = await setUp();
    const r = await compileWithHistory(file, MACHINE, [RUN_A, RUN_B], runsDir);
    const warnings = r.problems.filter((p) => p.severity === "warning");
    expect(warnings.map((w) => w.code).sort()).toEqual(["history-estimate-off", "history-vram-over-budget"]);
    const off = warnings.find((w) => w.code === "history-estimate-off")!;
    // Once for the template, at its `estimate: 10s` (line 9).
    expect(off).toMatchObject({ file, pointer: "/pipelines/0/steps/1/estimate", line: 9 });
    expect(off.message).toContain("took 31.0s (median of 2 ok attempt(s) in 2 run(s)); the file says 10.0s");
    expect(off.hint).toContain("estimate: 31.0s");
    const over = warnings.find((w) => w.code === "history-vram-over-budget")!;
    expect(over).toMatchObject({ file, pointer: "/pipelines/1/steps/0", line: 12 });
    expect(over.message).toContain(
      "held 21 GiB of VRAM at its peak (2 attempt(s) in 2 run(s)), over its budget of 8 GiB",
    );
    // With 8 GiB train shared the L4; with what it really holds only the A100 can take it.
    const [l4, a100] = typedPlan.registry;
    expect(typedPlan.pipelines.find((p) => p.name === "train")!.gpu).toBe(l4!.gpu);
    expect(r.plan!.pipelines.find((p) => p.name === "train")!.gpu).toBe(a100!.gpu);
    expect(over.message).toContain(`\`train\` moves from ${l4!.gpu} to ${a100!.gpu}`);
    // The hint gives a value the file can take, never below what is learned.
    expect(over.hint).toContain("set `vram: 23.2GiB` (the peak and 10% headroom)");
  });

  it("places pipelines exactly as a file that typed the learned values would (registry and assignment)", async () => {
    const { dir, file, runsDir } = await setUp();
    const learned = (await compileWithHistory(file, MACHINE, ["auto"], runsDir)).plan!;
    const typedFile = join(dir, "typed.yaml");
    writeFileSync(
      typedFile,
      PIPELINE.replace("vram: 4GiB, estimate: 10s", `vram: ${learnedVramBytes(3.5 * GiB)}, estimate: 31s`)
        .replace("vram: 8GiB, estimate: 1m", `vram: ${learnedVramBytes(21 * GiB)}, estimate: 1m`)
        .replace("estimate: 1s", "estimate: 1000ms"),
    );
    const typed = compilePlan(await loadPipelineFile(typedFile), MACHINE).plan!;
    expect(learned.registry).toEqual(typed.registry);
    expect(learned.summary).toEqual(typed.summary);
    expect(learned.pipelines.map((p) => [p.name, p.gpus, p.estimatedStartMs])).toEqual(
      typed.pipelines.map((p) => [p.name, p.gpus, p.estimatedStartMs]),
    );
  });

  it("writes the same bytes for the same runs, whatever order they are named in", async () => {
    const { file, runsDir } = await setUp();
    const a = await compileWithHistory(file, MACHINE, [RUN_A, RUN_B], runsDir);
    const b = await compileWithHistory(file, MACHINE, [RUN_B, RUN_A, RUN_B], runsDir);
    const c = await compileWithHistory(file, MACHINE, ["auto"], runsDir);
    expect(a.planText).toBeDefined();
    expect(b.planText).toBe(a.planText);
    expect(c.planText).toBe(a.planText);
    // The plan with its provenance is a valid plan (schemas/plan.schema.json) that run reads.
    const checked = await checkPlan(await parsePlanText("learned.json", a.planText!));
    expect(checked.problems).toEqual([]);
    expect(checked.plan!.pipelines[0]!.steps[0]!.learned).toBeDefined();
    // Without history no plan carries `learned`, so earlier plans stay byte for byte.
    const plain = compilePlan(await loadPipelineFile(file), MACHINE).planText!;
    expect(plain).not.toContain('"learned"');
  });
});

describe("compile --history with durations far off the file", () => {
  async function learnFrom(durationMs: number) {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "long.yaml");
    writeFileSync(
      file,
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [x], estimate: 1s }\n",
    );
    const runsDir = join(t.dir, ".gpuplan/runs");
    const plan = await planFor(file, MACHINE);
    writeRun(
      runsDir,
      RUN_A,
      plan,
      file,
      events([
        [0, runStart(["p"])],
        [1, start("p", "s", "cpu")],
        [2, end("p", "s", "cpu", durationMs)],
        [3, runEnd(durationMs, "ok", 1, 0)],
      ]),
    );
    return compileWithHistory(file, MACHINE, [RUN_A], runsDir);
  }

  it("hints an estimate the file takes, in the largest whole unit", async () => {
    for (const [ms, typed] of [
      [90_000_000, "25h"],
      [3 * 86_400_000, "3d"],
      [5_400_000, "90m"],
      [61_500, "62s"],
    ] as const) {
      const r = await learnFrom(ms);
      const off = r.problems.find((p) => p.code === "history-estimate-off")!;
      expect(off.hint).toBe(`set \`estimate: ${typed}\`, or keep compiling with --history`);
    }
  });

  it.each([1.7e308, 2 ** 53])(
    "learns no VRAM from a peak of %d bytes (past 1 PiB): the events line is damaged, never `InfinityGiB`",
    async (bytes) => {
      const t = tempDir();
      cleanups.push(t.cleanup);
      const file = join(t.dir, "learn.yaml");
      writeFileSync(file, PIPELINE);
      const runsDir = join(t.dir, ".gpuplan/runs");
      const plan = await planFor(file, MACHINE);
      const gpu = plan.pipelines.find((p) => p.name === "seg-1")!.steps.at(-1)!.device;
      writeRun(
        runsDir,
        RUN_A,
        plan,
        file,
        events([
          [0, runStart(["seg-1"])],
          [1, start("seg-1", "segment", gpu)],
          [2, end("seg-1", "segment", gpu, 30_000, "ok", 1, { peakVramBytes: bytes })],
          [3, runEnd(30_000, "ok", 1)],
        ]),
      );
      const r = await compileWithHistory(file, MACHINE, [RUN_A], runsDir);
      expect(r.problems.map((p) => p.code)).toContain("history-damaged-run");
      expect(JSON.stringify(r.problems)).not.toMatch(/Infinity|e\+/);
      expect(r.plan).toBeDefined();
    },
  );

  it("learns nothing from a duration of 1e300 ms: the events line is damaged, the plan one run takes", async () => {
    const r = await learnFrom(1e300);
    expect(r.problems.map((p) => p.code)).toEqual(["history-damaged-run"]);
    expect(r.plan!.summary.lowerBoundMs).toBe(1000);
  });
});

/** Samples that count how often they are read through (a median copies them to sort). */
class CountedReads extends Array<number> {
  static reads = 0;
  override [Symbol.iterator](): ArrayIterator<number> {
    CountedReads.reads++;
    return super[Symbol.iterator]();
  }
}

describe("a template of many expansions", () => {
  it("learns a step's median once, not once per expansion: 2,000 plates of 2,000 samples", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "learn.yaml");
    writeFileSync(file, PIPELINE);
    const seg = (await loadPipelineFile(file)).resolved!.pipelines.find((p) => p.template === "seg-{n}")!;
    const n = 2_000;
    const pipelines = Array.from({ length: n }, (_, i) => ({ ...seg, name: `seg-${i}` }));
    const history: History = {
      runs: [RUN_A],
      notes: [],
      problems: [],
      steps: new Map([
        [
          stepKey("seg-{n}", "segment"),
          {
            durationsMs: CountedReads.from({ length: n }, (_, i) => 1000 + ((i * 7919) % n)),
            durationRuns: new Set([RUN_A]),
            peaksBytes: Array.from({ length: n }, (_, i) => GiB + i),
            peakRuns: new Set([RUN_A]),
            budgetBytes: null,
          },
        ],
      ]),
    };
    CountedReads.reads = 0;
    const learned = learnEstimates(pipelines, history, file);
    // Counted, not timed: a 20,000-plate matrix sorted its 20,000 durations once per expansion
    // (two minutes of compile --history here); once per template is one read.
    expect(CountedReads.reads).toBe(1);
    expect(learned.learnedSteps).toBe(1);
    for (const p of [learned.pipelines[0]!, learned.pipelines[n - 1]!]) {
      const segment = p.steps.find((s) => s.id === "segment")!;
      expect(segment.estimateMs).toBe(median(history.steps.get(stepKey("seg-{n}", "segment"))!.durationsMs));
      expect(segment.learned?.vramBytes?.peakBytes).toBe(GiB + n - 1);
    }
  });
});

describe("a step with more samples than a call has arguments", () => {
  it("learns the highest of 200,000 peaks and the median of as many durations", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "learn.yaml");
    writeFileSync(file, PIPELINE);
    const loaded = await loadPipelineFile(file);
    // Math.max(...peaks) overflowed the stack here (from ~125,000): compile was an internal error.
    const n = 200_000;
    const peaksBytes = Array.from({ length: n }, (_, i) => (i === 123_456 ? 30 * GiB : GiB + i));
    const history: History = {
      runs: [RUN_A],
      notes: [],
      problems: [],
      steps: new Map([
        [
          stepKey("train", "fit"),
          {
            durationsMs: Array.from({ length: n }, (_, i) => 1000 + (i % 3)),
            durationRuns: new Set([RUN_A]),
            peaksBytes,
            peakRuns: new Set([RUN_A]),
            budgetBytes: null,
          },
        ],
      ]),
    };
    const learned = learnEstimates(loaded.resolved!.pipelines, history, file);
    const fit = learned.pipelines.find((p) => p.template === "train")!.steps[0]!;
    expect(fit.learned?.vramBytes?.peakBytes).toBe(30 * GiB);
    expect(fit.vramBytes).toBe(learnedVramBytes(30 * GiB));
    expect(fit.estimateMs).toBe(1001);
  });
});
