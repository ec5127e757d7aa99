// Binding a plan to the live inventory: GPUs come from the fake NVML library (the real detection
// path), the plan from compiling against that same machine.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compilePlan } from "../../src/compile/compile.js";
import { detectInventory } from "../../src/detect/index.js";
import type { Inventory } from "../../src/inventory/types.js";
import { bindPlan, gpusUsed } from "../../src/plan/verify-plan.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { choose, inventory } from "../helpers/inventory.js";
import { check } from "../helpers/pipeline.js";

const PIPELINE = `
version: 1
name: verify
pipelines:
  - name: seg-{n}
    matrix: { n: [1, 2] }
    steps:
      - id: prep
        run: [node, prep.mjs]
        memory: numpy
      - id: segment
        run: [python3, segment.py]
        memory: torch
        vram: 30GiB
  - name: cpu-only
    steps:
      - id: count
        run: [node, count.mjs]
        memory: numpy
`;
const CONTEXT = { planFile: "plan.json", recompile: "gpuplan compile verify.yaml -o plan.json" };
const EXACT = { ...CONTEXT, mode: "exact" as const };
const verifyPlan = (...args: Parameters<typeof bindPlan>) => bindPlan(...args).problems;
const dir = mkdtempSync(join(tmpdir(), "gpuplan-verify-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Detection through fake NVML on h100x8-mig, with scenario lines appended (last value wins). */
async function detectWith(extra: string): Promise<Inventory> {
  const scenario = join(dir, `s${Math.random().toString(16).slice(2)}.scenario`);
  copyFileSync(join(SCENARIOS, "h100x8-mig.scenario"), scenario);
  writeFileSync(scenario, `${readFileSync(scenario, "utf8")}\n${extra}\n`);
  return detectInventory({
    env: fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
  });
}

const compileAgainst = (inv: Inventory) => {
  const result = compilePlan(check(PIPELINE), choose(inv, "detect"));
  if (!result.plan) throw new Error(result.problems.map((p) => p.message).join("\n"));
  return result.plan;
};

/** The NVML index (scenario order) of a UUID. */
const nvmlIndex = (uuid: string): number => {
  const m = new RegExp(`^nvml\\.(\\d+)\\.uuid = ${uuid}$`, "m").exec(
    readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8"),
  );
  return Number(m![1]);
};

describe.skipIf(!fakeLibsBuilt)("plan verification against fake NVML", () => {
  it("passes on the machine the plan was made for", async () => {
    const inv = await detectWith("");
    const plan = compileAgainst(inv);
    expect(gpusUsed(plan.pipelines).length).toBeGreaterThan(0);
    expect(verifyPlan(plan, plan.pipelines, inv, CONTEXT)).toEqual([]);
  });

  it("a GPU gone (another card in its place) binds to that card by model; with --bind exact it is an error naming the GPU, what is there now, and how to recompile", async () => {
    const plan = compileAgainst(await detectWith(""));
    const used = plan.registry.find((r) => r.gpu === plan.pipelines[0]!.gpu)!;
    const swapped = await detectWith(
      `nvml.${nvmlIndex(used.uuid)}.uuid = GPU-00000000-0000-0000-0000-000000000001`,
    );
    const bound = bindPlan(plan, plan.pipelines, swapped, CONTEXT);
    expect(bound.problems).toEqual([]);
    const replaced = bound.bindings.filter((b) => b.replaced);
    expect(replaced.map((b) => [b.planGpu, b.live.uuid])).toEqual([
      [used.gpu, "GPU-00000000-0000-0000-0000-000000000001"],
    ]);
    // The bound plan names the live card everywhere a step looks.
    expect(bound.plan.registry.find((r) => r.gpu === used.gpu)!.uuid).toBe(
      "GPU-00000000-0000-0000-0000-000000000001",
    );
    expect(bound.plan.pipelines[0]!.steps.find((s) => s.id === "segment")!.uuid).toBe(
      "GPU-00000000-0000-0000-0000-000000000001",
    );
    const problems = verifyPlan(plan, plan.pipelines, swapped, EXACT);
    expect(problems).toEqual([
      expect.objectContaining({
        code: "gpu-missing",
        severity: "error",
        message: expect.stringContaining(
          `${used.gpu} (NVIDIA H100 80GB HBM3, ${used.uuid}) from the plan is not visible`,
        ),
        hint: expect.stringContaining("gpuplan compile verify.yaml -o plan.json"),
      }),
    ]);
    expect(problems[0]!.message).toContain("GPU-00000000-0000-0000-0000-000000000001");
  });

  it("a budget that no longer fits (less memory than when planned) is an error", async () => {
    const plan = compileAgainst(await detectWith(""));
    const used = plan.registry.find((r) => r.gpu === plan.pipelines[0]!.gpu)!;
    const shrunk = await detectWith(`nvml.${nvmlIndex(used.uuid)}.memory = 42949672960`);
    const problems = verifyPlan(plan, plan.pipelines, shrunk, CONTEXT);
    expect(problems.map((p) => p.code)).toEqual(["gpu-budget-no-longer-fits"]);
    expect(problems[0]!.message).toMatch(/now has 40 GiB/);
  });

  it("only the selected pipelines count: a CPU pipeline needs no GPU at all", async () => {
    const plan = compileAgainst(await detectWith(""));
    const cpu = plan.pipelines.filter((p) => p.name === "cpu-only");
    expect(gpusUsed(cpu)).toEqual([]);
    expect(verifyPlan(plan, cpu, inventory([]), CONTEXT)).toEqual([]);
    // One problem per kind of GPU, saying how many the plan needs and what the machine has.
    const problems = verifyPlan(plan, plan.pipelines, inventory([]), CONTEXT);
    expect(problems.map((p) => p.code)).toEqual(["gpu-missing"]);
    const needed = gpusUsed(plan.pipelines).length;
    expect(problems[0]!.message).toContain(`the plan needs ${needed} × NVIDIA H100 80GB HBM3`);
    expect(problems[0]!.message).toContain("this machine has none (no GPUs visible)");
  });
});

describe("a driver that does not answer while the plan is checked", () => {
  it("says the driver did not answer within N s, not that the machine changed", async () => {
    const plan = compileAgainst(await detectWith(""));
    const hung = await detectInventory({
      timeoutMs: 1000,
      env: fakeEnv("hang.scenario", { nvml: fakeLib("nvml"), cuda: fakeLib("cuda") }),
    });
    const problems = verifyPlan(plan, plan.pipelines, hung, CONTEXT);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: "gpu-probe-timeout", severity: "error" });
    expect(problems[0]!.message).toMatch(
      /^the GPU driver did not answer within 1 s, so cuda:\d+ \(.*\) from the plan could not be checked \(nvml: nvmlInit_v2 did not return within 1 s/,
    );
    expect(problems[0]!.hint).not.toContain("machine changed");
  });
});
