import { describe, expect, it } from "vitest";
import { findPreset, listPresets, resolveDeviceMap } from "../../src/compile/device-map/index.js";
import { context, GiB } from "./helpers.js";

const gpus = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `cuda:${i + 5}`, budgetBytes: 80 * GiB }));

describe("preset table", () => {
  it("keeps the prior-art presets exactly", () => {
    expect(findPreset("a100-80gb")?.components).toEqual({
      text_encoder: "cuda:0",
      unet: "cuda:0",
      vae: "cuda:0",
      controlnet: "cuda:0",
    });
    for (const name of ["a100-40gb", "rtx4090"]) {
      expect(findPreset(name)?.components).toEqual({ text_encoder: "cuda:0", unet: "cuda:0", vae: "cuda:0" });
    }
  });

  it("has the current cards, each with a description, a memory class and a GPU count that matches", () => {
    const names = listPresets().map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["h100-80gb", "h200", "l4", "mi300x", "2xa100-80gb"]));
    expect(new Set(names).size).toBe(names.length);
    for (const p of listPresets()) {
      expect(p.name).toBe(p.name.toLowerCase());
      expect(p.description.length).toBeGreaterThan(10);
      expect(p.memoryClass).toMatch(/GB$/);
      const highest = Math.max(...Object.values(p.components).map((d) => Number(d.replace("cuda:", ""))));
      expect(highest + 1).toBe(p.gpus);
    }
  });

  it("hands out copies, so the table cannot be edited through the list", () => {
    const first = listPresets()[0]!;
    (first.components as Record<string, string>).unet = "cpu";
    expect(listPresets()[0]!.components.unet).toBe("cuda:0");
  });
});

describe("resolving presets", () => {
  it.each(listPresets().map((p) => [p.name, p] as const))("%s resolves on enough GPUs", (name, p) => {
    const { value, problems } = resolveDeviceMap({ preset: name }, context({ gpus: gpus(p.gpus) }));
    expect(problems).toEqual([]);
    const expected = Object.fromEntries(
      Object.entries(p.components).map(([c, d]) => [c, `cuda:${Number(d.slice(5)) + 5}`]),
    );
    expect(value).toEqual({ map: expected, bytesByDevice: {}, preset: name });
    expect(Object.keys(value!.map)).toEqual(Object.keys(p.components));
  });

  it("ignores case and reports the canonical name", () => {
    const { value, problems } = resolveDeviceMap({ preset: "A100-80GB" }, context());
    expect(problems).toEqual([]);
    expect(value?.preset).toBe("a100-80gb");
    expect(value?.map.controlnet).toBe("cuda:0");
    expect(resolveDeviceMap({ preset: "RTX4090" }, context()).value?.preset).toBe("rtx4090");
  });

  it("maps the preset's cuda:0 and cuda:1 to the pipeline's real GPUs", () => {
    const ctx = context({
      gpus: [
        { id: "cuda:5", budgetBytes: 80 * GiB },
        { id: "cuda:6", budgetBytes: 80 * GiB },
      ],
    });
    expect(resolveDeviceMap({ preset: "2xA100-80GB" }, ctx).value?.map).toEqual({
      text_encoder: "cuda:6",
      unet: "cuda:5",
      vae: "cuda:6",
      controlnet: "cuda:5",
    });
    const rocm = context({ gpus: [{ id: "rocm:1", budgetBytes: 192 * GiB }] });
    expect(resolveDeviceMap({ preset: "mi300x" }, rocm).value?.map.unet).toBe("rocm:1");
  });

  it("lets overrides win and add components, added ones after the preset's", () => {
    const ctx = context({
      gpus: [
        { id: "cuda:5", budgetBytes: 80 * GiB },
        { id: "cuda:6", budgetBytes: 80 * GiB },
      ],
    });
    const { value, problems } = resolveDeviceMap(
      { preset: "rtx4090", overrides: { safety_checker: "cpu", vae: "gpu:1", text_encoder: "disk" } },
      ctx,
    );
    expect(problems).toEqual([]);
    expect(value?.map).toEqual({
      text_encoder: "disk",
      unet: "cuda:5",
      vae: "cuda:6",
      safety_checker: "cpu",
    });
    expect(Object.keys(value!.map)).toEqual(["text_encoder", "unet", "vae", "safety_checker"]);
  });

  it("accepts a map made of overrides only", () => {
    const { value, problems } = resolveDeviceMap({ overrides: { unet: "cuda:0", vae: "cpu" } }, context());
    expect(problems).toEqual([]);
    expect(value).toEqual({ map: { unet: "cuda:0", vae: "cpu" }, bytesByDevice: {}, preset: null });
  });
});

