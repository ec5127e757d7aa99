// Every vendor function gpuplan binds is declared once, in src/detect/child/symbols/*.ts. These
// tests hold each declaration to the C signature measured in the vendor headers (the project's
// ABI notes, transcribed below as C text), and check that the fake libraries export all of them.
import koffi from "koffi";
import { describe, expect, it } from "vitest";
import { AMD_SMI_SYMBOLS } from "../../src/detect/child/symbols/amd-smi.js";
import { CUDA_SYMBOLS } from "../../src/detect/child/symbols/cuda.js";
import { HIP_SYMBOLS } from "../../src/detect/child/symbols/hip.js";
import { NVML_SYMBOLS } from "../../src/detect/child/symbols/nvml.js";
import { ROCM_SMI_SYMBOLS } from "../../src/detect/child/symbols/rocm-smi.js";
import type { SymbolTable } from "../../src/detect/child/symbols/table.js";
import { fakeLib, fakeLibsBuilt } from "./fake-libs.js";

/** The C signatures from the headers (x86-64 Linux, after the preprocessor). */
const HEADER_SIGNATURES: Record<string, Record<string, string>> = {
  nvml: {
    nvmlInit_v2: "nvmlReturn_t nvmlInit_v2(void)",
    nvmlInit: "nvmlReturn_t nvmlInit(void)",
    nvmlShutdown: "nvmlReturn_t nvmlShutdown(void)",
    nvmlErrorString: "const char* nvmlErrorString(nvmlReturn_t result)",
    nvmlSystemGetDriverVersion: "nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)",
    nvmlSystemGetNVMLVersion: "nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)",
    nvmlSystemGetCudaDriverVersion_v2:
      "nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)",
    nvmlSystemGetCudaDriverVersion: "nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)",
    nvmlDeviceGetCount_v2: "nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)",
    nvmlDeviceGetCount: "nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)",
    nvmlDeviceGetHandleByIndex_v2:
      "nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)",
    nvmlDeviceGetHandleByIndex:
      "nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)",
    nvmlDeviceGetName: "nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)",
    nvmlDeviceGetUUID: "nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)",
    nvmlDeviceGetSerial:
      "nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length)",
    nvmlDeviceGetPciInfo_v3: "nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)",
    nvmlDeviceGetMemoryInfo_v2:
      "nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)",
    nvmlDeviceGetMemoryInfo:
      "nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)",
    nvmlDeviceGetCudaComputeCapability:
      "nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)",
    nvmlDeviceGetArchitecture:
      "nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch)",
    nvmlDeviceGetBrand: "nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type)",
    nvmlDeviceGetPowerUsage: "nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)",
    nvmlDeviceGetTemperature:
      "nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp)",
    nvmlDeviceGetTemperatureV:
      "nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)",
    nvmlDeviceGetUtilizationRates:
      "nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)",
    nvmlDeviceGetComputeRunningProcesses_v3:
      "nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos)",
    nvmlDeviceGetCpuAffinity:
      "nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet)",
    nvmlDeviceGetNumaNodeId: "nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int *node)",
    nvmlDeviceGetMigMode:
      "nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)",
    nvmlDeviceGetMaxMigDeviceCount:
      "nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)",
    nvmlDeviceGetMigDeviceHandleByIndex:
      "nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice)",
    nvmlDeviceGetGpuInstanceId:
      "nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)",
    nvmlDeviceGetComputeInstanceId:
      "nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)",
  },
  cuda: {
    cuInit: "CUresult cuInit(unsigned int Flags)",
    cuDriverGetVersion: "CUresult cuDriverGetVersion(int *driverVersion)",
    cuGetErrorString: "CUresult cuGetErrorString(CUresult error, const char **pStr)",
    cuDeviceGetCount: "CUresult cuDeviceGetCount(int *count)",
    cuDeviceGet: "CUresult cuDeviceGet(CUdevice *device, int ordinal)",
    cuDeviceGetName: "CUresult cuDeviceGetName(char *name, int len, CUdevice dev)",
    cuDeviceTotalMem_v2: "CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)",
    cuDeviceGetAttribute: "CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)",
    cuDeviceGetUuid_v2: "CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)",
    cuDeviceGetUuid: "CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)",
    cuDeviceGetPCIBusId: "CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)",
  },
  "rocm-smi": {
    rsmi_init: "rsmi_status_t rsmi_init(uint64_t init_flags)",
    rsmi_shut_down: "rsmi_status_t rsmi_shut_down(void)",
    rsmi_status_string: "rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **status_string)",
    rsmi_version_get: "rsmi_status_t rsmi_version_get(rsmi_version_t *version)",
    rsmi_version_str_get:
      "rsmi_status_t rsmi_version_str_get(rsmi_sw_component_t component, char *ver_str, uint32_t len)",
    rsmi_num_monitor_devices: "rsmi_status_t rsmi_num_monitor_devices(uint32_t *num_devices)",
    rsmi_dev_name_get: "rsmi_status_t rsmi_dev_name_get(uint32_t dv_ind, char *name, size_t len)",
    rsmi_dev_memory_total_get:
      "rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t *total)",
    rsmi_dev_memory_usage_get:
      "rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t *used)",
    rsmi_dev_pci_id_get: "rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t *bdfid)",
    rsmi_dev_unique_id_get: "rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t *id)",
    rsmi_dev_serial_number_get:
      "rsmi_status_t rsmi_dev_serial_number_get(uint32_t dv_ind, char *serial_num, uint32_t len)",
    rsmi_topo_numa_affinity_get:
      "rsmi_status_t rsmi_topo_numa_affinity_get(uint32_t dv_ind, int32_t *numa_node)",
    rsmi_dev_busy_percent_get:
      "rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent)",
    rsmi_dev_power_get:
      "rsmi_status_t rsmi_dev_power_get(uint32_t dv_ind, uint64_t *power, RSMI_POWER_TYPE *type)",
    rsmi_dev_power_ave_get:
      "rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t *power)",
    rsmi_dev_temp_metric_get:
      "rsmi_status_t rsmi_dev_temp_metric_get(uint32_t dv_ind, uint32_t sensor_type, rsmi_temperature_metric_t metric, int64_t *temperature)",
    rsmi_dev_target_graphics_version_get:
      "rsmi_status_t rsmi_dev_target_graphics_version_get(uint32_t dv_ind, uint64_t *gfx_version)",
    // From rocm_smi.h itself (the ABI notes measure rsmi_process_info_t, not these two).
    rsmi_compute_process_info_get:
      "rsmi_status_t rsmi_compute_process_info_get(rsmi_process_info_t *procs, uint32_t *num_items)",
    rsmi_compute_process_gpus_get:
      "rsmi_status_t rsmi_compute_process_gpus_get(uint32_t pid, uint32_t *dv_indices, uint32_t *num_devices)",
  },
  "amd-smi": {
    amdsmi_init: "amdsmi_status_t amdsmi_init(uint64_t init_flags)",
    amdsmi_shut_down: "amdsmi_status_t amdsmi_shut_down(void)",
    amdsmi_status_code_to_string:
      "amdsmi_status_t amdsmi_status_code_to_string(amdsmi_status_t status, const char **status_string)",
    amdsmi_get_lib_version: "amdsmi_status_t amdsmi_get_lib_version(amdsmi_version_t *version)",
    amdsmi_get_socket_handles:
      "amdsmi_status_t amdsmi_get_socket_handles(uint32_t *socket_count, amdsmi_socket_handle* socket_handles)",
    amdsmi_get_processor_handles:
      "amdsmi_status_t amdsmi_get_processor_handles(amdsmi_socket_handle socket_handle, uint32_t *processor_count, amdsmi_processor_handle* processor_handles)",
    amdsmi_get_processor_type:
      "amdsmi_status_t amdsmi_get_processor_type(amdsmi_processor_handle processor_handle, processor_type_t* processor_type)",
    amdsmi_get_gpu_asic_info:
      "amdsmi_status_t amdsmi_get_gpu_asic_info(amdsmi_processor_handle processor_handle, amdsmi_asic_info_t *info)",
    amdsmi_get_gpu_driver_info:
      "amdsmi_status_t amdsmi_get_gpu_driver_info(amdsmi_processor_handle processor_handle, amdsmi_driver_info_t *info)",
    amdsmi_get_gpu_memory_total:
      "amdsmi_status_t amdsmi_get_gpu_memory_total(amdsmi_processor_handle processor_handle, amdsmi_memory_type_t mem_type, uint64_t *total)",
    amdsmi_get_gpu_memory_usage:
      "amdsmi_status_t amdsmi_get_gpu_memory_usage(amdsmi_processor_handle processor_handle, amdsmi_memory_type_t mem_type, uint64_t *used)",
    amdsmi_get_gpu_bdf_id:
      "amdsmi_status_t amdsmi_get_gpu_bdf_id(amdsmi_processor_handle processor_handle, uint64_t *bdfid)",
    amdsmi_get_gpu_device_uuid:
      "amdsmi_status_t amdsmi_get_gpu_device_uuid(amdsmi_processor_handle processor_handle, unsigned int *uuid_length, char *uuid)",
    amdsmi_topo_get_numa_node_number:
      "amdsmi_status_t amdsmi_topo_get_numa_node_number(amdsmi_processor_handle processor_handle, uint32_t *numa_node)",
    amdsmi_get_gpu_activity:
      "amdsmi_status_t amdsmi_get_gpu_activity(amdsmi_processor_handle processor_handle, amdsmi_engine_usage_t *info)",
    amdsmi_get_temp_metric:
      "amdsmi_status_t amdsmi_get_temp_metric(amdsmi_processor_handle processor_handle, amdsmi_temperature_type_t sensor_type, amdsmi_temperature_metric_t metric, int64_t *temperature)",
    amdsmi_get_power_info:
      "amdsmi_status_t amdsmi_get_power_info(amdsmi_processor_handle processor_handle, amdsmi_power_info_t *info)",
  },
  hip: {
    hipInit: "hipError_t hipInit(unsigned int flags)",
    hipRuntimeGetVersion: "hipError_t hipRuntimeGetVersion(int* runtimeVersion)",
    hipGetErrorString: "const char* hipGetErrorString(hipError_t hipError)",
    hipGetDeviceCount: "hipError_t hipGetDeviceCount(int* count)",
    hipDeviceGetName: "hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device)",
    hipDeviceTotalMem: "hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device)",
    hipDeviceGetPCIBusId: "hipError_t hipDeviceGetPCIBusId(char* pciBusId, int len, int device)",
    hipGetDevicePropertiesR0600:
      "hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600* prop, int deviceId)",
  },
};

