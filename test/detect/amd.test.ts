// AMD detection through the real FFI path against fake ROCm SMI, AMD SMI and HIP libraries,
// and the sysfs fallback against a fixture tree.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import validate from "../../src/generated/inventory-validator.js";
import type { Inventory, ProbeReport } from "../../src/inventory/types.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, ROOT, SCENARIOS } from "./fake-libs.js";

const probe = (inv: Inventory, name: ProbeReport["name"]) => inv.probes.find((p) => p.name === name)!;

/** The MI300X scenario with extra lines appended (later lines win). */
function scenarioWith(extra: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-scenario-"));
  const file = join(dir, "amd.scenario");
  writeFileSync(file, `${readFileSync(join(SCENARIOS, "amd-mi300x.scenario"), "utf8")}\n${extra}\n`);
  return file;
}

describe.skipIf(!fakeLibsBuilt)("AMD detection with fake libraries", () => {
  it("ROCm SMI lists the GPUs, AMD SMI and HIP fill in; PCI order for ids, HIP's order in hipIndex", async () => {
    const inv = await detectInventory({
      env: fakeEnv("amd-mi300x.scenario", {
        rocmSmi: fakeLib("rocmSmi"),
        amdSmi: fakeLib("amdSmi"),
        hip: fakeLib("hip"),
      }),
    });
    expect(validate(inv)).toBe(true);
    expect(inv.gpus.map((g) => [g.id, g.name, g.pciBusId, g.hipIndex, g.computeCapability])).toEqual([
      ["rocm:0", "AMD Instinct MI210", "0000:05:00.0", 1, "gfx90a"],
      ["rocm:1", "AMD Instinct MI300X", "0000:83:00.0", 0, "gfx942"],
      ["rocm:2", "AMD Instinct MI300X", "0000:c1:00.0", 2, "gfx942"],
    ]);
    expect(inv.gpus[2]).toMatchObject({
      backend: "rocm",
      uuid: "GPU-5f2c6a1d4e3b7a90",
      memoryBytes: 206141652992,
      usedMemoryBytes: 297795584,
      freeMemoryBytes: 206141652992 - 297795584,
      numaNode: 1,
      powerWatts: 145,
      temperatureC: 41,
      utilizationPercent: 3,
      driverVersion: "6.8.5",
      mig: null,
      cudaIndex: null,
      sources: ["rocm-smi", "amd-smi", "hip"],
    });
    expect(probe(inv, "rocm-smi")).toMatchObject({ status: "ok", version: "7.3.0" });
    expect(probe(inv, "hip")).toMatchObject({ status: "ok", version: "6.2.41134" });
    expect(probe(inv, "sysfs").status).toBe("skipped");
  });

  it("HIP_VISIBLE_DEVICES indexes HIP's order", async () => {
    const inv = await detectInventory({
      env: fakeEnv(
        "amd-mi300x.scenario",
        { rocmSmi: fakeLib("rocmSmi"), hip: fakeLib("hip") },
        { HIP_VISIBLE_DEVICES: "0" },
      ),
    });
    expect(inv.gpus.map((g) => g.pciBusId)).toEqual(["0000:83:00.0"]);
    expect(inv.visibility?.narrowedBy).toEqual(["HIP_VISIBLE_DEVICES"]);
  });

  it.each([
    ["26.1.0", "gfx942"],
    ["24.7.0", "gfx942"],
    // 24.6 has no target_graphics_version in amdsmi_asic_info_t: not read, not guessed.
    ["24.6.3", null],
  ])("AMD SMI %s alone: reads only the fields that release's layout has", async (version, gfx) => {
    const env = fakeEnv(
      "amd-mi300x.scenario",
      { amdSmi: fakeLib("amdSmi") },
      {
        GPUPLAN_FAKE_SCENARIO: scenarioWith(`amdsmi.version = ${version}`),
      },
    );
    const inv = await detectInventory({ env });
    expect(probe(inv, "amd-smi")).toMatchObject({ status: "ok", version });
    expect(inv.gpus.map((g) => [g.name, g.pciBusId, g.computeCapability, g.memoryBytes])).toEqual([
      ["AMD Instinct MI210", "0000:05:00.0", gfx === null ? null : "gfx90a", 68702699520],
      ["AMD Instinct MI300X", "0000:83:00.0", gfx, 206141652992],
      ["AMD Instinct MI300X", "0000:c1:00.0", gfx, 206141652992],
    ]);
    expect(inv.gpus[2]!.uuid).toBe("5f2c6a1d4e3b7a90");
  });

  it("an AMD SMI UUID of another shape is not believed: no ROCR_VISIBLE_DEVICES=0 or list from it", async () => {
    const env = fakeEnv(
      "amd-mi300x.scenario",
      { amdSmi: fakeLib("amdSmi") },
      {
        GPUPLAN_FAKE_SCENARIO: scenarioWith(
          "amdsmi.0.uuid = 0\namdsmi.1.uuid = 1,2\namdsmi.2.uuid = 77aa88bb-99cc-0011-2233-445566778899",
        ),
      },
    );
    const inv = await detectInventory({ env });
    // AMD SMI's devices 0, 1, 2 are at 0000:c1, 0000:05 and 0000:83.
    expect(inv.gpus.map((g) => [g.pciBusId, g.uuid])).toEqual([
      ["0000:05:00.0", "unknown-0000:05:00.0"],
      ["0000:83:00.0", "77aa88bb-99cc-0011-2233-445566778899"],
      ["0000:c1:00.0", "unknown-0000:c1:00.0"],
    ]);
    expect(probe(inv, "amd-smi").message).toContain(
      'GPU 0: amdsmi_get_gpu_device_uuid answered "0", which is no UUID: left unknown; GPU 1: amdsmi_get_gpu_device_uuid answered "1,2"',
    );
  });

  it("an init failure without the amdgpu driver is 'no-devices' with the vendor's words", async () => {
    const env = fakeEnv(
      "amd-mi300x.scenario",
      { rocmSmi: fakeLib("rocmSmi") },
      {
        GPUPLAN_FAKE_SCENARIO: scenarioWith("rsmi.init_error = 8"),
      },
    );
    const inv = await detectInventory({ env });
    expect(probe(inv, "rocm-smi")).toMatchObject({
      status: "no-devices",
      message:
        "rsmi_init: RSMI_STATUS_INIT_ERROR: An error occurred during initialization (8); the amdgpu kernel driver is not loaded",
    });
  });

  it("the same failure with the amdgpu driver loaded is an error with a hint", async () => {
    const env = fakeEnv(
      "amd-mi300x.scenario",
      { rocmSmi: fakeLib("rocmSmi") },
      {
        GPUPLAN_FAKE_SCENARIO: scenarioWith("rsmi.init_error = 8"),
        GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-amd"),
      },
    );
    const inv = await detectInventory({ env });
    expect(probe(inv, "rocm-smi")).toMatchObject({
      status: "error",
      hint: expect.stringContaining("/dev/kfd"),
    });
    // With ROCm SMI failing, sysfs is the fallback.
    expect(probe(inv, "sysfs").status).toBe("ok");
  });
});

