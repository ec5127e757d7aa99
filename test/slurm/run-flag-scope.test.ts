// `gpuplan run` refuses, naming it, a flag the chosen executor would silently ignore: a local
// run's waiting and starting flags with --executor slurm (also when --resume picks Slurm for a
// Slurm run), a Slurm request flag without it. GPUPLAN_* variables stay allowed: sbatch passes
// the environment to the tasks. No cluster needed: nothing is submitted.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gpuplan } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-run-flags-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, "pipeline.yaml"),
  [
    "version: 1",
    "name: flags",
    "pipelines:",
    "  - name: p",
    "    steps:",
    "      - { id: a, run: [sh, -c, 'touch ran'], memory: numpy }",
    "",
  ].join("\n"),
);
// No Slurm at all: a refusal must come before any Slurm command.
const env = { SLURM_CONF: "/nonexistent/slurm.conf", PATH: process.env.PATH };
const run = (args: string[], extra: Record<string, string> = {}) =>
  gpuplan(["run", ...args], { cwd: dir, env: { ...env, ...extra } });

describe("gpuplan run: flags the executor would ignore", () => {
  it.each([
    [["--no-wait"], "--no-wait", "Slurm queues each task"],
    [["--lock-timeout", "5m"], "--lock-timeout", "Slurm queues each task"],
    [["--kill-grace", "3s"], "--kill-grace", "set GPUPLAN_KILL_GRACE instead"],
    [["--spawn", "node"], "--spawn", "set GPUPLAN_SPAWN instead"],
    [["--bind", "exact"], "--bind", "the GPUs Slurm allocated"],
  ])("with --executor slurm, %j is refused naming %s (exit 2)", (flags, flag, hint) => {
    const r = run(["pipeline.yaml", "--executor", "slurm", "--dry-run", ...flags]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${flag} is a local run's flag: with --executor slurm it would be ignored`);
    expect(r.stderr).toContain("[conflicting-options]");
    expect(r.stderr).toContain(hint);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("a GPUPLAN_* variable is not a flag: the dry run goes on", () => {
    const r = run(["pipeline.yaml", "--executor", "slurm", "--dry-run"], { GPUPLAN_KILL_GRACE: "3s" });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("gpuplan run --executor slurm --dry-run: 1 job array for 1 pipeline");
  });

  it.each([
    [["--partition", "gpu"], "--partition"],
    [["--detach"], "--detach"],
    [["--sbatch-arg=--exclusive"], "--sbatch-arg"],
  ])("without --executor slurm, %j is refused naming %s (exit 2), nothing runs", (flags, flag) => {
    const r = run(["pipeline.yaml", ...flags]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${flag} is a Slurm flag: a local run would ignore it`);
    expect(r.stderr).toContain("add --executor slurm");
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });

  it("--resume of a run submitted to Slurm resumes on Slurm: --no-wait is refused there too", () => {
    const runDir = join(dir, ".gpuplan/runs/20261126T000000Z-abcdef");
    mkdirSync(join(runDir, "slurm"), { recursive: true });
    writeFileSync(join(runDir, "slurm/jobs.json"), '{"schema":"gpuplan/slurm-run@1","arrays":[]}\n');
    const r = run(["--resume", "20261126T000000Z-abcdef", "--no-wait"]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("--no-wait is a local run's flag");
    const local = run(["--resume", "20261126T000000Z-abcdef", "--executor", "local", "--partition", "x"]);
    expect(local.exitCode).toBe(2);
    expect(local.stderr).toContain("--partition is a Slurm flag");
  });
});
