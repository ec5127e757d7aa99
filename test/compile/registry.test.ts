import { describe, expect, it } from "vitest";
import { buildRegistry, schedulableGpus } from "../../src/compile/registry.js";
import { GiB, inventory, migInventory } from "../helpers/inventory.js";
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

  it("never gives more slots than the peak shared VRAM fits in the budget", () => {
    // balanced: 60 GiB of 80 GiB; a 14 GiB peak fits 4 times, less than the 8 configured slots.
    const { value } = registryFor(file("max_pipelines_per_gpu: 8", "14GiB", ", exclusive: true"));
    expect(value[0]).toMatchObject({ memoryBudgetBytes: 60 * GiB, maxPipelines: 4, limitedBy: "memory" });
  });

  it("does not count exclusive steps in the shared peak, but does count shared ones", () => {
    const shared = registryFor(file("max_pipelines_per_gpu: 8", "1GiB"));
    // The 70 GiB step is shared here: it does not fit the 60 GiB budget at all → one slot.
    expect(shared.value[0]).toMatchObject({ maxPipelines: 1, limitedBy: "memory" });
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

  it("reserves the largest max_warm_per_gpu warm workers' VRAM before dividing the rest into slots", () => {
    // 80 GiB − 20 GiB (one warm place) = 60 GiB; peak 20 GiB → 3 slots.
    expect(registryFor(warm(""), one80()).value[0]).toMatchObject({ maxPipelines: 3, limitedBy: "memory" });
    // Two warm places: 80 − 30 = 50 → 2 slots.
    expect(registryFor(warm(", max_warm_per_gpu: 2"), one80()).value[0]!.maxPipelines).toBe(2);
    // None kept warm: 80 / 20 → 4 slots.
    expect(registryFor(warm(", max_warm_per_gpu: 0"), one80()).value[0]!.maxPipelines).toBe(4);
  });
});
