// gpuplan killed (kill -9) in the middle of a Slurm submission — as sbatch answered with a job id,
// before it answered, between two arrays — left arrays queued that slurm/jobs.json did not name;
// a later --resume asked squeue only of the recorded ids, saw nothing active and submitted the
// same pipelines again (tasks twice: GPUs used twice, outputs clobbered). Each array is now
// recorded as soon as its sbatch answers, and an `sbatch` journal entry before each call leaves
// the resume asking Slurm for arrays of the run's own scripts (`squeue --user UID -o '%F|%o'`: `--me` needs Slurm 20.11) first.
// Against stand-ins first on PATH: a fake sbatch that answers and then kills its parent gpuplan
// with SIGKILL ($PPID), a fake squeue whose `--user` listing and `-j` answer the test sets.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed } from "../helpers/cli.js";
import { scriptRunning, waitForScriptToEnd } from "../helpers/processes.js";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "gpuplan-killed-submission-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fake = join(dir, "fake-bin");
const runsDir = join(dir, ".gpuplan/runs");

const NODE = {
  gpus: [{ name: "NVIDIA H100 80GB HBM3", memory: 85520809984, count: 4, compute_capability: "9.0" }],
  cpu: { threads: 16, memory: "16000MiB" },
  slurm: {
    node_type: "h100x4-16cpu-16000mib",
    gres: [{ model: "NVIDIA H100 80GB HBM3", type: "h100", count: 4 }],
  },
};

/** Two arrays: 01-gpu-….sbatch runs g, 02-cpu.sbatch runs c; each step counts its runs here. */
const TWO = [
  "version: 1",
  "name: two",
  "pipelines:",
  "  - { name: g, steps: [{ id: a, run: [sh, -c, 'echo run >> g.count'], memory: torch, vram: 1GiB, timeout: 2m }] }",
  "  - { name: c, steps: [{ id: a, run: [sh, -c, 'echo run >> c.count'], memory: numpy, timeout: 2m }] }",
  "",
].join("\n");

const SCRIPTS = {
  // sbatch's Nth call prints line N of sbatch.ids (FAIL: refuses, exit 1); at call `sbatch.kill`
  // it kills its parent gpuplan with SIGKILL — `after` printing the id, or `before` printing anything.
  sbatch: [
    "#!/bin/sh",
    'd=$(dirname "$0"); echo "sbatch $*" >> "$d/calls"',
    'n=$(( $(cat "$d/sbatch.n" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$d/sbatch.n"',
    'id=$(sed -n "$n"p "$d/sbatch.ids")',
    'kill=$(cat "$d/sbatch.kill" 2>/dev/null)',
    '[ "$kill" = "before $n" ] && kill -9 $PPID && sleep 1',
    // Killed before it answered, and still submitting (a slow slurmctld) for 3 s more.
    '[ "$kill" = "linger $n" ] && kill -9 $PPID && sleep 3',
    'if [ "$id" = FAIL ]; then echo "sbatch: error: Batch job submission failed: Invalid qos specification" >&2; exit 1; fi',
    'echo "$id"',
    '[ "$kill" = "after $n" ] && kill -9 $PPID && sleep 1',
    "exit 0",
  ],
  // `--user UID` (the question for unrecorded arrays) answers squeue-me.out, exit squeue-me.rc; the rest
  // (-j JOBS) squeue.out. `--me` is refused, as Slurm before 20.11 refuses it.
  squeue: [
    "#!/bin/sh",
    'd=$(dirname "$0"); echo "squeue $*" >> "$d/calls"',
    'case "$*" in',
    "  *--me*) echo \"squeue: unrecognized option '--me'\" >&2; exit 1 ;;",
    '  *--user*) cat "$d/squeue-me.out" 2>/dev/null; cat "$d/squeue-me.err" >&2 2>/dev/null; exit "$(cat "$d/squeue-me.rc" 2>/dev/null || echo 0)" ;;',
    '  *) cat "$d/squeue.out" 2>/dev/null; exit 0 ;;',
    "esac",
  ],
  scancel: ["#!/bin/sh", 'echo "scancel $*" >> "$(dirname "$0")/calls"'],
  sacct: ["#!/bin/sh", 'echo "sacct $*" >> "$(dirname "$0")/calls"'],
};

