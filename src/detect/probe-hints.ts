/** What to tell a person when a vendor probe hangs or crashes, per library. */
import type { VendorProbeName } from "./probe-types.js";

export const PROBE_HINTS: Record<VendorProbeName, { timeout: string; crash: string }> = {
  nvml: {
    timeout:
      "a wedged GPU or driver can hang NVML: check `nvidia-smi` and `dmesg` for Xid errors; enable persistence mode (`sudo nvidia-smi -pm 1`) if initialization is merely slow, or raise --timeout",
    crash:
      "libnvidia-ml crashed: check the driver installation with `nvidia-smi`, or point GPUPLAN_NVML_LIBRARY at a working library",
  },
  cuda: {
    timeout: "cuInit did not return: check `nvidia-smi` and `dmesg`, or raise --timeout",
    crash:
      "libcuda crashed: check the driver installation, or point GPUPLAN_CUDA_LIBRARY at the driver's libcuda.so.1",
  },
  "rocm-smi": {
    timeout: "ROCm SMI did not answer: check `dmesg` for amdgpu errors, or raise --timeout",
    crash: "librocm_smi64 crashed: check the ROCm installation, or point GPUPLAN_ROCM_SMI_LIBRARY elsewhere",
  },
  "amd-smi": {
    timeout: "AMD SMI did not answer: check `dmesg` for amdgpu errors, or raise --timeout",
    crash: "libamd_smi crashed: check the ROCm installation, or point GPUPLAN_AMD_SMI_LIBRARY elsewhere",
  },
  hip: {
    timeout: "the HIP runtime did not initialize: check /dev/kfd and `dmesg`, or raise --timeout",
    crash: "libamdhip64 crashed: check the ROCm installation, or point GPUPLAN_HIP_LIBRARY elsewhere",
  },
};
