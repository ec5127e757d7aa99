import { describe, expect, it } from "vitest";
import { resolveDeviceMap } from "../../src/compile/device-map/index.js";
import { context, GiB, MiB } from "./helpers.js";

const two = (budget: number) => [
  { id: "cuda:5", budgetBytes: budget },
  { id: "cuda:6", budgetBytes: budget },
];
const diffusion = { text_encoder: "2GiB", unet: "5GiB", vae: "300MiB", controlnet: "4GiB" };

describe("sequential auto maps", () => {
  it("fills the first GPU, then the next, in declared order", () => {
    const { value, problems } = resolveDeviceMap({ components: diffusion }, context({ gpus: two(10 * GiB) }));
    expect(problems).toEqual([]);
    expect(value).toEqual({
      map: { text_encoder: "cuda:5", unet: "cuda:5", vae: "cuda:5", controlnet: "cuda:6" },
      bytesByDevice: { "cuda:5": 7 * GiB + 300 * MiB, "cuda:6": 4 * GiB },
      preset: null,
    });
  });

  it("never sends a later component back to an earlier GPU, as accelerate does", () => {
    const { value } = resolveDeviceMap(
      { strategy: "sequential", components: { a: "6GiB", b: "5GiB", c: "1GiB" } },
      context({ gpus: two(10 * GiB) }),
    );
    expect(value?.map).toEqual({ a: "cuda:5", b: "cuda:6", c: "cuda:6" });
    expect(value?.bytesByDevice).toEqual({ "cuda:5": 6 * GiB, "cuda:6": 6 * GiB });
  });

  it("accepts sizes in bytes and fills a GPU exactly to its room", () => {
    const { value, problems } = resolveDeviceMap(
      { components: { unet: 4 * GiB, vae: "1GiB" } },
      context({ gpus: [{ id: "cuda:0", budgetBytes: 6 * GiB }] }),
    );
    expect(problems).toEqual([]);
    expect(value?.bytesByDevice).toEqual({ "cuda:0": 5 * GiB });
  });
});

describe("balanced auto maps", () => {
  it("puts the largest first onto the roomiest GPU and keeps declared order in the output", () => {
    const { value, problems } = resolveDeviceMap(
      { strategy: "balanced", components: diffusion },
      context({ gpus: two(10 * GiB) }),
    );
    expect(problems).toEqual([]);
    expect(value?.map).toEqual({
      text_encoder: "cuda:6",
      unet: "cuda:5",
      vae: "cuda:5",
      controlnet: "cuda:6",
    });
    expect(Object.keys(value!.map)).toEqual(["text_encoder", "unet", "vae", "controlnet"]);
    expect(value?.bytesByDevice).toEqual({ "cuda:5": 5 * GiB + 300 * MiB, "cuda:6": 6 * GiB });
  });

  it("sends what fits on no GPU to cpu and keeps filling the GPUs with the rest", () => {
    const { value, problems } = resolveDeviceMap(
      { strategy: "balanced", components: { unet: "6GiB", vae: "1GiB", text_encoder: "3GiB" } },
      context({ gpus: two(5 * GiB) }),
    );
    expect(value?.map).toEqual({ unet: "cpu", vae: "cuda:6", text_encoder: "cuda:5" });
    expect(value?.bytesByDevice).toEqual({ "cuda:5": 3 * GiB, "cuda:6": 1 * GiB, cpu: 6 * GiB });
    expect(problems.map((p) => [p.code, p.pointer])).toEqual([
      ["device-map-spills-to-cpu", "/pipelines/0/steps/1/device_map/components/unet"],
    ]);
  });
});

describe("reserve", () => {
  const oneGpu = { gpus: [{ id: "cuda:0", budgetBytes: 6 * GiB }] };

  it("keeps the context's default reserve free on every GPU", () => {
    expect(resolveDeviceMap({ components: { unet: "5GiB" } }, context(oneGpu)).value?.map.unet).toBe(
      "cuda:0",
    );
    const tight = resolveDeviceMap(
      { components: { unet: "5GiB" } },
      context({ ...oneGpu, contextReserveBytes: 2 * GiB }),
    );
    expect(tight.value?.map.unet).toBe("cpu");
  });

  it("lets the map's own reserve win over the default", () => {
    const larger = resolveDeviceMap({ components: { unet: "5GiB" }, reserve: "1.5GiB" }, context(oneGpu));
    expect(larger.value?.map.unet).toBe("cpu");
    const smaller = resolveDeviceMap(
      { components: { unet: "5GiB" }, reserve: 0 },
      context({ ...oneGpu, contextReserveBytes: 2 * GiB }),
    );
    expect(smaller.value?.map.unet).toBe("cuda:0");
  });
});

