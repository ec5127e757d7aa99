// A Slurm run's record of its submitted arrays (slurm/jobs.json) that is not what gpuplan wrote —
// a hand edit, a damaged disk — is said to be damaged, naming the file (exit 2), by `gpuplan
// status` (and by the --resume of a Slurm run, which reads it the same way): never an internal
// error with a stack. No cluster needed: the
// record is read before any Slurm command.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-slurm-record-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ID = "20261126T000000Z-abcdef";
const runDir = join(dir, ".gpuplan/runs", ID);
mkdirSync(join(runDir, "slurm"), { recursive: true });
writeFileSync(
  join(runDir, "journal.jsonl"),
  `${JSON.stringify({ type: "run", run: ID, startedAt: "2026-11-26T00:00:00.000Z", input: "plan.json", baseDir: dir, pipelines: ["a", "b"] })}\n`,
);
const env = { SLURM_CONF: "/nonexistent/slurm.conf", PATH: process.env.PATH };

/** A record of `arrays` arrays of 1,000 tasks each, written without a byte to spare (27 MiB for 5,200). */
function manyTasks(arrays: number): string {
  const pipelines = JSON.stringify(Array.from({ length: 1000 }, (_, i) => i.toString(36)));
  const entries = Array.from(
    { length: arrays },
    (_, i) => `{"job":"${i + 1}","script":"s","pipelines":${pipelines}}`,
  );
  return `{"schema":"gpuplan/slurm-run@1","arrays":[${entries.join(",")}]}`;
}

