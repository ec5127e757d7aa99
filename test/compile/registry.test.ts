import { describe, expect, it } from "vitest";
import { buildRegistry, reservationFor, schedulableGpus, sharedBudget } from "../../src/compile/registry.js";
import { GiB, inventory, migInventory, sharedGpuInstanceInventory } from "../helpers/inventory.js";
import { check, one, pipelines, yaml } from "../helpers/pipeline.js";

const file = (registry: string, vram = "1GiB", exclusive = "") => yaml`
  version: 1
  registry: { ${registry} }
  pipelines:
    - name: p
      steps:
        - { id: a, run: [x], memory: torch, vram: ${vram} }
        - { id: b, run: [x], memory: torch, vram: 70GiB ${exclusive} }
`;

function registryFor(text: string, inv = inventory([{ name: "A100", memory: "80GiB", count: 4 }], 16)) {
  const loaded = check(text);
  if (!loaded.resolved) throw new Error(JSON.stringify(loaded.problems));
  return buildRegistry(inv, loaded.resolved.registry, loaded.resolved.pipelines);
}

describe("registry", () => {
  it("gives each GPU max(1, ceil(cpu_threads / gpus)) slots by default", () => {
    const text = file("memory_strategy: aggressive", "1GiB", ", exclusive: true");
    for (const [threads, gpus, expected] of [
      [16, 4, 4],
      [10, 4, 3],
      [2, 4, 1],
      [1, 8, 1],
    ] as const) {
      const { value, problems } = registryFor(
        text,
        inventory([{ name: "A100", memory: "80GiB", count: gpus }], threads),
      );
      expect(problems).toEqual([]);
      expect(value).toHaveLength(gpus);
      expect(value.map((e) => [e.maxPipelines, e.limitedBy])).toEqual(
        new Array(gpus).fill([expected, "cpu-threads"]),
      );
    }
  });

  it("uses max_pipelines_per_gpu when set", () => {
    const { value } = registryFor(file("max_pipelines_per_gpu: 3", "1GiB", ", exclusive: true"));
    expect(value.map((e) => [e.maxPipelines, e.limitedBy])).toEqual(new Array(4).fill([3, "configured"]));
  });

  it("keeps every GPU's slots when a pipeline is big: memory is a budget, not fewer slots", () => {
    // balanced: 60 GiB of 80 GiB. A 70 GiB exclusive step and a 40 GiB shared one: before memory-aware
    // packing the 40 GiB peak cut every GPU to one slot.
    const { value } = registryFor(file("max_pipelines_per_gpu: 8", "40GiB", ", exclusive: true"));
    expect(value.map((e) => [e.maxPipelines, e.limitedBy, e.memoryBudgetBytes, e.warmReserveBytes])).toEqual(
      new Array(4).fill([8, "configured", 60 * GiB, 0]),
    );
    const cpuShare = registryFor(file("", "40GiB", ", exclusive: true"));
    expect(cpuShare.value.map((e) => [e.maxPipelines, e.limitedBy])).toEqual(
      new Array(4).fill([4, "cpu-threads"]),
    );
  });

  it("reserves a pipeline's shared peak on its GPU; exclusive steps don't count, unsized steps take a slot's share", () => {
    const entry = registryFor(file("max_pipelines_per_gpu: 4", "1GiB", ", exclusive: true")).value[0]!;
    const reserve = (text: string) => reservationFor(pipelines(check(text))[0]!)(entry);
    expect(reserve(file("", "12GiB", ", exclusive: true"))).toBe(12 * GiB);
    // The 70 GiB step is shared here, so it is the peak (compile reports that it fits no budget).
    expect(reserve(file("", "12GiB"))).toBe(70 * GiB);
    const unsized = yaml`
      version: 1
      pipelines: [{ name: p, steps: [{ id: a, run: [x], memory: torch }, { id: b, run: [x], memory: torch, vram: 2GiB }] }]
    `;
    // No vram: assumed to fit one slot, 60 GiB / 4.
    expect(reserve(unsized)).toBe(15 * GiB);
  });

  it("takes the budget as the strategy's fraction of each GPU's memory", () => {
    for (const [strategy, fraction] of [
      ["conservative", 0.6],
      ["balanced", 0.75],
      ["aggressive", 0.9],
      ["custom, memory_fraction: 0.5", 0.5],
    ] as const) {
      const { value } = registryFor(file(`memory_strategy: ${strategy}`, "1GiB", ", exclusive: true"));
      expect(value[0]!.memoryBudgetBytes).toBe(Math.floor(80 * GiB * fraction));
    }
  });

  it("schedules MIG instances, not their MIG-enabled parent", () => {
    const inv = migInventory();
    expect(schedulableGpus(inv, ["cuda", "rocm", "cpu"]).map((g) => g.id)).toEqual([
      "cuda:0/mig1",
      "cuda:0/mig2",
      "cuda:1",
    ]);
    const { value } = registryFor(file("", "1GiB", ", exclusive: true"), inv);
    expect(value.map((e) => [e.gpu.id, e.memoryBudgetBytes])).toEqual([
      ["cuda:0/mig1", 30 * GiB],
      ["cuda:0/mig2", 30 * GiB],
      ["cuda:1", 60 * GiB],
    ]);
  });

  it("splits a MIG GPU instance's budget between the compute instances that share its memory", () => {
    const { value } = registryFor(file("", "1GiB", ", exclusive: true"), sharedGpuInstanceInventory());
    expect(value.map((e) => [e.gpu.id, e.memoryBudgetBytes, e.memorySharedBy])).toEqual([
      ["cuda:0/mig1", 15 * GiB, 2],
      ["cuda:0/mig2", 15 * GiB, 2],
      ["cuda:1", 60 * GiB, 1],
    ]);
  });

  it("warns and returns an empty registry when there are no GPUs", () => {
    const { value, problems } = registryFor(file(""), inventory([], 16));
    expect(value).toEqual([]);
    const p = one(problems, "no-gpus");
    expect(p.severity).toBe("warning");
    expect(p.message).toContain("no GPUs in the inventory");
  });

  it("leaves out GPUs of a backend not in platform_priority and says so", () => {
    const inv = inventory([{ name: "MI300X", memory: "192GiB", backend: "rocm", count: 2 }]);
    const { value, problems } = registryFor(file("platform_priority: [cuda, cpu]"), inv);
    expect(value).toEqual([]);
    expect(one(problems, "no-gpus").message).toContain(
      "2 GPU(s) found but none of a backend in platform_priority",
    );
  });

  it("keeps resolved pipelines untouched", () => {
    const loaded = check(file(""));
    const before = JSON.stringify(pipelines(loaded));
    buildRegistry(
      inventory([{ name: "A100", memory: "80GiB" }]),
      loaded.resolved!.registry,
      pipelines(loaded),
    );
    expect(JSON.stringify(pipelines(loaded))).toBe(before);
  });
});