describe("spilling", () => {
  const gpu8 = { gpus: [{ id: "cuda:0", budgetBytes: 8 * GiB }] };
  const components = { text_encoder: "2GiB", unet: "5GiB", vae: "1GiB" };

  it("spills to cpu with a warning at the first spilled component", () => {
    const { value, problems } = resolveDeviceMap({ components }, context(gpu8));
    expect(value).toEqual({
      map: { text_encoder: "cuda:0", unet: "cuda:0", vae: "cpu" },
      bytesByDevice: { "cuda:0": 7 * GiB, cpu: 1 * GiB },
      preset: null,
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      code: "device-map-spills-to-cpu",
      severity: "warning",
      pointer: "/pipelines/0/steps/1/device_map/components/vae",
    });
    expect(problems[0]?.message).toContain("`vae` (1 GiB)");
  });

  it("assumes unknown host memory fits", () => {
    const { value } = resolveDeviceMap(
      { components: { huge: "2TiB" } },
      context({ ...gpu8, cpuMemoryBytes: null }),
    );
    expect(value?.map).toEqual({ huge: "cpu" });
  });

  it("fails when neither the GPUs nor the host hold it and disk is not allowed", () => {
    const { value, problems } = resolveDeviceMap(
      { components },
      context({ ...gpu8, cpuMemoryBytes: 512 * MiB }),
    );
    expect(value).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      code: "device-map-does-not-fit",
      severity: "error",
      pointer: "/pipelines/0/steps/1/device_map/components/vae",
    });
    expect(problems[0]?.message).toContain("`vae` (1 GiB) does not fit on the GPUs or in CPU memory");
    expect(problems[0]?.hint).toContain("allow_disk");
  });

  it("spills past cpu to disk only with allow_disk, warning about both", () => {
    const { value, problems } = resolveDeviceMap(
      { components: { ...components, safety_checker: "300MiB" }, allow_disk: true },
      context({ ...gpu8, cpuMemoryBytes: 512 * MiB }),
    );
    expect(value).toEqual({
      map: { text_encoder: "cuda:0", unet: "cuda:0", vae: "disk", safety_checker: "disk" },
      bytesByDevice: { "cuda:0": 7 * GiB, disk: 1 * GiB + 300 * MiB },
      preset: null,
    });
    expect(problems.map((p) => p.code)).toEqual(["device-map-spills-to-disk"]);

    const both = resolveDeviceMap(
      { components: { unet: "7GiB", vae: "300MiB", text_encoder: "2GiB" }, allow_disk: true },
      context({ ...gpu8, cpuMemoryBytes: 1 * GiB }),
    );
    expect(both.value?.map).toEqual({ unet: "cuda:0", vae: "cpu", text_encoder: "disk" });
    expect(both.problems.map((p) => p.code)).toEqual([
      "device-map-spills-to-cpu",
      "device-map-spills-to-disk",
    ]);
  });

  it("reports only the component that fits nowhere; smaller ones after it still find room", () => {
    const { problems } = resolveDeviceMap(
      { components: { huge: "10GiB", small: "1GiB" } },
      context({ ...gpu8, cpuMemoryBytes: 2 * GiB }),
    );
    expect(problems.map((p) => p.code)).toEqual(["device-map-does-not-fit"]);
    expect(problems[0]?.message).toContain("`huge` (10 GiB) does not fit");
    expect(problems[0]?.message).not.toContain("small");
  });
});

describe("steps on the CPU", () => {
  it("places an auto map in host memory with one warning", () => {
    const { value, problems } = resolveDeviceMap(
      { components: { text_encoder: "2GiB", unet: "5GiB" }, strategy: "balanced" },
      context({ gpus: [], cpuMemoryBytes: 16 * GiB }),
    );
    expect(value).toEqual({
      map: { text_encoder: "cpu", unet: "cpu" },
      bytesByDevice: { cpu: 7 * GiB },
      preset: null,
    });
    expect(problems.map((p) => p.code)).toEqual(["device-map-on-cpu"]);
  });

  it("fails when host memory is too small and disk is not allowed", () => {
    const { problems } = resolveDeviceMap(
      { components: { unet: "5GiB" } },
      context({ gpus: [], cpuMemoryBytes: 4 * GiB }),
    );
    expect(problems.map((p) => p.code)).toEqual(["device-map-does-not-fit", "device-map-on-cpu"]);
    expect(problems[0]?.message).toContain("does not fit in CPU memory");
  });
});