const TABLES: Record<string, SymbolTable> = {
  nvml: NVML_SYMBOLS,
  cuda: CUDA_SYMBOLS,
  "rocm-smi": ROCM_SMI_SYMBOLS,
  "amd-smi": AMD_SMI_SYMBOLS,
  hip: HIP_SYMBOLS,
};

/** Opaque handles (pointers passed by value). */
const HANDLES = new Set(["nvmlDevice_t", "amdsmi_socket_handle", "amdsmi_processor_handle"]);
/** 4-byte enums and ints whose sign gpuplan does not depend on, except statuses (below). */
const INT32 = new Set([
  "int",
  "int32_t",
  "unsigned int",
  "uint32_t",
  "CUdevice",
  "CUdevice_attribute",
  "hipDevice_t",
  "nvmlTemperatureSensors_t",
  "rsmi_sw_component_t",
  "rsmi_memory_type_t",
  "rsmi_temperature_metric_t",
  "amdsmi_memory_type_t",
  "amdsmi_temperature_type_t",
  "amdsmi_temperature_metric_t",
  "nvmlReturn_t",
  "CUresult",
  "hipError_t",
  "rsmi_status_t",
  "amdsmi_status_t",
]);
const INT64 = new Set(["uint64_t", "int64_t", "size_t"]);
/**
 * Statuses compared with their vendor's constants: ROCm SMI's and AMD SMI's include 0xFFFFFFFF
 * (and 0xFFFFFFFE), so gpuplan reads them unsigned; NVML's, CUDA's and HIP's are small, signed.
 */