const put = (name: string, text: string) => writeFileSync(join(fake, name), text);

const calls = (prefix: string): string[] =>
  existsSync(join(fake, "calls"))
    ? readFileSync(join(fake, "calls"), "utf8")
        .trim()
        .split("\n")
        .filter((c) => c.startsWith(prefix))
    : [];

const run = (args: string[]) =>
  gpuplan(args, {
    cwd: dir,
    env: { PATH: `${fake}:${process.env.PATH}`, SLURM_CONF: "/nonexistent", GPUPLAN_KILL_GRACE: "7s" },
  });

beforeAll(() => {
  mkdirSync(fake);
  for (const [name, lines] of Object.entries(SCRIPTS)) {
    put(name, `${lines.join("\n")}\n`);
    chmodSync(join(fake, name), 0o755);
  }
  writeFileSync(join(dir, "two.yaml"), TWO);
  writeFileSync(join(dir, "node.json"), JSON.stringify(NODE));
  expect(run(["compile", "two.yaml", "--inventory", "node.json", "-o", "two.json"]).exitCode).toBe(0);
});

/** Every stand-in back to: sbatch answers `ids` in turn, squeue lists nothing, nobody is killed. */
function reset(ids: string[] = []): void {
  for (const f of [
    "calls",
    "sbatch.n",
    "sbatch.kill",
    "squeue-me.out",
    "squeue-me.err",
    "squeue-me.rc",
    "squeue.out",
  ])
    rmSync(join(fake, f), { force: true });
  put("sbatch.ids", `${ids.join("\n")}\n`);
}
beforeEach(() => reset());

const runIds = (): string[] => (existsSync(runsDir) ? readdirSync(runsDir) : []);

/** The fake sbatch a kill left running (its sleep after the kill), or null. */
const fakeSbatchRunning = (): number | null => scriptRunning(join(fake, "sbatch"));
const waitForFakeSbatch = (): void => waitForScriptToEnd(join(fake, "sbatch"));

/** A new run of two.json that sbatch's call `kill` kills: its id (once that sbatch has ended, unless `linger`). */
function killedRun(ids: string[], kill: string): string {
  reset(ids);
  put("sbatch.kill", kill);
  const before = runIds();
  const r = run(["run", "two.json", "--executor", "slurm", "--detach"]);
  // Killed: no exit status of its own, and nothing said.
  expect(r.exitCode, r.stderr).toBe(-1);
  const [id] = runIds().filter((x) => !before.includes(x));
  expect(id).toBeDefined();
  if (!kill.startsWith("linger")) waitForFakeSbatch();
  return id!;
}

/** The run's script named like `pattern`, at its absolute path: what Slurm prints as the job's command. */
function scriptPath(id: string, pattern: RegExp): string {
  const name = readdirSync(join(runsDir, id, "slurm")).find((f) => pattern.test(f));
  expect(name).toBeDefined();
  return join(runsDir, id, "slurm", name!);
}

/** squeue's answers while `arrays` (job id, script path, task count) are pending in Slurm. */
function inSlurm(arrays: [string, string, number][]): void {
  // As Slurm 22.05 prints `%F|%o` (the script's arguments after its path), with a job of another
  // run of the same plan (same job name, another folder) and one with no script.
  put(
    "squeue-me.out",
    [
      "77|/elsewhere/.gpuplan/runs/x/slurm/01-gpu-h100-1.sbatch GPUPLAN_KILL_GRACE=7s",
      "78|(null)",
      ...arrays.map(([job, path]) => `${job}|${path} GPUPLAN_KILL_GRACE=7s`),
      "",
    ].join("\n"),
  );
  put(
    "squeue.out",
    arrays
      .flatMap(([job, , n]) =>
        Array.from({ length: n }, (_, i) => `${job}_${i}|PENDING|Priority|(null)|0|${job}${i}|`),
      )
      .join("\n"),
  );
}

