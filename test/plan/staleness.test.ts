import { describe, expect, it } from "vitest";
import { describeStaleness } from "../../src/plan/staleness.js";

const plan = (fields: Record<string, unknown>) =>
  JSON.stringify({
    schema: "gpuplan/plan@2",
    gpuplanVersion: "1.0.0",
    source: { file: "p.yaml", sha256: "0".repeat(64) },
    inventory: { label: "target:cpu-only", fingerprint: `sha256:${"1".repeat(64)}`, gpus: 0 },
    ...fields,
  });

describe("staleness message", () => {
  it("shows an absent value as (none), never undefined", () => {
    const message = describeStaleness(plan({ gpuplanVersion: undefined }), plan({}));
    expect(message).toBe("it was written by gpuplan (none), this is 1.0.0");
  });

  it("shows a structured value as compact JSON, never [object Object]", () => {
    const message = describeStaleness(
      plan({ schema: "gpuplan/plan@2", source: { file: { a: [1] }, sha256: "0".repeat(64) } }),
      plan({}),
    );
    expect(message).toContain('it records the pipeline as {"a":[1]}, this compile as p.yaml');
    expect(message).not.toMatch(/undefined|\[object Object\]/);
  });

  it("shows a missing inventory label as (none)", () => {
    const message = describeStaleness(
      plan({ inventory: { fingerprint: `sha256:${"2".repeat(64)}`, gpus: 0 } }),
      plan({}),
    );
    expect(message).toContain("(none) → target:cpu-only");
    expect(message).not.toMatch(/undefined|\[object Object\]/);
  });

  it("shows a value a megabyte long cut, its start and end around …", () => {
    const long = (c: string) => `${c.repeat(1_000_000)}-end`;
    const message = describeStaleness(
      plan({
        gpuplanVersion: long("v"),
        source: { file: long("f"), sha256: "0".repeat(64) },
        inventory: { label: long("l"), fingerprint: `sha256:${"2".repeat(64)}`, gpus: 0 },
      }),
      plan({}),
    );
    const cut = (c: string) => `${c.repeat(200)}…${c.repeat(36)}-end`;
    expect(message).toContain(`written by gpuplan ${cut("v")}, this is 1.0.0`);
    expect(message).toContain(`the inventory changed (${cut("l")} → target:cpu-only)`);
    expect(message).toContain(`records the pipeline as ${cut("f")}, this compile as p.yaml`);
    expect(message.length).toBeLessThan(2_000);
  });

  it("names at most five of the runs a plan learned from, each cut", () => {
    const learned = (runs: string[]) => ({
      pipelines: [{ steps: [{ learned: { estimateMs: { fromFile: 1, samples: 1, runs } } }] }],
    });
    const many = Array.from({ length: 50_000 }, (_, i) => `slurm-${100_000 + i}`);
    expect(describeStaleness(plan(learned(many)), plan({}))).toBe(
      "it was compiled with --history (learned from runs slurm-100000, slurm-100001, slurm-100002, slurm-100003, slurm-100004 and 49995 more); this compile was not",
    );
    const long = `slurm-${"1".repeat(1_000_000)}`;
    expect(describeStaleness(plan(learned([long])), plan({}))).toBe(
      `it was compiled with --history (learned from run slurm-${"1".repeat(194)}…${"1".repeat(40)}); this compile was not`,
    );
  });

  describe("an inventory of the same label whose fingerprint differs says what differs", () => {
    const other = { label: "target:cpu-only", fingerprint: `sha256:${"2".repeat(64)}` };
    const gpu = (name: string, memoryBytes: number) => ({
      gpu: "cuda:0",
      uuid: "GPU-1",
      name,
      backend: "cuda",
      memoryBytes,
    });

    it("the GPU count", () => {
      const message = describeStaleness(plan({ inventory: { ...other, gpus: 2 } }), plan({}));
      expect(message).toBe("the inventory target:cpu-only changed: 2 GPUs, now 0 GPUs");
    });

    it("a GPU's model and memory", () => {
      const message = describeStaleness(
        plan({ inventory: { ...other, gpus: 1 }, registry: [gpu("NVIDIA A100", 80)] }),
        plan({
          inventory: { ...other, fingerprint: `sha256:${"3".repeat(64)}`, gpus: 1 },
          registry: [gpu("NVIDIA H100", 96)],
        }),
      );
      expect(message).toBe(
        "the inventory target:cpu-only changed: cuda:0 was NVIDIA A100, now NVIDIA H100, cuda:0 had memoryBytes 80, now 96",
      );
    });

    it("facts the plan does not record, named as such rather than target:cpu-only → target:cpu-only", () => {
      const message = describeStaleness(plan({ inventory: { ...other, gpus: 0 } }), plan({}));
      expect(message).toBe(
        "the inventory target:cpu-only changed: facts the plan keeps no copy of (CPU cores or memory, a GPU's compute capability or MIG layout)",
      );
    });
  });
});
