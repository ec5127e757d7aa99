import { describe, expect, it } from "vitest";
import type { GpuplanPlan, PlannedPipeline } from "../../src/schema-types/plan.js";
import {
  compileText,
  GiB,
  inventory,
  migInventory,
  sharedGpuInstanceInventory,
} from "../helpers/inventory.js";
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

  it("gives a gpus: 2 pipeline on cards of different sizes what fits on each: the L4's share, not the A100's", () => {
    const a100AndL4 = inventory(
      [
        { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" },
        { name: "NVIDIA L4", memory: "24GiB" },
      ],
      2,
    );
    const plan = planOf(
      compileText(
        yaml`
          version: 1
          registry: { max_pipelines_per_gpu: 2 }
          pipelines:
            - name: dp
              gpus: 2
              steps: [{ id: train, run: [x], memory: jax, estimate: 10m }]
            - name: whole
              gpus: 2
              steps: [{ id: train, run: [x], memory: jax, vram: 1GiB, exclusive: true, estimate: 1m }]
        `,
        a100AndL4,
      ),
    );
    const budget = (gpu: string) => plan.registry.find((e) => e.gpu === gpu)!.memoryBudgetBytes;
    // balanced: 60 GiB and 18 GiB; 2 slots each. The A100's share (30 GiB) does not fit the L4.
    const dp = byName(plan, "dp");
    expect(dp.gpus).toEqual(["cuda:0", "cuda:1"]);
    expect(dp.reservationBytes).toBe(9 * GiB);
    expect(dp.steps[0].memoryBudgetBytes).toBe(9 * GiB);
    // An exclusive step owns both cards: the L4's whole budget is what fits on each.
    expect(byName(plan, "whole").steps[0].memoryBudgetBytes).toBe(budget("cuda:1"));
    expect(budget("cuda:1")).toBe(18 * GiB);
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
    expect(p.message).toContain("needs 4 GPUs at once but only 2 can hold it");
    expect(p.pointer).toBe("/pipelines/0/gpus");
  });

  const dp30 = yaml`
    version: 1
    pipelines: [{ name: dp, gpus: 2, steps: [{ id: train, run: [x], memory: torch, vram: 30GiB }] }]
  `;

  it("counts only the GPUs with room for a gpus: N pipeline, naming the others' budgets", () => {
    const mixed = inventory(
      [
        { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" },
        { name: "NVIDIA L4", memory: "24GiB" },
      ],
      2,
    );
    const p = one(compileText(dp30, mixed).problems, "no-usable-gpu");
    expect(p.pointer).toBe("/pipelines/0/gpus");
    expect(p.message).toContain(
      "it needs 2 GPUs at once but only 1 can hold it: cuda:0 (NVIDIA A100-SXM4-80GB, budget 60 GiB); " +
        "not cuda:1 (NVIDIA L4): a budget of 18 GiB of 24 GiB, less than the 30 GiB it needs",
    );
  });

  it("says a gpus: N pipeline needs its GPUs from one backend", () => {
    const mixed = inventory([
      { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" },
      { name: "AMD Instinct MI300X", memory: "192GiB", backend: "rocm" },
    ]);
    const p = one(compileText(dp30, mixed).problems, "no-usable-gpu");
    expect(p.pointer).toBe("/pipelines/0/gpus");
    expect(p.message).toContain("needs 2 GPUs of one backend at once but no backend has 2 that can hold it");
    expect(p.message).toContain("cuda only 1: cuda:0");
    expect(p.message).toContain("rocm only 1: rocm:0");
  });

  // A CUDA process can use only one MIG instance (NVIDIA MIG user guide, CUDA_VISIBLE_DEVICES):
  // two of them in one pipeline's CUDA_VISIBLE_DEVICES would leave one unused.
  it("never gives a gpus: N pipeline MIG instances, and says so at its gpus: line", () => {
    const p = one(compileText(dp30, migInventory()).problems, "no-usable-gpu");
    expect(p.pointer).toBe("/pipelines/0/gpus");
    expect(p.message).toContain("it needs 2 GPUs at once but only 1 can hold it: cuda:1 (");
    expect(p.message).toContain(
      "not cuda:0/mig1 (NVIDIA A100-SXM4-80GB MIG 3g.40gb), cuda:0/mig2 (NVIDIA A100-SXM4-80GB MIG 3g.40gb): " +
        "a MIG instance, and a CUDA process can use only one MIG instance",
    );
    expect(p.hint).toContain("MIG disabled");
  });

  it("puts a gpus: N pipeline on GPUs without MIG and single-GPU pipelines on MIG instances too", () => {
    const inv = migInventory();
    inv.gpus.push({
      ...inv.gpus[3]!,
      id: "cuda:2",
      index: 2,
      uuid: "GPU-33333333-3333-3333-3333-333333333333",
    });
    const plan = planOf(
      compileText(
        yaml`
          version: 1
          registry: { max_pipelines_per_gpu: 1 }
          pipelines:
            - { name: dp, gpus: 2, steps: [{ id: train, run: [x], memory: torch, vram: 10GiB, estimate: 1h }] }
            - name: one-{n}
              matrix: { n: [1, 2] }
              steps: [{ id: s, run: [x], memory: torch, vram: 10GiB, estimate: 1h }]
        `,
        inv,
      ),
    );
    expect(byName(plan, "dp").gpus).toEqual(["cuda:1", "cuda:2"]);
    expect([byName(plan, "one-1").gpu, byName(plan, "one-2").gpu].sort()).toEqual([
      "cuda:0/mig1",
      "cuda:0/mig2",
    ]);
  });

  it("never commits more than a MIG GPU instance has across the compute instances sharing it", () => {
    const shards = (vram: string) => yaml`
      version: 1
      registry: { platform_priority: [cuda] }
      pipelines:
        - name: p-{n}
          matrix: { n: [1, 2] }
          requires: { name: "*MIG*" }
          steps: [{ id: s, run: [x], memory: torch, vram: ${vram}, estimate: 10m }]
    `;
    const inv = sharedGpuInstanceInventory();
    const small = planOf(compileText(shards("14GiB"), inv));
    expect(small.pipelines.map((p) => [p.gpu, p.estimatedStartMs])).toEqual([
      ["cuda:0/mig1", 0],
      ["cuda:0/mig2", 0],
    ]);
    // 28 GiB each started at once on both was 56 GiB on the GPU instance's 40 GiB.
    const big = compileText(shards("28GiB"), inv);
    expect(big.plan).toBeUndefined();
    expect(withCode(big.problems, "no-usable-gpu")[0]!.message).toContain(
      "the largest budget is 15 GiB (balanced: 0.75 of 40 GiB on NVIDIA A100-SXM4-80GB MIG 3g.40gb, " +
        "split between the 2 compute instances of its MIG GPU instance)",
    );
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
    const shared = planOf(compileText(text(false), a100s(1)));
    const evalStep = exclusive.pipelines[0]!.steps[1]!;
    expect(evalStep.exclusive).toBe(true);
    expect(evalStep.memoryBudgetBytes).toBe(60 * GiB);
    // A shared step may use what its pipeline reserves: here its own 4 GiB peak.
    expect(exclusive.pipelines[0]!.reservationBytes).toBe(4 * GiB);
    expect(exclusive.pipelines[0]!.steps[0]!.memoryBudgetBytes).toBe(4 * GiB);
    expect(exclusive.registry[0]!.maxPipelines).toBe(2);
    // The exclusive step holds the card for its 10 minutes: the two pipelines cannot start together.
    expect(exclusive.summary.makespanMs).toBe(30 * 60_000);
    // Without exclusive the two 40 GiB peaks don't fit the 60 GiB budget together: one after the other,
    // though the card keeps its 2 slots.
    expect(shared.registry[0]).toMatchObject({ maxPipelines: 2, limitedBy: "configured" });
    expect(shared.pipelines.map((p) => [p.reservationBytes / GiB, p.estimatedStartMs / 60_000])).toEqual([
      [40, 0],
      [40, 20],
    ]);
    expect(shared.pipelines[0]!.steps.map((s) => s.memoryBudgetBytes)).toEqual([40 * GiB, 40 * GiB]);
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

describe("memory-aware packing", () => {
  it("a 16 GiB step in a matrix template costs memory on its GPU, not slots on every GPU", () => {
    // 2 GPUs × 4 slots (8 threads), 60 GiB budgets: seven 8 GiB pipelines and one with a 16 GiB step fit
    // at once (16 + 3 × 8 = 40 GiB); cutting every GPU to floor(60 / 16) = 3 slots took two rounds.
    const plan = planOf(
      compileText(
        yaml`
          version: 1
          pipelines:
            - name: small-{n}
              matrix: { n: [1, 2, 3, 4, 5, 6, 7] }
              steps: [{ id: a, run: [x], memory: torch, vram: 8GiB, estimate: 10m }]
            - name: big-{n}
              matrix: { n: [1] }
              steps:
                - { id: a, run: [x], memory: torch, vram: 8GiB, estimate: 5m }
                - { id: b, run: [x], memory: torch, vram: 16GiB, estimate: 5m }
        `,
        a100s(2, 8),
      ),
    );
    expect(plan.registry.map((e) => [e.maxPipelines, e.limitedBy])).toEqual([
      [4, "cpu-threads"],
      [4, "cpu-threads"],
    ]);
    expect(plan.pipelines.map((p) => p.estimatedStartMs)).toEqual(new Array(8).fill(0));
    expect(byName(plan, "big-1").reservationBytes).toBe(16 * GiB);
    expect(plan.summary).toMatchObject({ makespanMs: 600_000, lowerBoundMs: 600_000 });
    for (const g of plan.summary.gpus) expect(g.committedVramBytes).toBeLessThanOrEqual(60 * GiB);
  });

  it("starts a pipeline only when its reservation fits what its GPU has left", () => {
    // One 60 GiB budget, 4 slots: a 40 GiB pipeline and six 4 GiB ones.
    const plan = planOf(
      compileText(
        yaml`
          version: 1
          registry: { max_pipelines_per_gpu: 4 }
          pipelines:
            - name: big
              steps: [{ id: a, run: [x], memory: torch, vram: 40GiB, estimate: 20m }]
            - name: small-{n}
              matrix: { n: [1, 2, 3, 4, 5, 6] }
              steps: [{ id: a, run: [x], memory: torch, vram: 4GiB, estimate: 10m }]
        `,
        a100s(1),
      ),
    );
    expect(plan.pipelines.map((p) => [p.name, p.estimatedStartMs / 60_000])).toEqual([
      ["big", 0],
      ["small-1", 0],
      ["small-2", 0],
      ["small-3", 0],
      ["small-4", 10],
      ["small-5", 10],
      ["small-6", 10],
    ]);
    expect(plan.summary).toMatchObject({ makespanMs: 20 * 60_000, lowerBoundBy: "longest-pipeline" });
  });

  it("CPU pipelines take host lanes: they have estimated starts and count in the makespan", () => {
    const plan = planOf(
      compileText(
        yaml`
          version: 1
          registry: { max_parallel_pipelines: 2 }
          pipelines:
            - name: gpu
              steps: [{ id: a, run: [x], memory: torch, vram: 1GiB, estimate: 10s }]
            - name: cpu-{n}
              matrix: { n: [1, 2, 3, 4] }
              steps: [{ id: a, run: [x], estimate: 8s }]
        `,
        a100s(1),
      ),
    );
    expect(plan.pipelines.map((p) => [p.name, p.estimateMs, p.estimatedStartMs])).toEqual([
      ["gpu", 10_000, 0],
      ["cpu-1", 8000, 0],
      ["cpu-2", 8000, 8000],
      ["cpu-3", 8000, 10_000],
      ["cpu-4", 8000, 16_000],
    ]);
    expect(plan.summary).toMatchObject({
      makespanMs: 24_000,
      lowerBoundMs: 21_000,
      lowerBoundBy: "host-lanes",
      lowerBoundTerms: { longestPipelineMs: 10_000, gpuSlotsMs: 625, hostLanesMs: 21_000 },
    });
  });

  it("gives the same plan for the same input", () => {
    const text = cellPainting(24, "");
    expect(compileText(text, a100s(4)).planText).toBe(compileText(text, a100s(4)).planText);
  });
});