const recordedJobs = (id: string): string[] | null => {
  const file = join(runsDir, id, "slurm/jobs.json");
  if (!existsSync(file)) return null;
  return (JSON.parse(readFileSync(file, "utf8")) as { arrays: { job: string }[] }).arrays.map((a) => a.job);
};

const journal = (id: string): Record<string, unknown>[] =>
  readFileSync(join(runsDir, id, "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const listing = (id: string) => {
  const r = run(["runs", "--json"]);
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { runs: Record<string, unknown>[] }).runs.find((x) => x.id === id);
};

const resume = (id: string, ...more: string[]) =>
  run(["run", "--resume", id, "--executor", "slurm", "--detach", ...more]);

/** The resume refused while the arrays run: exit 2, slurm-run-active, no sbatch. */
function expectRefused(r: ReturnType<typeof run>, jobs: string[]): void {
  expect(hasCrashed(r), r.stderr).toBe(false);
  expect(r.exitCode, r.stderr).toBe(2);
  expect(r.stderr).toContain("[slurm-run-active]");
  for (const job of jobs) expect(r.stderr).toContain(`${job}_0 PENDING`);
  expect(calls("sbatch")).toEqual([]);
  expect(calls("squeue --user")).toEqual([`squeue --user ${process.getuid?.()} -h -o %F|%o`]);
}

describe("a new run killed as sbatch answered its first array", () => {
  it("status, runs and --prune say an array may run unrecorded; the resume finds it in Slurm, records it and submits nothing", () => {
    const id = killedRun(["5151", "5252"], "after 1");
    expect(recordedJobs(id)).toBeNull();
    expect(journal(id).map((e) => e.type)).toEqual(["run", "sbatch"]);
    const gpu = scriptPath(id, /^01-gpu-.*\.sbatch$/);

    const status = run(["status", id]);
    expect(hasCrashed(status), status.stderr).toBe(false);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stderr).toContain("gpuplan was stopped while it submitted the run to Slurm");
    expect(status.stderr).toMatch(/sbatch was called for 01-gpu-\S+\.sbatch, last at 20\d\d-/);
    expect(listing(id)).toMatchObject({
      status: "unfinished",
      resumable: true,
      problem: expect.stringContaining("may be queued or running unrecorded"),
    });
    const pruned = run(["runs", "--prune", "--keep", "0", "--json"]);
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    expect(existsSync(join(runsDir, id))).toBe(true);
    expect(JSON.stringify(JSON.parse(pruned.stdout).pruned)).toContain(
      "gpuplan was stopped while it submitted",
    );

    reset(["6161", "6262"]);
    inSlurm([["5151", gpu, 1]]);
    const r = resume(id);
    expectRefused(r, ["5151"]);
    expect(r.stderr).toContain("array 5151 of the submission gpuplan was stopped in was found in Slurm");
    expect(recordedJobs(id)).toEqual(["5151"]);
    expect(journal(id).at(-1)).toMatchObject({ type: "recorded", jobs: ["5151"] });
    // Recorded: status shows it, and says no more that an array may run unrecorded.
    const after = run(["status", id]);
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.stdout).toMatch(/g\s+pending/);
    expect(after.stderr).not.toContain("gpuplan was stopped");

    // It ended without running g (squeue lists nothing): the next resume submits both pipelines.
    reset(["6161", "6262"]);
    const again = resume(id);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(calls("squeue --user")).toEqual([]);
    expect(calls("sbatch")).toHaveLength(2);
    expect(recordedJobs(id)).toEqual(["5151", "6161", "6262"]);
  });

  it("where the array ended (squeue lists nothing): the resume submits only what it did not complete", () => {
    const id = killedRun(["5151", "5252"], "after 1");
    // Its task completed g before it ended, and said so in its own journal.
    const tasks = join(runsDir, id, "slurm/journals");
    const header = journal(id)[0];
    writeFileSync(
      join(tasks, "5151_0.jsonl"),
      `${JSON.stringify(header)}\n${JSON.stringify({ type: "step", ts: "2026-12-01T10:00:00.000Z", pipeline: "g", step: "a", status: "ok", attempt: 1, device: "cuda:0", exitCode: 0, durationMs: 5 })}\n`,
    );
    reset(["6161"]);
    const r = resume(id);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(calls("squeue --user")).toEqual([`squeue --user ${process.getuid?.()} -h -o %F|%o`]);
    expect(calls("sbatch")).toHaveLength(1);
    // The resume's one array is numbered anew: 01-cpu.sbatch.
    expect(calls("sbatch")[0]).toMatch(/\/01-cpu\.sbatch /);
    expect(r.stdout).toContain("submitted as Slurm job 6161 (1 pipeline)");
    expect(recordedJobs(id)).toEqual(["6161"]);
    const types = journal(id).map((e) => e.type);
    expect(types).toEqual(["run", "sbatch", "recorded", "sbatch", "recorded"]);
    expect(run(["status", id]).stderr).not.toContain("gpuplan was stopped");
  });
});

