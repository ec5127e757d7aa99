// `gpuplan runs`: the runs newest first with what a person needs to pick one (plan, start, wall
// time, outcomes, whether it can be resumed), --json valid against schemas/runs.schema.json, and
// --prune --keep N, which never removes a run that may be in use.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listRuns } from "../../src/runs/list-runs.js";
import { pruneRuns } from "../../src/runs/prune-runs.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";
import { NO_GPU, runCpuExample } from "./helpers/runs.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
const temp = () => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};
const lines = (list: unknown[]) => `${list.map((e) => JSON.stringify(e)).join("\n")}\n`;

/** A run folder with a journal (header, steps, ends) and a plan named `plan`. */
function fakeRun(runs: string, id: string, journal: unknown[], plan: string | null = "demo"): string {
  const dir = join(runs, id);
  mkdirSync(join(dir, "logs"), { recursive: true });
  writeFileSync(join(dir, "journal.jsonl"), lines(journal));
  if (plan !== null)
    writeFileSync(
      join(dir, "plan.json"),
      `{\n  "schema": "gpuplan/plan@1",\n  "gpuplanVersion": "0.1.0",\n  "name": ${JSON.stringify(plan)},\n  "x": 1\n}\n`,
    );
  writeFileSync(join(dir, "logs/a@s.out.log"), "x".repeat(1000));
  return dir;
}
const header = (id: string, startedAt: string) => ({
  type: "run",
  run: id,
  startedAt,
  input: "plan file.json",
  baseDir: "/p",
  pipelines: ["a"],
});
const step = (status: string, pipeline = "a", s = "s") => ({
  type: "step",
  ts: "2026-11-23T10:00:01.000Z",
  pipeline,
  step: s,
  status,
  attempt: 1,
  device: "cpu",
  exitCode: 0,
  durationMs: 5,
});
const end = (ts: string, ok: number, failed: number, skipped: number, interrupted = false) => ({
  type: "end",
  ts,
  interrupted,
  ok,
  failed,
  skipped,
});

function fixtureRuns(): string {
  const runs = join(temp(), ".gpuplan/runs");
  fakeRun(runs, "20261123T100000Z-aaaaaa", [
    header("20261123T100000Z-aaaaaa", "2026-11-23T10:00:00.000Z"),
    step("ok"),
    end("2026-11-23T10:00:05.000Z", 1, 0, 0),
  ]);
  fakeRun(runs, "20261123T110000Z-bbbbbb", [
    header("20261123T110000Z-bbbbbb", "2026-11-23T11:00:00.000Z"),
    step("error"),
    step("skipped", "a", "t"),
    end("2026-11-23T11:01:00.000Z", 0, 1, 1),
  ]);
  fakeRun(runs, "20261123T120000Z-cccccc", [
    header("20261123T120000Z-cccccc", "2026-11-23T12:00:00.000Z"),
    step("ok"),
    end("2026-11-23T12:00:02.000Z", 1, 0, 0, true),
    end("2026-11-23T13:00:00.000Z", 2, 0, 0),
  ]);
  // Never ended: gpuplan was killed, or still runs.
  fakeRun(runs, "20261123T130000Z-dddddd", [
    header("20261123T130000Z-dddddd", "2026-11-23T13:00:00.000Z"),
    step("ok"),
    step("oom", "a", "t"),
  ]);
  // Damaged: no journal; and an old one.
  const damaged = fakeRun(runs, "20261123T140000Z-eeeeee", [], null);
  writeFileSync(join(damaged, "journal.jsonl"), "not json\n");
  const old = new Date("2026-01-01T00:00:00Z");
  utimesSync(damaged, old, old);
  // Not runs: another name, and a symlink named like a run.
  mkdirSync(join(runs, "notes"));
  symlinkSync(join(runs, "20261123T100000Z-aaaaaa"), join(runs, "20261123T150000Z-ffffff"));
  return runs;
}