const UNSIGNED_STATUS = new Set(["rsmi_status_t", "amdsmi_status_t"]);

/** A C type as a calling convention sees it: "ptr", "i32"/"u32" (only for results), "4" or "8". */
function kind(type: string, result: boolean): string {
  const t = type.replace(/\bconst\b/g, "").trim();
  if (t.includes("*") || HANDLES.has(t)) return "ptr";
  if (t === "void") return "void";
  if (result && INT32.has(t)) return UNSIGNED_STATUS.has(t) ? "u32" : "i32";
  if (INT32.has(t)) return "4";
  if (INT64.has(t)) return "8";
  throw new Error(`no kind for the C type ${type}`);
}

function headerKinds(signature: string): { name: string; result: string; args: string[] } {
  const m = /^(.+?)\s*\b(\w+)\((.*)\)$/.exec(signature)!;
  const args = m[3]!.trim() === "void" ? [] : m[3]!.split(",").map((a) => a.trim());
  return {
    name: m[2]!,
    result: kind(m[1]!, true),
    // Drop the parameter name, keep its type (and any * glued to the name).
    args: args.map((a) => kind(a.replace(/\w+$/, "").trim(), false)),
  };
}

interface KoffiType {
  primitive: string;
  size: number;
}

function declaredKinds(declaration: string): { name: string; result: string; args: string[] } {
  // koffi.proto registers the name: parse each declaration once per process.
  const info = koffi.type(koffi.proto(declaration)) as unknown as {
    name: string;
    proto: { result: KoffiType; arguments: { type: KoffiType }[] };
  };
  const asKind = (t: KoffiType, result: boolean): string => {
    if (t.primitive === "Pointer" || t.primitive === "String") return "ptr";
    if (t.primitive === "Void") return "void";
    if (result && t.size === 4) return t.primitive === "UInt32" ? "u32" : "i32";
    return String(t.size);
  };
  return {
    name: info.name,
    result: asKind(info.proto.result, true),
    args: info.proto.arguments.map((a) => asKind(a.type, false)),
  };
}

