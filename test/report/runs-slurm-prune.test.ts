// `gpuplan runs` and `--prune` for a run that went to Slurm (gpuplan run --executor slurm): no
// gpuplan holds a detached one, its tasks write into its folder on other nodes, so it is listed as
// submitted (not "gpuplan was stopped") and pruned only once Slurm says every task it submitted
// ended; where Slurm cannot be asked, it is kept and prune says why. Fake sbatch/squeue/sacct on
// PATH (only them: a real Slurm client elsewhere on PATH must not answer).
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listRuns } from "../../src/runs/list-runs.js";
import { rememberUnanswered, slurmCommandRunner } from "../../src/slurm/run-slurm-command.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";
import { NO_GPU } from "./helpers/runs.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const PIPELINE = `version: 1
name: cpu-screen
pipelines:
  - name: well-{w}
    matrix: { w: [a, b] }
    steps:
      - { id: measure, run: [sleep, "1"], memory: numpy }
`;
const RUNNING = "4242_0|RUNNING|None|node7|0:0|4243|\n4242_1|PENDING|Resources|(null)|0:0|4244|\n";
const COMPLETED = "4242_0|COMPLETED|None|node7|0|4243|\n4242_1|COMPLETED|None|node7|0|4244|\n";

interface Fake {
  cwd: string;
  bin: string;
  env: Record<string, string>;
}

function fake(): Fake {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const bin = join(t.dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(t.dir, "p.yaml"), PIPELINE);
  return { cwd: t.dir, bin, env: { ...NO_GPU, GPUPLAN_LOCK_DIR: join(t.dir, "locks"), PATH: bin } };
}

/** A Slurm command on the fake PATH: prints `stdout` (and `stderr`), exits `code`; a shell script of builtins only. */
function command(f: Fake, name: string, stdout: string, code = 0, stderr = ""): void {
  const path = join(f.bin, name);
  writeFileSync(
    path,
    `#!/bin/sh\nprintf '%b' ${JSON.stringify(stdout)}\nprintf '%b' ${JSON.stringify(stderr)} >&2\nexit ${code}\n`,
  );
  chmodSync(path, 0o755);
}

/** A detached submission of p.yaml as job 4242 (two tasks); its run id. */
function submit(f: Fake): string {
  command(f, "sbatch", "4242\n");
  const r = gpuplan(["run", "p.yaml", "--executor", "slurm", "--detach"], { cwd: f.cwd, env: f.env });
  expect(r.exitCode, r.stderr).toBe(0);
  const [id] = readdirSync(join(f.cwd, ".gpuplan/runs"));
  return id!;
}

function prune(f: Fake) {
  const r = gpuplan(["runs", "--prune", "--keep", "0", "--json"], { cwd: f.cwd, env: f.env });
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as {
    runs: { id: string; status: string; problem: string | null; resume: string | null }[];
    pruned: { removed: string[]; inUse: string[]; reasons: { id: string; reason: string }[] };
  };
}