describe("listing runs", () => {
  it("sums each run up from its journal, newest first", async () => {
    const runs = fixtureRuns();
    const list = await listRuns(runs);
    expect(list.map((r) => [r.id, r.status, r.sessions, r.ok, r.failed, r.skipped, r.resumable])).toEqual([
      ["20261123T140000Z-eeeeee", "damaged", 0, 0, 0, 0, false],
      ["20261123T130000Z-dddddd", "unfinished", 1, 1, 1, 0, true],
      ["20261123T120000Z-cccccc", "ok", 2, 2, 0, 0, false],
      ["20261123T110000Z-bbbbbb", "failed", 1, 0, 1, 1, true],
      ["20261123T100000Z-aaaaaa", "ok", 1, 1, 0, 0, false],
    ]);
    const failed = list[3]!;
    expect(failed).toMatchObject({
      plan: "demo",
      input: "plan file.json",
      startedAt: "2026-11-23T11:00:00.000Z",
      endedAt: "2026-11-23T11:01:00.000Z",
      wallMs: 60_000,
      resume: "gpuplan run 'plan file.json' --resume 20261123T110000Z-bbbbbb",
    });
    expect(failed.bytes).toBeGreaterThan(1000);
    expect(list[0]!.problem).toBe("its journal does not start with a run header");
    expect(list[1]!.problem).toMatch(/never ended/);
    // A run in use (the run-level lock) is running and cannot be resumed now.
    const inUse = await listRuns(runs, async (dir) => dir.endsWith("dddddd"));
    expect(inUse[1]).toMatchObject({ status: "running", resumable: false, resume: null });
  });
});

describe("a run resumed for some of its pipelines", () => {
  const two = (id: string) => ({ ...header(id, "2026-11-23T10:00:00.000Z"), pipelines: ["p1", "p2"] });
  const ran = (pipelines: string[], e: ReturnType<typeof end>) => ({ ...e, pipelines });

  it("stands over every pipeline it was started with: one an interrupt stopped and no session finished since leaves it interrupted and resumable", async () => {
    const runs = join(temp(), ".gpuplan/runs");
    const id = "20261123T100000Z-aaaaaa";
    const first = end("2026-11-23T10:00:01.000Z", 0, 0, 0, true);
    fakeRun(runs, id, [
      two(id),
      ran(["p1", "p2"], first),
      step("ok", "p1"),
      ran(["p1"], end("2026-11-23T10:05:00.000Z", 1, 0, 0)),
    ]);
    // An older gpuplan's end does not name its pipelines: its session ran them all.
    const old = "20261123T110000Z-bbbbbb";
    fakeRun(runs, old, [
      two(old),
      first,
      step("ok", "p1"),
      ran(["p1"], end("2026-11-23T10:05:00.000Z", 1, 0, 0)),
    ]);
    // Resumed for p2 as well: done. And a step that failed in an earlier session still fails the run.
    const done = "20261123T120000Z-cccccc";
    fakeRun(runs, done, [
      two(done),
      ran(["p1", "p2"], first),
      step("ok", "p1"),
      ran(["p1"], end("2026-11-23T10:05:00.000Z", 1, 0, 0)),
      step("ok", "p2"),
      ran(["p2"], end("2026-11-23T10:06:00.000Z", 1, 0, 0)),
    ]);
    const failed = "20261123T130000Z-dddddd";
    fakeRun(runs, failed, [
      two(failed),
      step("error", "p1"),
      ran(["p1", "p2"], end("2026-11-23T10:01:00.000Z", 0, 1, 0)),
      step("ok", "p2", "t"),
      ran(["p2"], end("2026-11-23T10:06:00.000Z", 1, 0, 0)),
    ]);
    const list = await listRuns(runs);
    expect(list.map((r) => [r.id, r.status, r.resumable])).toEqual([
      [failed, "failed", true],
      [done, "ok", false],
      [old, "interrupted", true],
      [id, "interrupted", true],
    ]);
    expect(list[3]!.resume).toBe(`gpuplan run 'plan file.json' --resume ${id}`);
  });
});

