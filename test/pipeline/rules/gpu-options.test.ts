import { describe, expect, it } from "vitest";
import { compileText } from "../../helpers/inventory.js";
import { check, one, withCode, yaml } from "../../helpers/pipeline.js";

describe("rule: GPU options", () => {
  it("warns about a GPU step without a vram estimate, at the step", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: seg
              run: [x]
              memory: torch
    `);
    const p = one(loaded.problems, "missing-vram");
    expect(p.severity).toBe("warning");
    expect(p.message).toContain("`seg`");
    expect(p.pointer).toBe("/pipelines/0/steps/0");
  });

  it("takes defaults.vram as the estimate of GPU steps", () => {
    const loaded = check(yaml`
      version: 1
      defaults: { vram: 4GiB }
      pipelines:
        - name: p
          steps:
            - { id: seg, run: [x], memory: torch }
            - { id: cpu, run: [y], memory: numpy }
    `);
    expect(withCode(loaded.problems, "missing-vram")).toEqual([]);
    const steps = loaded.resolved!.pipelines[0]!.steps;
    expect(steps[0]!.vramBytes).toBe(4 * 1024 ** 3);
    expect(steps[1]!.vramBytes).toBeNull();
  });

  it("rejects vram: 0 on a GPU step, at the value (CuPy would read its limit of 0 as none at all)", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: seg, run: [x], memory: torch, vram: 0 }
            - { id: cpu, run: [y], memory: numpy, vram: 0GiB }
    `);
    const p = one(loaded.problems, "zero-vram");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`seg`");
    expect(p.pointer).toBe("/pipelines/0/steps/0/vram");
    expect(withCode(loaded.problems, "missing-vram")).toEqual([]);
  });

  it("rejects defaults.vram: 0 at the default, for the GPU steps it reaches (compile says it once)", () => {
    const text = yaml`
      version: 1
      defaults: { vram: 0MiB }
      pipelines:
        - name: p
          steps:
            - { id: a, run: [x], memory: torch }
            - { id: b, run: [x], memory: cupy }
            - { id: c, run: [x], memory: numpy }
    `;
    const pointers = withCode(check(text).problems, "zero-vram").map((p) => p.pointer);
    expect(pointers).toEqual(["/defaults/vram", "/defaults/vram"]);
    const compiled = compileText(text, "dgx-h100");
    expect(compiled.plan).toBeUndefined();
    expect(one(compiled.problems, "zero-vram").message).toContain("(and 1 more like it)");
  });

  it("rejects a device_map on a CPU step, pointing at the key", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: cpu
              run: [x]
              device_map: { preset: a100-80gb }
    `);
    const p = one(loaded.problems, "device-map-on-cpu-step");
    expect(p.severity).toBe("error");
    expect(p.pointer).toBe("/pipelines/0/steps/0/device_map");
    expect([p.line, p.column]).toEqual([7, 9]);
  });

  it("warns that vram and exclusive do nothing on a CPU step", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: cpu, run: [x], memory: numpy, vram: 1GiB, exclusive: true }
    `);
    expect(one(loaded.problems, "vram-on-cpu-step").severity).toBe("warning");
    expect(one(loaded.problems, "exclusive-on-cpu-step").pointer).toBe("/pipelines/0/steps/0/exclusive");
  });

  it("warns about gpus: N on a pipeline without GPU steps", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          gpus: 2
          steps: [{ id: cpu, run: [x] }]
    `);
    const p = one(loaded.problems, "gpus-without-gpu-steps");
    expect(p.severity).toBe("warning");
    expect(p.pointer).toBe("/pipelines/0/gpus");
  });

  it("is quiet for a GPU step with vram and a plain CPU step", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          gpus: 2
          steps:
            - { id: cpu, run: [x], exclusive: false }
            - { id: gpu, run: [y], memory: cupy, vram: 2GiB, exclusive: true, device_map: { preset: a100-80gb } }
    `);
    expect(loaded.problems).toEqual([]);
  });
});

describe("rule: GPU options after an unknown memory type", () => {
  it("does not call a step with a misspelt GPU type a CPU step", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [x], memory: Torch, vram: 8GiB, exclusive: true }
            - { id: b, run: [x], memory: { input: numpy, output: Cupy }, vram: 8GiB }
            - { id: c, run: [x], uses: [pytorch], vram: 8GiB }
    `);
    expect(loaded.problems.map((p) => p.code)).toEqual([
      "unknown-memory-type",
      "unknown-memory-type",
      "unknown-memory-type",
    ]);
  });
});
