// A plan file that is not one compile could have written is refused before anything starts, with
// a located reason: a later plan format (naming the gpuplan that wrote it), a hand edit that
// breaks the plan's invariants, a file cut short. An older plan that is valid still runs.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

const MISSING = "/nonexistent/gpuplan-test-library.so";
const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
  CI: "1",
};

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
function planned(): { dir: string; text: string; write: (text: string) => void } {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const r = gpuplan(
    ["compile", join(ROOT, "examples/cell-painting.yaml"), "--target", "dgx-h100", "-o", "plan.json"],
    {
      cwd: t.dir,
    },
  );
  expect(r.exitCode, r.stderr).toBe(0);
  return {
    dir: t.dir,
    text: readFileSync(join(t.dir, "plan.json"), "utf8"),
    write: (text) => writeFileSync(join(t.dir, "plan.json"), text),
  };
}
const refused = (dir: string) => {
  const r = gpuplan(["run", "plan.json", "--dry-run"], { cwd: dir, env: NO_GPU });
  expect(hasCrashed(r), r.stderr).toBe(false);
  expect(r.exitCode).toBe(1);
  expect(r.stdout).toBe("");
  return r.stderr;
};

describe("plans gpuplan refuses before anything starts", () => {
  it("a later plan format: located at `schema`, naming the gpuplan that wrote it", () => {
    const p = planned();
    p.write(
      p.text
        .replace("gpuplan/plan@2", "gpuplan/plan@3")
        .replace(/"gpuplanVersion": "[^"]*"/, '"gpuplanVersion": "9.0.0"'),
    );
    expect(refused(p.dir)).toMatch(
      /^plan\.json:2:13 +error +plan\.json is in plan format gpuplan\/plan@3, written by gpuplan 9\.0\.0; this gpuplan \([^)]+\) reads gpuplan\/plan@2 and earlier +\[plan-too-new\]/,
    );
  });

  it("a plan cut short: located at its end", () => {
    const p = planned();
    p.write(p.text.slice(0, 1500));
    const err = refused(p.dir);
    expect(err).toMatch(/^plan\.json:\d+:\d+ +error +plan\.json ends before the plan does \(1500 bytes/);
    expect(err).toContain("[plan-truncated]");
  });

  it("duplicate pipeline names, a GPU listed twice, more slots than the lock gives: each located", () => {
    const p = planned();
    const plan = JSON.parse(p.text) as {
      pipelines: { name: string }[];
      registry: { gpu: string; maxPipelines: number }[];
    };
    plan.pipelines[1]!.name = plan.pipelines[0]!.name;
    plan.registry[1]!.gpu = plan.registry[0]!.gpu;
    plan.registry[2]!.maxPipelines = 5000;
    p.write(JSON.stringify(plan, null, 2));
    const err = refused(p.dir);
    expect(err).toMatch(/plan\.json:\d+:\d+ +error +the registry lists cuda:0 twice +\[plan-inconsistent\]/);
    expect(err).toMatch(
      /plan\.json:\d+:\d+ +error +cuda:2 has 5000 slots; the slot lock gives at most 1024 per GPU/,
    );
    expect(err).toMatch(
      /plan\.json:\d+:\d+ +error +pipeline `plate-BR00116991` appears twice \(pipelines 0 and 1\)/,
    );
  });

  it("an older plan (settings.workers, as before the rename) still runs", () => {
    const p = planned();
    p.write(p.text.replace('"maxParallelPipelines"', '"workers"'));
    const r = gpuplan(["run", "plan.json", "--dry-run", "--pipeline", "plate-BR00116991"], {
      cwd: p.dir,
      env: NO_GPU,
    });
    // This machine has no H100s: the plan is read and gets as far as binding its GPUs.
    expect(r.stderr).toContain("[gpu-missing]");
    expect(r.stderr).not.toMatch(/invalid-plan|plan-inconsistent/);
  });
});