describe("pruning runs", () => {
  it("keeps the N newest and every run that may be in use; removes only real run folders", async () => {
    const runs = fixtureRuns();
    const now = () => Date.parse("2026-11-23T20:00:00Z");
    const result = await pruneRuns(await listRuns(runs), 1, { now });
    // Kept: the newest (damaged), the unfinished one (it may still run). Removed: the three that ended.
    expect(result).toEqual({
      keep: 1,
      removed: ["20261123T120000Z-cccccc", "20261123T110000Z-bbbbbb", "20261123T100000Z-aaaaaa"],
      inUse: ["20261123T130000Z-dddddd"],
      reasons: [],
      errors: [],
    });
    expect(readdirSync(runs).sort()).toEqual([
      "20261123T130000Z-dddddd",
      "20261123T140000Z-eeeeee",
      "20261123T150000Z-ffffff",
      "notes",
    ]);
  });

  it("asks the run-level lock when it can, and keeps a damaged folder that may be a run starting", async () => {
    const runs = fixtureRuns();
    const asked: string[] = [];
    const lock = async (dir: string) => {
      asked.push(dir.slice(-6));
      return dir.endsWith("bbbbbb");
    };
    const result = await pruneRuns(await listRuns(runs, lock), 0, {
      inUse: lock,
      now: () => Date.parse("2026-11-23T20:00:00Z"),
    });
    expect(result.inUse).toEqual(["20261123T110000Z-bbbbbb"]);
    expect(result.removed).toHaveLength(4);
    expect(asked).toContain("dddddd");
    // Without the lock: a damaged folder changed a minute ago may be a run that has not written its journal yet.
    const again = fixtureRuns();
    utimesSync(join(again, "20261123T140000Z-eeeeee"), new Date(), new Date());
    const fresh = await pruneRuns(await listRuns(again), 0, { now: () => Date.now() });
    expect(fresh.inUse).toContain("20261123T140000Z-eeeeee");
  });

  it("keeps a fresh folder without a journal though its lock is free: a run starting makes its folder before it takes the lock", async () => {
    const runs = fixtureRuns();
    // What createRunDir leaves before takeRunLock: logs/ and plan.json, no run.lock, no journal.
    const starting = join(runs, "20261123T160000Z-111111");
    mkdirSync(join(starting, "logs"), { recursive: true });
    writeFileSync(join(starting, "plan.json"), "{}\n");
    const free = async () => false;
    const result = await pruneRuns(await listRuns(runs, free), 0, { inUse: free });
    expect(result.inUse).toEqual(["20261123T160000Z-111111"]);
    expect(readdirSync(runs)).toContain("20261123T160000Z-111111");
  });
});

