// A device count is the one number a probe loops on: a library that answers 100,000, or -1 read
// as 0xFFFFFFFF, must cost neither the deadline nor a message of megabytes, and must not hide
// the GPUs another probe can still list.
import { describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import type { Inventory, ProbeReport } from "../../src/inventory/types.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, scenarioWith } from "./fake-libs.js";

const probe = (inv: Inventory, name: ProbeReport["name"]) => inv.probes.find((p) => p.name === name)!;

/** Detection against `base` with `extra` scenario lines appended. */
function detectWith(base: string, extra: string, libs: Parameters<typeof fakeEnv>[1]) {
  const scenario = scenarioWith(base, extra);
  return detectInventory({ env: fakeEnv(base, libs, { GPUPLAN_FAKE_SCENARIO: scenario }) });
}

const nvidia = () => ({ nvml: fakeLib("nvml"), cuda: fakeLib("cuda") });
const amd = () => ({ rocmSmi: fakeLib("rocmSmi"), amdSmi: fakeLib("amdSmi"), hip: fakeLib("hip") });

describe.skipIf(!fakeLibsBuilt)("device counts a library claims", () => {
  it("NVML counting 100,000 GPUs: the first 1,024 are asked, skipped ones summed up in a short message", async () => {
    const inv = await detectWith("h100x8-mig.scenario", "nvml.count = 100000", nvidia());
    const nvml = probe(inv, "nvml");
    expect(nvml.status).toBe("ok");
    expect(nvml.message).toContain(
      "nvmlDeviceGetCount_v2 answered 100,000, more than a machine has: only the first 1,024 were read",
    );
    // The fake hands out 64 handles; the other 960 of the 1,024 asked are skipped: 5 named, the rest counted.
    expect(nvml.message).toContain(
      "skipped GPU 64: nvmlDeviceGetHandleByIndex_v2: Invalid Argument; GPU 65:",
    );
    expect(nvml.message).toContain("; and 955 more");
    expect(nvml.message.length).toBeLessThan(1000);
  });

  it("NVML counting -1 (0xFFFFFFFF): no wait for the deadline, and the CUDA probe still lists the GPUs", async () => {
    const started = Date.now();
    const inv = await detectWith("mixed-order.scenario", "nvml.count = -1", nvidia());
    expect(Date.now() - started).toBeLessThan(8000);
    const nvml = probe(inv, "nvml");
    expect(nvml.status).toBe("error");
    expect(nvml.message).toContain("nvmlDeviceGetCount_v2 answered 4,294,967,295");
    expect(nvml.message).not.toContain("did not return");
    expect(probe(inv, "cuda").status).toBe("ok");
    expect(inv.gpus).toHaveLength(3);
  });

  it("CUDA counting -1 is an error, not zero GPUs; counting 5,000 reads 1,024 and says so", async () => {
    const minus = await detectWith("mixed-order.scenario", "cuda.reported_count = -1", {
      cuda: fakeLib("cuda"),
    });
    expect(probe(minus, "cuda")).toMatchObject({
      status: "error",
      message: "cuDeviceGetCount answered -1, which is no device count",
    });
    const many = await detectWith("mixed-order.scenario", "cuda.reported_count = 5000", {
      cuda: fakeLib("cuda"),
    });
    const cuda = probe(many, "cuda");
    expect(cuda.status).toBe("ok");
    expect(cuda.message).toMatch(
      /^3 GPUs in CUDA order; cuDeviceGetCount answered 5,000, more than a machine has/,
    );
    expect(cuda.message).toContain("; and 1,016 more");
    expect(many.gpus).toHaveLength(3);
  });

  it("MIG: a GPU claiming 100,000 MIG devices is asked about 64 of them, and the message says so", async () => {
    const inv = await detectWith("h100x8-mig.scenario", "nvml.2.max_mig = 100000", { nvml: fakeLib("nvml") });
    const nvml = probe(inv, "nvml");
    expect(nvml.message).toContain(
      "GPU 2: nvmlDeviceGetMaxMigDeviceCount answered 100,000, more than a machine has: only the first 64 were read",
    );
    expect(inv.gpus.filter((g) => g.mig?.parentUuid)).toHaveLength(5);
  });

  it("ROCm SMI, AMD SMI and HIP counting 100,000 GPUs read at most 1,024; HIP counting -1 is an error", async () => {
    const inv = await detectWith(
      "amd-mi300x.scenario",
      "rsmi.count = 100000\namdsmi.count = 100000\nhip.count = 100000",
      amd(),
    );
    expect(probe(inv, "rocm-smi").message).toContain(
      "rsmi_num_monitor_devices answered 100,000, more than a machine has: only the first 1,024 were read",
    );
    expect(probe(inv, "amd-smi").message).toContain("amdsmi_get_processor_handles answered 100,000");
    expect(probe(inv, "hip").message).toContain("hipGetDeviceCount answered 100,000");
    for (const name of ["rocm-smi", "amd-smi", "hip"] as const)
      expect(probe(inv, name).message.length).toBeLessThan(1000);
    const minus = await detectWith("amd-mi300x.scenario", "hip.count = -1", amd());
    expect(probe(minus, "hip")).toMatchObject({
      status: "error",
      message: "hipGetDeviceCount answered -1, which is no device count",
    });
  });
});