describe("a Slurm run in gpuplan runs", () => {
  it("is listed as submitted, and --prune keeps it while Slurm has its jobs queued or running", () => {
    const f = fake();
    const id = submit(f);
    command(f, "squeue", RUNNING);
    const listed = gpuplan(["runs"], { cwd: f.cwd, env: f.env });
    expect(listed.stdout).toMatch(new RegExp(`${id} .* submitted  –`));
    expect(listed.stdout).toContain(
      `${id}: 2 of its 2 pipelines are queued or running on Slurm and no gpuplan follows them: gpuplan status ${id} says where its jobs are`,
    );
    expect(listed.stdout).not.toContain("gpuplan was stopped");
    // A resume now would be refused (its tasks would run twice): none is offered.
    expect(listed.stdout).not.toContain("--resume");
    const doc = prune(f);
    expect(doc.pruned).toMatchObject({ removed: [], inUse: [id] });
    expect(doc.pruned.reasons).toEqual([
      { id, reason: "Slurm still has its jobs 4242_0 RUNNING, 4242_1 PENDING" },
    ]);
    expect(doc.runs.map((r) => [r.id, r.status])).toEqual([[id, "submitted"]]);
    expect(existsSync(join(f.cwd, ".gpuplan/runs", id))).toBe(true);
    // The human form says why too.
    const human = gpuplan(["runs", "--prune", "--keep", "0"], { cwd: f.cwd, env: f.env });
    expect(human.stderr).toContain(`kept ${id}: Slurm still has its jobs 4242_0 RUNNING, 4242_1 PENDING`);
  });

  it("is removed once squeue says every task ended", () => {
    const f = fake();
    const id = submit(f);
    command(f, "squeue", COMPLETED);
    expect(prune(f).pruned).toMatchObject({ removed: [id], inUse: [], reasons: [] });
    expect(readdirSync(join(f.cwd, ".gpuplan/runs"))).toEqual([]);
  });

  it.each([
    [
      "no squeue on PATH",
      (_: Fake) => {},
      "squeue is not on PATH: gpuplan cannot ask Slurm whether its jobs (4242) ended",
    ],
    [
      "squeue fails",
      (f: Fake) =>
        command(f, "squeue", "", 1, "squeue: error: Unable to contact slurm controller (connect failure)\n"),
      "squeue failed (exit 1: squeue: error: Unable to contact slurm controller (connect failure)): gpuplan cannot ask Slurm whether its jobs (4242) ended",
    ],
  ])("is kept when Slurm cannot be asked (%s), saying why", (_, setUp, reason) => {
    const f = fake();
    const id = submit(f);
    setUp(f);
    const doc = prune(f);
    expect(doc.pruned).toMatchObject({ removed: [], inUse: [id], reasons: [{ id, reason }] });
    expect(existsSync(join(f.cwd, ".gpuplan/runs", id))).toBe(true);
  });

  it("once Slurm has forgotten its job (squeue: Invalid job id, no sacct): removed only when each task wrote its own end", () => {
    const f = fake();
    const id = submit(f);
    command(f, "squeue", "", 1, "slurm_load_jobs error: Invalid job id specified\n");
    const runDir = join(f.cwd, ".gpuplan/runs", id);
    const ended = `${JSON.stringify({ event: "run.end", status: "ok" })}\n`;
    writeFileSync(join(runDir, "slurm/events/4242_0.jsonl"), ended);
    const kept = prune(f);
    expect(kept.pruned.inUse).toEqual([id]);
    expect(kept.pruned.reasons[0]!.reason).toMatch(/^Slurm no longer knows 4242_1 .*never wrote an end/);
    writeFileSync(join(runDir, "slurm/events/4242_1.jsonl"), ended);
    expect(prune(f).pruned).toMatchObject({ removed: [id], inUse: [] });
  });

  it("is held by its submitting gpuplan until its jobs are recorded: a prune meanwhile keeps it", () => {
    const f = fake();
    // sbatch prunes while it submits: the run has its journal, not yet slurm/jobs.json.
    const gpuplanJs = join(ROOT, "bin/gpuplan.js");
    const sbatch = join(f.bin, "sbatch");
    writeFileSync(
      sbatch,
      `#!/bin/sh\n[ -e pruned.json ] || '${process.execPath}' '${gpuplanJs}' runs --prune --keep 0 --json > pruned.json\necho 4242\n`,
    );
    chmodSync(sbatch, 0o755);
    const r = gpuplan(["run", "p.yaml", "--executor", "slurm", "--detach"], { cwd: f.cwd, env: f.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const [id] = readdirSync(join(f.cwd, ".gpuplan/runs"));
    const during = JSON.parse(readFileSync(join(f.cwd, "pruned.json"), "utf8"));
    expect(during.pruned).toMatchObject({ removed: [], inUse: [id] });
    expect(during.runs[0]).toMatchObject({ id, status: "running" });
    expect(existsSync(join(f.cwd, ".gpuplan/runs", id!, "slurm/jobs.json"))).toBe(true);
  });
});

// A file, FIFO or link at slurm/ hid jobs.json (ENOTDIR): prune took the run for one with no Slurm
// jobs and removed it once ten minutes old, its tasks maybe still writing into the folder.
describe("a Slurm run whose slurm/ is not a folder", () => {
  it.each([
    ["a regular file", (path: string) => writeFileSync(path, "not a folder\n")],
    ["a symbolic link", (path: string) => symlinkSync(join(dirname(path), "elsewhere"), path)],
    ["a FIFO", (path: string) => execFileSync("mkfifo", [path])],
  ])("%s there: --prune keeps it however old, saying why", (kind, plant) => {
    const f = fake();
    const id = submit(f);
    command(f, "squeue", COMPLETED);
    const runDir = join(f.cwd, ".gpuplan/runs", id);
    const slurm = join(runDir, "slurm");
    rmSync(slurm, { recursive: true });
    plant(slurm);
    // Past the minutes a damaged folder is kept as a run that may be starting.
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(runDir, hourAgo, hourAgo);
    const reason = `its slurm/ is damaged: ${kind} stands where the run's Slurm records folder belongs; gpuplan cannot tell whether its Slurm jobs ended`;
    const doc = prune(f);
    expect(doc.pruned).toMatchObject({ removed: [], inUse: [id], reasons: [{ id, reason }] });
    expect(doc.runs).toMatchObject([{ id, status: "damaged" }]);
    expect(existsSync(join(runDir, "journal.jsonl"))).toBe(true);
    const human = gpuplan(["runs", "--prune", "--keep", "0"], { cwd: f.cwd, env: f.env });
    expect(human.stderr).toContain(`kept ${id}: ${reason}`);
    expect(existsSync(join(runDir, "journal.jsonl"))).toBe(true);
  });
});

/** A Slurm command that also notes each call in `calls.txt`, so a test can tell Slurm was not asked. */
function noted(f: Fake, name: string, stdout: string, code = 0, stderr = ""): void {
  command(f, name, stdout, code, stderr);
  const path = join(f.bin, name);
  const script = readFileSync(path, "utf8").replace(
    "\n",
    `\necho ${name} >> '${join(f.cwd, "calls.txt")}'\n`,
  );
  writeFileSync(path, script);
}

const calls = (f: Fake): string[] =>
  existsSync(join(f.cwd, "calls.txt"))
    ? readFileSync(join(f.cwd, "calls.txt"), "utf8").trim().split("\n")
    : [];

/**
 * What task `JOB_TASK` of pipeline `pipeline` writes in the run folder as it runs: its journal's
 * step and, when it ended by its own account, its events' run.end.
 */
function taskRan(runDir: string, task: string, pipeline: string, ending: string | null, ts: string): void {
  const step = { type: "step", ts, pipeline, step: "measure", status: ending === "ok" ? "ok" : "error" };
  const header = {
    type: "run",
    run: basename(runDir),
    startedAt: ts,
    input: join(runDir, "plan.json"),
    baseDir: dirname(dirname(dirname(runDir))),
    pipelines: [pipeline],
  };
  writeFileSync(
    join(runDir, "slurm/journals", `${task}.jsonl`),
    `${JSON.stringify(header)}\n${JSON.stringify({ ...step, attempt: 1, device: "cpu", exitCode: ending === "ok" ? 0 : 1, durationMs: 5 })}\n`,
  );
  const events = [{ ts, event: "run.start" }, ...(ending ? [{ ts, event: "run.end", status: ending }] : [])];
  writeFileSync(
    join(runDir, "slurm/events", `${task}.jsonl`),
    events.map((e) => `${JSON.stringify(e)}\n`).join(""),
  );
}

function listing(f: Fake) {
  const r = gpuplan(["runs", "--json"], { cwd: f.cwd, env: f.env });
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).runs as {
    id: string;
    status: string;
    endedAt: string | null;
    wallMs: number | null;
    ok: number;
    failed: number;
    resumable: boolean;
    resume: string | null;
    problem: string | null;
    sessions: number;
  }[];
}

describe("a Slurm run no gpuplan follows, once its tasks ran", () => {
  it.each([
    ["ok", "ok", "ok", 2, 0],
    ["ok", "failed", "failed", 1, 1],
    ["ok", "interrupted", "interrupted", 1, 1],
  ])(
    "tasks that ended %s and %s: the run is %s, from the tasks' own accounts (Slurm not asked)",
    (a, b, status, ok, failed) => {
      const f = fake();
      const id = submit(f);
      noted(f, "squeue", "", 1, "squeue: error: Unable to contact slurm controller\n");
      const runDir = join(f.cwd, ".gpuplan/runs", id);
      const startedAt = JSON.parse(
        readFileSync(join(runDir, "journal.jsonl"), "utf8").split("\n")[0]!,
      ).startedAt;
      const end = new Date(Date.parse(startedAt) + 90_000).toISOString();
      taskRan(runDir, "4242_0", "well-a", a, new Date(Date.parse(startedAt) + 30_000).toISOString());
      taskRan(runDir, "4242_1", "well-b", b, end);
      const [run] = listing(f);
      expect(run).toMatchObject({
        id,
        status,
        endedAt: end,
        wallMs: 90_000,
        ok,
        failed,
        sessions: 1,
        problem: null,
      });
      expect(run!.resumable).toBe(status !== "ok");
      expect(run!.resume).toBe(status === "ok" ? null : `gpuplan run p.yaml --resume ${id} --executor slurm`);
      expect(calls(f)).toEqual([]);
    },
  );

  it.each([
    ["Slurm ended it first (scancel)", () => "4242_1|CANCELLED|None|node7|15|4244|\n", 1, "", "failed", null],
    [
      "Slurm forgot it and it never said (squeue: Invalid job id, no sacct)",
      () => "",
      1,
      "slurm_load_jobs error: Invalid job id specified\n",
      "interrupted",
      "Slurm no longer knows 4242_1 and it never wrote an end: how it ended is not known",
    ],
  ])("a task that never said how it ended: %s", (_, out, code, stderr, status, problem) => {
    const f = fake();
    const id = submit(f);
    const runDir = join(f.cwd, ".gpuplan/runs", id);
    taskRan(runDir, "4242_0", "well-a", "ok", new Date().toISOString());
    noted(f, "squeue", out(), stderr ? code : 0, stderr);
    const [run] = listing(f);
    expect(run).toMatchObject({ id, status, problem, resumable: true });
    expect(calls(f)).toEqual(["squeue"]);
  });

  it("squeue fails: still submitted, saying Slurm could not be asked, and not resumable (the resume, asking first, would be refused)", () => {
    const f = fake();
    const id = submit(f);
    command(f, "squeue", "", 1, "squeue: error: Unable to contact slurm controller (connect failure)\n");
    const [run] = listing(f);
    expect(run).toMatchObject({ id, status: "submitted", resumable: false, resume: null });
    expect(run!.problem).toBe(
      `its pipelines were submitted to Slurm, no gpuplan follows them, and Slurm could not be asked how they stand (\`squeue\` failed (exit 1): squeue: error: Unable to contact slurm controller (connect failure)); the status is from its files only, and gpuplan run --resume is refused until Slurm answers: gpuplan status ${id} says where its jobs are`,
    );
  });

  it("a detached resume after a followed session ended: the resumed task's standing, not the ended session's", () => {
    const f = fake();
    const id = submit(f);
    const runDir = join(f.cwd, ".gpuplan/runs", id);
    const ts = new Date().toISOString();
    taskRan(runDir, "4242_0", "well-a", "ok", ts);
    taskRan(runDir, "4242_1", "well-b", "failed", ts);
    // The session ended as a follower ends it (its journal's end), a while ago.
    const journal = join(runDir, "journal.jsonl");
    const end = {
      type: "end",
      ts,
      pipelines: ["well-a", "well-b"],
      interrupted: false,
      ok: 1,
      failed: 1,
      skipped: 0,
    };
    writeFileSync(journal, `${readFileSync(journal, "utf8")}${JSON.stringify(end)}\n`);
    const before = new Date(Date.now() - 60_000);
    utimesSync(journal, before, before);
    utimesSync(join(runDir, "slurm/jobs.json"), before, before);
    expect(listing(f)[0]).toMatchObject({ status: "failed", resumable: true });
    // Resumed detached: well-b again, as job 4343, still queued.
    command(f, "squeue", `${COMPLETED}4343_0|PENDING|Priority|(null)|0|4345|\n`);
    command(f, "sbatch", "4343\n");
    const r = gpuplan(["run", "p.yaml", "--resume", id, "--executor", "slurm", "--detach"], {
      cwd: f.cwd,
      env: f.env,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(listing(f)[0]).toMatchObject({
      status: "submitted",
      resumable: false,
      sessions: 2,
      problem: `1 of its 2 pipelines is queued or running on Slurm and no gpuplan follows them: gpuplan status ${id} says where its jobs are`,
    });
    // Its task ended ok: the run is ok.
    taskRan(runDir, "4343_0", "well-b", "ok", new Date().toISOString());
    expect(listing(f)[0]).toMatchObject({ status: "ok", ok: 2, failed: 0, resumable: false });
  });
});

describe("gpuplan runs with a squeue that hangs", () => {
  it("waits out its limit once for every Slurm run listed, not once per run", async () => {
    const f = fake();
    for (let i = 0; i < 3; i++) submit(f);
    writeFileSync(
      join(f.bin, "squeue"),
      `#!/bin/sh\necho squeue >> '${join(f.cwd, "calls.txt")}'\nexec /bin/sleep 30\n`,
    );
    chmodSync(join(f.bin, "squeue"), 0o755);
    const slurm = rememberUnanswered(slurmCommandRunner({ ...process.env, ...f.env }, 300));
    const started = Date.now();
    const runs = await listRuns(join(f.cwd, ".gpuplan/runs"), undefined, slurm);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(runs).toHaveLength(3);
    for (const r of runs) {
      expect(r.status).toBe("submitted");
      expect(r.problem).toContain(
        "Slurm could not be asked how they stand (`squeue` did not answer in 0.3 s)",
      );
    }
    expect(calls(f)).toEqual(["squeue"]);
  });
});

describe("an exported array's run (gpuplan export, then sbatch): .gpuplan/runs/slurm-JOB", () => {
  /** Task `i` of exported array `job` as Slurm would start it: the script, run by bash in the project folder. */
  function runTask(f: Fake, job: string, i: number): void {
    const r = spawnSync("/bin/bash", ["out/01-cpu.sbatch"], {
      cwd: f.cwd,
      // The script's own tools (mkdir, cp, date …) from the system, after the fake Slurm commands.
      env: {
        ...process.env,
        ...f.env,
        PATH: `${f.bin}:/usr/bin:/bin`,
        SLURM_ARRAY_JOB_ID: job,
        SLURM_ARRAY_TASK_ID: String(i),
      },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
  }

  it("is listed with its status, among the runs by when it started, and pruned as a Slurm run", () => {
    const f = fake();
    for (const args of [
      ["compile", "p.yaml", "-o", "plan.json"],
      ["export", "plan.json", "--to", "slurm", "-o", "out"],
    ]) {
      const r = gpuplan(args, { cwd: f.cwd, env: f.env });
      expect(r.exitCode, r.stderr).toBe(0);
    }
    runTask(f, "77", 0);
    // Its first task started an hour ago; task 1 is still queued.
    const runDir = join(f.cwd, ".gpuplan/runs/slurm-77");
    const journal = join(runDir, "journal.jsonl");
    const hourAgo = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, ".000Z");
    writeFileSync(
      journal,
      readFileSync(journal, "utf8").replace(/"startedAt":"[^"]+"/, `"startedAt":"${hourAgo}"`),
    );
    command(f, "squeue", "77_0|COMPLETED|None|node7|0|78|\n77_1|PENDING|Priority|(null)|0|79|\n");
    expect(listing(f)).toEqual([
      expect.objectContaining({
        id: "slurm-77",
        status: "submitted",
        startedAt: hourAgo,
        ok: 1,
        resumable: false,
        problem:
          "1 of its 2 pipelines is queued or running on Slurm and no gpuplan follows them: gpuplan status slurm-77 says where its jobs are",
      }),
    ]);
    runTask(f, "77", 1);
    const r = gpuplan(["run", "p.yaml"], { cwd: f.cwd, env: { ...f.env, PATH: `${f.bin}:/usr/bin:/bin` } });
    expect(r.exitCode, r.stderr).toBe(0);
    const local = readdirSync(join(f.cwd, ".gpuplan/runs")).find((id) => id !== "slurm-77")!;
    // Newest first by when each started, not by name ("slurm-…" sorts after every dated id).
    expect(listing(f).map((run) => [run.id, run.status, run.ok])).toEqual([
      [local, "ok", 2],
      ["slurm-77", "ok", 2],
    ]);
    const human = gpuplan(["runs"], { cwd: f.cwd, env: f.env });
    expect(human.stdout).toMatch(/\nslurm-77 +cpu-screen .* ok /);
    command(f, "squeue", COMPLETED.replaceAll("4242", "77"));
    const kept = gpuplan(["runs", "--prune", "--keep", "1", "--json"], { cwd: f.cwd, env: f.env });
    expect(JSON.parse(kept.stdout).pruned).toMatchObject({ removed: ["slurm-77"], inUse: [] });
    expect(readdirSync(join(f.cwd, ".gpuplan/runs"))).toEqual([local]);
  });
});

describe("an exported array's plan.json, checked against the digest its first task recorded", () => {
  it("a changed plan.json: runs lists the run as not resumable, saying why, and a resume is refused (resume-plan-changed)", () => {
    const f = fake();
    for (const args of [
      ["compile", "p.yaml", "-o", "plan.json"],
      ["export", "plan.json", "--to", "slurm", "-o", "out"],
    ]) {
      const r = gpuplan(args, { cwd: f.cwd, env: f.env });
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const r = spawnSync("/bin/bash", ["out/01-cpu.sbatch"], {
      cwd: f.cwd,
      env: {
        ...process.env,
        ...f.env,
        PATH: `${f.bin}:/usr/bin:/bin`,
        SLURM_ARRAY_JOB_ID: "77",
        SLURM_ARRAY_TASK_ID: "0",
      },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    // Task 1 was cancelled before it started: Slurm has forgotten it, the run can be resumed.
    command(f, "squeue", "", 1, "slurm_load_jobs error: Invalid job id specified\n");
    expect(listing(f)[0]).toMatchObject({ id: "slurm-77", status: "interrupted", resumable: true });
    const plan = join(f.cwd, ".gpuplan/runs/slurm-77/plan.json");
    writeFileSync(plan, readFileSync(plan, "utf8").replace('"sleep"', '"true"'));
    // runs says so first, without a resume: not resumable, and why.
    expect(listing(f)[0]).toMatchObject({
      id: "slurm-77",
      status: "interrupted",
      resumable: false,
      resume: null,
      problem:
        "its plan.json is not the plan it started with (changed since: its SHA-256 is not the one its journal recorded): it cannot be resumed",
    });
    const resumed = gpuplan(["run", "--resume", "slurm-77", "--executor", "slurm", "--detach"], {
      cwd: f.cwd,
      env: f.env,
    });
    expect(resumed.stderr).toContain("[resume-plan-changed]");
    expect(resumed.exitCode).toBe(2);
  });
});

describe("gpuplan runs: a local run whose plan.json changed since it started", () => {
  it("is not resumable, and says why; restored, it is resumable again", () => {
    const f = fake();
    const r = gpuplan(["run", "p.yaml"], { cwd: f.cwd, env: { ...f.env, PATH: `${f.bin}:/usr/bin:/bin` } });
    expect(r.exitCode, r.stderr).toBe(0);
    const [id] = readdirSync(join(f.cwd, ".gpuplan/runs"));
    const runDir = join(f.cwd, ".gpuplan/runs", id!);
    // Stopped before its end (kill -9): it never ended, and can be resumed.
    const journal = join(runDir, "journal.jsonl");
    const lines = readFileSync(journal, "utf8").trimEnd().split("\n");
    writeFileSync(journal, `${lines.filter((l) => !l.startsWith('{"type":"end"')).join("\n")}\n`);
    expect(listing(f)[0]).toMatchObject({ id, status: "unfinished", resumable: true });
    const plan = join(runDir, "plan.json");
    const original = readFileSync(plan, "utf8");
    writeFileSync(plan, `${original} `);
    expect(listing(f)[0]).toMatchObject({
      id,
      status: "unfinished",
      resumable: false,
      resume: null,
      problem:
        "its plan.json is not the plan it started with (changed since: its SHA-256 is not the one its journal recorded): it cannot be resumed",
    });
    writeFileSync(plan, original);
    expect(listing(f)[0]).toMatchObject({ id, resumable: true });
  });
});

describe("report's newest run (no run named) is runs' first: an exported array's slurm-JOB by when it started", () => {
  function exportedRun(f: Fake): void {
    for (const args of [
      ["compile", "p.yaml", "-o", "plan.json"],
      ["export", "plan.json", "--to", "slurm", "-o", "out"],
    ]) {
      const r = gpuplan(args, { cwd: f.cwd, env: f.env });
      expect(r.exitCode, r.stderr).toBe(0);
    }
  }
  /** Task `i` of exported array 77 as Slurm would start it (see the describe above). */
  function runTask(f: Fake, i: number): void {
    const r = spawnSync("/bin/bash", ["out/01-cpu.sbatch"], {
      cwd: f.cwd,
      env: {
        ...process.env,
        ...f.env,
        PATH: `${f.bin}:/usr/bin:/bin`,
        SLURM_ARRAY_JOB_ID: "77",
        SLURM_ARRAY_TASK_ID: String(i),
      },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
  }
  const startedAt = (f: Fake, at: Date) => {
    const journal = join(f.cwd, ".gpuplan/runs/slurm-77/journal.jsonl");
    const iso = at.toISOString().replace(/\.\d+Z$/, ".000Z");
    writeFileSync(
      journal,
      readFileSync(journal, "utf8").replace(/"startedAt":"[^"]+"/, `"startedAt":"${iso}"`),
    );
  };
  const reportedRun = (f: Fake): string => {
    const r = gpuplan(["report", "-o", "-", "--format", "trace"], { cwd: f.cwd, env: f.env });
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout;
  };

  it("a slurm-JOB started after the newest dated run is reported; one started before it is not", () => {
    const f = fake();
    exportedRun(f);
    const local = gpuplan(["run", "p.yaml"], {
      cwd: f.cwd,
      env: { ...f.env, PATH: `${f.bin}:/usr/bin:/bin` },
    });
    expect(local.exitCode, local.stderr).toBe(0);
    const [dated] = readdirSync(join(f.cwd, ".gpuplan/runs"));
    runTask(f, 0);
    runTask(f, 1);
    const datedAt = Date.parse(
      dated!.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z-.*$/, "$1-$2-$3T$4:$5:$6Z"),
    );
    startedAt(f, new Date(datedAt + 60_000));
    expect(listing(f).map((r) => r.id)).toEqual(["slurm-77", dated]);
    expect(reportedRun(f)).toContain("slurm-77");
    // Started an hour before the dated run: by its name it would still sort first.
    startedAt(f, new Date(datedAt - 3600_000));
    expect(listing(f).map((r) => r.id)).toEqual([dated, "slurm-77"]);
    const page = reportedRun(f);
    expect(page).toContain(dated);
    expect(page).not.toContain("slurm-77");
  });
});

describe("gpuplan runs with the Slurm controller down", () => {
  it("asks squeue once for every Slurm run listed: its failure (an exit status) stands for the others", () => {
    const f = fake();
    for (let i = 0; i < 4; i++) submit(f);
    writeFileSync(
      join(f.bin, "squeue"),
      `#!/bin/sh\necho squeue >> '${join(f.cwd, "calls.txt")}'\necho 'squeue: error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n`,
    );
    chmodSync(join(f.bin, "squeue"), 0o755);
    const runs = listing(f);
    expect(runs).toHaveLength(4);
    for (const r of runs) {
      expect(r).toMatchObject({ status: "submitted", resumable: false });
      expect(r.problem).toContain(
        "`squeue` failed (exit 1): squeue: error: Unable to contact slurm controller",
      );
    }
    expect(calls(f)).toEqual(["squeue"]);
  });
});
