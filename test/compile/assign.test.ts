import { describe, expect, it } from "vitest";
import type { GpuplanPlan, PlannedPipeline } from "../../src/schema-types/plan.js";
import { compileText, GiB, inventory } from "../helpers/inventory.js";
import { one, withCode, yaml } from "../helpers/pipeline.js";

const a100s = (count: number, threads = 16) =>
  inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count, compute_capability: "8.0" }], threads);

function planOf(result: ReturnType<typeof compileText>): GpuplanPlan {
  if (!result.plan) throw new Error(JSON.stringify(result.problems, null, 2));
  return result.plan;
}
const byName = (plan: GpuplanPlan, name: string): PlannedPipeline => {
  const p = plan.pipelines.find((x) => x.name === name);
  if (!p) throw new Error(`no pipeline ${name}`);
  return p;
};

const cellPainting = (n: number, extra = "") => yaml`
  version: 1
  pipelines:
    - name: plate-{plate}
      matrix: { plate: [${Array.from({ length: n }, (_, i) => i + 1).join(", ")}] }
      ${extra}
      steps:
        - { id: load, run: [load, "{plate}"], memory: numpy, estimate: 4m }
        - { id: denoise, run: [x], memory: { input: numpy, output: cupy }, vram: 10GiB, estimate: 6m }
        - { id: segment, run: [x], memory: torch, vram: 14GiB, estimate: 12m }
        - { id: measure, run: [x], memory: { input: torch, output: numpy }, vram: 4GiB, estimate: 5m }
`;

