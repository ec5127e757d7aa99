// A Slurm run older than MinJobAge whose only array Slurm has forgotten: squeue -j JOB then fails
// ("slurm_load_jobs error: Invalid job id specified", exit 1 — measured on Slurm 22.05), which
// lists none of the run's tasks and is an answer. `gpuplan status` said Slurm failed (exit 2) and
// `--resume` refused to resume the run at all. Fake sbatch/squeue on PATH.
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, tempDir } from "../helpers/cli.js";
import { NO_GPU } from "../report/helpers/runs.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

function command(bin: string, name: string, script: string): void {
  writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, name), 0o755);
}

describe("a Slurm run whose array Slurm has forgotten", () => {
  it("status reads each task as unknown (or by its own end), and --resume submits what did not complete", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const bin = join(t.dir, "bin");
    mkdirSync(bin);
    writeFileSync(
      join(t.dir, "p.yaml"),
      "version: 1\nname: s\npipelines:\n  - name: well-{w}\n    matrix: { w: [a, b] }\n    steps:\n      - { id: m, run: [sleep, '1'], memory: numpy }\n",
    );
    const env = { ...NO_GPU, GPUPLAN_LOCK_DIR: join(t.dir, "locks"), PATH: bin };
    command(bin, "sbatch", "echo 4242");
    expect(gpuplan(["run", "p.yaml", "--executor", "slurm", "--detach"], { cwd: t.dir, env }).exitCode).toBe(
      0,
    );
    const [id] = readdirSync(join(t.dir, ".gpuplan/runs"));
    const runDir = join(t.dir, ".gpuplan/runs", id!);
    writeFileSync(
      join(runDir, "slurm/events/4242_0.jsonl"),
      `${JSON.stringify({ ts: new Date().toISOString(), event: "run.end", status: "ok" })}\n`,
    );
    command(bin, "squeue", "echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1");
    const status = gpuplan(["status", id!, "--json"], { cwd: t.dir, env });
    expect(status.exitCode, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).pipelines).toMatchObject([
      { pipeline: "well-a", job: "4242_0", state: "done" },
      { pipeline: "well-b", job: "4242_1", state: "unknown", slurmState: null },
    ]);
    command(bin, "sbatch", "echo 4343");
    const resume = gpuplan(["run", "p.yaml", "--resume", id!, "--executor", "slurm", "--detach"], {
      cwd: t.dir,
      env,
    });
    expect(resume.exitCode, resume.stderr).toBe(0);
    expect(resume.stdout).toMatch(/submitted as Slurm job 4343 \(1 pipeline\)/);
  });
});
