/** NVML's numbers (ABI.md §1): return codes, struct versions, and the enums gpuplan names. */

export const NVML_SUCCESS = 0;
export const NVML_ERROR_INSUFFICIENT_SIZE = 7;
export const NVML_DEVICE_MIG_ENABLE = 1;
/** nvmlMemory_v2 = sizeof(nvmlMemory_v2_t) | 2 << 24 (ABI.md §1). */
export const NVML_MEMORY_V2 = 0x02000028;
/** nvmlTemperature_v1 = sizeof(nvmlTemperature_v1_t) | 1 << 24 (ABI.md §1). */
export const NVML_TEMPERATURE_V1 = 0x0100000c;
export const NVML_TEMPERATURE_GPU = 0;
/** NVML_VALUE_NOT_AVAILABLE (-1) as an unsigned long long: usedGpuMemory unknown (no permission, Windows WDDM). */
export const NVML_VALUE_NOT_AVAILABLE = 0xffff_ffff_ffff_ffffn;
/** sizeof(nvmlProcessInfo_t), the v3 call's element. */
export const PROCESS_INFO_SIZE = 24;
/** More processes than any GPU runs: a library answering more is not believed. */
export const MAX_PROCESSES = 65_536;
/** 1024 CPUs; cpuSet is an array of unsigned long, 64 CPUs each. */
export const CPU_SET_WORDS = 16;

export const ARCHITECTURES: Record<number, string> = {
  2: "Kepler",
  3: "Maxwell",
  4: "Pascal",
  5: "Volta",
  6: "Turing",
  7: "Ampere",
  8: "Ada",
  9: "Hopper",
  10: "Blackwell",
  13: "Rubin",
};
export const BRANDS: Record<number, string> = {
  1: "Quadro",
  2: "Tesla",
  3: "NVS",
  4: "GRID",
  5: "GeForce",
  6: "Titan",
  7: "NVIDIA vApps",
  8: "NVIDIA VPC",
  9: "NVIDIA VCS",
  10: "NVIDIA VWS",
  11: "NVIDIA Cloud Gaming",
  12: "Quadro RTX",
  13: "NVIDIA RTX",
  14: "NVIDIA",
  15: "GeForce RTX",
  16: "Titan RTX",
};

/** Hints for the init errors people actually meet (codes from ABI.md §1). */
export const INIT_HINTS: Record<number, string> = {
  4: "no permission to open /dev/nvidia*: check the device files' group, or the container's device mounts",
  9: "the NVIDIA kernel driver is not loaded: check `lsmod | grep nvidia` and `dmesg`, or install the driver",
  12: "NVML could not find the driver's libraries: reinstall the driver or set GPUPLAN_NVML_LIBRARY",
  15: "a GPU fell off the bus: check `dmesg` for Xid errors; the GPU needs a reset or the host a reboot",
  16: "a GPU needs a reset: `nvidia-smi -r` or reboot",
  18: "the NVIDIA kernel module and libnvidia-ml differ in version, usually after a driver upgrade without a reboot: reboot, or reload the nvidia kernel modules",
  999: "check `nvidia-smi` and `dmesg`",
};
