// What amd-smi / rocm-smi show beyond the hardware — driver and HIP versions, utilisation,
// temperature, power and the compute processes — through the real FFI path against the fake
// ROCm SMI and AMD SMI, and what each becomes when a call is unsupported or a symbol missing.
import { type ChildProcess, spawn } from "node:child_process";
import { userInfo } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import validate from "../../src/generated/inventory-validator.js";
import type { GpuInfo, Inventory, ProbeReport } from "../../src/inventory/types.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, scenarioWith } from "./fake-libs.js";

const probe = (inv: Inventory, name: ProbeReport["name"]) => inv.probes.find((p) => p.name === name)!;
const byPci = (inv: Inventory, pci: string): GpuInfo => inv.gpus.find((g) => g.pciBusId === pci)!;
// ROCm SMI's device order in the scenario: 0 = c1, 1 = 05, 2 = 83.
const MI300X_C1 = "0000:c1:00.0";
const MI210 = "0000:05:00.0";
const MI300X_83 = "0000:83:00.0";

let sleeper: ChildProcess;
beforeAll(() => {
  sleeper = spawn("sleep", ["60"], { stdio: "ignore" });
});
afterAll(() => {
  sleeper.kill("SIGKILL");
});

const detectAmd = (extra: string, libs: Parameters<typeof fakeEnv>[1]) =>
  detectInventory({
    env: fakeEnv("amd-mi300x.scenario", libs, {
      GPUPLAN_FAKE_SCENARIO: scenarioWith("amd-mi300x.scenario", extra),
    }),
  });
const all = () => ({ rocmSmi: fakeLib("rocmSmi"), amdSmi: fakeLib("amdSmi"), hip: fakeLib("hip") });

