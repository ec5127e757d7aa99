// A plan compiled with --history under `compile --check` (the check says so and names the runs in
// its hint, and passes with the same runs), and a learned VRAM no GPU can take (the warning says
// so, and stderr still counts what was learned).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { targetInventory } from "../../src/inventory/load-inventory.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { end, events, runEnd, runStart, start } from "../report/helpers/events.js";
import { NO_GPU } from "../report/helpers/runs.js";
import { planFor, writeRun } from "./helpers.js";

const PIPELINE = `version: 1
name: plates
pipelines:
  - name: plate-{p}
    matrix: { p: [1] }
    steps:
      - { id: segment, run: [x], memory: torch, vram: 8GiB, estimate: 1s }
`;
const RUN = "20261123T100000Z-aaaaaa";
const GiB = 1024 ** 3;

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

/** g.yaml and one run of it in .gpuplan/runs: `segment` took 5 s and held `peakGiB` at its peak. */
async function setUp(peakGiB: number, status = "ok") {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const file = join(t.dir, "g.yaml");
  writeFileSync(file, PIPELINE);
  const plan = await planFor(file, targetInventory("dgx-h100"));
  const device = plan.pipelines[0]!.steps[0]!.device;
  writeRun(
    join(t.dir, ".gpuplan/runs"),
    RUN,
    plan,
    file,
    events([
      [0, runStart(["plate-1"])],
      [1, start("plate-1", "segment", device)],
      [2, end("plate-1", "segment", device, 5000, status, 1, { peakVramBytes: peakGiB * GiB })],
      [3, runEnd(5100, status === "ok" ? "ok" : "failed", status === "ok" ? 1 : 0)],
    ]),
  );
  return t.dir;
}

const compile = (cwd: string, ...args: string[]) =>
  gpuplan(["compile", "g.yaml", ...args], { cwd, env: NO_GPU });

