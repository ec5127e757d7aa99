// A plan is data anyone can edit. An attack set a GPU step's onOom.retries to 1,000,000,000 and its
// estimateMs or timeoutMs to 1e308, which the plan schema took (a pipeline file stops at 100
// retries and 365 days): run laid out one rung per retry before the step started and died of a V8
// heap out-of-memory (exit 134), and export wrote `--time=Infinity-NaN:NaN:00`. All are now refused
// at their place in the plan before anything starts.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const PIPELINE = `version: 1
name: retries
pipelines:
  - name: p
    steps:
      - { id: infer, run: [node, -e, "0"], memory: torch, vram: 10GiB, on_oom: { retries: 100 } }
`;

interface Plan {
  pipelines: { steps: { onOom: { retries: number } }[] }[];
}

describe("a plan's onOom.retries past what a pipeline file may say", () => {
  it("run, run --dry-run and export refuse it at its place in the plan (exit 1); 100, as compile writes it, is a plan", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    writeFileSync(join(t.dir, "p.yaml"), PIPELINE);
    const c = gpuplan(["compile", "p.yaml", "--target", "dgx-h100", "-o", "plan.json"], { cwd: t.dir });
    expect(c.exitCode, c.stderr).toBe(0);
    const file = join(t.dir, "plan.json");
    const ok = gpuplan(["export", file, "--to", "slurm", "-o", join(t.dir, "ok")], { cwd: t.dir });
    expect(ok.exitCode, ok.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(file, "utf8")) as Plan;
    plan.pipelines[0]!.steps[0]!.onOom.retries = 1_000_000_000;
    writeFileSync(file, JSON.stringify(plan, null, 2));
    for (const args of [
      ["run", file],
      ["run", file, "--dry-run"],
    ]) {
      const r = gpuplan(args, { cwd: t.dir });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, `${args.join(" ")}\n${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(/plan\.json:\d+:\d+ +error .*retries.*<= 100/);
    }
    // export says a plan that is not one as its other refusals (exit 2), naming the place.
    const e = gpuplan(["export", file, "--to", "slurm", "-o", join(t.dir, "out")], { cwd: t.dir });
    expect(hasCrashed(e), e.stderr).toBe(false);
    expect(e.exitCode, e.stderr).not.toBe(0);
    expect(e.stderr).toContain("/pipelines/0/steps/0/onOom/retries must be <= 100");
    expect(existsSync(join(t.dir, "out"))).toBe(false);
  });

  it("a pipeline file's on_oom ladder stops at 100 rungs too, so compile never writes a plan past the bound", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const rungs = (n: number) => Array.from({ length: n }, () => "retry").join(", ");
    const file = (n: number) =>
      PIPELINE.replace("on_oom: { retries: 100 }", `on_oom: { ladder: [${rungs(n)}] }`);
    writeFileSync(join(t.dir, "ok.yaml"), file(100));
    writeFileSync(join(t.dir, "long.yaml"), file(101));
    const ok = gpuplan(["compile", "ok.yaml", "--target", "dgx-h100", "-o", "ok.json"], { cwd: t.dir });
    expect(ok.exitCode, ok.stderr).toBe(0);
    const run = gpuplan(["run", "ok.json", "--dry-run"], { cwd: t.dir });
    expect(run.stderr).not.toMatch(/invalid-plan|schema-invalid/);
    const long = gpuplan(["compile", "long.yaml", "--target", "dgx-h100", "-o", "long.json"], { cwd: t.dir });
    expect(hasCrashed(long), long.stderr).toBe(false);
    expect(long.exitCode, long.stderr).toBe(1);
    expect(long.stderr).toMatch(/long\.yaml:6:\d+ +error .*ladder.*100/);
    expect(existsSync(join(t.dir, "long.json"))).toBe(false);
  });
});

describe("a plan's step durations past what a pipeline file may say (365 days)", () => {
  // The plan schema took any integer: estimateMs 1e308 made export write `--time=Infinity-NaN:NaN:00`
  // into the sbatch script, and timeoutMs 1e308 `--time=1.1574074074074074e+300-09:36:00`.
  it.each([
    ["estimateMs", "/pipelines/0/steps/0/estimateMs"],
    ["timeoutMs", "/pipelines/0/steps/0/timeoutMs"],
  ] as const)("%s 1e308: run --dry-run and export refuse it at its place", (field, pointer) => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    writeFileSync(join(t.dir, "p.yaml"), PIPELINE.replace("retries: 100", "retries: 1"));
    const c = gpuplan(["compile", "p.yaml", "--target", "dgx-h100", "-o", "plan.json"], { cwd: t.dir });
    expect(c.exitCode, c.stderr).toBe(0);
    const file = join(t.dir, "plan.json");
    const plan = JSON.parse(readFileSync(file, "utf8")) as {
      pipelines: { steps: Record<string, unknown>[] }[];
    };
    plan.pipelines[0]!.steps[0]![field] = 1e308;
    writeFileSync(file, JSON.stringify(plan, null, 2));
    const r = gpuplan(["run", file, "--dry-run"], { cwd: t.dir });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`plan\\.json:\\d+:\\d+ +error .*${field}\` must be <= 31536000000`));
    const e = gpuplan(["export", file, "--to", "slurm", "-o", join(t.dir, "out")], { cwd: t.dir });
    expect(hasCrashed(e), e.stderr).toBe(false);
    expect(e.exitCode, e.stderr).not.toBe(0);
    expect(e.stderr).toContain(`${pointer} must be <= 31536000000`);
    expect(existsSync(join(t.dir, "out"))).toBe(false);
  });
});