describe("preset problems", () => {
  it("names an unknown preset, lists the known ones and suggests the closest", () => {
    const { value, problems } = resolveDeviceMap({ preset: "A100-80G" }, context());
    expect(value).toBeUndefined();
    expect(problems).toHaveLength(1);
    const [p] = problems;
    expect(p).toMatchObject({
      code: "unknown-device-map-preset",
      severity: "error",
      file: "pipeline.yaml",
      pointer: "/pipelines/0/steps/1/device_map/preset",
    });
    expect(p?.message).toContain("`A100-80G`");
    expect(p?.message).toContain("step `gen` of pipeline `p`");
    expect(p?.hint).toContain("did you mean `a100-80gb`?");
    for (const name of listPresets().map((x) => x.name)) expect(p?.hint).toContain(name);
  });

  it("lists the known presets without a guess when nothing is close", () => {
    const [p] = resolveDeviceMap({ preset: "tpu-v5" }, context()).problems;
    expect(p?.hint).not.toContain("did you mean");
    expect(p?.hint).toContain("known presets: a100-80gb, a100-40gb");
  });

  it("still checks the overrides of an unknown preset", () => {
    const { problems } = resolveDeviceMap({ preset: "nope", overrides: { vae: "cuda:3" } }, context());
    expect(problems.map((p) => p.code)).toEqual(["unknown-device-map-preset", "device-map-gpu-out-of-range"]);
  });

  it("points an out-of-range override at its value, escaping the component name", () => {
    const ctx = context({ gpus: gpus(2) });
    const { value, problems } = resolveDeviceMap(
      { preset: "a100-80gb", overrides: { "vae/tiny": "cuda:2" } },
      ctx,
    );
    expect(value).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      code: "device-map-gpu-out-of-range",
      severity: "error",
      pointer: "/pipelines/0/steps/1/device_map/overrides/vae~1tiny",
    });
    expect(problems[0]?.message).toContain("cuda:2");
    expect(problems[0]?.message).toContain("2 GPUs (cuda:0 to cuda:1)");
  });

  it("reports a two-GPU preset on one GPU once, at /preset, naming the homeless components", () => {
    const { problems } = resolveDeviceMap({ preset: "2xa100-80gb" }, context());
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      code: "device-map-gpu-out-of-range",
      pointer: "/pipelines/0/steps/1/device_map/preset",
    });
    expect(problems[0]?.message).toContain("`text_encoder`, `vae`");
    expect(problems[0]?.message).toContain("1 GPU (cuda:0)");
  });

  it("accepts a two-GPU preset on one GPU when overrides move the second card's components", () => {
    const { value, problems } = resolveDeviceMap(
      { preset: "2xa100-80gb", overrides: { text_encoder: "cpu", vae: "cuda:0" } },
      context(),
    );
    expect(problems).toEqual([]);
    expect(value?.map).toEqual({ text_encoder: "cpu", unet: "cuda:0", vae: "cuda:0", controlnet: "cuda:0" });
  });

  it("puts every GPU placement on cpu, with one warning, when the step runs on the CPU", () => {
    const { value, problems } = resolveDeviceMap(
      { preset: "2xa100-80gb", overrides: { vae: "disk", extra: "cuda:7" } },
      context({ gpus: [] }),
    );
    expect(value?.map).toEqual({
      text_encoder: "cpu",
      unet: "cpu",
      vae: "disk",
      controlnet: "cpu",
      extra: "cpu",
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      code: "device-map-on-cpu",
      severity: "warning",
      pointer: "/pipelines/0/steps/1/device_map",
    });
  });

  it("does not warn about a CPU step whose map only uses cpu and disk", () => {
    const { problems } = resolveDeviceMap({ overrides: { unet: "cpu", vae: "disk" } }, context({ gpus: [] }));
    expect(problems).toEqual([]);
  });

  it("warns about an empty map and about auto-map options without components", () => {
    expect(resolveDeviceMap({}, context()).problems.map((p) => p.code)).toEqual(["device-map-empty"]);
    const { value, problems } = resolveDeviceMap(
      { preset: "l4", strategy: "balanced", allow_disk: true },
      context(),
    );
    expect(value?.preset).toBe("l4");
    expect(problems.map((p) => [p.code, p.pointer, p.at])).toEqual([
      ["device-map-option-unused", "/pipelines/0/steps/1/device_map/strategy", "key"],
      ["device-map-option-unused", "/pipelines/0/steps/1/device_map/allow_disk", "key"],
    ]);
  });

  it("leaves file out of problems when the context has none", () => {
    const ctx = context();
    delete ctx.file;
    expect(resolveDeviceMap({ preset: "x" }, ctx).problems[0]).not.toHaveProperty("file");
  });
});
