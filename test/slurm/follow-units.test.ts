// The pure parts of following a Slurm run: squeue's lines read back into task states, Slurm's
// endings as gpuplan outcomes (a pipeline whose task Slurm killed still gets its step events),
// and a task's pipeline bound to the GPUs Slurm allocated.
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Inventory } from "../../src/inventory/types.js";
import type { JournalState } from "../../src/run/record/journal.js";
import type { GpuplanPlan, PlannedPipeline } from "../../src/schema-types/plan.js";
import { bindToAllocatedGpus } from "../../src/slurm/bind-allocated-gpus.js";
import { checkRecordRoom } from "../../src/slurm/follow/record-room.js";
import { readSlurmRunProgress } from "../../src/slurm/follow/run-progress.js";
import { makeSlurmDirs, recordSize, recordText } from "../../src/slurm/follow/run-record.js";
import { parseSqueue } from "../../src/slurm/follow/squeue-tasks.js";
import { closeOutPipeline, type StepProgress, slurmEnding } from "../../src/slurm/follow/task-ending.js";
import { createTaskEventReader } from "../../src/slurm/follow/task-events.js";
import { describeEnding, describeFailure } from "../../src/ui/run/format.js";

const pad = (fields: string[]) => fields.map((f) => `${f.padEnd(20)}|`).join("");