describe("AMD sysfs fallback", () => {
  it("finds amdgpu cards (vendor 0x1002 with mem_info_vram_total), skips others, orders by PCI", async () => {
    const inv = await detectInventory({
      env: fakeEnv(
        "amd-mi300x.scenario",
        {},
        { GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-amd") },
      ),
    });
    expect(validate(inv)).toBe(true);
    expect(inv.gpus).toMatchObject([
      {
        id: "rocm:0",
        name: "AMD Radeon RX 7900 XTX",
        pciBusId: "0000:03:00.0",
        memoryBytes: 25753026560,
        usedMemoryBytes: 1073741824,
        freeMemoryBytes: 25753026560 - 1073741824,
        // The PCI device's numa_node (1) wins over the drm device's copy (0).
        numaNode: 1,
        // Its local_cpulist: ROCm has no CPU-affinity call, so sysfs is where AMD GPUs get theirs.
        cpuAffinity: [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31],
        sources: ["sysfs"],
      },
      {
        id: "rocm:1",
        name: "AMD GPU 0x164e",
        pciBusId: "0000:0e:00.0",
        uuid: "GPU-9a1b2c3d4e5f6071",
        numaNode: null,
        cpuAffinity: null,
      },
    ]);
    expect(probe(inv, "sysfs")).toMatchObject({ status: "ok" });
  });
});