describe("registry: warm workers", () => {
  const warm = (max: string) => yaml`
    version: 1
    registry: { memory_strategy: custom, memory_fraction: 1, max_pipelines_per_gpu: 8 ${max} }
    pipelines:
      - name: p
        steps:
          - { id: a, memory: torch, vram: 20GiB, worker: { run: [w], key: big } }
          - { id: b, memory: torch, vram: 10GiB, worker: { run: [w2], key: small } }
  `;
  const one80 = () => inventory([{ name: "A100", memory: "80GiB" }], 16);

  it("keeps the largest max_warm_per_gpu warm workers' VRAM out of what pipelines share, not slots", () => {
    const reserve = (max: string) => {
      const e = registryFor(warm(max), one80()).value[0]!;
      expect([e.maxPipelines, e.limitedBy]).toEqual([8, "configured"]);
      return [e.warmReserveBytes / GiB, sharedBudget(e) / GiB];
    };
    expect(reserve("")).toEqual([20, 60]);
    expect(reserve(", max_warm_per_gpu: 2")).toEqual([30, 50]);
    expect(reserve(", max_warm_per_gpu: 0")).toEqual([0, 80]);
    // Never so much that the biggest pipeline could not run: 3 warm places would be 30 GiB of the 40 GiB
    // budget, and the 20 GiB pipeline must still fit beside it.
    const small = registryFor(
      warm(", max_warm_per_gpu: 3").replace("memory_fraction: 1", "memory_fraction: 0.5"),
      one80(),
    );
    expect(small.value[0]!.warmReserveBytes).toBe(20 * GiB);
  });
});