describe("presets and overrides with components", () => {
  it("lets the preset place and the components size, auto-placing what the preset lacks", () => {
    const { value, problems } = resolveDeviceMap(
      {
        preset: "RTX4090",
        components: { unet: "5GiB", vae: "300MiB", text_encoder: "1.5GiB", controlnet: "2.5GiB" },
      },
      context({ gpus: [{ id: "cuda:3", budgetBytes: 24 * GiB }] }),
    );
    expect(problems).toEqual([]);
    expect(value?.map).toEqual({
      text_encoder: "cuda:3",
      unet: "cuda:3",
      vae: "cuda:3",
      controlnet: "cuda:3",
    });
    expect(Object.keys(value!.map)).toEqual(["text_encoder", "unet", "vae", "controlnet"]);
    expect(value?.bytesByDevice).toEqual({ "cuda:3": 9 * GiB + 300 * MiB });
    expect(value?.preset).toBe("rtx4090");
  });

  it("auto-places around pinned components, which take their room first", () => {
    const { value, problems } = resolveDeviceMap(
      { preset: "l4", components: { unet: "20GiB", controlnet: "4GiB" } },
      context({ gpus: [{ id: "cuda:0", budgetBytes: 24 * GiB }] }),
    );
    expect(value?.map).toEqual({ text_encoder: "cuda:0", unet: "cuda:0", vae: "cuda:0", controlnet: "cpu" });
    expect(value?.bytesByDevice).toEqual({ "cuda:0": 20 * GiB, cpu: 4 * GiB });
    expect(problems.map((p) => p.code)).toEqual(["device-map-spills-to-cpu"]);
  });

  it("rejects pinned components that overflow their GPU", () => {
    const { value, problems } = resolveDeviceMap(
      { preset: "a100-40gb", components: { text_encoder: "2GiB", unet: "10GiB", vae: "1GiB" } },
      context({ gpus: [{ id: "cuda:0", budgetBytes: 8 * GiB }] }),
    );
    expect(value).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      code: "device-map-over-budget",
      pointer: "/pipelines/0/steps/1/device_map/components/unet",
    });
    expect(problems[0]?.message).toContain("13 GiB, more than the 7 GiB");
  });

  it("honours overrides in an auto map and lets them add unsized components last", () => {
    const { value, problems } = resolveDeviceMap(
      {
        components: { text_encoder: "2GiB", unet: "5GiB", vae: "1GiB" },
        overrides: { safety_checker: "cpu", text_encoder: "cpu" },
      },
      context({ gpus: [{ id: "cuda:0", budgetBytes: 8 * GiB }] }),
    );
    expect(problems).toEqual([]);
    expect(value?.map).toEqual({ text_encoder: "cpu", unet: "cuda:0", vae: "cuda:0", safety_checker: "cpu" });
    expect(Object.keys(value!.map)).toEqual(["text_encoder", "unet", "vae", "safety_checker"]);
    expect(value?.bytesByDevice).toEqual({ "cuda:0": 6 * GiB, cpu: 2 * GiB });
  });

  it("keeps a component named __proto__ as a component", () => {
    // As js-yaml parses it: an own key, not the prototype.
    const overrides = JSON.parse('{ "__proto__": "cpu", "unet": "cuda:0" }');
    const { value, problems } = resolveDeviceMap({ overrides }, context());
    expect(problems).toEqual([]);
    expect(JSON.stringify(value?.map)).toBe('{"__proto__":"cpu","unet":"cuda:0"}');
  });

  it("reports sizes and targets the schema should have caught, instead of crashing", () => {
    const { problems } = resolveDeviceMap(
      { components: { unet: "5 GiBs" }, overrides: { vae: "tpu:0" } },
      context(),
    );
    expect(problems.map((p) => [p.code, p.pointer])).toEqual([
      ["device-map-invalid-target", "/pipelines/0/steps/1/device_map/overrides/vae"],
      ["device-map-invalid-size", "/pipelines/0/steps/1/device_map/components/unet"],
    ]);
  });
});
