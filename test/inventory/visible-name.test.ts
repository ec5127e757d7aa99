// How a step is shown its GPU when the GPU's UUID is not one the runtime takes: by the index the
// runtime itself uses, or not at all — never `unknown-0000:03:00.0` in ROCR_VISIBLE_DEVICES,
// which ROCr rejects, so the step saw no GPU and failed after its wait for a slot.
import { describe, expect, it } from "vitest";
import type { GpuInfo } from "../../src/inventory/types.js";
import { visibleName } from "../../src/inventory/visible-name.js";

const gpu = (over: Partial<GpuInfo>): GpuInfo => ({
  id: "cuda:0",
  index: 0,
  backend: "cuda",
  name: "NVIDIA A100-SXM4-80GB",
  uuid: "GPU-0d7c4a4e-8a3e-4b7e-9d3c-2f1a6b5c4d3e",
  pciBusId: "0000:07:00.0",
  memoryBytes: 85899345920,
  computeCapability: "8.0",
  cudaIndex: null,
  hipIndex: null,
  mig: null,
  ...over,
});

describe("visibleName", () => {
  it("a UUID the runtime accepts names the GPU", () => {
    const a = gpu({});
    expect(visibleName(a, [a])).toBe(a.uuid);
    const mig = gpu({
      id: "cuda:0/mig1",
      uuid: "MIG-9f8e7d6c-5b4a-4392-8180-7f6e5d4c3b2a",
      mig: { enabled: true, parentUuid: a.uuid },
    });
    expect(visibleName(mig, [a, mig])).toBe(mig.uuid);
    const amd = gpu({ id: "rocm:0", backend: "rocm", uuid: "GPU-5f2c6a1d4e3b7a90", hipIndex: 2 });
    expect(visibleName(amd, [amd])).toBe("GPU-5f2c6a1d4e3b7a90");
  });

  it("an NVIDIA card without a UUID is its PCI-order index when CUDA lists what NVML does, or was not asked", () => {
    const a = gpu({});
    const b = gpu({ id: "cuda:1", index: 1, uuid: "unknown-0000:87:00.0", pciBusId: "0000:87:00.0" });
    expect(visibleName(b, [a, b])).toBe("1");
    // CUDA listed both: its PCI order is NVML's.
    const a2 = { ...a, cudaIndex: 1 };
    const b2 = { ...b, cudaIndex: 0 };
    expect(visibleName(b2, [a2, b2])).toBe("1");
    // CUDA listed only the first: its PCI order may not be NVML's, so no index is sure.
    expect(visibleName(b, [a2, b])).toBeNull();
  });

  it("a MIG instance without a UUID has no name (CUDA takes MIG instances by UUID only)", () => {
    const a = gpu({ mig: { enabled: true } });
    const mig = gpu({ id: "cuda:0/mig0", uuid: "", mig: { enabled: true, parentUuid: a.uuid } });
    expect(visibleName(mig, [a, mig])).toBeNull();
  });

  it("an AMD GPU is its HIP index unless its UUID is ROCr's GPU-<unique id>", () => {
    const unknown = gpu({ id: "rocm:0", backend: "rocm", uuid: "unknown-0000:03:00.0", hipIndex: 1 });
    expect(visibleName(unknown, [unknown])).toBe("1");
    // AMD SMI's 8-4-4-4-12 UUID is not ROCr's form: ROCR_VISIBLE_DEVICES would not match it.
    const amdSmi = gpu({
      id: "rocm:0",
      backend: "rocm",
      uuid: "77aa88bb-99cc-0011-2233-445566778899",
      hipIndex: 0,
    });
    expect(visibleName(amdSmi, [amdSmi])).toBe("0");
    expect(visibleName({ ...amdSmi, hipIndex: null }, [amdSmi])).toBeNull();
    expect(visibleName({ ...unknown, hipIndex: null }, [unknown])).toBeNull();
  });
});