describe("compile --check of a plan compiled with --history", () => {
  it("says the plan learned from runs, names them in its hint, and passes with them", async () => {
    const dir = await setUp(6);
    const made = compile(dir, "--target", "dgx-h100", "--history", RUN, "-o", "learned.json");
    expect(made.exitCode, made.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(dir, "learned.json"), "utf8")) as GpuplanPlan;
    expect(plan.pipelines[0]!.steps[0]!.learned?.estimateMs?.runs).toEqual([RUN]);

    const without = compile(dir, "--check", "learned.json", "--format", "json");
    expect(without.exitCode, without.stderr).toBe(1);
    const report = JSON.parse(without.stdout) as {
      problems: { code: string; message: string; hint: string }[];
    };
    const stale = report.problems.find((p) => p.code === "stale-plan")!;
    expect(stale.message).toContain(
      `it was compiled with --history (learned from run ${RUN}); this compile was not`,
    );
    expect(stale.message).not.toContain("edited by hand");
    // Following the hint keeps the learned values.
    expect(stale.hint).toBe(`run: gpuplan compile g.yaml --target dgx-h100 --history ${RUN} -o learned.json`);

    const withRuns = compile(dir, "--check", "learned.json", "--history", RUN);
    expect(withRuns.exitCode, withRuns.stderr).toBe(0);
    expect(withRuns.stderr).toContain("learned.json is up to date");
  });

  it("a run id in the plan that is not one never goes into the hint's command line", async () => {
    const dir = await setUp(6);
    expect(compile(dir, "--target", "dgx-h100", "--history", RUN, "-o", "learned.json").exitCode).toBe(0);
    const path = join(dir, "learned.json");
    writeFileSync(path, readFileSync(path, "utf8").replaceAll(RUN, "x; rm -rf ~"));
    const r = compile(dir, "--check", "learned.json", "--format", "json");
    const report = JSON.parse(r.stdout) as { problems: { code: string; hint: string }[] };
    const stale = report.problems.find((p) => p.code === "stale-plan")!;
    expect(stale.hint).toBe("run: gpuplan compile g.yaml --target dgx-h100 --history RUN… -o learned.json");
    // An exported array's run folder (slurm-JOB) is a run id too.
    writeFileSync(path, readFileSync(path, "utf8").replaceAll("x; rm -rf ~", "slurm-4242"));
    const slurm = compile(dir, "--check", "learned.json", "--format", "json");
    const fromSlurm = (JSON.parse(slurm.stdout) as { problems: { code: string; hint: string }[] }).problems;
    expect(fromSlurm.find((p) => p.code === "stale-plan")!.hint).toBe(
      "run: gpuplan compile g.yaml --target dgx-h100 --history slurm-4242 -o learned.json",
    );
  });

  it("a plan's run ids go into the hint only when they are few and of a run id's length", async () => {
    const dir = await setUp(6);
    expect(compile(dir, "--target", "dgx-h100", "--history", RUN, "-o", "learned.json").exitCode).toBe(0);
    const path = join(dir, "learned.json");
    const learned = readFileSync(path, "utf8");
    const hintFor = (runs: string[]) => {
      writeFileSync(path, learned.replaceAll(`"${RUN}"`, runs.map((r) => JSON.stringify(r)).join(",")));
      const r = compile(dir, "--check", "learned.json", "--format", "json");
      const report = JSON.parse(r.stdout) as { problems: { code: string; hint: string }[] };
      return report.problems.find((p) => p.code === "stale-plan")!.hint;
    };
    const placeholder = "run: gpuplan compile g.yaml --target dgx-h100 --history RUN… -o learned.json";
    expect(hintFor([`slurm-${"1".repeat(100_000)}`])).toBe(placeholder);
    // A Slurm job id is a 32-bit number: 10 digits at most.
    expect(hintFor(["slurm-42949672950"])).toBe(placeholder);
    expect(hintFor(["slurm-4294967295"])).toBe(
      "run: gpuplan compile g.yaml --target dgx-h100 --history slurm-4294967295 -o learned.json",
    );
    expect(hintFor(Array.from({ length: 21 }, (_, i) => `slurm-${100 + i}`))).toBe(placeholder);
    const twenty = Array.from({ length: 20 }, (_, i) => `slurm-${100 + i}`);
    expect(hintFor(twenty)).toBe(
      `run: gpuplan compile g.yaml --target dgx-h100 --history ${twenty.join(" ")} -o learned.json`,
    );
  });

  it("a plan compiled without --history, checked with it: the hint keeps --history", async () => {
    const dir = await setUp(6);
    expect(compile(dir, "--target", "dgx-h100", "-o", "plain.json").exitCode).toBe(0);
    const r = compile(dir, "--check", "plain.json", "--history", RUN, "--format", "json");
    expect(r.exitCode, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as { problems: { code: string; message: string; hint: string }[] };
    const stale = report.problems.find((p) => p.code === "stale-plan")!;
    expect(stale.message).toContain(
      `this compile learned from run ${RUN} (--history); the plan was compiled without it`,
    );
    expect(stale.hint).toBe(`run: gpuplan compile g.yaml --target dgx-h100 --history ${RUN} -o plain.json`);
  });
});

describe("compile --history with a learned VRAM no GPU can take", () => {
  it("the warning says no GPU can take the pipeline, and stderr counts the learned step", async () => {
    // 70 GiB at the peak of an OOM: 77 GiB with headroom, over every H100's 60 GiB budget (balanced).
    const dir = await setUp(70, "oom");
    const r = compile(dir, "--target", "dgx-h100", "--history", RUN);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(hasCrashed(r)).toBe(false);
    expect(r.stderr).toContain("[no-usable-gpu]");
    expect(r.stderr).toContain("[history-vram-over-budget]");
    expect(r.stderr).not.toContain("to the CPU");
    expect(r.stderr).toContain(
      "no GPU can take `plate-1` (with the file's values: cuda:0), so compile fails (no-usable-gpu)",
    );
    expect(r.stderr).toContain(`history: learned 1 step from 1 run: ${RUN}`);
  });
});
