// The real ROCm SMI and HIP libraries from Debian (librocm-smi64-1, libamdhip64-5; .ci/run
// installs them): detection loads them for real on this GPU-less machine and reports a clean
// status, and the libraries' own stderr/stdout noise never reaches gpuplan's output.
import { describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import { findLibraries } from "../../src/detect/libraries.js";
import { gpuplan } from "../helpers/cli.js";

const found = findLibraries(process.env);
const installed = found["rocm-smi"].found && found.hip.found;
if (!installed) {
  console.warn("real-rocm tests skipped: install librocm-smi64-1 and libamdhip64-5 (apt-get) to run them");
}

/** Keep NVIDIA and AMD SMI out: this test is about the two Debian libraries. */
const env = {
  ...process.env,
  GPUPLAN_NVML_LIBRARY: "/nonexistent/libnvidia-ml.so.1",
  GPUPLAN_CUDA_LIBRARY: "/nonexistent/libcuda.so.1",
  GPUPLAN_AMD_SMI_LIBRARY: "/nonexistent/libamd_smi.so",
};

describe.skipIf(!installed)("real Debian ROCm SMI and HIP libraries", () => {
  it("load for real and answer with a clean error or no-devices status, their own words kept", async () => {
    const inv = await detectInventory({ env });
    const rocm = inv.probes.find((p) => p.name === "rocm-smi")!;
    const hip = inv.probes.find((p) => p.name === "hip")!;
    expect(rocm.library).toMatch(/librocm_smi64\.so/);
    expect(hip.library).toMatch(/libamdhip64\.so/);
    expect(["error", "no-devices"]).toContain(rocm.status);
    expect(["error", "no-devices"]).toContain(hip.status);
    // The vendor's call and error string, not a generic failure.
    expect(rocm.message).toMatch(/^rsmi_init: .+ \(\d+\)/);
    expect(hip.message).toMatch(/^hip(Init|GetDeviceCount): hipError\w+/);
    expect(hip.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(inv.gpus).toEqual([]);
  });

  it("the libraries' noise stays out of `gpuplan detect` (stdout and stderr)", () => {
    const r = gpuplan(["detect"], { env });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).not.toMatch(/Failed to open drm|Exception caught|amdgpu\.ids/);
    expect(r.stdout).toMatch(/^ {2}rocm-smi +(error|no-devices) +rsmi_init: /m);
    expect(r.stdout).toMatch(/^ {2}hip +(error|no-devices) +hip/m);
  });
});
