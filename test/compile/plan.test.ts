import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import validatePlan from "../../src/generated/plan-validator.js";
import { TARGETS } from "../../src/inventory/targets.js";
import { fillDefaults } from "../../src/plan/plan-defaults.js";
import { compileText, inventory, migInventory } from "../helpers/inventory.js";
import { yaml } from "../helpers/pipeline.js";

const EXAMPLES = ["cell-painting", "diffusion-inference", "jax-training"].map((name) => ({
  name,
  text: readFileSync(`examples/${name}.yaml`, "utf8"),
}));

/** Which example compiles cleanly on which target (the rest must fail with located errors). */
const COMPILES: Record<string, string[]> = {
  "cell-painting": TARGETS.map((t) => t.name).filter((t) => t !== "cpu-only"),
  "diffusion-inference": ["dgx-a100-80gb", "dgx-a100-40gb", "dgx-h100", "dgx-h200"],
  // The exclusive 40 GiB evaluation needs more than 0.85 × 40 GiB.
  "jax-training": ["dgx-a100-80gb", "dgx-h100", "dgx-h200"],
};

describe("plans", () => {
  for (const ex of EXAMPLES) {
    for (const target of TARGETS) {
      it(`${ex.name} on ${target.name}: valid plan or located errors`, () => {
        const result = compileText(ex.text, target.name);
        if (COMPILES[ex.name]!.includes(target.name)) {
          expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
          const ok = validatePlan(result.plan);
          expect(validatePlan.errors ?? [], JSON.stringify(validatePlan.errors)).toEqual([]);
          expect(ok).toBe(true);
          // The file leaves out the defaults; read back, it is the plan.
          expect(fillDefaults(JSON.parse(result.planText!))).toEqual(result.plan);
        } else {
          expect(result.plan).toBeUndefined();
          expect(result.problems.some((p) => p.severity === "error")).toBe(true);
        }
        for (const p of result.problems) {
          expect(p.code).toMatch(/^[a-z0-9-]+$/);
          expect(p.message.length).toBeGreaterThan(0);
          if (p.file === "pipeline.yaml" && p.pointer !== undefined) {
            expect(p.line).toBeGreaterThan(0);
            expect(p.column).toBeGreaterThan(0);
          }
        }
      });
    }
  }

  it("is deterministic: the same input gives the same text", () => {
    for (const ex of EXAMPLES) {
      const a = compileText(ex.text, "dgx-h100").planText;
      const b = compileText(ex.text, "dgx-h100").planText;
      expect(a).toBeDefined();
      expect(a).toBe(b);
    }
  });

  it("records the pipeline hash and an inventory fingerprint that changes with the machine", () => {
    const text = EXAMPLES[0]!.text;
    const h100 = compileText(text, "dgx-h100").plan!;
    const a100 = compileText(text, "dgx-a100-80gb").plan!;
    expect(h100.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(h100.source.sha256).toBe(a100.source.sha256);
    expect(h100.inventory.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(h100.inventory.fingerprint).not.toBe(a100.inventory.fingerprint);
    expect(h100.inventory).toMatchObject({ label: "target:dgx-h100", gpus: 8 });
    const edited = compileText(`${text}\n# a comment\n`, "dgx-h100").plan!;
    expect(edited.source.sha256).not.toBe(h100.source.sha256);
  });

  it("has sane makespan and lower-bound figures", () => {
    const text = yaml`
      version: 1
      registry: { max_pipelines_per_gpu: 2 }
      pipelines:
        - name: job-{n}
          matrix: { n: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }
          steps: [{ id: s, run: [x], memory: torch, vram: 1GiB, estimate: 10m }]
    `;
    const plan = compileText(text, inventory([{ name: "A100", memory: "80GiB", count: 2 }], 64)).plan!;
    // 10 × 10 min over 2 GPUs × 2 slots: lower bound ceil(100/4) = 25 min, LPT gives 30 min.
    expect(plan.summary.lowerBoundMs).toBe(25 * 60_000);
    expect(plan.summary.makespanMs).toBe(30 * 60_000);
    expect(plan.summary.gpus.map((g) => g.workMs)).toEqual([50 * 60_000, 50 * 60_000]);
    for (const ex of EXAMPLES) {
      const s = compileText(ex.text, "dgx-h100").plan!.summary;
      expect(s.makespanMs).toBeGreaterThanOrEqual(s.lowerBoundMs);
      expect(s.lowerBoundMs).toBeGreaterThan(0);
      expect(s.pipelines).toBe(s.gpuPipelines + s.cpuPipelines);
    }
  });

  it("compiles against a MIG inventory, on instances and plain GPUs only", () => {
    const result = compileText(EXAMPLES[0]!.text, migInventory());
    expect(result.problems).toEqual([]);
    const plan = result.plan!;
    expect(validatePlan(plan)).toBe(true);
    expect(plan.registry.map((e) => e.gpu)).toEqual(["cuda:0/mig1", "cuda:0/mig2", "cuda:1"]);
    const used = new Set(plan.pipelines.map((p) => p.gpu));
    expect(used.has("cuda:0")).toBe(false);
    expect(plan.pipelines.find((p) => p.gpu === "cuda:0/mig1")!.steps[1]!.uuid).toMatch(/^MIG-/);
  });

  it("lists diagnostics (warnings) in the plan itself", () => {
    const plan = compileText(
      yaml`
        version: 1
        pipelines: [{ name: p, steps: [{ id: s, run: [x], memory: torch }] }]
      `,
      "rtx4090",
    ).plan!;
    expect(plan.diagnostics).toEqual([
      expect.objectContaining({
        code: "missing-vram",
        severity: "warning",
        file: "pipeline.yaml",
        line: 2,
        column: 32,
      }),
    ]);
    expect(validatePlan(plan)).toBe(true);
  });
});
