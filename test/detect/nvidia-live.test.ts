// What nvidia-smi shows beyond the hardware — driver and CUDA versions, utilisation, temperature,
// power and the compute processes — read through the real FFI path from the fake NVML, and what
// each of those becomes when the driver does not support the call or lacks the symbol.
import { type ChildProcess, spawn } from "node:child_process";
import { userInfo } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import validate from "../../src/generated/inventory-validator.js";
import { inventoryFingerprint } from "../../src/inventory/fingerprint.js";
import type { GpuInfo, Inventory, ProbeReport } from "../../src/inventory/types.js";
import { gpuplan } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, scenarioWith } from "./fake-libs.js";

const probe = (inv: Inventory, name: ProbeReport["name"]) => inv.probes.find((p) => p.name === name)!;
const gpu = (inv: Inventory, id: string): GpuInfo => inv.gpus.find((g) => g.id === id)!;

/** Two real processes for the fake NVML to report, so that /proc can say who they are. */
let sleepers: ChildProcess[] = [];
let busy = "";
beforeAll(() => {
  sleepers = [1, 2].map(() => spawn("sleep", ["60"], { stdio: "ignore" }));
  const [a, b] = sleepers.map((s) => s.pid!);
  busy = [
    `nvml.0.processes = ${a}:42949672960, ${b}:na`,
    `nvml.1.processes = ${a}:10485760000:1:0, 4194308:10150215680:2:0`,
  ].join("\n");
});
afterAll(() => {
  for (const s of sleepers) s.kill("SIGKILL");
});

const detectBusy = (extra = "", libs: Parameters<typeof fakeEnv>[1] = { nvml: fakeLib("nvml") }) =>
  detectInventory({
    env: fakeEnv("busy.scenario", libs, {
      GPUPLAN_FAKE_SCENARIO: scenarioWith("busy.scenario", `${busy}\n${extra}`),
    }),
  });