describe.skipIf(!fakeLibsBuilt)("ROCm SMI and AMD SMI live values", () => {
  it("ROCm SMI: driver and HIP versions, utilisation, temperature, power and the processes per GPU", async () => {
    const inv = await detectAmd(
      `rsmi.processes = ${sleeper.pid}:1073741824:0, 4194309:2147483648:0+2`,
      all(),
    );
    expect(validate(inv)).toBe(true);
    expect(inv.drivers).toEqual({ amd: { driverVersion: "6.8.5", hipVersion: "6.2.41134" } });
    expect(byPci(inv, MI300X_C1)).toMatchObject({
      utilizationPercent: 3,
      temperatureC: 41,
      powerWatts: 145,
      processes: [
        { pid: sleeper.pid, usedMemoryBytes: 1073741824, user: userInfo().username, command: "sleep 60" },
        // On two GPUs: ROCm SMI's VRAM figure is the process's total, not this GPU's share.
        { pid: 4194309, usedMemoryBytes: null, user: null, command: null, gpuplan: null },
      ],
    });
    expect(byPci(inv, MI300X_83).processes).toEqual([
      { pid: 4194309, usedMemoryBytes: null, user: null, command: null, gpuplan: null },
    ]);
    expect(byPci(inv, MI210).processes).toEqual([]);
  });

  it("ROCm SMI: current socket power where the library has rsmi_dev_power_get, junction temperature without an edge sensor", async () => {
    const inv = await detectAmd(
      "rsmi.0.power_now_uw = 350000000\nrsmi.0.temp_mc =\nrsmi.0.temp_junction_mc = 78000",
      {
        rocmSmi: fakeLib("rocmSmi"),
      },
    );
    expect(byPci(inv, MI300X_C1)).toMatchObject({ powerWatts: 350, temperatureC: 78 });
  });

  const rsmiUnsupported: [string, string, keyof GpuInfo][] = [
    ["utilisation", "rsmi_dev_busy_percent_get", "utilizationPercent"],
    ["temperature", "rsmi_dev_temp_metric_get", "temperatureC"],
    ["power", "rsmi_dev_power_get,rsmi_dev_power_ave_get", "powerWatts"],
    ["processes", "rsmi_compute_process_info_get", "processes"],
  ];
  for (const [what, calls, field] of rsmiUnsupported) {
    it(`ROCm SMI ${what}: NOT_SUPPORTED from ${calls} leaves it null, the probe still ok`, async () => {
      const inv = await detectAmd(`rsmi.unsupported = ${calls}`, { rocmSmi: fakeLib("rocmSmi") });
      expect(probe(inv, "rocm-smi").status).toBe("ok");
      expect(inv.gpus.map((g) => g[field])).toEqual([null, null, null]);
    });
  }

  it("HIP's runtime version unsupported: no HIP version in the header, the probe still ok", async () => {
    const inv = await detectAmd("hip.unsupported = hipRuntimeGetVersion", all());
    expect(probe(inv, "hip")).toMatchObject({ status: "ok", version: null });
    expect(inv.drivers).toEqual({ amd: { driverVersion: "6.8.5", hipVersion: null } });
  });

  it("ROCm SMI's driver version unsupported: null in the header, the probe still ok", async () => {
    const inv = await detectAmd("rsmi.unsupported = rsmi_version_str_get", { rocmSmi: fakeLib("rocmSmi") });
    expect(probe(inv, "rocm-smi").status).toBe("ok");
    expect(inv.drivers).toEqual({});
  });

  it.each([
    ["26.1.0", 160, 88],
    ["24.7.0", 160, 88],
    // 24.6's amdsmi_power_info_t offsets are not measured: power is not read, not guessed.
    ["24.6.3", null, null],
  ])(
    "AMD SMI %s alone: utilisation, temperature (hotspot without an edge sensor) and power in that release's layout",
    async (version, mi300x, mi210) => {
      const inv = await detectAmd(`amdsmi.version = ${version}`, { amdSmi: fakeLib("amdSmi") });
      expect(probe(inv, "amd-smi").status).toBe("ok");
      expect(byPci(inv, MI300X_C1)).toMatchObject({
        utilizationPercent: 5,
        temperatureC: 47,
        powerWatts: mi300x,
      });
      expect(byPci(inv, MI210)).toMatchObject({ utilizationPercent: 2, temperatureC: 39, powerWatts: mi210 });
      // AMD SMI's process list is not read (its struct's layout per release is unmeasured).
      expect(byPci(inv, MI210).processes).toBeNull();
      expect(inv.drivers?.amd?.driverVersion).toBe("6.10.5");
    },
  );

  it("AMD SMI calls answering NOT_SUPPORTED leave their fields null, the probe still ok", async () => {
    const inv = await detectAmd(
      "amdsmi.unsupported = amdsmi_get_gpu_activity,amdsmi_get_temp_metric,amdsmi_get_power_info,amdsmi_get_gpu_driver_info",
      { amdSmi: fakeLib("amdSmi") },
    );
    expect(probe(inv, "amd-smi").status).toBe("ok");
    expect(inv.gpus).toHaveLength(3);
    for (const g of inv.gpus)
      expect(g).toMatchObject({ utilizationPercent: null, temperatureC: null, powerWatts: null });
    expect(inv.drivers).toEqual({});
  });

  it("libraries exporting only the symbols gpuplan requires: GPUs listed, every other field null", async () => {
    const inv = await detectAmd("", {
      rocmSmi: fakeLib("rocmSmiMinimal"),
      amdSmi: fakeLib("amdSmiMinimal"),
      hip: fakeLib("hipMinimal"),
    });
    expect(validate(inv)).toBe(true);
    for (const name of ["rocm-smi", "amd-smi", "hip"] as const) expect(probe(inv, name).status).toBe("ok");
    expect(inv.drivers).toEqual({});
    expect(inv.gpus).toHaveLength(3);
    for (const g of inv.gpus)
      expect(g).toMatchObject({
        utilizationPercent: null,
        temperatureC: null,
        powerWatts: null,
        processes: null,
      });
  });
});