describe("gpuplan runs (CLI)", () => {
  it("lists a real run, with --json valid against the schema; prunes with --keep", async () => {
    const cwd = temp();
    runCpuExample(cwd);
    runCpuExample(cwd);
    const table = gpuplan(["runs"], { cwd, env: NO_GPU });
    expect(table.exitCode, table.stderr).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^RUN +PLAN +STARTED +WALL +OK +FAILED +SKIPPED +STATUS +RESUME +SIZE$/,
    );
    expect(table.stdout).toMatch(/hello-cpu .* 9 +0 +0 +ok +– /);
    const json = gpuplan(["runs", "--json"], { cwd, env: NO_GPU });
    expect(json.exitCode, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout);
    const { default: validate } = await import("../../src/generated/runs-validator.js");
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc).toMatchObject({ schema: "gpuplan/runs@2", runsDir: ".gpuplan/runs" });
    expect(doc.runs).toHaveLength(2);
    const pruned = gpuplan(["runs", "--prune", "--keep", "1", "--json"], { cwd, env: NO_GPU });
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    const after = JSON.parse(pruned.stdout);
    expect(validate(after)).toBe(true);
    expect(after.pruned).toEqual({ keep: 1, removed: [doc.runs[1].id], inUse: [], reasons: [], errors: [] });
    expect(after.runs.map((r: { id: string }) => r.id)).toEqual([doc.runs[0].id]);
    expect(readdirSync(join(cwd, ".gpuplan/runs"))).toEqual([doc.runs[0].id]);
  }, 60_000);

  it("never prunes a run whose gpuplan was killed while its step still runs (the step writes into the folder)", async () => {
    const cwd = temp();
    const runs = join(cwd, ".gpuplan/runs");
    // A step in a process group of its own, with the environment gpuplan starts steps with; its
    // gpuplan is gone. The journal has no start time for it: the environment says whose it is.
    const id = "20261123T100000Z-aaaaaa";
    const orphan = spawn("sleep", ["60"], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, GPUPLAN_RUN: id, GPUPLAN_PIPELINE: "a", GPUPLAN_STEP: "s" },
    });
    cleanups.push(() => orphan.kill("SIGKILL"));
    fakeRun(runs, id, [
      header(id, "2026-11-23T10:00:00.000Z"),
      {
        type: "start",
        ts: "2026-11-23T10:00:01.000Z",
        pipeline: "a",
        step: "s",
        attempt: 1,
        device: "cpu",
        pid: orphan.pid,
        startTicks: null,
      },
    ]);
    const kept = gpuplan(["runs", "--prune", "--keep", "0", "--json"], { cwd, env: NO_GPU });
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(JSON.parse(kept.stdout).pruned).toMatchObject({ removed: [], inUse: [id] });
    expect(readdirSync(runs)).toEqual([id]);
    // A process of someone else's that holds the pid (no start time to tell them apart) is not the step.
    const other = "20261123T100001Z-bbbbbb";
    const stranger = spawn("sleep", ["60"], {
      detached: true,
      stdio: "ignore",
      env: { PATH: process.env.PATH },
    });
    cleanups.push(() => stranger.kill("SIGKILL"));
    fakeRun(runs, other, [
      header(other, "2026-11-23T10:00:01.000Z"),
      {
        type: "start",
        ts: "2026-11-23T10:00:02.000Z",
        pipeline: "a",
        step: "s",
        attempt: 1,
        device: "cpu",
        pid: stranger.pid,
        startTicks: null,
      },
    ]);
    const strangers = gpuplan(["runs", "--prune", "--keep", "0", "--json"], { cwd, env: NO_GPU });
    expect(JSON.parse(strangers.stdout).pruned).toMatchObject({ removed: [other], inUse: [id] });
    // Once the step is gone, the run is an unfinished one like any other: removed.
    // Reaped (a zombie still counts as in its group) before the next look.
    await new Promise((resolve) => {
      orphan.once("exit", resolve);
      orphan.kill("SIGKILL");
    });
    const removed = gpuplan(["runs", "--prune", "--keep", "0", "--json"], { cwd, env: NO_GPU });
    expect(JSON.parse(removed.stdout).pruned).toMatchObject({ removed: [id], inUse: [] });
  });

  it.each([
    ["compact", '{"schema":"gpuplan/plan@2","gpuplanVersion":"0.1.0","name":"tight","x":1}'],
    [
      "a nested name first",
      '{"schema":"gpuplan/plan@2","source":{"name":"no"},"label":"name","name":"tight"}',
    ],
    ["a key inside a string", '{"schema":"gpuplan/plan@2","note":"\\"name\\": \\"no\\"","name":"tight"}'],
  ])(
    "reads the plan's name however its plan.json is laid out (%s): the run can be resumed",
    async (_, text) => {
      const runs = join(temp(), ".gpuplan/runs");
      const id = "20261123T110000Z-bbbbbb";
      const dir = fakeRun(runs, id, [
        header(id, "2026-11-23T11:00:00.000Z"),
        step("error"),
        end("2026-11-23T11:01:00.000Z", 0, 1, 0),
      ]);
      writeFileSync(join(dir, "plan.json"), text);
      const [run] = await listRuns(runs);
      expect(run).toMatchObject({ plan: "tight", resumable: true, problem: null });
    },
  );

  it("status of a local run says how it stands, as runs lists it, and the command that shows it (exit 2)", async () => {
    // It said only "did not run on Slurm", with a hint naming no run: the one who asked learnt nothing.
    const cwd = temp();
    const id = runCpuExample(cwd).split("/").at(-1)!;
    const said = `run ${id} did not run on Slurm; it is ok: 9 ok, 0 failed, 0 skipped`;
    const hint = `gpuplan report ${id} shows this one`;
    const human = gpuplan(["status", id], { cwd, env: NO_GPU });
    expect(human.exitCode).toBe(2);
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain(`${said}  [not-a-slurm-run]`);
    expect(human.stderr).toContain(hint);
    const json = gpuplan(["status", id, "--json"], { cwd, env: NO_GPU });
    expect(json.exitCode).toBe(2);
    const doc = JSON.parse(json.stdout);
    const { default: validate } = await import("../../src/generated/error-validator.js");
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.problems).toEqual([
      expect.objectContaining({
        code: "not-a-slurm-run",
        message: said,
        hint: expect.stringContaining(hint),
      }),
    ]);
    // A path with a space is named as one shell word.
    const spaced = join(cwd, "my runs");
    mkdirSync(spaced);
    execFileSync("cp", ["-r", join(cwd, ".gpuplan/runs", id), join(spaced, id)]);
    const byPath = gpuplan(["status", `my runs/${id}`], { cwd, env: NO_GPU });
    expect(byPath.stderr).toContain(`gpuplan report 'my runs/${id}' shows this one`);
  });

  it("refuses --prune without --keep, --keep without --prune and a --keep that is not a count (exit 2)", () => {
    const cwd = temp();
    for (const args of [
      ["--prune"],
      ["--keep", "3"],
      ["--prune", "--keep", "-1"],
      ["--prune", "--keep", "many"],
      // Whitespace is a malformed number, as it is for a duration or a size.
      ["--prune", "--keep", " 3"],
      ["--prune", "--keep", "3 "],
      ["--prune", "--keep", "\t3"],
    ]) {
      const r = gpuplan(["runs", ...args], { cwd, env: NO_GPU });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, args.join(" ")).toBe(2);
    }
    // A negative count is a whole number: the message says what is wrong with it.
    for (const keep of ["-1", "-20"]) {
      const negative = gpuplan(["runs", "--prune", "--keep", keep], { cwd, env: NO_GPU });
      expect(negative.stderr).toContain(`argument '${keep}' is invalid. It must be 0 or more.`);
      expect(negative.stderr).not.toContain("not a whole number");
    }
    const fraction = gpuplan(["runs", "--prune", "--keep", "1.5"], { cwd, env: NO_GPU });
    expect(fraction.stderr).toContain("It is not a whole number.");
    const none = gpuplan(["runs"], { cwd, env: NO_GPU });
    expect(none.exitCode).toBe(0);
    expect(none.stdout).toBe("no runs in .gpuplan/runs\n");
  });
});