describe.skipIf(!fakeLibsBuilt)("NVML live values", () => {
  it("driver and CUDA version, utilisation, temperature, power and processes with user and command", async () => {
    const inv = await detectBusy();
    expect(validate(inv)).toBe(true);
    expect(probe(inv, "nvml").status).toBe("ok");
    expect(inv.drivers).toEqual({ nvidia: { driverVersion: "535.161.08", cudaVersion: "12.2" } });
    const [a, b] = sleepers.map((s) => s.pid!);
    const me = userInfo().username;
    expect(gpu(inv, "cuda:0")).toMatchObject({
      utilizationPercent: 87,
      temperatureC: 64,
      powerWatts: 312.5,
      usedMemoryBytes: 43485761536,
      memoryBytes: 85899345920,
      processes: [
        { pid: a, usedMemoryBytes: 42949672960, user: me, command: "sleep 60", gpuplan: null },
        // NVML_VALUE_NOT_AVAILABLE: the library does not know this one's memory.
        { pid: b, usedMemoryBytes: null, user: me, command: "sleep 60", gpuplan: null },
      ],
    });
    // MIG: each instance lists its own processes (by GPU and compute instance); the GPU lists all.
    expect(gpu(inv, "cuda:1/mig0").processes).toEqual([
      { pid: a, usedMemoryBytes: 10485760000, user: me, command: "sleep 60", gpuplan: null },
    ]);
    // A pid /proc does not show (ended, or another pid namespace): only what the library said.
    expect(gpu(inv, "cuda:1/mig1").processes).toEqual([
      { pid: 4194308, usedMemoryBytes: 10150215680, user: null, command: null, gpuplan: null },
    ]);
    expect(gpu(inv, "cuda:1").processes!.map((p) => p.pid)).toEqual([a, 4194308]);
    expect(gpu(inv, "cuda:1")).toMatchObject({ utilizationPercent: 40, temperatureC: 51, powerWatts: 201 });
  });

  it("the inventory fingerprint ignores these second-to-second values (a plan stays valid)", async () => {
    const busyNow = await detectBusy();
    const later = await detectBusy(
      "nvml.0.util = 3\nnvml.0.temp = 33\nnvml.0.power_mw = 61000\nnvml.0.processes =\nnvml.driver = 535.183.01\nnvml.cuda = 12030",
    );
    expect(later.gpus[0]).toMatchObject({ utilizationPercent: 3, processes: [] });
    expect(inventoryFingerprint(later)).toBe(inventoryFingerprint(busyNow));
    // It still changes with the hardware.
    const other = await detectBusy("nvml.0.memory = 42949672960");
    expect(inventoryFingerprint(other)).not.toBe(inventoryFingerprint(busyNow));
  });

  it("a GPU with no process lists none ([]), which is not the same as not knowing (null)", async () => {
    const inv = await detectBusy("nvml.0.processes =");
    expect(gpu(inv, "cuda:0").processes).toEqual([]);
  });

  // Each call a driver may answer NOT_SUPPORTED for (GeForce power, vGPU processes, …).
  const unsupported: [string, string, (inv: Inventory) => unknown][] = [
    ["utilisation", "nvmlDeviceGetUtilizationRates", (inv) => gpu(inv, "cuda:0").utilizationPercent],
    [
      "temperature",
      "nvmlDeviceGetTemperatureV,nvmlDeviceGetTemperature",
      (inv) => gpu(inv, "cuda:0").temperatureC,
    ],
    ["power", "nvmlDeviceGetPowerUsage", (inv) => gpu(inv, "cuda:0").powerWatts],
    [
      "processes",
      "nvmlDeviceGetComputeRunningProcesses_v3",
      (inv) => inv.gpus.map((g) => g.processes).filter((p) => p !== null),
    ],
    ["driver version", "nvmlSystemGetDriverVersion", (inv) => inv.drivers?.nvidia?.driverVersion],
    [
      "CUDA version",
      "nvmlSystemGetCudaDriverVersion_v2,nvmlSystemGetCudaDriverVersion",
      (inv) => inv.drivers?.nvidia?.cudaVersion,
    ],
  ];
  for (const [what, calls, read] of unsupported) {
    it(`${what}: NOT_SUPPORTED from ${calls} leaves it null, the probe still ok`, async () => {
      const inv = await detectBusy(`nvml.unsupported = ${calls}`);
      expect(validate(inv)).toBe(true);
      expect(probe(inv, "nvml").status).toBe("ok");
      expect(inv.gpus).toHaveLength(4);
      const value = read(inv);
      expect(Array.isArray(value) ? value : [value]).toEqual(Array.isArray(value) ? [] : [null]);
    });
  }

  it("a driver without nvmlDeviceGetTemperatureV (before 12.9, e.g. 535) is read through nvmlDeviceGetTemperature", async () => {
    const inv = await detectBusy("nvml.unsupported = nvmlDeviceGetTemperatureV");
    expect(gpu(inv, "cuda:0").temperatureC).toBe(64);
    const old = await detectBusy("", { nvml: fakeLib("nvmlOld") });
    expect(gpu(old, "cuda:0").temperatureC).toBe(64);
  });

  it("the CUDA version comes from libcuda when NVML does not tell it", async () => {
    const inv = await detectBusy(
      "nvml.unsupported = nvmlSystemGetCudaDriverVersion_v2,nvmlSystemGetCudaDriverVersion",
      {
        nvml: fakeLib("nvml"),
        cuda: fakeLib("cuda"),
      },
    );
    expect(inv.drivers?.nvidia).toEqual({ driverVersion: "535.161.08", cudaVersion: "12.2" });
    expect(probe(inv, "cuda")).toMatchObject({ status: "ok", version: "CUDA 12.2" });
  });

  it("libcuda's cuDriverGetVersion unsupported: no CUDA version at all, both probes still ok", async () => {
    const inv = await detectBusy(
      "nvml.unsupported = nvmlSystemGetCudaDriverVersion_v2,nvmlSystemGetCudaDriverVersion\ncuda.unsupported = cuDriverGetVersion",
      { nvml: fakeLib("nvml"), cuda: fakeLib("cuda") },
    );
    expect(inv.drivers?.nvidia).toEqual({ driverVersion: "535.161.08", cudaVersion: null });
    expect(probe(inv, "cuda")).toMatchObject({ status: "ok", version: null });
    expect(probe(inv, "nvml").status).toBe("ok");
  });

  it("an unprivileged caller gets no aggregate list for a MIG GPU: its instances' lists add up to it", async () => {
    const inv = await detectBusy("nvml.1.unsupported = nvmlDeviceGetComputeRunningProcesses_v3");
    expect(gpu(inv, "cuda:1").processes!.map((p) => p.pid)).toEqual([sleepers[0]!.pid, 4194308]);
  });

  it("a driver exporting only the symbols gpuplan requires: GPUs listed, every other field null", async () => {
    const inv = await detectBusy("", { nvml: fakeLib("nvmlMinimal"), cuda: fakeLib("cudaMinimal") });
    expect(validate(inv)).toBe(true);
    expect(probe(inv, "nvml")).toMatchObject({ status: "ok", version: null });
    expect(probe(inv, "cuda").status).toBe("ok");
    expect(inv.drivers).toEqual({});
    // NVML's two GPUs, named and sized by neither library: CUDA's one GPU is one of them (CUDA
    // sees no card NVML cannot), not a third.
    expect(inv.gpus.map((g) => g.sources)).toEqual([["nvml", "cuda"], ["nvml"]]);
    for (const g of inv.gpus.filter((x) => x.sources?.includes("nvml"))) {
      expect(g).toMatchObject({
        pciBusId: null,
        utilizationPercent: null,
        temperatureC: null,
        powerWatts: null,
        processes: null,
        numaNode: null,
        mig: null,
      });
    }
  });
});

describe.skipIf(!fakeLibsBuilt)("gpuplan detect --json with busy GPUs", () => {
  it("prints the drivers and the processes, valid against the schema", () => {
    const r = gpuplan(["detect", "--json"], {
      env: fakeEnv(
        "busy.scenario",
        { nvml: fakeLib("nvml") },
        {
          GPUPLAN_FAKE_SCENARIO: scenarioWith("busy.scenario", busy),
        },
      ),
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    const inv = JSON.parse(r.stdout) as Inventory;
    expect(validate(inv)).toBe(true);
    expect(inv.drivers?.nvidia?.cudaVersion).toBe("12.2");
    expect(inv.gpus[0]!.processes!.map((p) => p.command)).toEqual(["sleep 60", "sleep 60"]);
  });
});
