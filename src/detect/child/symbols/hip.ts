/**
 * The HIP runtime functions gpuplan binds (libamdhip64.so), checked against ABI.md §5: hipError_t
 * and hipDevice_t as int, size_t through a raw buffer, hipDeviceProp_tR0600 (1472 bytes, HIP 6.0
 * on) as a raw buffer, a `const char *` result as `void *` (for ffi.ts decodeCString).
 */
import type { SymbolTable } from "./table.js";

export const HIP_SYMBOLS = {
  hipInit: { c: "int hipInit(unsigned int flags)", required: true },
  hipRuntimeGetVersion: { c: "int hipRuntimeGetVersion(_Out_ int *runtimeVersion)" },
  hipGetErrorString: { c: "void *hipGetErrorString(int error)" },
  hipGetDeviceCount: { c: "int hipGetDeviceCount(_Out_ int *count)", required: true },
  hipDeviceGetName: { c: "int hipDeviceGetName(_Out_ char *name, int len, int device)" },
  hipDeviceTotalMem: { c: "int hipDeviceTotalMem(void *bytes, int device)" },
  hipDeviceGetPCIBusId: { c: "int hipDeviceGetPCIBusId(_Out_ char *pciBusId, int len, int device)" },
  hipGetDevicePropertiesR0600: { c: "int hipGetDevicePropertiesR0600(void *prop, int deviceId)" },
} as const satisfies SymbolTable;