describe("a damaged slurm/jobs.json", () => {
  it.each([
    ["arrays not a list", '{"schema":"gpuplan/slurm-run@1","arrays":5}'],
    [
      "an array without its pipelines",
      '{"schema":"gpuplan/slurm-run@1","arrays":[{"job":"7","script":"s"}]}',
    ],
    ["null", "null"],
    // squeue -j would take them as another job, a flag, or nothing gpuplan submitted.
    ...["not-a-job", "2;touch x", "-a", ""].map((job) => [
      `a job id that is not one (${JSON.stringify(job)})`,
      JSON.stringify({ schema: "gpuplan/slurm-run@1", arrays: [{ job, script: "s", pipelines: ["a"] }] }),
    ]),
    ["not JSON", '{"schema":"gpuplan/slurm-run@1","arr'],
    // Read in part, these were used in part: the later entry won, or both were asked of.
    [
      "one pipeline twice in an array",
      JSON.stringify({
        schema: "gpuplan/slurm-run@1",
        arrays: [{ job: "7", script: "s", pipelines: ["a", "a"] }],
      }),
      "job 7 runs pipeline a twice",
    ],
    [
      "one job twice",
      JSON.stringify({
        schema: "gpuplan/slurm-run@1",
        arrays: [
          { job: "7", script: "s", pipelines: ["a"] },
          { job: "7", script: "t", pipelines: ["b"] },
        ],
      }),
      "it names job 7 twice",
    ],
    [
      "another schema version",
      JSON.stringify({
        schema: "gpuplan/slurm-run@2",
        arrays: [{ job: "7", script: "s", pipelines: ["a"] }],
      }),
      "it is of schema gpuplan/slurm-run@2, and this gpuplan reads gpuplan/slurm-run@1",
    ],
    [
      "no schema",
      JSON.stringify({ arrays: [{ job: "7", script: "s", pipelines: ["a"] }] }),
      "it is not the list of the run's Slurm job arrays gpuplan wrote",
    ],
    // Bounds on what one run submits: squeue and sacct are asked of each array (1,000 a call),
    // so a record naming millions kept status and --resume asking for minutes.
    [
      "an array of no pipelines",
      JSON.stringify({ schema: "gpuplan/slurm-run@1", arrays: [{ job: "7", script: "s", pipelines: [] }] }),
      "job 7 runs no pipeline",
    ],
    [
      "an array of more tasks than gpuplan puts in one (1,000)",
      JSON.stringify({
        schema: "gpuplan/slurm-run@1",
        arrays: [{ job: "7", script: "s", pipelines: Array.from({ length: 1001 }, (_, i) => `p${i}`) }],
      }),
      "job 7 runs 1001 pipelines, more than the 1000 tasks gpuplan puts in one array",
    ],
    [
      "more arrays than a run submits",
      JSON.stringify({
        schema: "gpuplan/slurm-run@1",
        arrays: Array.from({ length: 100_001 }, (_, i) => ({
          job: String(i + 1),
          script: "s",
          pipelines: ["a"],
        })),
      }),
      "it names 100001 job arrays, more than the 100000 gpuplan keeps for one run",
    ],
    [
      "more tasks than gpuplan's own record of them can hold (written tight)",
      manyTasks(5200),
      "it names 5200000 tasks, more than gpuplan's own record of them can hold",
    ],
  ])("%s: status says so, naming the file (exit 2)", (_, text, why?: string) => {
    writeFileSync(join(runDir, "slurm/jobs.json"), text);
    const r = gpuplan(["status", ID], { cwd: dir, env });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${join(".gpuplan/runs", ID, "slurm/jobs.json")} is damaged`);
    expect(r.stderr).toContain("[damaged-run]");
    if (why) expect(r.stderr).toContain(why);
  });

  it("a record gpuplan wrote still reads", () => {
    writeFileSync(
      join(runDir, "slurm/jobs.json"),
      '{"schema":"gpuplan/slurm-run@1","arrays":[{"job":"7","script":"01.sbatch","pipelines":["a"]}]}\n',
    );
    // A squeue that lists nothing, no sacct: the states are unknown, the record is what is read.
    const bin = join(dir, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "squeue"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const r = gpuplan(["status", ID, "--json"], { cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      jobs: ["7"],
      pipelines: [
        { pipeline: "a", job: "7_0", state: "unknown" },
        { pipeline: "b", state: "not-submitted" },
      ],
    });
  });
});

// What sits in slurm/ is outside text: a FIFO there held `gpuplan status` (and the follower, and
// --resume) forever, waiting for a writer; a link there led to a file of someone else's choosing.
describe("slurm/ files that are not regular files", () => {
  const mkfifo = (path: string) => execFileSync("mkfifo", [path]);
  const record =
    '{"schema":"gpuplan/slurm-run@1","arrays":[{"job":"7","script":"01.sbatch","pipelines":["a"]}]}\n';
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "squeue"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const status = (json = false) =>
    gpuplan(["status", ID, ...(json ? ["--json"] : [])], {
      cwd: dir,
      env: { PATH: `${bin}:/usr/bin:/bin` },
      timeoutMs: 10_000,
    });
  const reset = () => {
    rmSync(join(runDir, "slurm"), { recursive: true, force: true });
    mkdirSync(join(runDir, "slurm/events"), { recursive: true });
    mkdirSync(join(runDir, "slurm/started"), { recursive: true });
  };

  it("jobs.json a FIFO: damaged, said at once (exit 2)", () => {
    reset();
    mkfifo(join(runDir, "slurm/jobs.json"));
    const r = status();
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("jobs.json is damaged: it is a FIFO, not a regular file");
    expect(r.stderr).toContain("[damaged-run]");
  });

  it("jobs.json a link to a record elsewhere: damaged, not followed", () => {
    reset();
    writeFileSync(join(dir, "elsewhere.json"), record);
    symlinkSync(join(dir, "elsewhere.json"), join(runDir, "slurm/jobs.json"));
    const r = status();
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("jobs.json is damaged: it is a symbolic link");
  });

  it("a task's events file and start marker FIFOs: read as not written yet", () => {
    reset();
    writeFileSync(join(runDir, "slurm/jobs.json"), record);
    mkfifo(join(runDir, "slurm/events/7_0.jsonl"));
    mkfifo(join(runDir, "slurm/started/7_0"));
    const r = status(true);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).pipelines[0]).toMatchObject({
      pipeline: "a",
      job: "7_0",
      state: "unknown",
      node: null,
      gpus: null,
    });
  });

  it("a task's events file and marker reached through a linked folder: not read", () => {
    reset();
    writeFileSync(join(runDir, "slurm/jobs.json"), record);
    const other = join(dir, "other");
    mkdirSync(other, { recursive: true });
    const end = {
      ts: "2026-11-26T00:00:01.000Z",
      run: ID,
      event: "run.end",
      pipeline: null,
      step: null,
      device: null,
      status: "ok",
    };
    writeFileSync(join(other, "7_0.jsonl"), `${JSON.stringify(end)}\n`);
    writeFileSync(join(other, "7_0"), "evil-node 0\n");
    rmSync(join(runDir, "slurm/events"), { recursive: true });
    rmSync(join(runDir, "slurm/started"), { recursive: true });
    symlinkSync(other, join(runDir, "slurm/events"));
    symlinkSync(other, join(runDir, "slurm/started"));
    const r = status(true);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).pipelines[0]).toMatchObject({
      pipeline: "a",
      job: "7_0",
      state: "unknown",
      node: null,
      gpus: null,
    });
  });
});