describe("a new run killed later in its submission", () => {
  it.each([
    ["after 2", "as sbatch answered its second array"],
    ["before 2", "while sbatch submitted its second array"],
  ])(
    "%s (%s): the first array is recorded already; the resume finds the second and submits nothing",
    (kill) => {
      const id = killedRun(["5151", "5252"], kill);
      // Recorded as soon as its sbatch answered, before the next sbatch.
      expect(recordedJobs(id)).toEqual(["5151"]);
      reset(["6161", "6262"]);
      inSlurm([
        ["5151", scriptPath(id, /^01-gpu-/), 1],
        ["5252", scriptPath(id, /^02-cpu/), 1],
      ]);
      const r = resume(id);
      expectRefused(r, ["5151", "5252"]);
      expect(recordedJobs(id)).toEqual(["5151", "5252"]);
    },
  );

  it("while sbatch submitted its first array (before it answered): the resume finds the array and submits nothing", () => {
    const id = killedRun(["5151", "5252"], "before 1");
    expect(recordedJobs(id)).toBeNull();
    reset(["6161", "6262"]);
    inSlurm([["5151", scriptPath(id, /^01-gpu-/), 1]]);
    expectRefused(resume(id), ["5151"]);
    expect(recordedJobs(id)).toEqual(["5151"]);
  });
});

describe("a new run killed while sbatch was still submitting", () => {
  it("the resume is refused while that sbatch runs (it may queue its array after squeue answered), then finds the array", () => {
    const id = killedRun(["5151", "5252"], "linger 1");
    const sbatch = fakeSbatchRunning();
    expect(sbatch).not.toBeNull();
    reset(["6161", "6262"]);
    // Slurm has nothing of it yet: squeue alone would have let the resume submit both pipelines.
    const r = resume(id);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`an sbatch of run ${id} is still running on this machine (pid ${sbatch}`);
    expect(r.stderr).toContain("[slurm-run-active]");
    expect(calls("sbatch")).toEqual([]);
    expect(recordedJobs(id)).toBeNull();

    // It has queued its array and ended: the resume finds it and is refused while it runs.
    waitForFakeSbatch();
    reset(["6161", "6262"]);
    inSlurm([["5151", scriptPath(id, /^01-gpu-/), 1]]);
    expectRefused(resume(id), ["5151"]);
    expect(recordedJobs(id)).toEqual(["5151"]);
  });
});

