/**
 * The CUDA driver API functions gpuplan binds (libcuda.so.1), checked against ABI.md §2: CUresult,
 * CUdevice and CUdevice_attribute as int, the _v2 names the header maps cuDeviceTotalMem and
 * cuDeviceGetUuid to (size_t and CUuuid through raw buffers), `const char **` as an 8-byte buffer.
 */
import type { SymbolTable } from "./table.js";

export const CUDA_SYMBOLS = {
  cuInit: { c: "int cuInit(unsigned int flags)", required: true },
  cuDriverGetVersion: { c: "int cuDriverGetVersion(_Out_ int *driverVersion)" },
  cuGetErrorString: { c: "int cuGetErrorString(int error, void *pStr)" },
  cuDeviceGetCount: { c: "int cuDeviceGetCount(_Out_ int *count)", required: true },
  cuDeviceGet: { c: "int cuDeviceGet(_Out_ int *device, int ordinal)", required: true },
  cuDeviceGetName: { c: "int cuDeviceGetName(_Out_ char *name, int len, int dev)" },
  cuDeviceTotalMem_v2: { c: "int cuDeviceTotalMem_v2(void *bytes, int dev)" },
  cuDeviceGetAttribute: { c: "int cuDeviceGetAttribute(_Out_ int *pi, int attrib, int dev)" },
  cuDeviceGetUuid_v2: { c: "int cuDeviceGetUuid_v2(void *uuid, int dev)" },
  /** Drivers before _v2 (same CUuuid layout). */
  cuDeviceGetUuid: { c: "int cuDeviceGetUuid(void *uuid, int dev)" },
  cuDeviceGetPCIBusId: { c: "int cuDeviceGetPCIBusId(_Out_ char *pciBusId, int len, int dev)" },
} as const satisfies SymbolTable;
