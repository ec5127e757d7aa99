// Plans in format 1 (every field written, as gpuplan wrote them before format 2 left out the
// defaults) are still plans: fixtures/plans/format-1/ holds two, checked in as that gpuplan wrote
// them. They read as the plan compile makes now, run (--dry-run, on fake GPUs of their kind) as
// the format-2 plan does, and export to Slurm.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { planText } from "../../src/plan/plan-text.js";
import { readPlanFile } from "../../src/plan/read-plan.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

const OLD = join(ROOT, "fixtures/plans/format-1");
const NEW = join(ROOT, "fixtures/compile");
const CASES = [
  ["cell-painting-dgx-h100.json", "example-cell-painting-dgx-h100"],
  ["fallback-cpu.json", "fallback-cpu"],
] as const;

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/**
 * A plan as read, minus what format 2 added (the pipelines' source), the format's name, and its
 * warnings' files (recorded as typed then, relative to the plan's folder since).
 */
function comparable(plan: GpuplanPlan): unknown {
  return {
    ...plan,
    schema: null,
    pipelines: plan.pipelines.map(({ source: _, ...p }) => p),
    diagnostics: plan.diagnostics.map(({ file: _, ...d }) => d),
  };
}

describe("format 1 plans", () => {
  it.each(CASES)("%s reads as the format-2 plan compile writes now", async (old, fixture) => {
    expect(readFileSync(join(OLD, old), "utf8")).toContain('"schema": "gpuplan/plan@1"');
    const before = await readPlanFile(join(OLD, old));
    const now = await readPlanFile(join(NEW, fixture, "expected-plan.json"));
    expect(before.problems).toEqual([]);
    expect(now.problems).toEqual([]);
    expect(JSON.stringify(comparable(before.plan!))).toBe(JSON.stringify(comparable(now.plan!)));
    // Written again, it is a format-2 plan, smaller by a third even with a small plan's registry.
    const again = planText(before.plan!);
    expect(again).toContain('"schema": "gpuplan/plan@2"');
    expect(again.length).toBeLessThan(readFileSync(join(OLD, old), "utf8").length * 0.7);
  });

  it.skipIf(!fakeLibsBuilt)("runs (--dry-run) on fake H100s exactly as the format-2 plan does", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    copyFileSync(join(OLD, "cell-painting-dgx-h100.json"), join(t.dir, "old.json"));
    copyFileSync(join(NEW, "example-cell-painting-dgx-h100/expected-plan.json"), join(t.dir, "new.json"));
    const scenario = join(t.dir, "h100.scenario");
    writeFileSync(
      scenario,
      `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.2.mig = 0\nnvml.5.mig = 0\n`,
    );
    const env = fakeEnv(
      "h100x8-mig.scenario",
      { nvml: fakeLib("nvml") },
      { GPUPLAN_FAKE_SCENARIO: scenario, GPUPLAN_LOCK_DIR: join(t.dir, "locks"), CI: "1" },
    );
    const dryRun = (plan: string) => {
      const r = gpuplan(["run", plan, "--dry-run", "--ui", "json"], { cwd: t.dir, env });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(0);
      return r.stdout.replace(/"(run|GPUPLAN_RUN)": "[^"]+"/g, '"$1": "RUN"');
    };
    const old = dryRun("old.json");
    expect(old).toContain("plate-BR00116991");
    expect(old.replaceAll("old.json", "PLAN")).toBe(dryRun("new.json").replaceAll("new.json", "PLAN"));
  });

  it("exports to Slurm", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    copyFileSync(join(OLD, "cell-painting-dgx-h100.json"), join(t.dir, "plan.json"));
    const r = gpuplan(["export", "plan.json", "--to", "slurm", "-o", "out"], { cwd: t.dir });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(t.dir, "out/plan.json"), "utf8")).toContain('"schema": "gpuplan/plan@1"');
  });
});
