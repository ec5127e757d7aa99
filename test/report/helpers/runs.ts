/**
 * Real runs for the report tests, through the built CLI: the CPU example, and a run on two fake
 * NVML GPUs (fixtures/report/gpu-run.yaml) with an OOM retried, an OOM that falls back to the CPU,
 * a failure, and a part interrupted by SIGINT and finished by --resume.
 */
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { fakeEnv, fakeLib } from "../../detect/fake-libs.js";
import { gpuplan, ROOT } from "../../helpers/cli.js";

const REPORT_FIXTURES = join(ROOT, "fixtures/report");
const MISSING = "/nonexistent/gpuplan-test-library.so";

/** No vendor library: live detection sees a CPU-only machine. */
export const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
  CI: "1",
};

export const runIds = (cwd: string): string[] => readdirSync(join(cwd, ".gpuplan/runs")).sort();

export function readEvents(runDir: string): { event: string; [k: string]: unknown }[] {
  return readFileSync(join(runDir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

/** The CPU example run in `cwd`; its run folder. */
export function runCpuExample(cwd: string): string {
  const r = gpuplan(["run", join(ROOT, "examples/hello-cpu.yaml"), "--ui", "plain"], { cwd, env: NO_GPU });
  expect(r.exitCode, r.stderr).toBe(0);
  return join(cwd, ".gpuplan/runs", runIds(cwd).at(-1)!);
}

function gpuEnv(cwd: string): Record<string, string | undefined> {
  return {
    ...fakeEnv(
      "h100x8-mig.scenario",
      { nvml: fakeLib("nvml") },
      { GPUPLAN_FAKE_SCENARIO: join(cwd, "two-gpus.scenario") },
    ),
    GPUPLAN_LOCK_DIR: join(cwd, "locks"),
    CI: "1",
  };
}

/** The fake-GPU run, interrupted while `slow/long` runs and resumed to the end; its run folder. */
export async function runFakeGpuWithResume(cwd: string): Promise<string> {
  for (const f of ["gpu-run.yaml", "step.mjs", "two-gpus.scenario"])
    copyFileSync(join(REPORT_FIXTURES, f), join(cwd, f));
  mkdirSync(join(cwd, "locks"), { recursive: true });
  const env = gpuEnv(cwd);
  const compiled = gpuplan(["compile", "gpu-run.yaml", "-o", "plan.json"], { cwd, env });
  expect(compiled.exitCode, compiled.stderr).toBe(0);
  const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "run", "plan.json", "--ui", "plain"], {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: "1" } as NodeJS.ProcessEnv,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  const longStarted = () => {
    const runs = existsSync(join(cwd, ".gpuplan/runs")) ? runIds(cwd) : [];
    const log = runs.length ? join(cwd, ".gpuplan/runs", runs[0]!, "logs/slow@long.err.log") : "";
    return log !== "" && existsSync(log) && readFileSync(log, "utf8").includes("working");
  };
  const deadline = Date.now() + 20_000;
  while (!longStarted() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  child.kill("SIGINT");
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  expect(code, stderr).toBe(130);
  const [id] = runIds(cwd);
  const resumed = gpuplan(["run", "plan.json", "--resume", id!, "--ui", "plain"], { cwd, env });
  // A step fails (broken/crash): the run ends with exit 1, every other step done.
  expect(resumed.exitCode, resumed.stderr).toBe(1);
  return join(cwd, ".gpuplan/runs", id!);
}
