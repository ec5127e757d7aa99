// `gpuplan report`'s status of a Slurm run no gpuplan follows is the one `gpuplan runs` lists: an
// exported array's slurm-JOB and a detached run have no run.end in events.jsonl (each task writes
// its own into slurm/events/), so the report used to say "unfinished" (or "not started") of an
// array whose tasks had all ended, ok or failed. The arrays are made by the real exported sbatch
// script run by hand; Slurm's squeue is a fake on PATH (only it: a real Slurm client must not answer).
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { exportArray, projectEnv, runTask } from "./helpers/exported-array.js";

// Each task's step fails when FAIL_TASK names its pipeline's index.
const PIPELINE = [
  "version: 1",
  "name: tiles",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1] }",
  `    steps: [{ id: a, run: [sh, -c, 'sleep 0.2; test "$FAIL_TASK" != {i}'], memory: numpy, estimate: 1h, timeout: 2m }]`,
  "",
].join("\n");

const t = tempDir();
afterAll(t.cleanup);
const project = join(t.dir, "project");
const bin = join(t.dir, "bin");
/** What report and runs run with: squeue (and sbatch) only from the fake bin. */
let env: Record<string, string>;

/** A fake Slurm command: prints the line of `lines` whose job its -j names (sh builtins only). */
function fakeCommand(name: string, lines: Record<string, string>): void {
  const cases = Object.entries(lines)
    .map(([job, out]) => `  *${job}*) printf '%b' ${JSON.stringify(out)} ;;\n`)
    .join("");
  writeFileSync(join(bin, name), `#!/bin/sh\ncase "$*" in\n${cases}esac\nexit 0\n`);
  chmodSync(join(bin, name), 0o755);
}

beforeAll(() => {
  mkdirSync(project);
  mkdirSync(bin);
  exportArray(project, PIPELINE);
  env = { ...projectEnv(project), PATH: bin };
  // 777: both tasks ok. 778: task 1's step fails. 779: task 1 still queued (never ran).
  for (const task of [0, 1]) expect(runTask(project, "777", task).status).toBe(0);
  expect(runTask(project, "778", 0, { FAIL_TASK: "1" }).status).toBe(0);
  expect(runTask(project, "778", 1, { FAIL_TASK: "1" }).status).not.toBe(0);
  expect(runTask(project, "779", 0).status).toBe(0);
  fakeCommand("squeue", {
    779: "779_1|PENDING|Resources|(null)|0:0|780|\\n",
    4242: "4242_0|RUNNING|None|node7|0:0|4243|\\n4242_1|PENDING|Resources|(null)|0:0|4244|\\n",
  });
  // A detached run (run --executor slurm --detach) as job 4242, its tasks queued or running.
  fakeCommand("sbatch", { "": "4242\\n" });
  const r = gpuplan(["run", "plan.json", "--executor", "slurm", "--detach"], { cwd: project, env });
  expect(r.exitCode, r.stderr).toBe(0);
}, 60_000);

/** Each run's status as `gpuplan runs --json` lists it, by id. */
function listed(): Map<string, string> {
  const r = gpuplan(["runs", "--json"], { cwd: project, env });
  expect(r.exitCode, r.stderr).toBe(0);
  const doc = JSON.parse(r.stdout) as { runs: { id: string; status: string }[] };
  return new Map(doc.runs.map((run) => [run.id, run.status]));
}

/** `gpuplan report RUN` on stdout: the status in the page's data and in the line on stderr. */
function report(run: string) {
  const r = gpuplan(["report", run], { cwd: project, env });
  expect(hasCrashed(r), r.stderr).toBe(false);
  expect(r.exitCode, r.stderr).toBe(0);
  const data = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(r.stdout);
  expect(data).not.toBeNull();
  const header = (JSON.parse(data![1]!) as { header: { status: string } }).header;
  const line = /^gpuplan report: run \S+: [^;]*, (\S+); on stdout/.exec(r.stderr);
  expect(line, r.stderr).not.toBeNull();
  return { page: header.status, line: line![1], stderr: r.stderr };
}

describe("gpuplan report of a Slurm run no gpuplan follows", () => {
  it("an exported array whose tasks all ended ok is ok, as gpuplan runs says", () => {
    expect(listed().get("slurm-777")).toBe("ok");
    expect(report("slurm-777")).toMatchObject({ page: "ok", line: "ok" });
  });

  it("one whose task's run.end says it failed is failed", () => {
    expect(listed().get("slurm-778")).toBe("failed");
    expect(report("slurm-778")).toMatchObject({ page: "failed", line: "failed" });
  });

  it("one with a task Slurm still has queued is what gpuplan runs says (submitted), and says why", () => {
    expect(listed().get("slurm-779")).toBe("submitted");
    const r = report("slurm-779");
    expect(r).toMatchObject({ page: "submitted", line: "submitted" });
    expect(r.stderr).toContain(
      "note: gpuplan runs: 1 of its 2 pipelines is queued or running on Slurm and no gpuplan follows them: gpuplan status slurm-779 says where its jobs are",
    );
  });

  it("a detached run whose tasks have written nothing yet is submitted, not 'not started'", () => {
    const [id, status] = [...listed()].find(([run]) => !run.startsWith("slurm-"))!;
    expect(status).toBe("submitted");
    expect(report(id)).toMatchObject({ page: "submitted", line: "submitted" });
  });
});

// Something other than a folder at a run's slurm/ read as a local run here: runs listed the
// detached run as one gpuplan was stopped in ('unfinished', resumable — a resume refused as
// damaged-run) and the report said 'not started', its tasks maybe still in Slurm.
describe("a detached run whose slurm/ is not a folder", () => {
  it.each([
    ["a regular file", (path: string) => writeFileSync(path, "not a folder\n")],
    ["a symbolic link", (path: string) => symlinkSync(join(t.dir, "elsewhere"), path)],
    ["a FIFO", (path: string) => execFileSync("mkfifo", [path])],
  ])("%s there: runs lists it damaged, saying so, and so does the report", (kind, plant) => {
    const before = new Set(listed().keys());
    const r = gpuplan(["run", "plan.json", "--executor", "slurm", "--detach"], { cwd: project, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const id = [...listed().keys()].find((run) => !before.has(run))!;
    const slurm = join(project, ".gpuplan/runs", id, "slurm");
    rmSync(slurm, { recursive: true });
    plant(slurm);
    const said = `its slurm/ is damaged: ${kind} stands where the run's Slurm records folder belongs`;
    const runs = gpuplan(["runs", "--json"], { cwd: project, env });
    expect(runs.exitCode, runs.stderr).toBe(0);
    const run = (JSON.parse(runs.stdout) as { runs: { id: string }[] }).runs.find((x) => x.id === id);
    expect(run).toMatchObject({ status: "damaged", resumable: false, resume: null });
    expect(run).toMatchObject({ problem: expect.stringContaining(said) });
    const text = gpuplan(["runs"], { cwd: project, env });
    expect(text.stdout).toContain(said);
    const page = report(id);
    expect(page).toMatchObject({ page: "damaged", line: "damaged" });
    expect(page.stderr).toContain(said);
    expect(page.stderr).toContain(
      `slurm: ${kind} stands where the run's Slurm records folder belongs; its tasks' events (slurm/events/) were not read`,
    );
  });
});
