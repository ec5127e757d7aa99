// `gpuplan runs` and `--prune` for a run that went to Slurm (gpuplan run --executor slurm): no
// gpuplan holds a detached one, its tasks write into its folder on other nodes, so it is listed as
// submitted (not "gpuplan was stopped") and pruned only once Slurm says every task it submitted
// ended; where Slurm cannot be asked, it is kept and prune says why. Fake sbatch/squeue/sacct on
// PATH (only them: a real Slurm client elsewhere on PATH must not answer).
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
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
    expect(listed.stdout).toMatch(new RegExp(`${id} .* submitted `));
    expect(listed.stdout).toContain(`gpuplan status ${id}`);
    expect(listed.stdout).not.toContain("gpuplan was stopped");
    expect(listed.stdout).toContain(`gpuplan run p.yaml --resume ${id} --executor slurm`);
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
