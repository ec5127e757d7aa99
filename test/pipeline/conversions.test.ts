import { describe, expect, it } from "vitest";
import { incomingConversions, transferMs } from "../../src/pipeline/conversions.js";
import { classifyConversion, isGpuType, isMemoryType } from "../../src/pipeline/memory-types.js";
import { check, pipelines, yaml } from "../helpers/pipeline.js";

describe("classifyConversion", () => {
  it.each([
    ["numpy", "numpy", "none"],
    ["torch", "torch", "none"],
    ["pyclesperanto", "pyclesperanto", "none"],
    ["cupy", "torch", "dlpack"],
    ["torch", "jax", "dlpack"],
    ["jax", "tensorflow", "dlpack"],
    ["numpy", "cupy", "host-to-device"],
    ["numpy", "pyclesperanto", "host-to-device"],
    ["torch", "numpy", "device-to-host"],
    ["pyclesperanto", "torch", "host-roundtrip"],
    ["cupy", "pyclesperanto", "host-roundtrip"],
  ] as const)("%s → %s is %s", (from, to, kind) => {
    expect(classifyConversion(from, to)).toBe(kind);
  });

  it("knows which types are GPU types, case-sensitively", () => {
    expect(isGpuType("torch")).toBe(true);
    expect(isGpuType("numpy")).toBe(false);
    expect(isMemoryType("Torch")).toBe(false);
    expect(isMemoryType("pyclesperanto")).toBe(true);
  });
});

describe("incomingConversions", () => {
  const loaded = check(yaml`
    version: 1
    pipelines:
      - name: p
        steps:
          - { id: load, run: [x], data: 5GB }
          - { id: up, run: [x], memory: cupy, vram: 1GiB, data: 1GB }
          - { id: seg, run: [x], memory: { input: torch, output: torch }, vram: 1GiB }
          - { id: down, run: [x], memory: { input: torch, output: numpy }, vram: 1GiB }
          - { id: both, run: [x], needs: [load, down] }
  `);
  const p = pipelines(loaded)[0]!;
  const kinds = p.steps.map((_, j) => incomingConversions(p, j).map((c) => `${c.fromStep}:${c.kind}`));

  it("follows needs edges and classifies each hand-off", () => {
    expect(loaded.problems).toEqual([]);
    expect(kinds).toEqual([
      [],
      ["load:host-to-device"],
      ["up:dlpack"],
      ["seg:none"],
      ["load:none", "down:none"],
    ]);
  });

  it("estimates transfer time from the producer's data", () => {
    const [c] = incomingConversions(p, 1);
    expect(c!.bytes).toBe(5e9);
    expect(transferMs(c!)).toBe(200);
    expect(transferMs(incomingConversions(p, 2)[0]!)).toBe(0);
    expect(transferMs(incomingConversions(p, 3)[0]!)).toBeNull();
  });
});