describe("squeue's task lines", () => {
  it("reads state, reason (spaces and all), node and the wait status as exit code or signal", () => {
    const text = [
      pad(["12_0", "COMPLETED", "None", "node7", "0"]),
      pad(["12_1", "FAILED", "NonZeroExitCode", "node7", "768"]),
      pad(["12_2", "CANCELLED", "launch failed requeued held", "node8", "15"]),
      pad(["12_3", "RUNNING", "None", "node8", "0"]),
      pad(["12_[4-6,9%2]", "PENDING", "Resources", "", "0"]),
      "garbage line",
    ].join("\n");
    const tasks = parseSqueue(text);
    expect(tasks.map((t) => [t.task, t.state, t.reason, t.node, t.exitCode, t.signal])).toEqual([
      [0, "COMPLETED", null, "node7", 0, null],
      [1, "FAILED", "NonZeroExitCode", "node7", 3, null],
      [2, "CANCELLED", "launch failed requeued held", "node8", null, 15],
      [3, "RUNNING", null, "node8", null, null],
      [4, "PENDING", "Resources", null, null, null],
      [5, "PENDING", "Resources", null, null, null],
      [6, "PENDING", "Resources", null, null, null],
      [9, "PENDING", "Resources", null, null, null],
    ]);
    expect(new Set(tasks.map((t) => t.job))).toEqual(new Set(["12"]));
  });

  it("huge pending ranges: only the run's own arrays, below their task counts, and a bounded number in all", () => {
    const huge = Array.from({ length: 300 }, () =>
      pad(["13_[0-4000000000]", "PENDING", "Priority", "(null)", "0"]),
    );
    const text = [
      ...huge,
      pad(["12_[0-4000000000]", "PENDING", "Priority", "(null)", "0"]),
      pad(["12_7", "RUNNING", "None", "n1", "0"]),
    ].join("\n");
    const started = performance.now();
    const own = parseSqueue(text, new Map([["12", 3]]));
    expect(own.map((t) => `${t.job}_${t.task}`)).toEqual(["12_0", "12_1", "12_2"]);
    const all = parseSqueue(text);
    expect(all.length).toBeLessThanOrEqual(100_000);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("every task of the run's own arrays is read, past 100,000, each once; parts of a range squeue never prints read nothing", () => {
    // A run resumed many times: 150 arrays of 1,000 tasks, squeue's answers (asked in parts) read as one text.
    const counts = new Map<string, number>();
    const lines: string[] = [];
    for (let job = 1; job <= 150; job++) {
      counts.set(String(job), 1000);
      for (let t = 0; t < 1000; t++) lines.push(`${job}_${t}|PENDING|Priority|(null)|0|`);
    }
    lines.push(
      "1_0|PENDING|Priority|(null)|0|",
      "151_[1,,3]|PENDING|None|(null)|0|",
      "151_[-3]|PENDING|None|(null)|0|",
    );
    counts.set("151", 5);
    const tasks = parseSqueue(lines.join("\n"), counts);
    expect(tasks).toHaveLength(150_002);
    // The empty part of `1,,3` was task 0, `-3` tasks 0 to 3.
    expect(tasks.filter((t) => t.job === "151").map((t) => t.task)).toEqual([1, 3]);
  });
});

const step = (id: string, needs: string[] = []) =>
  ({
    id,
    device: "cuda:0",
    uuid: "GPU-a",
    needs,
    onOom: { retries: 0, fallback: null },
  }) as unknown as PlannedPipeline["steps"][number];
const pipeline = {
  name: "p1",
  gpus: ["cuda:0"],
  steps: [step("a"), step("b", ["a"]), step("c", ["b"])],
} as unknown as PlannedPipeline;

describe("Slurm's endings as gpuplan outcomes", () => {
  it("TIMEOUT is a timeout, OUT_OF_MEMORY (host memory) an error that says --mem, the rest errors with Slurm's state", () => {
    expect(slurmEnding({ state: "TIMEOUT", reason: "TimeLimit", exitCode: null })).toMatchObject({
      status: "timeout",
    });
    expect(slurmEnding({ state: "OUT_OF_MEMORY", reason: null, exitCode: null }).hint).toContain("--mem");
    expect(slurmEnding({ state: "NODE_FAIL", reason: null, exitCode: null }).hint).toContain("--requeue");
    expect(slurmEnding({ state: "CANCELLED", reason: null, exitCode: null }).hint).toContain("--resume");
    expect(slurmEnding({ state: "FAILED", reason: "NonZeroExitCode", exitCode: 2 })).toMatchObject({
      status: "error",
      hint: expect.stringContaining("exit 2"),
    });
  });

  it("the running step ends with Slurm's reason, the steps after it are skipped, settled ones are left alone", () => {
    const progress = new Map<string, StepProgress>([
      ["a", { phase: "settled" }],
      ["b", { phase: "running", device: "cuda:0", attempt: 1, startedMs: 1000 }],
    ]);
    const task = {
      job: "5",
      task: 1,
      name: "5_1",
      state: "TIMEOUT",
      reason: "TimeLimit",
      node: "n1",
      exitCode: null,
      signal: 15,
    };
    const drafts = closeOutPipeline(pipeline, progress, task, [], "/runs/x/slurm/logs/t.err", 61_000);
    expect(drafts.map((d) => [d.event, d.step])).toEqual([
      ["gpu.step.end", "b"],
      ["gpu.step.skip", "c"],
    ]);
    expect(drafts[0]).toMatchObject({ status: "timeout", durationMs: 60_000, attempt: 1, exitCode: null });
    expect(drafts[1]).toMatchObject({
      cause: "dependency-failed",
      reason: "its Slurm task 5_1 ended TIMEOUT",
    });
  });

  it("a task that failed before gpuplan ran: its first step fails with the exit and Slurm's log, the rest skipped", () => {
    const task = {
      job: "5",
      task: 0,
      name: "5_0",
      state: "FAILED",
      reason: "NonZeroExitCode",
      node: "n1",
      exitCode: 1,
      signal: null,
    };
    const drafts = closeOutPipeline(
      pipeline,
      new Map(),
      task,
      ["gpuplan: error: …  [gpu-missing]"],
      "/l.err",
      0,
    );
    expect(drafts.map((d) => [d.event, d.step])).toEqual([
      ["gpu.step.end", "a"],
      ["gpu.step.skip", "b"],
      ["gpu.step.skip", "c"],
    ]);
    expect(drafts[0]).toMatchObject({
      status: "error",
      exitCode: 1,
      stderrTail: ["gpuplan: error: …  [gpu-missing]"],
    });
  });

  it("a task Slurm ended with exit 0 before anything ran: the step's exit is unknown, not 0 (read as a worker that never answered)", () => {
    const task = {
      job: "5",
      task: 0,
      name: "5_0",
      state: "CANCELLED",
      reason: null,
      node: "n1",
      exitCode: 0,
      signal: null,
    };
    const [end] = closeOutPipeline(pipeline, new Map(), task, [], "/l.err", 0);
    expect(end).toMatchObject({ event: "gpu.step.end", status: "error", exitCode: null, signal: null });
    expect(end && "hint" in end ? end.hint : "").toContain("cancelled");
    expect(describeEnding(end as never)).not.toContain("without answering");
  });
});

describe("--bind-slurm-gpus", () => {
  const entry = (gpu: string, uuid: string) => ({
    gpu,
    uuid,
    name: "NVIDIA H100 80GB HBM3",
    backend: "cuda",
    pciBusId: null,
    memoryBytes: 85_520_809_984,
    memoryBudgetBytes: 64_000_000_000,
    maxPipelines: 1,
    limitedBy: "configured",
  });
  const plan = {
    settings: { memoryFraction: 0.75 },
    registry: [entry("cuda:0", "GPU-made-up-0"), entry("cuda:1", "GPU-made-up-1")],
    pipelines: [
      { name: "p0", gpus: ["cuda:0"], steps: [{ id: "a", device: "cuda:0", uuid: "GPU-made-up-0" }] },
      { name: "p1", gpus: ["cuda:1"], steps: [{ id: "a", device: "cuda:1", uuid: "GPU-made-up-1" }] },
    ],
  } as unknown as GpuplanPlan;
  const live = (index: number, name = "NVIDIA H100 80GB HBM3") => ({
    id: `cuda:${index}`,
    index,
    backend: "cuda",
    name,
    uuid: `GPU-live-${index}`,
    pciBusId: `0000:0${index}:00.0`,
    memoryBytes: 85_520_809_984,
    computeCapability: "9.0",
  });
  const inventory = (gpus: ReturnType<typeof live>[]) => ({ gpus }) as unknown as Inventory;

  it("the task's pipeline takes the allocated card's UUID; its plan id stays, other pipelines are untouched", () => {
    const bound = bindToAllocatedGpus(
      plan,
      [plan.pipelines[0]!],
      inventory([live(0), live(1), live(2), live(3)]),
      "2",
    );
    expect("plan" in bound).toBe(true);
    if (!("plan" in bound)) return;
    expect(bound.pipelines[0]!.steps[0]).toMatchObject({ device: "cuda:0", uuid: "GPU-live-2" });
    expect(bound.plan.registry[0]).toMatchObject({
      gpu: "cuda:0",
      uuid: "GPU-live-2",
      pciBusId: "0000:02:00.0",
    });
    expect(bound.plan.pipelines[1]!.steps[0]!.uuid).toBe("GPU-made-up-1");
  });

  it("no GPU list, a GPU the driver does not show, or another model: a located reason, nothing bound", () => {
    const message = (r: ReturnType<typeof bindToAllocatedGpus>) =>
      "problems" in r ? `${r.problems[0]!.code}: ${r.problems[0]!.message}` : "bound";
    const p0 = [plan.pipelines[0]!];
    expect(message(bindToAllocatedGpus(plan, p0, inventory([live(0)]), undefined))).toMatch(
      /^slurm-gpu-binding-failed: .*SLURM_STEP_GPUS \/ SLURM_JOB_GPUS is unset/,
    );
    expect(message(bindToAllocatedGpus(plan, p0, inventory([live(0)]), "3"))).toMatch(
      /GPU 3, which this node's cuda driver does not show/,
    );
    expect(message(bindToAllocatedGpus(plan, p0, inventory([live(0, "NVIDIA L4")]), "0"))).toMatch(
      /Slurm gave GPU 0 \(NVIDIA L4\), the plan's cuda:0 is NVIDIA H100 80GB HBM3/,
    );
  });
});

describe("a task's events file: outside text", () => {
  it("only run events by the schema, of the task's own pipeline and steps, are taken; null and the rest are left out", () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-task-events-"));
    try {
      const ts = "2026-11-27T10:00:00.000Z";
      const common = { ts, run: "task", device: "cuda:0" };
      const start = (p: string, st: string) => ({
        ...common,
        event: "gpu.step.start",
        pipeline: p,
        step: st,
        attempt: 1,
        logPath: "x",
      });
      const end = (st: string, status: unknown, durationMs: unknown = 5) => ({
        ...common,
        event: "gpu.step.end",
        pipeline: "p1",
        step: st,
        status,
        exitCode: 0,
        signal: null,
        durationMs,
        attempt: 1,
      });
      const lines = [
        "null",
        "[]",
        '"gpu.step.end"',
        "{not json",
        JSON.stringify(start("p1", "a")),
        JSON.stringify(start("nope", "a")), // another pipeline
        JSON.stringify(start("p1", "zz")), // a step the plan does not have
        JSON.stringify(end("a", "ok\u001b[5m")),
        JSON.stringify(end("a", "ok", "x")),
        JSON.stringify(end("a", { a: 1 })),
        JSON.stringify({ ...common, event: "slurm.task", pipeline: "p1", step: null, device: null }),
        JSON.stringify({
          ts,
          run: "task",
          event: "run.end",
          pipeline: null,
          step: null,
          device: null,
          status: "\u001b]0;PWNED",
        }),
        JSON.stringify(end("a", "ok")),
      ];
      mkdirSync(join(dir, "slurm/events"), { recursive: true });
      const file = join(dir, "slurm/events/5_1.jsonl");
      writeFileSync(file, `${lines.join("\n")}\n`);
      const reader = createTaskEventReader("r1", dir);
      const read = reader.read("5_1", pipeline);
      expect(read.ended).toBe(false);
      expect(read.events.map((e) => [e.event, e.pipeline, e.step, e.run])).toEqual([
        ["gpu.step.start", "p1", "a", "r1"],
        ["gpu.step.end", "p1", "a", "r1"],
      ]);
      expect(read.events[1]).toMatchObject({ status: "ok", durationMs: 5 });
      // A valid run.end ends the task.
      writeFileSync(
        file,
        `${JSON.stringify({ ts, run: "task", event: "run.end", pipeline: null, step: null, device: null, durationMs: 9, status: "ok", ok: 1, failed: 0, skipped: 0 })}\n`,
        { flag: "a" },
      );
      expect(reader.read("5_1", pipeline)).toEqual({ events: [], ended: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a line longer than any event (600 MiB of junk) is passed over, never held whole; the events after it are read", () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-task-events-"));
    try {
      mkdirSync(join(dir, "slurm/events"), { recursive: true });
      const file = join(dir, "slurm/events/5_1.jsonl");
      const ts = "2026-11-27T10:00:00.000Z";
      const common = { ts, run: "task", pipeline: "p1", step: "a", device: "cuda:0", attempt: 1 };
      const start = { ...common, event: "gpu.step.start", logPath: "x" };
      const end = {
        ...common,
        event: "gpu.step.end",
        status: "ok",
        exitCode: 0,
        signal: null,
        durationMs: 5,
      };
      const runEnd = {
        ts,
        run: "task",
        event: "run.end",
        pipeline: null,
        step: null,
        device: null,
        durationMs: 9,
        status: "ok",
        ok: 1,
        failed: 0,
        skipped: 0,
      };
      const reader = createTaskEventReader("r1", dir);
      // Sparse (no disk): a line of 600 MiB of NULs, more than one string holds — read whole, it
      // was ERR_STRING_TOO_LONG out of the follower.
      writeFileSync(file, `${JSON.stringify(start)}\n`);
      truncateSync(file, 600 * 1024 * 1024);
      expect(reader.read("5_1", pipeline).events.map((e) => e.event)).toEqual(["gpu.step.start"]);
      appendFileSync(file, `\n${JSON.stringify(end)}\n${JSON.stringify(runEnd)}\n`);
      const read = reader.read("5_1", pipeline);
      expect(read.events.map((e) => [e.event, e.step])).toEqual([["gpu.step.end", "a"]]);
      expect(read.ended).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a failure's status is escaped for display", () => {
    expect(describeFailure({ status: "ok\u001b[5m", exitCode: null, signal: null })).not.toContain("\u001b");
    expect(describeFailure({ status: "oom\u001b[5m", exitCode: 1, signal: null })).not.toContain("\u001b");
  });
});

describe("a run folder's slurm/ records", () => {
  it("are never written through a link planted in the run folder (slurm -> elsewhere)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-slurm-dirs-"));
    try {
      const run = join(dir, "run");
      mkdirSync(run);
      mkdirSync(join(dir, "elsewhere"));
      symlinkSync("../elsewhere", join(run, "slurm"));
      await expect(makeSlurmDirs(run)).rejects.toThrow(/is a symbolic link/);
      expect(existsSync(join(dir, "elsewhere", "logs"))).toBe(false);
      rmSync(join(run, "slurm"));
      await makeSlurmDirs(run);
      expect(existsSync(join(run, "slurm", "journals"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["a file", "slurm", (p: string) => writeFileSync(p, "x")],
    ["a FIFO", "slurm", (p: string) => execFileSync("mkfifo", [p])],
    ["a file", "slurm/events", (p: string) => writeFileSync(p, "x")],
    ["a FIFO", "slurm/journals", (p: string) => execFileSync("mkfifo", [p])],
  ])("%s standing where %s belongs: unwritable-file naming it, never EEXIST", async (kind, at, make) => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-slurm-dirs-"));
    try {
      const run = join(dir, "run");
      mkdirSync(join(run, "slurm"), { recursive: true });
      if (at === "slurm") rmSync(join(run, "slurm"), { recursive: true });
      make(join(run, at));
      const made = makeSlurmDirs(run);
      await expect(made).rejects.toThrow(
        `cannot make the run's Slurm records folder ${join(run, at)}: ${kind} stands there`,
      );
      await expect(made).rejects.toMatchObject({ code: "unwritable-file" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("task journals: a dangling link is damaged-run (not ENOENT out of gpuplan); a linked journals/ is not read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-slurm-journals-"));
    const own = {
      header: { type: "run", run: "r", startedAt: "", input: "", baseDir: "", pipelines: [] },
      completed: new Set<string>(),
      attempts: new Map<string, number>(),
      unfinished: [],
      entries: [],
    } as unknown as JournalState;
    try {
      const run = join(dir, "run");
      mkdirSync(join(run, "slurm/journals"), { recursive: true });
      symlinkSync(join(dir, "gone.jsonl"), join(run, "slurm/journals/7_0.jsonl"));
      await expect(readSlurmRunProgress(run, own)).rejects.toMatchObject({
        code: "damaged-run",
        message: expect.stringContaining("7_0.jsonl is a symbolic link"),
      });
      rmSync(join(run, "slurm/journals"), { recursive: true });
      mkdirSync(join(dir, "elsewhere"));
      symlinkSync(join(dir, "elsewhere"), join(run, "slurm/journals"));
      await expect(readSlurmRunProgress(run, own)).rejects.toMatchObject({
        code: "damaged-run",
        message: expect.stringContaining("journals is a symbolic link"),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("room in a run's slurm/jobs.json, before sbatch", () => {
  it("recordSize counts the bytes recordText writes (multi-byte text, escapes, keys of a hand edit kept)", () => {
    const records = [
      [],
      [{ job: "1", script: "01-cpu.sbatch", pipelines: ["a"] }],
      [
        { job: "1", script: "s", pipelines: ["a", 'é\n\u2028x"', "🙂"] },
        { job: "22", script: "ß", pipelines: ["b"], note: { k: [1, 2] } },
      ],
    ];
    for (const arrays of records)
      expect(recordSize(arrays, Number.POSITIVE_INFINITY)).toBe(Buffer.byteLength(recordText(arrays)));
  });

  it("a new run whose one submission would be past 64 MiB is refused (slurm-run-too-large), naming no run", () => {
    const arrays = [{ script: "01-cpu.sbatch", pipelines: ["x".repeat(64 * 1024 * 1024)] }];
    let thrown: unknown;
    try {
      checkRecordRoom(null, arrays);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({
      code: "slurm-run-too-large",
      message: expect.stringContaining(
        "the plan is too large for one run: slurm/jobs.json would be more than",
      ),
    });
    expect(checkRecordRoom(null, [{ script: "s", pipelines: ["a"] }])).toBeUndefined();
  });
});