describe("assignment", () => {
  it("keeps every GPU step of a pipeline on one GPU and host steps on the CPU", () => {
    const plan = planOf(compileText(cellPainting(8), a100s(4)));
    for (const p of plan.pipelines) {
      expect(p.gpu).toMatch(/^cuda:\d$/);
      expect(p.gpus).toEqual([p.gpu]);
      const devices = p.steps.map((s) => s.device);
      expect(devices).toEqual(["cpu", p.gpu, p.gpu, p.gpu]);
      const uuid = plan.registry.find((e) => e.gpu === p.gpu)!.uuid;
      expect(p.steps.map((s) => s.uuid)).toEqual([null, uuid, uuid, uuid]);
    }
  });

  it("spreads equal pipelines evenly over the GPUs", () => {
    const plan = planOf(compileText(cellPainting(8), a100s(4)));
    const counts = new Map<string, number>();
    for (const p of plan.pipelines) counts.set(p.gpu!, (counts.get(p.gpu!) ?? 0) + 1);
    expect([...counts.values()]).toEqual([2, 2, 2, 2]);
    expect(plan.summary.gpus.map((g) => g.pipelines)).toEqual([2, 2, 2, 2]);
  });

  it("honours requires: backend, min_memory, compute_capability and name", () => {
    const mixed = inventory([
      { name: "NVIDIA GeForce RTX 3090", memory: "24GiB", count: 2, compute_capability: "8.6" },
      { name: "NVIDIA Tesla V100", memory: "32GiB", count: 1, compute_capability: "7.0" },
      { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count: 1, compute_capability: "8.0" },
      {
        name: "AMD Instinct MI300X",
        memory: "192GiB",
        count: 1,
        backend: "rocm",
        compute_capability: "gfx942",
      },
    ]);
    const text = (requires: string) => yaml`
      version: 1
      pipelines:
        - name: p
          requires: { ${requires} }
          steps: [{ id: s, run: [x], memory: torch, vram: 1GiB }]
    `;
    const gpuOf = (requires: string) => planOf(compileText(text(requires), mixed)).pipelines[0]!.gpu;
    expect(gpuOf("backend: rocm")).toBe("rocm:0");
    expect(gpuOf("min_memory: 30GiB")).toBe("cuda:2");
    expect(gpuOf('compute_capability: ">=8.0", min_memory: 64GiB')).toBe("cuda:3");
    expect(gpuOf('compute_capability: "<8.0"')).toBe("cuda:2");
    expect(gpuOf('name: "*a100*"')).toBe("cuda:3");
    expect(gpuOf("name: RTX")).toBe("cuda:0");
  });

  it("reports unmet requirements at each GPU step, with the reasons", () => {
    const result = compileText(
      yaml`
        version: 1
        pipelines:
          - name: p
            requires: { compute_capability: ">=9.0" }
            steps:
              - { id: cpu, run: [x] }
              - { id: gpu, run: [x], memory: torch, vram: 1GiB }
      `,
      a100s(2),
    );
    expect(result.plan).toBeUndefined();
    const p = one(result.problems, "no-usable-gpu");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("GPU step `gpu` of pipeline `p`");
    expect(p.message).toContain("2 GPU(s): compute capability 8.0 does not satisfy >=9.0");
    expect(p.hint).toContain("relax `requires`");
    expect(p.pointer).toBe("/pipelines/0/steps/1");
    expect([p.line, p.column]).toEqual([7, 9]);
  });

  it("follows platform_priority: cuda before rocm, or the reverse", () => {
    const both = inventory([
      { name: "NVIDIA L4", memory: "24GiB", count: 1 },
      { name: "AMD Instinct MI300X", memory: "192GiB", count: 1, backend: "rocm" },
    ]);
    const text = (order: string) => yaml`
      version: 1
      registry: { platform_priority: [${order}], max_pipelines_per_gpu: 1 }
      pipelines:
        - name: p-{n}
          matrix: { n: [1, 2] }
          steps: [{ id: s, run: [x], memory: torch, vram: 1GiB }]
    `;
    const cudaFirst = planOf(compileText(text("cuda, rocm"), both));
    expect(cudaFirst.pipelines.map((p) => [p.gpu, p.backend])).toEqual([
      ["cuda:0", "cuda"],
      ["cuda:0", "cuda"],
    ]);
    const rocmFirst = planOf(compileText(text("rocm, cuda"), both));
    expect(rocmFirst.pipelines.map((p) => p.gpu)).toEqual(["rocm:0", "rocm:0"]);
    expect(rocmFirst.pipelines[0]!.steps[0]!.device).toBe("rocm:0");
  });

  it("falls through to the next backend when the first cannot hold the pipeline", () => {
    const both = inventory([
      { name: "NVIDIA L4", memory: "24GiB", count: 1 },
      { name: "AMD Instinct MI300X", memory: "192GiB", count: 1, backend: "rocm" },
    ]);
    const plan = planOf(
      compileText(
        yaml`
          version: 1
          pipelines: [{ name: big, steps: [{ id: s, run: [x], memory: torch, vram: 100GiB }] }]
        `,
        both,
      ),
    );
    expect(plan.pipelines[0]!.gpu).toBe("rocm:0");
  });

  it("gives a gpus: 2 pipeline two GPUs, in PCI order", () => {
    const plan = planOf(
      compileText(
        yaml`
          version: 1
          pipelines:
            - name: dp
              gpus: 2
              steps: [{ id: train, run: [x], memory: jax, vram: 30GiB }]
            - name: single
              steps: [{ id: s, run: [x], memory: torch, vram: 1GiB, estimate: 1h }]
        `,
        a100s(4),
      ),
    );
    const dp = byName(plan, "dp");
    expect(dp.gpus).toHaveLength(2);
    expect(dp.gpu).toBe(dp.gpus[0]);
    expect([...dp.gpus].sort()).toEqual(dp.gpus);
    // The longer single pipeline went first; the pair avoids its GPU.
    expect(dp.gpus).not.toContain(byName(plan, "single").gpu);
  });

  it("reports a gpus: N pipeline on a machine with fewer GPUs", () => {
    const result = compileText(
      yaml`
        version: 1
        pipelines: [{ name: dp, gpus: 4, steps: [{ id: train, run: [x], memory: jax, vram: 1GiB }] }]
      `,
      a100s(2),
    );
    const p = one(result.problems, "no-usable-gpu");
    expect(p.message).toContain("needs 4 GPUs at once but only 2");
  });

  it("reports GPU steps with no GPU at all (cpu-only), at the step", () => {
    const result = compileText(cellPainting(2), "cpu-only");
    expect(result.plan).toBeUndefined();
    const errors = withCode(result.problems, "no-usable-gpu");
    expect(errors.map((p) => p.pointer)).toEqual([
      "/pipelines/0/steps/1",
      "/pipelines/0/steps/2",
      "/pipelines/0/steps/3",
    ]);
    expect(errors[0]!.message).toContain("no GPUs available");
    expect(errors[0]!.message).toContain("(and 1 more like it)");
    expect(one(result.problems, "no-gpus").severity).toBe("warning");
  });

  it("names only the steps too big for any budget", () => {
    const result = compileText(
      yaml`
        version: 1
        pipelines:
          - name: p
            steps:
              - { id: small, run: [x], memory: torch, vram: 1GiB }
              - { id: huge, run: [x], memory: torch, vram: 70GiB }
      `,
      a100s(1),
    );
    const p = one(result.problems, "no-usable-gpu");
    expect(p.pointer).toBe("/pipelines/0/steps/1");
    expect(p.message).toContain("needs 70 GiB of VRAM but the largest budget is 60 GiB");
  });

  it("runs a pipeline on the CPU with a warning when its GPU steps allow fallback: cpu", () => {
    const result = compileText(
      yaml`
        version: 1
        pipelines:
          - name: p
            steps:
              - { id: load, run: [x] }
              - { id: seg, run: [x], memory: torch, vram: 8GiB, on_oom: { fallback: cpu } }
      `,
      "cpu-only",
    );
    const plan = planOf(result);
    const p = one(result.problems, "gpu-fallback-cpu");
    expect(p.severity).toBe("warning");
    expect(p.pointer).toBe("/pipelines/0");
    expect(plan.pipelines[0]).toMatchObject({ gpu: null, gpus: [], backend: "cpu", fellBackToCpu: true });
    expect(plan.pipelines[0]!.steps.map((s) => [s.device, s.uuid, s.memoryBudgetBytes])).toEqual([
      ["cpu", null, null],
      ["cpu", null, null],
    ]);
    expect(plan.summary).toMatchObject({ gpuPipelines: 0, cpuPipelines: 1 });
  });

  it("does not fall back to the CPU when platform_priority leaves it out", () => {
    const result = compileText(
      yaml`
        version: 1
        registry: { platform_priority: [cuda] }
        pipelines: [{ name: p, steps: [{ id: seg, run: [x], memory: torch, vram: 8GiB, on_oom: { fallback: cpu } }] }]
      `,
      "cpu-only",
    );
    expect(one(result.problems, "no-usable-gpu").pointer).toBe("/pipelines/0/steps/0");
  });

  it("gives an exclusive step the whole budget and blocks the card's other slots meanwhile", () => {
    const text = (exclusive: boolean) => yaml`
      version: 1
      registry: { max_pipelines_per_gpu: 2 }
      pipelines:
        - name: p-{n}
          matrix: { n: [1, 2] }
          steps:
            - { id: a, run: [x], memory: torch, vram: 4GiB, estimate: 10m }
            - { id: eval, run: [x], memory: torch, vram: 40GiB, estimate: 10m, exclusive: ${exclusive} }
    `;
    const exclusive = planOf(compileText(text(true), a100s(1)));
    const shared = planOf(compileText(text(false), inventory([{ name: "A100", memory: "80GiB" }], 16)));
    const evalStep = exclusive.pipelines[0]!.steps[1]!;
    expect(evalStep.exclusive).toBe(true);
    expect(evalStep.memoryBudgetBytes).toBe(60 * GiB);
    expect(exclusive.pipelines[0]!.steps[0]!.memoryBudgetBytes).toBe(30 * GiB);
    expect(exclusive.registry[0]!.maxPipelines).toBe(2);
    // Two pipelines share the card, but the exclusive step holds both slots for its 10 minutes.
    expect(exclusive.summary.makespanMs).toBeGreaterThan(20 * 60_000);
    // Without exclusive the 40 GiB step limits the card to one pipeline at a time.
    expect(shared.registry[0]).toMatchObject({ maxPipelines: 1, limitedBy: "memory" });
  });

  it("places pipelines without GPU steps on the CPU without problems", () => {
    const result = compileText(
      yaml`
        version: 1
        pipelines: [{ name: p, steps: [{ id: s, run: [x] }] }]
      `,
      a100s(2),
    );
    expect(result.problems).toEqual([]);
    expect(planOf(result).pipelines[0]).toMatchObject({ gpu: null, backend: "cpu", fellBackToCpu: false });
  });
});
