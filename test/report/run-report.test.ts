// The run report model (src/report/run-report.ts) from hand-written events: lanes from the slots
// pipelines held, host lanes for CPU pipelines, one bar per attempt with its outcome, waits, the
// axis across resumed sessions, warm-worker marks, memory series and the steps table.
import { describe, expect, it } from "vitest";
import { buildRunReport } from "../../src/report/run-report.js";
import type { RunEvent } from "../../src/run/record/events.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import {
  acquired,
  end,
  events,
  planOf,
  released,
  runEnd,
  runStart,
  start,
  waiting,
} from "./helpers/events.js";

const PLAN = `
version: 1
name: t
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 4 }
pipelines:
  - name: seg-{n}
    matrix: { n: [1, 2, 3] }
    steps:
      - { id: load, run: [x], memory: numpy, estimate: 1s }
      - { id: fit, run: [x], memory: torch, vram: 8GiB, estimate: 2s, needs: [load], on_oom: { retries: 1, fallback: cpu } }
  - name: tally
    steps:
      - { id: sum, run: [x], memory: numpy, estimate: 1s }
`;

const folder = (plan: GpuplanPlan | null, evs: RunEvent[], tails = new Map<string, string[]>()) => ({
  runDir: ".gpuplan/runs/20261123T100000Z-abcdef",
  id: "20261123T100000Z-abcdef",
  header: null,
  plan,
  events: evs,
  stderrTails: tails,
  notes: [],
  firstBadLines: new Map(),
});

