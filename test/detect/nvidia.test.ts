// Detection through the real FFI path (koffi in the probe child) against fake NVML and CUDA
// libraries built from fixtures/fake-libs/*.c, one scenario per case.
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nowMs } from "../../src/detect/clock.js";
import { detect, detectInventory } from "../../src/detect/index.js";
import { startChild } from "../../src/detect/spawn-child.js";
import validate from "../../src/generated/inventory-validator.js";
import type { Inventory, ProbeReport } from "../../src/inventory/types.js";
import { gpuplan } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, ROOT, SCENARIOS, scenarioWith } from "./fake-libs.js";

const probe = (inv: Inventory, name: ProbeReport["name"]) => inv.probes.find((p) => p.name === name)!;
const nvmlOnly = () => ({ nvml: fakeLib("nvml") });
const nvmlAndCuda = () => ({ nvml: fakeLib("nvml"), cuda: fakeLib("cuda") });

describe.skipIf(!fakeLibsBuilt)("NVIDIA detection with fake libraries", () => {
  it("eight H100s, two in MIG mode: every GPU once, MIG instances as their own devices", async () => {
    const inv = await detectInventory({ env: fakeEnv("h100x8-mig.scenario", nvmlOnly()) });
    expect(validate(inv)).toBe(true);
    const physical = inv.gpus.filter((g) => !g.mig?.parentUuid);
    expect(physical.map((g) => g.id)).toEqual([
      "cuda:0",
      "cuda:1",
      "cuda:2",
      "cuda:3",
      "cuda:4",
      "cuda:5",
      "cuda:6",
      "cuda:7",
    ]);
    expect(physical.map((g) => g.pciBusId)).toEqual([
      "0000:18:00.0",
      "0000:2a:00.0",
      "0000:3a:00.0",
      "0000:5d:00.0",
      "0000:9a:00.0",
      "0000:ab:00.0",
      "0000:ba:00.0",
      "0000:db:00.0",
    ]);
    expect(inv.gpus.filter((g) => g.mig?.parentUuid).map((g) => g.id)).toEqual([
      "cuda:2/mig0",
      "cuda:2/mig1",
      "cuda:2/mig2",
      "cuda:5/mig0",
      "cuda:5/mig1",
    ]);
    const first = inv.gpus[0]!;
    expect(first).toMatchObject({
      backend: "cuda",
      name: "NVIDIA H100 80GB HBM3",
      uuid: "GPU-6513270e-269e-0d37-f2a7-4de452e6b438",
      serial: "1652023000000",
      memoryBytes: 85520809984,
      usedMemoryBytes: 529334272,
      freeMemoryBytes: 85520809984 - 529334272,
      computeCapability: "9.0",
      architecture: "Hopper",
      brand: "Tesla",
      driverVersion: "550.54.15",
      powerWatts: 69,
      temperatureC: 30,
      utilizationPercent: 0,
      mig: { enabled: false },
      sources: ["nvml"],
    });
    expect(first.cpuAffinity).toHaveLength(112);
    expect(first.cpuAffinity!.slice(54, 58)).toEqual([54, 55, 112, 113]);
    const parent = inv.gpus.find((g) => g.id === "cuda:2")!;
    expect(parent.mig).toEqual({ enabled: true });
    expect(inv.gpus.find((g) => g.id === "cuda:2/mig1")).toMatchObject({
      name: "NVIDIA H100 80GB HBM3 MIG 2g.20gb",
      uuid: expect.stringMatching(/^MIG-/),
      memoryBytes: 21139292160,
      pciBusId: "0000:3a:00.0",
      mig: { enabled: true, parentUuid: parent.uuid, gpuInstanceId: 4, computeInstanceId: 0 },
    });
    expect(probe(inv, "nvml")).toMatchObject({
      status: "ok",
      version: "NVML 12.550.54.15, CUDA 12.4",
      library: fakeLib("nvml"),
    });
    expect(probe(inv, "nvml").message).toBe("8 GPUs, driver 550.54.15");
    expect(probe(inv, "cuda")).toMatchObject({ status: "not-found", library: null });
    expect(inv.visibility).toMatchObject({ applied: true, narrowedBy: [], hiddenGpus: 0 });
  });

  it("mixed cards: ids follow PCI order, cudaIndex records CUDA's fastest-first order", async () => {
    const inv = await detectInventory({ env: fakeEnv("mixed-order.scenario", nvmlAndCuda()) });
    expect(inv.gpus.map((g) => [g.id, g.name, g.cudaIndex])).toEqual([
      ["cuda:0", "NVIDIA GeForce RTX 3060", 2],
      ["cuda:1", "NVIDIA GeForce RTX 4090", 0],
      ["cuda:2", "NVIDIA A100-SXM4-40GB", 1],
    ]);
    // Seen by NVML and CUDA, listed once.
    expect(inv.gpus.map((g) => g.sources)).toEqual([
      ["nvml", "cuda"],
      ["nvml", "cuda"],
      ["nvml", "cuda"],
    ]);
    // NVML answered NOT_SUPPORTED for power: skipped, not fatal.
    expect(inv.gpus.map((g) => g.powerWatts)).toEqual([null, null, null]);
    expect(probe(inv, "cuda")).toMatchObject({ status: "ok", version: "CUDA 12.2" });
  });

  it("CUDA_VISIBLE_DEVICES indices are CUDA's order, or PCI order under CUDA_DEVICE_ORDER=PCI_BUS_ID", async () => {
    const fastest = await detect({
      env: fakeEnv("mixed-order.scenario", nvmlAndCuda(), { CUDA_VISIBLE_DEVICES: "0" }),
    });
    expect(fastest.inventory.gpus.map((g) => g.name)).toEqual(["NVIDIA GeForce RTX 4090"]);
    expect(fastest.inventory.visibility).toMatchObject({
      narrowedBy: ["CUDA_VISIBLE_DEVICES"],
      hiddenGpus: 2,
    });
    expect(fastest.visibilityNotes).toEqual(["CUDA_VISIBLE_DEVICES=0 hides 2 of the cuda devices"]);

    const pci = await detectInventory({
      env: fakeEnv("mixed-order.scenario", nvmlAndCuda(), {
        CUDA_VISIBLE_DEVICES: "0",
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      }),
    });
    expect(pci.gpus.map((g) => [g.name, g.cudaIndex])).toEqual([["NVIDIA GeForce RTX 3060", 0]]);

    // The fake libcuda honours CUDA_VISIBLE_DEVICES like the real one: the probe child must not
    // see it, or CUDA would enumerate one device and the others would lose their cudaIndex.
    const all = await detectInventory({
      all: true,
      env: fakeEnv("mixed-order.scenario", nvmlAndCuda(), { CUDA_VISIBLE_DEVICES: "1" }),
    });
    expect(all.gpus.map((g) => g.cudaIndex)).toEqual([2, 0, 1]);
    expect(all.visibility).toMatchObject({ applied: false, variables: { CUDA_VISIBLE_DEVICES: "1" } });
  });

  it("the NUMA node comes from the GPU's PCI device in sysfs", async () => {
    const inv = await detectInventory({
      env: fakeEnv("mixed-order.scenario", nvmlAndCuda(), {
        GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-nvidia"),
      }),
    });
    expect(inv.gpus.map((g) => [g.pciBusId, g.numaNode])).toEqual([
      ["0000:01:00.0", null],
      ["0000:21:00.0", null],
      ["0000:41:00.0", 1],
    ]);
  });

  it("NVML missing (containers): the CUDA driver API lists the GPUs", async () => {
    const inv = await detectInventory({ env: fakeEnv("mixed-order.scenario", { cuda: fakeLib("cuda") }) });
    expect(inv.gpus.map((g) => [g.id, g.name, g.cudaIndex, g.pciBusId])).toEqual([
      ["cuda:0", "NVIDIA GeForce RTX 3060", 2, "0000:01:00.0"],
      ["cuda:1", "NVIDIA GeForce RTX 4090", 0, "0000:21:00.0"],
      ["cuda:2", "NVIDIA A100-SXM4-40GB", 1, "0000:41:00.0"],
    ]);
    expect(inv.gpus[1]).toMatchObject({
      memoryBytes: 25757220864,
      computeCapability: "8.9",
      mig: null,
      sources: ["cuda"],
    });
    expect(inv.gpus[1]!.uuid).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(probe(inv, "nvml").status).toBe("not-found");
    expect(validate(inv)).toBe(true);
  });

  it("driver/library version mismatch: an error with NVML's own words and a hint", async () => {
    const inv = await detectInventory({ env: fakeEnv("version-mismatch.scenario", nvmlOnly()) });
    expect(inv.gpus).toEqual([]);
    expect(probe(inv, "nvml")).toMatchObject({
      status: "error",
      message: "nvmlInit_v2: Driver/library version mismatch (18)",
      hint: expect.stringContaining("reboot"),
    });
  });

  it.each([
    ["no NVIDIA GPU on the PCI bus: no-devices", "sysfs-no-nvidia", "no-devices", undefined],
    [
      "an NVIDIA GPU whose driver is not loaded: an error with a hint",
      "sysfs-nvidia",
      "error",
      expect.stringContaining("lsmod"),
    ],
  ])("NVML_ERROR_DRIVER_NOT_LOADED, %s", async (_, sysfs, status, hint) => {
    const scenario = join(mkdtempSync(join(tmpdir(), "gpuplan-scenario-")), "no-driver.scenario");
    writeFileSync(scenario, "nvml.init_error = 9\n");
    const inv = await detectInventory({
      env: fakeEnv("h100x8-mig.scenario", nvmlOnly(), {
        GPUPLAN_FAKE_SCENARIO: scenario,
        GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect", sysfs),
      }),
    });
    const nvml = probe(inv, "nvml");
    expect(nvml.status).toBe(status);
    expect(nvml.message).toMatch(/^nvmlInit_v2: Driver Not Loaded \(9\)/);
    expect(nvml.hint).toEqual(hint);
  });

  it("two GPUs under one UUID (a driver bug, a fake library): neither is planned on, and detect says why", async () => {
    const scenario = join(mkdtempSync(join(tmpdir(), "gpuplan-scenario-")), "twins.scenario");
    const card = (i: number, pci: string) =>
      [
        `nvml.${i}.name = NVIDIA A100-SXM4-80GB`,
        `nvml.${i}.uuid = GPU-aaaaaaaa-1111-2222-3333-444444444444`,
        `nvml.${i}.pci = ${pci}`,
        `nvml.${i}.memory = 85899345920`,
        `nvml.${i}.cc = 8.0`,
      ].join("\n");
    const third = [
      "nvml.2.name = NVIDIA L4",
      "nvml.2.uuid = GPU-bbbbbbbb-1111-2222-3333-444444444444",
      "nvml.2.pci = 00000000:09:00.0",
      "nvml.2.memory = 25769803776",
      "nvml.2.cc = 8.9",
    ].join("\n");
    writeFileSync(
      scenario,
      `nvml.driver = 550.54.15\nnvml.count = 3\n${card(0, "00000000:07:00.0")}\n${card(1, "00000000:08:00.0")}\n${third}\n`,
    );
    const found = await detect({
      env: fakeEnv("h100x8-mig.scenario", nvmlOnly(), { GPUPLAN_FAKE_SCENARIO: scenario }),
    });
    expect(found.inventory.gpus.map((g) => g.name)).toEqual(["NVIDIA L4"]);
    expect(found.visibilityNotes).toContain(
      "2 GPUs (cuda:0, cuda:1) report one UUID, GPU-aaaaaaaa-1111-2222-3333-444444444444: gpuplan cannot tell them apart and plans on none of them",
    );
  });

  it("a hang in nvmlInit_v2: killed at the deadline, reported as timeout; CUDA in the same child is skipped", async () => {
    const started = performance.now();
    const inv = await detectInventory({ timeoutMs: 1000, env: fakeEnv("hang.scenario", nvmlAndCuda()) });
    expect(performance.now() - started).toBeLessThan(4000);
    expect(probe(inv, "nvml")).toMatchObject({
      status: "timeout",
      message: "nvmlInit_v2 did not return within 1 s; the probe process was killed",
      hint: expect.stringContaining("persistence mode"),
    });
    expect(probe(inv, "cuda")).toMatchObject({ status: "skipped" });
    expect(inv.gpus).toEqual([]);
  });

  it("a segfault in libnvidia-ml: reported, and the CUDA probe still runs in a fresh child", async () => {
    const inv = await detectInventory({ env: fakeEnv("crash.scenario", nvmlAndCuda()) });
    expect(probe(inv, "nvml")).toMatchObject({
      status: "error",
      message: "the probe process crashed (SIGSEGV) in nvmlInit_v2",
    });
    expect(probe(inv, "cuda").status).toBe("ok");
    expect(inv.gpus).toMatchObject([
      { id: "cuda:0", name: "NVIDIA L4", uuid: "GPU-0f7a3c2e-9b1d-4e8f-a6c5-3d2b1a0f9e8d", cudaIndex: 0 },
    ]);
  });

  it("a crash in a per-device call names that call", async () => {
    const scenario = join(mkdtempSync(join(tmpdir(), "gpuplan-scenario-")), "crash.scenario");
    writeFileSync(
      scenario,
      `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.crash_on = nvmlDeviceGetPciInfo_v3\n`,
    );
    const inv = await detectInventory({
      env: fakeEnv("h100x8-mig.scenario", nvmlOnly(), { GPUPLAN_FAKE_SCENARIO: scenario }),
    });
    expect(probe(inv, "nvml")).toMatchObject({
      status: "error",
      message: "the probe process crashed (SIGSEGV) in nvmlDeviceGetPciInfo_v3",
    });
  });

  it("GPUPLAN_NVML_LIBRARY=mynvml.so (no /) loads ./mynvml.so, the file that was checked, not a system library", () => {
    const cwd = mkdtempSync(join(tmpdir(), "gpuplan-relative-lib-"));
    copyFileSync(fakeLib("nvml"), join(cwd, "mynvml.so"));
    const env = fakeEnv("mixed-order.scenario", {}, { GPUPLAN_NVML_LIBRARY: "mynvml.so" });
    const r = gpuplan(["detect", "--json"], { env, cwd });
    const inv = JSON.parse(r.stdout) as Inventory;
    expect(probe(inv, "nvml")).toMatchObject({ status: "ok", library: join(cwd, "mynvml.so") });
    expect(inv.gpus).toHaveLength(3);
  });

  it("the probe child loads a bare library name it is sent from its current folder, never the system's search path", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "gpuplan-relative-lib-"));
    copyFileSync(fakeLib("nvml"), join(cwd, "mynvml.so"));
    const before = process.cwd();
    process.chdir(cwd);
    try {
      const env = fakeEnv("mixed-order.scenario", {});
      const child = startChild([{ name: "nvml", library: "mynvml.so" }], {
        env,
        slowInitMs: 1000,
        amdDriverLoaded: false,
      });
      child.limit(nowMs() + 20_000);
      const run = await child.run;
      expect(run.results[0]).toMatchObject({ status: "ok", library: join(cwd, "mynvml.so") });
    } finally {
      process.chdir(before);
    }
  });

  it("a file that is not a shared library: an error with the loader's reason, other probes unaffected", async () => {
    const notALibrary = join(mkdtempSync(join(tmpdir(), "gpuplan-lib-")), "libnvidia-ml.so.1");
    writeFileSync(notALibrary, "this is not an ELF file\n");
    const inv = await detectInventory({
      env: fakeEnv("mixed-order.scenario", { nvml: notALibrary, cuda: fakeLib("cuda") }),
    });
    expect(probe(inv, "nvml")).toMatchObject({ status: "error", library: notALibrary });
    expect(probe(inv, "nvml").message).toMatch(/Failed to load shared library/);
    expect(probe(inv, "cuda").status).toBe("ok");
    expect(inv.gpus).toHaveLength(3);
  });

  it("an old driver without nvmlDeviceGetMemoryInfo_v2 / nvmlDeviceGetNumaNodeId: v1 memory, no NUMA, no error", async () => {
    const old = await detectInventory({ env: fakeEnv("old-driver.scenario", { nvml: fakeLib("nvmlOld") }) });
    const current = await detectInventory({ env: fakeEnv("old-driver.scenario", nvmlOnly()) });
    expect(probe(old, "nvml")).toMatchObject({ status: "ok", version: "NVML 11.470.256.02, CUDA 11.4" });
    // v1 counts the 512 MiB the driver reserves as used; v2 (current driver) does not.
    expect(old.gpus[0]).toMatchObject({
      name: "Tesla V100-SXM2-16GB",
      usedMemoryBytes: 1073741824,
      numaNode: null,
    });
    expect(current.gpus[0]).toMatchObject({ usedMemoryBytes: 536870912, numaNode: 1 });
  });

  it("NVML_ERROR_INSUFFICIENT_SIZE: string getters retry with a bigger buffer", async () => {
    const inv = await detectInventory({ env: fakeEnv("insufficient-size.scenario", nvmlOnly()) });
    expect(inv.gpus[0]).toMatchObject({
      name: "NVIDIA L40S",
      uuid: "GPU-4c2a9e1f-7d3b-4a6e-9f8c-1b2d3e4f5a6b",
      driverVersion: "550.54.15",
    });
  });

  it("a UUID of another shape is not believed: CUDA's answer or none, never `0` or a list for CUDA_VISIBLE_DEVICES", async () => {
    // GPU 1 answering "0" would have its steps run with CUDA_VISIBLE_DEVICES=0, on GPU 0.
    const scenario = scenarioWith(
      "busy.scenario",
      [
        "nvml.0.uuid = GPU-aaaa,GPU-77e3a1b2",
        "nvml.1.uuid = 0",
        "nvml.1.mig.0.uuid = MIG-\u202e1a2b3c4d-5e6f-4071-8293-a4b5c6d7e8f9",
      ].join("\n"),
    );
    const inv = await detectInventory({
      env: fakeEnv("busy.scenario", nvmlAndCuda(), { GPUPLAN_FAKE_SCENARIO: scenario }),
    });
    expect(inv.gpus.map((g) => [g.id, g.uuid])).toEqual([
      // CUDA knows GPU 0 (matched by PCI bus id) and tells its UUID from the raw bytes.
      ["cuda:0", "GPU-0d7c4a4e-8a3e-4b7e-9d3c-2f1a6b5c4d3e"],
      ["cuda:1", "unknown-0000:87:00.0"],
      ["cuda:1/mig0", ""],
      ["cuda:1/mig1", "MIG-9f8e7d6c-5b4a-4392-8180-7f6e5d4c3b2a"],
    ]);
    const message = probe(inv, "nvml").message;
    expect(message).toContain('GPU 1: nvmlDeviceGetUUID answered "0", which is no GPU UUID: left unknown');
    expect(message).toContain('GPU 0: nvmlDeviceGetUUID answered "GPU-aaaa,GPU-77e3a1b2"');
    expect(message).toContain('GPU 1 MIG device 0: nvmlDeviceGetUUID answered "MIG-\\u202e1a2b3c4d');
  });

  it("a compute capability that is none (-1.-1) is not believed: CUDA's answer fills it, or it stays unknown", async () => {
    const scenario = scenarioWith("busy.scenario", "nvml.0.cc = -1.-1\nnvml.1.cc = 9.-5\ncuda.0.cc = 8.0");
    const env = (libs: Parameters<typeof fakeEnv>[1]) =>
      fakeEnv("busy.scenario", libs, { GPUPLAN_FAKE_SCENARIO: scenario });
    const both = await detectInventory({ env: env(nvmlAndCuda()) });
    expect(both.gpus.filter((g) => !g.mig?.parentUuid).map((g) => g.computeCapability)).toEqual([
      "8.0",
      null,
    ]);
    const cudaAlone = scenarioWith("busy.scenario", "cuda.0.cc = -1.-1");
    const fromCuda = await detectInventory({
      env: fakeEnv("busy.scenario", { cuda: fakeLib("cuda") }, { GPUPLAN_FAKE_SCENARIO: cudaAlone }),
    });
    expect(fromCuda.gpus.map((g) => g.computeCapability)).toEqual([null]);
  });

  it("readings that are none (4000000000%, -300C, 0xFFFFFFFF mW) are unknown, as nvidia-smi's N/A", async () => {
    const scenario = scenarioWith(
      "busy.scenario",
      "nvml.0.util = 4000000000\nnvml.0.temp = -300\nnvml.0.power_mw = 4294967295",
    );
    const inv = await detectInventory({
      env: fakeEnv("busy.scenario", nvmlOnly(), { GPUPLAN_FAKE_SCENARIO: scenario }),
    });
    const readings = (g: Inventory["gpus"][number]) => [g.utilizationPercent, g.temperatureC, g.powerWatts];
    // GPU 1 keeps what the scenario says: the bounds take only what no GPU reads.
    expect(inv.gpus.slice(0, 2).map(readings)).toEqual([
      [null, null, null],
      [40, 51, 201],
    ]);
  });

  it("a slow nvmlInit earns the persistence-mode hint", async () => {
    const inv = await detectInventory({ env: fakeEnv("slow-init.scenario", nvmlOnly()) });
    expect(probe(inv, "nvml")).toMatchObject({
      status: "ok",
      hint: expect.stringMatching(/^nvmlInit took 1\.\d s: enable persistence mode/),
    });
  });

  it("a lost GPU is skipped with NVML's reason; NOT_SUPPORTED fields are null", async () => {
    const inv = await detectInventory({ env: fakeEnv("lost-gpu.scenario", nvmlOnly()) });
    expect(inv.gpus).toHaveLength(1);
    expect(inv.gpus[0]).toMatchObject({ name: "NVIDIA T4", powerWatts: null, temperatureC: null, mig: null });
    expect(probe(inv, "nvml")).toMatchObject({
      status: "ok",
      message: "1 GPU, driver 550.54.15; skipped GPU 1: nvmlDeviceGetHandleByIndex_v2: GPU is lost",
    });
  });

  it("no vendor library at all: no child process, the CPU only, still a valid inventory", async () => {
    const started = performance.now();
    const inv = await detectInventory({ env: fakeEnv("h100x8-mig.scenario", {}) });
    expect(performance.now() - started).toBeLessThan(500);
    expect(inv.gpus).toEqual([]);
    expect(inv.probes.map((p) => [p.name, p.status])).toEqual([
      ["cpu", "ok"],
      ["nvml", "not-found"],
      ["cuda", "not-found"],
      ["rocm-smi", "not-found"],
      ["amd-smi", "not-found"],
      ["hip", "not-found"],
      ["sysfs", "no-devices"],
    ]);
    expect(validate(inv)).toBe(true);
  });
});
