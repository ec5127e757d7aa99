/**
 * The NVML functions gpuplan binds (libnvidia-ml.so.1), checked against ABI.md §1: the versioned
 * names the headers map to (nvmlInit_v2, …_v2, _v3), nvmlReturn_t and enums as int, nvmlDevice_t
 * as `void *`, structs as raw buffers (nvmlPciInfo_t 68 bytes, nvmlMemory_v2_t 40,
 * nvmlUtilization_t 8, nvmlTemperature_v1_t 12, nvmlProcessInfo_t 24). Driver 535 lacks
 * nvmlDeviceGetNumaNodeId and nvmlDeviceGetTemperatureV (headers 12.4 and 12.9 on); both optional.
 * A `const char *` result is bound as `void *`, for ffi.ts decodeCString to read its bytes.
 */
import type { SymbolTable } from "./table.js";

export const NVML_SYMBOLS = {
  nvmlInit_v2: { c: "int nvmlInit_v2(void)", required: true },
  /** Drivers before the _v2 names. */
  nvmlInit: { c: "int nvmlInit(void)" },
  nvmlShutdown: { c: "int nvmlShutdown(void)" },
  nvmlErrorString: { c: "void *nvmlErrorString(int result)" },
  nvmlSystemGetDriverVersion: {
    c: "int nvmlSystemGetDriverVersion(_Out_ char *version, unsigned int length)",
  },
  nvmlSystemGetNVMLVersion: { c: "int nvmlSystemGetNVMLVersion(_Out_ char *version, unsigned int length)" },
  nvmlSystemGetCudaDriverVersion_v2: {
    c: "int nvmlSystemGetCudaDriverVersion_v2(_Out_ int *cudaDriverVersion)",
  },
  nvmlSystemGetCudaDriverVersion: { c: "int nvmlSystemGetCudaDriverVersion(_Out_ int *cudaDriverVersion)" },
  nvmlDeviceGetCount_v2: { c: "int nvmlDeviceGetCount_v2(_Out_ unsigned int *deviceCount)", required: true },
  nvmlDeviceGetCount: { c: "int nvmlDeviceGetCount(_Out_ unsigned int *deviceCount)" },
  nvmlDeviceGetHandleByIndex_v2: {
    c: "int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void *device)",
    required: true,
  },
  nvmlDeviceGetHandleByIndex: { c: "int nvmlDeviceGetHandleByIndex(unsigned int index, void *device)" },
  nvmlDeviceGetName: { c: "int nvmlDeviceGetName(void *device, _Out_ char *name, unsigned int length)" },
  nvmlDeviceGetUUID: { c: "int nvmlDeviceGetUUID(void *device, _Out_ char *uuid, unsigned int length)" },
  nvmlDeviceGetSerial: {
    c: "int nvmlDeviceGetSerial(void *device, _Out_ char *serial, unsigned int length)",
  },
  nvmlDeviceGetPciInfo_v3: { c: "int nvmlDeviceGetPciInfo_v3(void *device, void *pci)" },
  nvmlDeviceGetMemoryInfo_v2: { c: "int nvmlDeviceGetMemoryInfo_v2(void *device, void *memory)" },
  nvmlDeviceGetMemoryInfo: { c: "int nvmlDeviceGetMemoryInfo(void *device, void *memory)" },
  nvmlDeviceGetCudaComputeCapability: {
    c: "int nvmlDeviceGetCudaComputeCapability(void *device, _Out_ int *major, _Out_ int *minor)",
  },
  nvmlDeviceGetArchitecture: { c: "int nvmlDeviceGetArchitecture(void *device, _Out_ uint32_t *arch)" },
  nvmlDeviceGetBrand: { c: "int nvmlDeviceGetBrand(void *device, _Out_ uint32_t *type)" },
  /** Milliwatts. */
  nvmlDeviceGetPowerUsage: { c: "int nvmlDeviceGetPowerUsage(void *device, _Out_ unsigned int *power)" },
  /** Deprecated in the 13.x headers in favour of nvmlDeviceGetTemperatureV. */
  nvmlDeviceGetTemperature: {
    c: "int nvmlDeviceGetTemperature(void *device, int sensorType, _Out_ unsigned int *temp)",
  },
  nvmlDeviceGetTemperatureV: { c: "int nvmlDeviceGetTemperatureV(void *device, void *temperature)" },
  nvmlDeviceGetUtilizationRates: { c: "int nvmlDeviceGetUtilizationRates(void *device, void *utilization)" },
  nvmlDeviceGetComputeRunningProcesses_v3: {
    c: "int nvmlDeviceGetComputeRunningProcesses_v3(void *device, _Inout_ unsigned int *infoCount, void *infos)",
  },
  /** cpuSet is unsigned long[] (8 bytes each), passed as a raw buffer. */
  nvmlDeviceGetCpuAffinity: {
    c: "int nvmlDeviceGetCpuAffinity(void *device, unsigned int cpuSetSize, void *cpuSet)",
  },
  nvmlDeviceGetNumaNodeId: { c: "int nvmlDeviceGetNumaNodeId(void *device, _Out_ unsigned int *node)" },
  nvmlDeviceGetMigMode: {
    c: "int nvmlDeviceGetMigMode(void *device, _Out_ unsigned int *currentMode, _Out_ unsigned int *pendingMode)",
  },
  nvmlDeviceGetMaxMigDeviceCount: {
    c: "int nvmlDeviceGetMaxMigDeviceCount(void *device, _Out_ unsigned int *count)",
  },
  nvmlDeviceGetMigDeviceHandleByIndex: {
    c: "int nvmlDeviceGetMigDeviceHandleByIndex(void *device, unsigned int index, void *migDevice)",
  },
  nvmlDeviceGetGpuInstanceId: { c: "int nvmlDeviceGetGpuInstanceId(void *device, _Out_ unsigned int *id)" },
  nvmlDeviceGetComputeInstanceId: {
    c: "int nvmlDeviceGetComputeInstanceId(void *device, _Out_ unsigned int *id)",
  },
} as const satisfies SymbolTable;