describe("vendor symbol declarations", () => {
  for (const [library, table] of Object.entries(TABLES)) {
    it(`${library}: every declaration is the header's signature (name, result, argument sizes)`, () => {
      expect(Object.keys(table).sort()).toEqual(Object.keys(HEADER_SIGNATURES[library]!).sort());
      for (const [name, spec] of Object.entries(table)) {
        const header = headerKinds(HEADER_SIGNATURES[library]![name]!);
        expect({ symbol: name, ...declaredKinds(spec.c) }).toEqual({ symbol: name, ...header });
      }
    });
  }

  it("a wrong declaration is caught (the check is not vacuous)", () => {
    // A pointer argument passed as a 64-bit value, and a status read signed where it must not be.
    const wrong = declaredKinds("int wrongPowerUsage(void *device, uint64_t power)");
    expect(wrong.args).not.toEqual(headerKinds(HEADER_SIGNATURES.nvml!.nvmlDeviceGetPowerUsage!).args);
    expect(declaredKinds("int wrong_rsmi_init(uint64_t flags)").result).not.toBe(
      headerKinds(HEADER_SIGNATURES["rocm-smi"]!.rsmi_init!).result,
    );
  });
});

describe.skipIf(!fakeLibsBuilt)("the fake libraries", () => {
  const FAKES = {
    nvml: "nvml",
    cuda: "cuda",
    "rocm-smi": "rocmSmi",
    "amd-smi": "amdSmi",
    hip: "hip",
  } as const;
  for (const [library, fake] of Object.entries(FAKES)) {
    it(`${library}: exports every symbol gpuplan declares, so the tests exercise each`, () => {
      const lib = koffi.load(fakeLib(fake));
      const missing = Object.entries(TABLES[library]!).filter(([, spec]) => {
        try {
          lib.func(spec.c);
          return false;
        } catch {
          return true;
        }
      });
      expect(missing.map(([name]) => name)).toEqual([]);
    });
  }
});
