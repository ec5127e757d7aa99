// What `gpuplan detect --save` writes, `gpuplan compile --inventory` must load again, whatever the
// vendor libraries answered: strings that are not UTF-8, absurd memory sizes.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gpuplan } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt } from "./fake-libs.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-round-trip-"));
const PIPELINE = "fixtures/compile/inventory-short-form/pipeline.yaml";

/** A scenario file from raw bytes (a driver's strings need not be UTF-8). */
function rawScenario(name: string, ...lines: (string | Buffer)[]): string {
  const file = join(dir, name);
  writeFileSync(file, Buffer.concat(lines.flatMap((l) => [Buffer.from(l), Buffer.from("\n")])));
  return file;
}

/** detect --save, then compile --inventory with what it saved. */
function roundTrip(scenario: string) {
  const saved = join(dir, `${scenario.split("/").pop()}.json`);
  const env = fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario });
  const detect = gpuplan(["detect", "--save", saved, "--json"], { env });
  const compile = gpuplan(["compile", PIPELINE, "--inventory", saved, "--output", join(dir, "plan.json")]);
  return { detect, compile, inventory: JSON.parse(readFileSync(saved, "utf8")) };
}

describe.skipIf(!fakeLibsBuilt)("detect --save → compile --inventory", () => {
  it("a GPU name and an error string with bytes that are not UTF-8 are saved spelled out, and load again", () => {
    const scenario = rawScenario(
      "not-utf8.scenario",
      "nvml.count = 2",
      Buffer.concat([Buffer.from("nvml.0.name = GPU"), Buffer.from([0xff, 0xfe]), Buffer.from("X")]),
      "nvml.0.uuid = GPU-6513270e-269e-0d37-f2a7-4de452e6b438",
      "nvml.0.memory = 25769803776",
      "nvml.0.cc = 8.6",
      "nvml.1.handle_error = 15",
      Buffer.concat([Buffer.from("nvml.error_string = GPU is l"), Buffer.from([0xf6]), Buffer.from("st")]),
    );
    const { detect, compile, inventory } = roundTrip(scenario);
    expect(detect.exitCode).toBe(0);
    expect(inventory.gpus[0].name).toBe("GPU\\xff\\xfeX");
    const nvml = inventory.probes.find((p: { name: string }) => p.name === "nvml");
    expect(nvml.message).toContain("GPU 1: nvmlDeviceGetHandleByIndex_v2: GPU is l\\xf6st");
    expect(readFileSync(join(dir, "not-utf8.scenario.json"), "utf8")).not.toContain("\ufffd");
    expect(compile.stderr).not.toContain("not-a-text-file");
    expect(compile.exitCode).toBe(0);
  });

  it("a memory size beyond 1 PiB (-5 read as 2^64 - 5) is saved as unknown with a note, and nothing is planned on it", () => {
    const scenario = rawScenario(
      "absurd-memory.scenario",
      "nvml.count = 2",
      "nvml.0.uuid = GPU-6513270e-269e-0d37-f2a7-4de452e6b438",
      "nvml.0.memory = 25769803776",
      "nvml.0.cc = 8.6",
      "nvml.1.uuid = GPU-7c9d3e4f-5a6b-4c7d-8e9f-1a2b3c4d5e6f",
      "nvml.1.memory = -5",
      "nvml.1.used = 0",
      "nvml.1.cc = 8.6",
    );
    const { detect, compile, inventory } = roundTrip(scenario);
    expect(detect.exitCode).toBe(0);
    const text = readFileSync(join(dir, "absurd-memory.scenario.json"), "utf8");
    // No JSON number beyond exact integers (the note in the message names the figure as text).
    expect(text).not.toMatch(/:\s*\d{17,}/);
    expect(inventory.gpus[1]).toMatchObject({ memoryBytes: 0, freeMemoryBytes: null, usedMemoryBytes: 0 });
    const nvml = inventory.probes.find((p: { name: string }) => p.name === "nvml");
    expect(nvml.message).toContain(
      "GPU 1: memory total 18446744073709551611 bytes (above 1 PiB), free 18446744073709551611 bytes (above 1 PiB) not believed: left unknown",
    );
    expect(compile.exitCode).toBe(0);
    const plan = JSON.parse(readFileSync(join(dir, "plan.json"), "utf8"));
    expect(plan.registry[1]).toMatchObject({ gpu: "cuda:1", memoryBytes: 0, memoryBudgetBytes: 0 });
    expect(plan.pipelines.map((p: { gpu: string }) => p.gpu)).not.toContain("cuda:1");
  });
});