describe("a run's times, read from its journal", () => {
  // The journal is outside text: its startedAt was shown (and put in --json) whatever it held.
  const HOSTILE = [
    "2026-11-23T10:00:00.000Z\u001b[2J\u001b]0;owned\u0007",
    `2026-11-23T10:00:00.000Z${"x".repeat(100_000)}`,
    "yesterday",
    "2026-13-45T25:61:61.000Z",
    "2026-02-30T10:00:00.000Z",
    "2026-11-23T10:00:00+05:00",
    "2026-11-23 10:00:00",
    "Mon, 23 Nov 2026 10:00:00 GMT",
  ];
  it.each(HOSTILE.map((t) => [JSON.stringify(t).slice(0, 40), t]))(
    "a startedAt of %s is unknown, never shown",
    async (_name, startedAt) => {
      const cwd = temp();
      const runs = join(cwd, ".gpuplan/runs");
      const id = "20261123T100000Z-aaaaaa";
      fakeRun(runs, id, [header(id, startedAt), step("ok"), end(startedAt, 1, 0, 0)]);
      const [run] = await listRuns(runs);
      expect(run).toMatchObject({ status: "ok", startedAt: null, endedAt: null, wallMs: null });
      const table = gpuplan(["runs"], { cwd, env: NO_GPU });
      expect(table.exitCode, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^20261123T100000Z-aaaaaa +demo +– +– +1 /m);
      const json = gpuplan(["runs", "--json"], { cwd, env: NO_GPU });
      expect(json.exitCode, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout).runs[0]).toMatchObject({ startedAt: null, endedAt: null });
    },
  );

  it("a real UTC time is shown, with or without its milliseconds", async () => {
    const runs = join(temp(), ".gpuplan/runs");
    const id = "20261123T100000Z-aaaaaa";
    fakeRun(runs, id, [
      header(id, "2026-11-23T10:00:00Z"),
      step("ok"),
      end("2026-11-23T10:00:05.250Z", 1, 0, 0),
    ]);
    const [run] = await listRuns(runs);
    expect(run).toMatchObject({
      startedAt: "2026-11-23T10:00:00Z",
      endedAt: "2026-11-23T10:00:05.250Z",
      wallMs: 5250,
    });
  });
});

