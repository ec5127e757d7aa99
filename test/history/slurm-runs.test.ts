// compile --history learns from Slurm runs as from local ones: an exported array's slurm-JOB has no
// events.jsonl (no follower merges its tasks' files), so history used to leave it out of `auto`
// and learn nothing from it when named. The slurm-JOB here is made by the real exported sbatch
// script, run by hand as Slurm would run its two tasks (no cluster: SLURM_ARRAY_* set by the test).
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readHistory } from "../../src/history/read-history.js";
import { stepKey } from "../../src/history/step-key.js";
import * as runFolder from "../../src/report/run-folder.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { end, events, runEnd, runStart, start } from "../report/helpers/events.js";
import { exportArray, runTask } from "../report/helpers/exported-array.js";
import { NO_GPU } from "../report/helpers/runs.js";
import { writeRun } from "./helpers.js";

vi.mock("../../src/report/run-folder.js", async (original) => {
  const real = await original<typeof import("../../src/report/run-folder.js")>();
  return { ...real, readRunEvents: vi.fn(real.readRunEvents) };
});

const PIPELINE = [
  "version: 1",
  "name: tiles",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1] }",
  "    steps: [{ id: a, run: [sh, -c, 'sleep 0.2'], memory: numpy, estimate: 1h, timeout: 2m }]",
  "",
].join("\n");
const KEY = stepKey("p{i}", "a");

const t = tempDir();
afterAll(t.cleanup);
/** The project the array was exported from and ran in: p.yaml, plan.json, .gpuplan/runs/slurm-777. */
const project = join(t.dir, "project");
let plan: GpuplanPlan;
let measuredMs: number[];

beforeAll(() => {
  mkdirSync(project);
  exportArray(project, PIPELINE);
  for (const task of [0, 1]) {
    const r = runTask(project, "777", task);
    expect(r.status, r.stderr).toBe(0);
  }
  plan = JSON.parse(readFileSync(join(project, "plan.json"), "utf8"));
  measuredMs = ["0", "1"].map((i) => taskEnds(slurmRun(project), i)[0]!.durationMs);
}, 60_000);

const slurmRun = (dir: string) => join(dir, ".gpuplan/runs/slurm-777");
const taskFile = (run: string, i: string) => join(run, "slurm/events", `777_${i}.jsonl`);
const taskEnds = (run: string, i: string) =>
  readFileSync(taskFile(run, i), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.event === "gpu.step.end") as { durationMs: number; [k: string]: unknown }[];

const taskStart = (run: string, i: string) =>
  readFileSync(taskFile(run, i), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .find((e) => e.event === "gpu.step.start") as Record<string, unknown>;

/** A runs folder of its own holding a copy of slurm-777 (tests change it). */
function runsWithSlurm(): { runsDir: string; run: string } {
  const own = tempDir();
  afterAll(own.cleanup);
  const runsDir = join(own.dir, "runs");
  cpSync(slurmRun(project), join(runsDir, "slurm-777"), { recursive: true });
  return { runsDir, run: join(runsDir, "slurm-777") };
}

const pipelineFile = () => join(project, "p.yaml");
const localRun = (ms: number) =>
  events([
    [0, runStart(["p0", "p1"])],
    [1, start("p0", "a", "cpu")],
    [2, end("p0", "a", "cpu", ms)],
    [3, runEnd(ms, "ok", 1, 0)],
  ]);

describe("--history auto", () => {
  it("learns from an exported array's slurm-JOB, among the newest runs in the order gpuplan runs lists them", async () => {
    const { runsDir } = runsWithSlurm();
    // Five local runs that started before the array: the oldest is the sixth newest, left out.
    const locals = [1, 2, 3, 4, 5].map((d) => `2020010${d}T100000Z-aaaaaa`);
    for (const id of locals) writeRun(runsDir, id, plan, pipelineFile(), localRun(4000));
    // An array of another pipeline file (same name, another folder): left out, its events never read.
    const elsewhere = join(t.dir, "elsewhere");
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, "p.yaml"), PIPELINE);
    const other = join(runsDir, "slurm-888");
    cpSync(join(runsDir, "slurm-777"), other, { recursive: true });
    const journal = readFileSync(join(other, "journal.jsonl"), "utf8").replace(
      `"baseDir":${JSON.stringify(project)}`,
      `"baseDir":${JSON.stringify(elsewhere)}`,
    );
    writeFileSync(join(other, "journal.jsonl"), journal);
    const read = vi.mocked(runFolder.readRunEvents);
    read.mockClear();
    const history = await readHistory(["auto"], pipelineFile(), "tiles", runsDir);
    expect(history.runs).toEqual([...locals.slice(1), "slurm-777"]);
    expect(history.notes).toContain(`left out 1 run(s) of other pipeline files in ${runsDir}`);
    expect(read.mock.calls.map(([head]) => head.id)).not.toContain("slurm-888");
    expect(history.problems).toEqual([]);
    const samples = history.steps.get(KEY)!;
    expect(samples.durationsMs.sort()).toEqual([4000, 4000, 4000, 4000, ...measuredMs].sort());
    expect([...samples.durationRuns].sort()).toEqual([...locals.slice(1), "slurm-777"]);
  });

  it("through the CLI: says it learned from slurm-JOB and uses its tasks' durations", () => {
    // In the project itself: a copy elsewhere is another pipeline file (the journal names the folder).
    const r = gpuplan(["compile", "p.yaml", "--inventory", "node.json", "--history", "auto", "-o", "-"], {
      cwd: project,
      env: NO_GPU,
    });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "history: learned 1 step from 1 run (auto: the newest of this pipeline file): slurm-777",
    );
    const learned = JSON.parse(r.stdout).pipelines[0].steps[0].learned;
    expect(learned.estimateMs).toMatchObject({ fromFile: 3_600_000, samples: 2, runs: ["slurm-777"] });
  });
});

