/**
 * An exported array's run `slurm-JOB`, made by the real exported sbatch script run by hand as Slurm
 * would run its tasks (no cluster: SLURM_ARRAY_* set here): a project compiled against a Slurm
 * node's inventory, exported with `gpuplan export --to slurm -o out`, then `out/01-cpu.sbatch` once
 * per task.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { gpuplan } from "../../helpers/cli.js";
import { NO_GPU } from "./runs.js";

/** A Slurm node type's inventory (detect --slurm's): 4 H100s, 16 CPUs. */
const SLURM_NODE = {
  gpus: [{ name: "NVIDIA H100 80GB HBM3", memory: 85520809984, count: 4, compute_capability: "9.0" }],
  cpu: { threads: 16, memory: "16000MiB" },
  slurm: {
    node_type: "h100x4-16cpu-16000mib",
    gres: [{ model: "NVIDIA H100 80GB HBM3", type: "h100", count: 4 }],
  },
};

/** The environment the project's gpuplan commands and tasks run with (no GPU, its own lock folder). */
export const projectEnv = (project: string) => ({ ...NO_GPU, GPUPLAN_LOCK_DIR: join(project, ".locks") });

/** In `project` (an existing folder): p.yaml, node.json, plan.json compiled from them, and out/. */
export function exportArray(project: string, pipeline: string): void {
  writeFileSync(join(project, "p.yaml"), pipeline);
  writeFileSync(join(project, "node.json"), JSON.stringify(SLURM_NODE));
  for (const args of [
    ["compile", "p.yaml", "--inventory", "node.json", "-o", "plan.json"],
    ["export", "plan.json", "--to", "slurm", "-o", "out"],
  ]) {
    const r = gpuplan(args, { cwd: project, env: projectEnv(project) });
    expect(r.exitCode, r.stderr).toBe(0);
  }
}

/**
 * Task `task` of array `job` run as Slurm runs it, with `env` besides; its exit status (the
 * status its pipeline ended with).
 */
export function runTask(project: string, job: string, task: number, env: Record<string, string> = {}) {
  const r = spawnSync("bash", ["out/01-cpu.sbatch"], {
    cwd: project,
    env: {
      ...process.env,
      ...projectEnv(project),
      ...env,
      SLURM_ARRAY_JOB_ID: job,
      SLURM_ARRAY_TASK_ID: String(task),
    },
    encoding: "utf8",
  });
  return { status: r.status, stderr: r.stderr };
}