describe("a run folder whose run.lock is not a regular file", () => {
  // Opening a FIFO to ask its lock waited forever for a writer: `gpuplan runs` and its prune hung.
  it("is listed as damaged, saying why, and pruned, without hanging", () => {
    const cwd = temp();
    const runs = join(cwd, ".gpuplan/runs");
    const id = "20261123T100000Z-aaaaaa";
    const dir = fakeRun(runs, id, [
      header(id, "2026-11-23T10:00:00.000Z"),
      step("error"),
      end("2026-11-23T10:00:05.000Z", 0, 1, 0),
    ]);
    execFileSync("mkfifo", [join(dir, "run.lock")]);
    // Changed long ago: not a run starting, so the prune may take it.
    utimesSync(dir, new Date("2026-11-23T10:00:05Z"), new Date("2026-11-23T10:00:05Z"));
    const listed = gpuplan(["runs", "--json"], { cwd, env: NO_GPU });
    expect(hasCrashed(listed), listed.stderr).toBe(false);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).runs).toMatchObject([
      {
        id,
        status: "damaged",
        resumable: false,
        problem: "its run.lock is a FIFO, not a regular file: it cannot be resumed",
      },
    ]);
    const pruned = gpuplan(["runs", "--prune", "--keep", "0"], { cwd, env: NO_GPU });
    expect(hasCrashed(pruned), pruned.stderr).toBe(false);
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    expect(readdirSync(runs)).toEqual([]);
  }, 90_000);
});

describe("gpuplan runs with more runs than file descriptors", () => {
  // 200 runs at `ulimit -n 64`: read all at once they ran out of descriptors (EMFILE) and healthy
  // runs were listed as damaged; read a few at a time, every one is ok. Out of descriptors even so
  // is an error naming the cause (exit 2), never a damaged run.
  const manyRuns = (): string => {
    const cwd = temp();
    const runs = join(cwd, ".gpuplan/runs");
    for (let i = 0; i < 200; i++) {
      const id = `20261123T10${String(Math.floor(i / 60)).padStart(2, "0")}${String(i % 60).padStart(2, "0")}Z-${i.toString(16).padStart(6, "0")}`;
      fakeRun(runs, id, [
        header(id, "2026-11-23T10:00:00.000Z"),
        step("ok"),
        end("2026-11-23T10:00:05.000Z", 1, 0, 0),
      ]);
    }
    return cwd;
  };
  const limited = (cwd: string, fds: number) =>
    spawnSync(
      "bash",
      [
        "-c",
        `ulimit -n ${fds} && exec "$0" "$@"`,
        process.execPath,
        join(ROOT, "bin/gpuplan.js"),
        "runs",
        "--json",
      ],
      {
        cwd,
        env: { ...process.env, ...NO_GPU, NO_COLOR: "1" },
        encoding: "utf8",
      },
    );

  it("lists 200 healthy runs as ok at ulimit -n 64", () => {
    const r = limited(manyRuns(), 64);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { runs: { status: string; problem: string | null }[] };
    expect(doc.runs).toHaveLength(200);
    expect(doc.runs.filter((run) => run.status !== "ok")).toEqual([]);
  });

  it("never calls a run damaged for want of file descriptors: all ok, or an error naming the cause (exit 2)", () => {
    const cwd = manyRuns();
    // Around what node itself needs (Node 20 starts a script at 20, 22 and 24 at 22; below, Node
    // crashes or stops in its own loader, before gpuplan runs): where this machine runs out is its
    // own. A limit Node cannot start a bare script under says nothing about gpuplan.
    const bare = join(cwd, "bare", "start.js");
    mkdirSync(dirname(bare));
    writeFileSync(join(dirname(bare), "package.json"), '{ "type": "commonjs" }\n');
    writeFileSync(bare, "");
    const nodeStarts = (fds: number) =>
      spawnSync("bash", ["-c", `ulimit -n ${fds} && exec "$0" "$1"`, process.execPath, bare]).status === 0;
    const tried = [20, 22, 24, 26, 32].filter(nodeStarts);
    expect(tried.length, "limits Node starts under").toBeGreaterThanOrEqual(3);
    for (const fds of tried) {
      const r = limited(cwd, fds);
      if (r.status === 0) {
        const doc = JSON.parse(r.stdout) as { runs: { status: string }[] };
        expect(
          doc.runs.filter((run) => run.status !== "ok"),
          `ulimit -n ${fds}`,
        ).toEqual([]);
      } else {
        expect(r.stderr, `ulimit -n ${fds}`).toMatch(/too many open files {2}\[unreadable-file\]/);
        expect(r.status, r.stderr).toBe(2);
      }
    }
  }, 60_000);
});
