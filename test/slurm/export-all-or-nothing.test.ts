// `gpuplan export` writes plan.json, the sbatch scripts and submit.sh all or none: Ctrl-C between
// two of them left the first ones written (a folder of a plan and half its scripts), and so did
// a file that could not be written after others had been.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, ROOT, tempDir, writeBigPipeline } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** Every regular file under `dir`, however deep, with its size. */
function filesUnder(dir: string): { path: string; size: number }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .map((path) => ({ path, st: statSync(path, { throwIfNoEntry: false }) }))
    .filter((f) => f.st?.isFile())
    .map((f) => ({ path: f.path, size: f.st!.size }));
}

function compiledBigPlan(dir: string): void {
  const file = writeBigPipeline(dir, 3000, "-".repeat(400));
  const r = gpuplan(["compile", file, "--target", "cpu-only", "-o", "plan.json"], { cwd: dir });
  expect(r.exitCode, r.stderr).toBe(0);
  expect(statSync(join(dir, "plan.json")).size).toBeGreaterThan(2_000_000);
}

describe("gpuplan export: all the files or none", () => {
  it("Ctrl-C while the plan is being written: no file and no new folder left", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    compiledBigPlan(t.dir);
    const out = join(t.dir, "out");
    const child: ChildProcess = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "export", "plan.json", "--to", "slurm", "-o", "out"],
      { cwd: t.dir, stdio: "ignore" },
    );
    cleanups.push(() => child.kill("SIGKILL"));
    // Sent once a file in the folder holds 1 MB: the plan's copy is under way.
    const sent = await new Promise<boolean>((resolve) => {
      const timer = setInterval(() => {
        if (filesUnder(out).some((f) => f.size > 1_000_000)) {
          clearInterval(timer);
          child.kill("SIGINT");
          resolve(true);
        }
      }, 1);
      child.once("exit", () => {
        clearInterval(timer);
        resolve(false);
      });
    });
    expect(sent).toBe(true);
    const signal = await new Promise<string | null>((resolve) =>
      child.exitCode !== null || child.signalCode !== null
        ? resolve(child.signalCode)
        : child.once("exit", (_c, s) => resolve(s)),
    );
    expect(signal).toBe("SIGINT");
    expect(existsSync(out) ? readdirSync(out, { recursive: true }) : null).toBeNull();
  }, 60_000);

  it("a file that cannot be written (a folder where submit.sh goes) writes none of them", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const r0 = gpuplan(
      ["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only", "-o", "plan.json"],
      {
        cwd: t.dir,
      },
    );
    expect(r0.exitCode, r0.stderr).toBe(0);
    mkdirSync(join(t.dir, "out/submit.sh"), { recursive: true });
    const r = gpuplan(["export", "plan.json", "--to", "slurm", "-o", "out", "--force"], { cwd: t.dir });
    expect(r.stderr).toContain("submit.sh");
    expect(r.exitCode).toBe(2);
    expect(readdirSync(join(t.dir, "out")).sort()).toEqual(["submit.sh"]);
  });
});