describe("--history slurm-JOB", () => {
  it("learns each task's steps, and an exported array's run lacking events.jsonl is no damage", async () => {
    const { runsDir } = runsWithSlurm();
    const history = await readHistory(["slurm-777"], pipelineFile(), "tiles", runsDir);
    expect(history.problems).toEqual([]);
    expect(history.runs).toEqual(["slurm-777"]);
    expect(history.steps.get(KEY)!.durationsMs.sort()).toEqual([...measuredMs].sort());
  });

  it("a damaged task file is a warning at its line; another pipeline's lines and a line still being written count for nothing", async () => {
    const { runsDir, run } = runsWithSlurm();
    const [ownEnd] = taskEnds(run, "0");
    // Task 0's file: a torn line, then an end of the other task's pipeline (outside text: not taken).
    const before = readFileSync(taskFile(run, "0"), "utf8").trimEnd().split("\n").length;
    appendFileSync(
      taskFile(run, "0"),
      `{"ts":"2026-\n${JSON.stringify({ ...ownEnd, pipeline: "p1", durationMs: 999_999, attempt: 7 })}\n`,
    );
    // Task 1 still running: its last line has no newline yet.
    appendFileSync(taskFile(run, "1"), `{"ts":"2026-11-27T10:00:00.000Z","event":"gpu.step.e`);
    const history = await readHistory(["slurm-777"], pipelineFile(), "tiles", runsDir);
    expect(history.problems).toEqual([
      expect.objectContaining({
        code: "history-damaged-run",
        severity: "warning",
        file: taskFile(run, "0"),
        line: before + 1,
        message: `run slurm-777: slurm/events/777_0.jsonl: 2 line(s) are not run events of its task and were left out (the first is line ${before + 1}); learned from what could be read`,
      }),
    ]);
    expect(history.steps.get(KEY)!.durationsMs.sort()).toEqual([...measuredMs].sort());
  });

  it("a requeued task that ran a step again gives that step one duration (its last), not two", async () => {
    const { runsDir, run } = runsWithSlurm();
    const [first] = taskEnds(run, "0");
    // Requeued after its step ended ok but before its journal said so: the step ran again as
    // attempt 2, which the file says twice (a second reading of the same end).
    const again = { ...first, ts: "2099-01-01T00:00:01.000Z", attempt: 2, durationMs: 5000 };
    // Its start, as every run writes an attempt's start before its end (an end without one is
    // another attempt's out of place, which the report and history leave unmatched).
    const startedAgain = { ...taskStart(run, "0"), ts: "2099-01-01T00:00:00.500Z", attempt: 2 };
    appendFileSync(
      taskFile(run, "0"),
      [
        {
          ts: "2099-01-01T00:00:00.000Z",
          event: "run.start",
          run: "slurm-777",
          pipeline: null,
          step: null,
          device: null,
          schema: "gpuplan/run-events@1",
          pipelines: ["p0"],
          runDir: run,
        },
        startedAgain,
        again,
        again,
      ]
        .map((e) => `${JSON.stringify(e)}\n`)
        .join(""),
    );
    const history = await readHistory(["slurm-777"], pipelineFile(), "tiles", runsDir);
    expect(history.problems).toEqual([]);
    expect(history.steps.get(KEY)!.durationsMs.sort()).toEqual([5000, measuredMs[1]!].sort());
  });
});

describe("a Slurm run's folder read for report and history", () => {
  it("has its tasks' steps once, whether or not a follower merged them into events.jsonl", async () => {
    const { run } = runsWithSlurm();
    const exported = await runFolder.readRunFolder(run);
    const ends = (f: typeof exported) => f.events.filter((e) => e.event === "gpu.step.end");
    expect(ends(exported).map((e) => e.pipeline)).toEqual(["p0", "p1"]);
    expect(exported.notes).toEqual([]);
    // A follower's events.jsonl: the tasks' events less their run.start and run.end, under its run
    // id, with an ending rewritten from Slurm's state. Nothing is added twice.
    const merged = ["0", "1"]
      .flatMap((i) => readFileSync(taskFile(run, i), "utf8").trim().split("\n"))
      .map((l) => JSON.parse(l))
      .filter((e) => e.event !== "run.start" && e.event !== "run.end")
      .map((e) => ({ ...e, run: "20261127T100000Z-abcdef" }))
      .map((e) =>
        e.event === "gpu.step.end" && e.pipeline === "p1"
          ? { ...e, status: "timeout", hint: "Slurm ended task TIMEOUT" }
          : e,
      );
    writeFileSync(join(run, "events.jsonl"), merged.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const followed = await runFolder.readRunFolder(run);
    expect(followed.events).toHaveLength(merged.length);
    expect(ends(followed).map((e) => [e.pipeline, e.event === "gpu.step.end" && e.status])).toEqual([
      ["p0", "ok"],
      ["p1", "timeout"],
    ]);
  });
});