describe("a resume killed as sbatch answered", () => {
  it("of a run whose submission failed part way: the next resume finds the array and submits nothing", () => {
    // sbatch gave 5151, then refused 02-cpu.sbatch: 5151 cancelled, the journal says so, no record.
    reset(["5151", "FAIL"]);
    const before = runIds();
    const failed = run(["run", "two.json", "--executor", "slurm", "--detach"]);
    expect(failed.exitCode, failed.stderr).toBe(2);
    const [id] = runIds().filter((x) => !before.includes(x));
    expect(recordedJobs(id!)).toBeNull();
    expect(calls("scancel")).toEqual(["scancel 5151"]);
    expect(listing(id!)).toMatchObject({ status: "failed", resumable: true });

    reset(["6161", "6262"]);
    put("sbatch.kill", "after 1");
    expect(resume(id!).exitCode).toBe(-1);
    waitForFakeSbatch();
    expect(recordedJobs(id!)).toBeNull();
    // Not the old failure ("nothing of it is queued or running"): an array may run unrecorded.
    expect(listing(id!)).toMatchObject({
      problem: expect.stringContaining("may be queued or running unrecorded"),
    });

    reset(["7171", "7272"]);
    inSlurm([["6161", scriptPath(id!, /^01-gpu-/), 1]]);
    expectRefused(resume(id!), ["6161"]);
    expect(recordedJobs(id!)).toEqual(["6161"]);
  });

  it("of a run with arrays recorded: the next resume finds the new array beside them and submits nothing", () => {
    reset(["4141", "4242"]);
    const detached = run(["run", "two.json", "--executor", "slurm", "--detach", "--json"]);
    expect(detached.exitCode, detached.stderr).toBe(0);
    const id = JSON.parse(detached.stdout).run as string;
    // Both ended without running anything; the resume is killed as sbatch answers its first array.
    reset(["6161", "6262"]);
    put("squeue.out", "4141_0|CANCELLED|None|(null)|0|4143|\n4242_0|CANCELLED|None|(null)|0|4243|\n");
    put("sbatch.kill", "after 1");
    expect(resume(id).exitCode).toBe(-1);
    waitForFakeSbatch();
    expect(recordedJobs(id)).toEqual(["4141", "4242"]);

    reset(["7171", "7272"]);
    const gpu = scriptPath(id, /^01-gpu-/);
    // Slurm still lists the recorded arrays' command too (same scripts, rewritten): they are not adopted twice.
    inSlurm([
      ["4141", gpu, 1],
      ["6161", gpu, 1],
    ]);
    put(
      "squeue.out",
      "4141_0|CANCELLED|None|(null)|0|4143|\n4242_0|CANCELLED|None|(null)|0|4243|\n6161_0|PENDING|Priority|(null)|0|6162|\n",
    );
    const r = resume(id);
    expectRefused(r, ["6161"]);
    expect(recordedJobs(id)).toEqual(["4141", "4242", "6161"]);
  });
});

describe("where Slurm cannot say whether an unrecorded array runs", () => {
  it("the resume (on Slurm or here) is refused with what to run, exit 2, nothing submitted, nothing run", () => {
    const id = killedRun(["5151", "5252"], "after 1");
    reset(["6161", "6262"]);
    put("squeue-me.rc", "1");
    put("squeue-me.err", "squeue: error: Unable to contact slurm controller (connect failure)\n");
    // Here: c alone, as this machine has no GPU for g.
    for (const how of [["slurm"], ["local", "--pipeline", "c"]]) {
      const r = run(["run", "--resume", id, "--executor", ...how, "--ui", "plain"]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`gpuplan was stopped while it submitted run ${id} to Slurm`);
      expect(r.stderr).toContain(
        "gpuplan cannot tell whether such an array is queued or running, so it resumes nothing",
      );
      expect(r.stderr).toContain("Unable to contact slurm controller");
      expect(r.stderr).toContain("[slurm-command-failed]");
      expect(r.stderr).toContain(`squeue --me -o '%F %o' | grep -F ${join(runsDir, id, "slurm")}/`);
      expect(calls("sbatch")).toEqual([]);
      expect(existsSync(join(dir, "g.count")) || existsSync(join(dir, "c.count"))).toBe(false);
    }
    expect(recordedJobs(id)).toBeNull();
    expect(journal(id).map((e) => e.type)).toEqual(["run", "sbatch"]);
  });
});