describe("run report model", () => {
  it("puts each pipeline's attempts in the slot it held, CPU pipelines in host lanes, one bar per attempt", async () => {
    const plan = await planOf(PLAN);
    const gpuOf = (name: string) => plan.pipelines.find((p) => p.name === name)!.gpu!;
    const g1 = gpuOf("seg-1");
    const model = buildRunReport(
      folder(
        plan,
        events([
          [0, runStart(["seg-1", "tally"])],
          [1, acquired("seg-1", g1, [1])],
          [2, start("seg-1", "load", "cpu")],
          [2, start("tally", "sum", "cpu")],
          [900, end("tally", "sum", "cpu", 898)],
          [1000, end("seg-1", "load", "cpu", 998)],
          [1001, start("seg-1", "fit", g1)],
          [3000, end("seg-1", "fit", g1, 1999)],
          [3001, released("seg-1", g1, [1])],
          [3002, runEnd(3002, "ok", 3)],
        ]),
      ),
    );
    // Every slot of the GPU the run's pipelines use (2; the plan's other GPU is not the run's), and one host lane.
    expect(model.lanes.filter((l) => l.kind === "slot")).toHaveLength(2);
    expect(model.lanes.filter((l) => l.kind === "host")).toHaveLength(1);
    expect(model.bars).toHaveLength(3);
    const lane = (b: number) => model.lanes[model.bars[b]!.lane]!;
    const barOf = (p: string, s: string) =>
      model.bars.findIndex(
        (b) => model.pipelines[model.rows[b.row]!.pipeline] === p && model.rows[b.row]!.step === s,
      );
    expect(lane(barOf("seg-1", "fit"))).toMatchObject({ kind: "slot", gpu: g1, index: 1 });
    // The host step of a GPU pipeline stays in its pipeline's slot (it holds it), marked as on the host.
    expect(lane(barOf("seg-1", "load"))).toMatchObject({ kind: "slot", gpu: g1, index: 1 });
    expect(model.bars[barOf("seg-1", "load")]!.onHost).toBe(true);
    expect(lane(barOf("tally", "sum"))).toMatchObject({ kind: "host", index: 0 });
    expect(model.holds).toEqual([expect.objectContaining({ kind: "slot", start: 1, end: 3001 })]);
    const fit = model.rows.find((r) => r.step === "fit" && model.pipelines[r.pipeline] === "seg-1")!;
    expect(fit).toMatchObject({
      outcome: "ok",
      attempts: 1,
      durationMs: 1999,
      estimateMs: 2000,
      vramBytes: 8 * 1024 ** 3,
    });
    expect(fit.estimateRatio).toBeCloseTo(0.9995);
    expect(fit.argv).toEqual(["x"]);
    // Rows for every step of the selected pipelines (the plan's order), none for the others.
    expect(model.rows.map((r) => `${model.pipelines[r.pipeline]}/${r.step}`)).toEqual([
      "seg-1/load",
      "seg-1/fit",
      "tally/sum",
    ]);
    expect(model.header).toMatchObject({ status: "ok", sessions: 1, makespanMs: 3002, wallMs: 3002 });
    expect(model.header.counts).toMatchObject({ steps: 3, ok: 3, attempts: 3, failed: 0 });
    expect(model.planned.map((p) => [p.start, p.end])).toContainEqual([1000, 3000]);
  });

  it("puts CPU steps a GPU pipeline ran holding no slot in host lanes, never in slot lanes its GPU does not have", async () => {
    // A pipeline gives its slot back for its CPU steps (#12 item 13): three GPU pipelines of one
    // 2-slot GPU load on the host at once, holding nothing; one then takes a slot for its fit, the
    // run is interrupted before the others do.
    const plan = await planOf(PLAN.replace("n: [1, 2, 3]", "n: [1, 2, 3, 4, 5]"));
    const byGpu = new Map<string, string[]>();
    for (const p of plan.pipelines.filter((x) => x.gpu !== null))
      byGpu.set(p.gpu!, [...(byGpu.get(p.gpu!) ?? []), p.name]);
    const [gpu, names] = [...byGpu].find(([, list]) => list.length >= 3)!;
    const [a, b, c] = names as [string, string, string];
    const model = buildRunReport(
      folder(
        plan,
        events([
          [0, runStart([a, b, c])],
          [1, start(a, "load", "cpu")],
          [1, start(b, "load", "cpu")],
          [1, start(c, "load", "cpu")],
          [500, end(a, "load", "cpu", 499)],
          [501, acquired(a, gpu, [0])],
          [502, start(a, "fit", gpu)],
          [900, end(a, "fit", gpu, 398)],
          [901, released(a, gpu, [0])],
          [950, end(b, "load", "cpu", 949, "interrupted")],
          [950, end(c, "load", "cpu", 949, "interrupted")],
          [951, runEnd(951, "interrupted", 2)],
        ]),
      ),
    );
    const maxPipelines = plan.registry.find((r) => r.gpu === gpu)!.maxPipelines;
    expect(model.lanes.filter((l) => l.kind === "slot" && l.gpu === gpu)).toHaveLength(maxPipelines);
    expect(model.lanes.filter((l) => l.kind === "host")).toHaveLength(3);
    const laneOf = (p: string, step: string) =>
      model.lanes[
        model.bars.find(
          (x) => model.pipelines[model.rows[x.row]!.pipeline] === p && model.rows[x.row]!.step === step,
        )!.lane
      ]!;
    for (const p of [a, b, c]) expect(laneOf(p, "load")).toMatchObject({ kind: "host" });
    expect(laneOf(a, "fit")).toMatchObject({ kind: "slot", gpu, index: 0 });
  });

  it("colours what happened: retried, CPU fallback, failed, timed out, interrupted, never started", async () => {
    const plan = await planOf(PLAN);
    const g = (name: string) => plan.pipelines.find((p) => p.name === name)!.gpu!;
    const model = buildRunReport(
      folder(
        plan,
        events([
          [0, runStart(["seg-1", "seg-2", "seg-3", "tally"])],
          [1, acquired("seg-1", g("seg-1"), [0])],
          [2, start("seg-1", "fit", g("seg-1"))],
          [10, end("seg-1", "fit", g("seg-1"), 8, "oom", 1, { framework: "pytorch" })],
          [
            10,
            {
              event: "gpu.step.retry",
              pipeline: "seg-1",
              step: "fit",
              device: g("seg-1"),
              attempt: 2,
              of: 3,
              reason: "oom",
            },
          ],
          [10, start("seg-1", "fit", g("seg-1"), 2)],
          [20, end("seg-1", "fit", g("seg-1"), 10, "oom", 2)],
          [
            20,
            {
              event: "gpu.step.retry",
              pipeline: "seg-1",
              step: "fit",
              device: "cpu",
              attempt: 3,
              of: 3,
              reason: "oom",
              nextDevice: "cpu",
            },
          ],
          [20, start("seg-1", "fit", "cpu", 3)],
          [90, end("seg-1", "fit", "cpu", 70, "ok", 3)],
          [1, acquired("seg-2", g("seg-2"), [0])],
          [2, start("seg-2", "load", "cpu")],
          [50, end("seg-2", "load", "cpu", 48, "timeout")],
          [
            50,
            {
              event: "gpu.step.skip",
              pipeline: "seg-2",
              step: "fit",
              device: g("seg-2"),
              reason: "needs seg-2/load, which failed",
              cause: "dependency-failed",
            },
          ],
          [2, waiting("seg-3", g("seg-3"))],
          [60, end("seg-3", "load", g("seg-3"), 58, "lock-timeout", 1, { hint: "raise --lock-timeout" })],
          [3, start("tally", "sum", "cpu")],
        ]),
      ),
    );
    const outcomes = model.bars.map(
      (b) =>
        `${model.pipelines[model.rows[b.row]!.pipeline]}/${model.rows[b.row]!.step}#${b.attempt}:${b.outcome}`,
    );
    expect(outcomes.sort()).toEqual(
      [
        "seg-1/fit#1:retried",
        "seg-1/fit#2:retried",
        "seg-1/fit#3:fallback",
        "seg-2/load#1:timeout",
        "tally/sum#1:interrupted",
      ].sort(),
    );
    const row = (p: string, s: string) =>
      model.rows.find((r) => model.pipelines[r.pipeline] === p && r.step === s)!;
    expect(row("seg-1", "fit")).toMatchObject({ outcome: "fallback", attempts: 3 });
    expect(row("seg-2", "fit")).toMatchObject({
      outcome: "skipped",
      skipReason: "needs seg-2/load, which failed",
    });
    expect(row("seg-3", "load")).toMatchObject({ outcome: "failed", attempts: 0, waitMs: 58 });
    expect(row("seg-3", "fit")).toMatchObject({ outcome: "not-run" });
    // The run never ended: gpuplan died, or it still runs. What ran last ends with the last event.
    expect(model.header.status).toBe("unfinished");
    expect(model.bars.find((b) => b.outcome === "interrupted")).toMatchObject({ status: null, end: 90 });
    expect(model.header.counts).toMatchObject({
      ok: 1,
      failed: 2,
      oom: 2,
      timeout: 1,
      retried: 2,
      fallback: 1,
      interrupted: 1,
      skipped: 1,
      notRun: 2,
    });
    // A pipeline waiting for a slot shows in its GPU's queue until the wait ends.
    expect(model.queues).toEqual([
      {
        gpu: g("seg-3"),
        points: [
          [2, 1],
          [90, 0],
        ],
        max: 1,
      },
    ]);
  });

  it("lays resumed sessions end to end, cutting a long pause, and marks steps kept from before", async () => {
    const plan = await planOf(PLAN);
    const hour = 3_600_000;
    const model = buildRunReport(
      folder(
        plan,
        events([
          [0, runStart(["tally"])],
          [0, start("tally", "sum", "cpu")],
          [1000, end("tally", "sum", "cpu", 1000)],
          [1000, runEnd(1000, "interrupted", 1)],
          [hour, runStart(["tally"])],
          [
            hour,
            {
              event: "gpu.step.skip",
              pipeline: "tally",
              step: "sum",
              device: "cpu",
              reason: "completed in an earlier run",
              cause: "completed",
            },
          ],
          [hour + 10, runEnd(10, "ok", 1)],
        ]),
      ),
    );
    expect(model.header).toMatchObject({ sessions: 2, status: "ok", makespanMs: 1010, wallMs: hour + 10 });
    expect(model.axis.breaks).toEqual([{ at: 1000, pausedMs: hour - 1000 }]);
    // The pause is drawn as 3% of the work, not as an hour.
    expect(model.axis.spanMs).toBe(1000 + 30 + 10);
    expect(model.bars).toEqual([expect.objectContaining({ outcome: "kept", start: 0, end: 1000 })]);
    expect(model.rows[0]).toMatchObject({ step: "sum", outcome: "kept" });
    expect(model.skips).toEqual([
      expect.objectContaining({ at: 1030, cause: "completed", lane: model.bars[0]!.lane }),
    ]);
    expect(model.header.counts).toMatchObject({ kept: 1, ok: 0 });
  });

  it("draws an exclusive step's wait in its lane and its hold of the GPU's other slots", async () => {
    const plan = await planOf(PLAN);
    const gpu = plan.pipelines[0]!.gpu!;
    const model = buildRunReport(
      folder(
        plan,
        events([
          [0, runStart(["seg-1"])],
          [0, acquired("seg-1", gpu, [0])],
          [10, waiting("seg-1", gpu, "fit", 2)],
          [500, acquired("seg-1", gpu, [0, 1], 490, "fit")],
          [500, start("seg-1", "fit", gpu)],
          [900, end("seg-1", "fit", gpu, 400)],
          [900, released("seg-1", gpu, [0, 1], "fit")],
          [901, released("seg-1", gpu, [0])],
        ]),
      ),
    );
    const own = model.lanes.findIndex((l) => l.gpu === gpu && l.index === 0);
    const other = model.lanes.findIndex((l) => l.gpu === gpu && l.index === 1);
    expect(model.waits).toEqual([{ lane: own, start: 10, end: 500, row: expect.any(Number) }]);
    expect(model.holds.filter((h) => h.kind === "exclusive")).toEqual([
      expect.objectContaining({ lane: other, start: 500, end: 900 }),
    ]);
    expect(model.rows.find((r) => r.step === "fit")!.waitMs).toBe(490);
  });

  it("marks a warm worker's load on its attempt and a reuse on the next", async () => {
    const plan = await planOf(PLAN);
    const worker = { model_key: "m", allocated_devices: ["cpu"] };
    const model = buildRunReport(
      folder(
        plan,
        events([
          [0, runStart(["tally", "seg-1"])],
          [0, start("tally", "sum", "cpu")],
          [
            5,
            {
              event: "gpu.model.load_start",
              pipeline: "tally",
              step: "sum",
              device: "cpu",
              ...worker,
              ready_timeout_ms: 1000,
            },
          ],
          [
            805,
            {
              event: "gpu.model.load_complete",
              pipeline: "tally",
              step: "sum",
              device: "cpu",
              ...worker,
              duration_ms: 800,
              pid: 7,
            },
          ],
          [900, end("tally", "sum", "cpu", 900)],
          [900, start("seg-1", "load", "cpu")],
          [
            900,
            {
              event: "gpu.model.cache_reuse",
              pipeline: "seg-1",
              step: "load",
              device: "cpu",
              ...worker,
              idle_ms: 0,
            },
          ],
          [950, end("seg-1", "load", "cpu", 50)],
        ]),
      ),
    );
    expect(model.bars.map((b) => [b.load, b.reused])).toEqual([
      [[5, 805], false],
      [null, true],
    ]);
  });

  it("has one memory series per GPU (and host memory), with the plan's budgets", async () => {
    const plan = await planOf(PLAN);
    const [a, b] = plan.registry;
    const reading = (gpu: string, uuid: string, used: number) => ({
      gpu,
      uuid,
      usedBytes: used,
      freeBytes: 100 - used,
      totalBytes: 100,
    });
    const snap = (at: string, gpus: unknown[]) => ({
      event: "gpu.memory.snapshot",
      pipeline: "seg-1",
      step: "fit",
      device: a!.gpu,
      at,
      gpus,
    });
    const model = buildRunReport(
      folder(
        plan,
        events([
          [0, runStart(["seg-1"])],
          [0, snap("step.start", [reading(a!.gpu, a!.uuid, 10)])],
          [0, snap("step.start", [reading(a!.gpu, a!.uuid, 10)])],
          [50, snap("step.end", [reading(a!.gpu, a!.uuid, 40), reading(b!.gpu, b!.uuid, 5)])],
          [
            60,
            {
              ...snap("step.end", [{ gpu: "cpu", usedBytes: 7, freeBytes: 93, totalBytes: 100 }]),
              device: "cpu",
            },
          ],
          [70, snap("oom", [{ ...reading(a!.gpu, a!.uuid, 0), usedBytes: null }])],
        ]),
      ),
    );
    expect(model.memory.map((s) => [s.gpu, s.budgetBytes, s.points])).toEqual([
      [
        a!.gpu,
        a!.memoryBudgetBytes,
        [
          [0, 10],
          [50, 40],
        ],
      ],
      [b!.gpu, b!.memoryBudgetBytes, [[50, 5]]],
      ["host", null, [[60, 7]]],
    ]);
  });

  it("ends an attempt only with its own end: another attempt's, out of place, closes nothing", () => {
    const model = buildRunReport(
      folder(
        null,
        events([
          [0, runStart(["a"])],
          [1, start("a", "s", "cpu", 1)],
          [2, end("a", "s", "cpu", 1, "error", 1)],
          [3, start("a", "s", "cpu", 2)],
          // Attempt 1's end again, written out of place: attempt 2 goes on.
          [4, end("a", "s", "cpu", 1, "error", 1)],
          [9, end("a", "s", "cpu", 6, "ok", 2)],
        ]),
      ),
    );
    expect(model.rows[0]).toMatchObject({ outcome: "ok", attempts: 2 });
    expect(model.bars.map((b) => [b.attempt, b.status, b.durationMs])).toEqual([
      [1, "error", 1],
      [2, "ok", 6],
    ]);
  });

  it("reports a run without a plan from its events alone (lanes from the slots it saw)", () => {
    const model = buildRunReport(
      folder(
        null,
        events([
          [0, runStart(["a"])],
          [0, acquired("a", "cuda:3", [2])],
          [1, start("a", "s", "cuda:3")],
          [5, end("a", "s", "cuda:3", 4)],
        ]),
      ),
    );
    expect(model.lanes.map((l) => l.label)).toEqual(["cuda:3 slot 0", "cuda:3 slot 1", "cuda:3 slot 2"]);
    expect(model.bars[0]!.lane).toBe(2);
    expect(model.rows[0]).toMatchObject({ estimateMs: null, argv: [], outcome: "ok" });
    expect(model.header.planMakespanMs).toBeNull();
  });

  it("draws an event stamped far outside its session (year 9999, before the start, after the folder was read) at the time of the event before it, and says so", () => {
    const far = (list: RunEvent[], i: number, ts: string) => list.map((e, j) => (j === i ? { ...e, ts } : e));
    // An ended session: its run.end says how long it ran (6 ms).
    const ended = events([
      [0, runStart(["a"])],
      [1, start("a", "s", "cpu")],
      [3, end("a", "s", "cpu", 2)],
      [4, start("a", "t", "cpu")],
      [5, end("a", "t", "cpu", 1)],
      [6, runEnd(6)],
    ]);
    const model = buildRunReport(folder(null, far(ended, 2, "9999-12-31T23:59:59.999Z")));
    expect(model.axis.spanMs).toBe(6);
    expect(model.header.endedAt).toBe("2026-11-23T10:00:00.006Z");
    expect(model.bars.map((b) => [b.start, b.end])).toEqual([
      [1, 1],
      [4, 5],
    ]);
    expect(model.header.notes).toContain(
      "events.jsonl: 1 event(s) have a time outside their run session and are drawn at the time of the event before them (the first: gpu.step.end of a/s at 9999-12-31T23:59:59.999Z)",
    );
    // Long before the run started: the same.
    const early = buildRunReport(folder(null, far(ended, 3, "1970-01-01T00:00:00.000Z")));
    expect(early.axis.spanMs).toBe(6);
    expect(early.header.notes.join("\n")).toContain("1 event(s) have a time outside their run session");
    // A session that never ended (killed): nothing can be later than the folder was read.
    const killed = events([
      [0, runStart(["a"])],
      [1, start("a", "s", "cpu")],
      [2, end("a", "s", "cpu", 1)],
      [3, start("a", "t", "cpu")],
    ]);
    const readAtMs = Date.parse("2026-11-23T10:05:00.000Z");
    const cut = buildRunReport({ ...folder(null, far(killed, 3, "2300-01-01T00:00:00.000Z")), readAtMs });
    expect(cut.axis.spanMs).toBe(2);
    // Plausible times are drawn as stamped: a run read the minute it ended has no note.
    const fine = buildRunReport({ ...folder(null, ended), readAtMs });
    expect(fine.axis.spanMs).toBe(6);
    expect(fine.header.notes.join("\n")).not.toContain("outside their run session");
    // A laptop suspended for 10 h mid-step: the wall clock counts the sleep, run.end's durationMs
    // (a monotonic clock) does not. Every time is real and drawn as stamped.
    const hour = 3_600_000;
    const slept = events([
      [0, runStart(["a"])],
      [60_000, start("a", "s", "cpu")],
      [10 * hour + 60_000, end("a", "s", "cpu", 61_000)],
      [10 * hour + 61_000, runEnd(121_000)],
    ]);
    const woke = buildRunReport({ ...folder(null, slept), readAtMs: Date.parse("2026-11-24T00:00:00.000Z") });
    expect(woke.axis.spanMs).toBe(10 * hour + 61_000);
    expect(woke.header.notes.join("\n")).not.toContain("outside their run session");
  });

  it("names the run by its folder, not by its journal's header, and notes a header that names another run", () => {
    const evs = events([
      [0, runStart(["a"])],
      [1, start("a", "s", "cpu")],
      [2, end("a", "s", "cpu", 1)],
    ]);
    const header = {
      run: "r",
      startedAt: "2026-11-23T10:00:00.000Z",
      input: "p.yaml",
      baseDir: ".",
      pipelines: ["a"],
    };
    const model = buildRunReport({ ...folder(null, evs), header });
    expect(model.header).toMatchObject({
      title: "run 20261123T100000Z-abcdef",
      runId: "20261123T100000Z-abcdef",
    });
    expect(model.header.notes).toContain(
      "journal.jsonl: its header names run r, not 20261123T100000Z-abcdef (the folder's name): a copied or renamed run folder?",
    );
    const same = buildRunReport({
      ...folder(null, evs),
      header: { ...header, run: "20261123T100000Z-abcdef" },
    });
    expect(same.header.notes.join("\n")).not.toContain("its header names run");
  });
  it("draws a step of 130,000 attempts (a torn or hostile events file) in one lane with its peak, not an internal error", () => {
    // Each attempt's list was copied per attempt (minutes), and the attempts' bounds and peaks were
    // spread as arguments to Math.min/max, which overflows the stack past ~125,000: report ended
    // with an internal error.
    const n = 130_000;
    const drafts: [number, Record<string, unknown>][] = [[0, runStart(["a"])]];
    for (let k = 1; k <= n; k++) {
      drafts.push([2 * k, start("a", "s", "cuda:0", k)]);
      drafts.push([2 * k + 1, end("a", "s", "cuda:0", 1, "ok", k, { peakVramBytes: k })]);
    }
    drafts.push([2 * n + 2, runEnd(2 * n + 2)]);
    const model = buildRunReport(folder(null, events(drafts)));
    expect(model.bars).toHaveLength(n);
    expect(new Set(model.bars.map((b) => b.lane)).size).toBe(1);
    expect(model.rows[0]).toMatchObject({ attempts: n, peakVramBytes: n });
  }, 60_000);
  it("a resumed run of 50,000 steps, all kept from its first session, draws every kept step", () => {
    // Each completed skip searched every attempt for the one it kept: quadratic, 7 s at 30,000
    // skips, minutes at 100,000.
    const n = 50_000;
    const names = Array.from({ length: n }, (_, k) => `p${k}`);
    const drafts: [number, Record<string, unknown>][] = [[0, runStart(names)]];
    for (const [k, p] of names.entries()) {
      drafts.push([1 + k, start(p, "s", "cpu")]);
      drafts.push([2 + k, end(p, "s", "cpu", 1)]);
    }
    drafts.push([n + 3, runEnd(n + 3, "interrupted")]);
    drafts.push([n + 10, runStart(names)]);
    for (const p of names)
      drafts.push([
        n + 11,
        {
          event: "gpu.step.skip",
          pipeline: p,
          step: "s",
          device: "cpu",
          reason: "completed",
          cause: "completed",
        },
      ]);
    drafts.push([n + 12, runEnd(2, "ok", n)]);
    // Its speed is a measurement, not a test (timed tests flake on shared machines): 21 s before,
    // ~2 s after, for this model (commit message). Here: every kept step is drawn.
    const model = buildRunReport(folder(null, events(drafts)));
    expect(model.rows.filter((r) => r.outcome === "kept")).toHaveLength(n);
    expect(model.bars.filter((b) => b.outcome === "kept")).toHaveLength(n);
  }, 60_000);
});
