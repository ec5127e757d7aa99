import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { listPresets } from "../../src/compile/device-map/index.js";

// The CLI runs from dist/; `npm test` builds before vitest runs.
const gpuplan = (...args: string[]) =>
  execFileSync(process.execPath, ["bin/gpuplan.js", ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });

describe("gpuplan presets", () => {
  it("prints the versioned JSON list on stdout", () => {
    const out = JSON.parse(gpuplan("presets", "--json"));
    expect(out.schema).toBe("gpuplan/presets@1");
    expect(out.presets).toEqual(listPresets());
    expect(out.presets[0]).toEqual({
      name: "a100-80gb",
      description: expect.any(String),
      memoryClass: "80 GB",
      gpus: 1,
      components: { text_encoder: "cuda:0", unet: "cuda:0", vae: "cuda:0", controlnet: "cuda:0" },
    });
  });

  it("prints a table a person can read", () => {
    const out = gpuplan("presets");
    expect(out).toMatch(/^NAME +MEMORY +PLACEMENT\n/);
    expect(out).toMatch(/\na100-80gb +80 GB +cuda:0: text_encoder, unet, vae, controlnet\n/);
    expect(out).toContain("cuda:0: unet, controlnet; cuda:1: text_encoder, vae");
    for (const p of listPresets()) expect(out).toContain(p.description);
  });
});
