/**
 * The AMD SMI functions gpuplan binds (libamd_smi.so), checked against ABI.md §4: statuses as
 * uint32 (0xFFFFFFFE/0xFFFFFFFF exist), amdsmi_init's uint64 flags, handles as `void *`, every
 * struct as an over-sized raw buffer because their layouts differ per release (see amd-smi.ts).
 * No process list: amdsmi_proc_info_t's layout per release is not measured (ROCm SMI's is used).
 */
import type { SymbolTable } from "./table.js";

export const AMD_SMI_SYMBOLS = {
  amdsmi_init: { c: "uint32_t amdsmi_init(uint64_t flags)", required: true },
  amdsmi_shut_down: { c: "uint32_t amdsmi_shut_down(void)" },
  amdsmi_status_code_to_string: {
    c: "uint32_t amdsmi_status_code_to_string(uint32_t status, void *statusString)",
  },
  amdsmi_get_lib_version: { c: "uint32_t amdsmi_get_lib_version(void *version)" },
  amdsmi_get_socket_handles: {
    c: "uint32_t amdsmi_get_socket_handles(_Inout_ uint32_t *count, void *handles)",
    required: true,
  },
  amdsmi_get_processor_handles: {
    c: "uint32_t amdsmi_get_processor_handles(void *socket, _Inout_ uint32_t *count, void *handles)",
    required: true,
  },
  amdsmi_get_processor_type: {
    c: "uint32_t amdsmi_get_processor_type(void *handle, _Out_ uint32_t *type)",
  },
  amdsmi_get_gpu_asic_info: { c: "uint32_t amdsmi_get_gpu_asic_info(void *handle, void *info)" },
  amdsmi_get_gpu_driver_info: { c: "uint32_t amdsmi_get_gpu_driver_info(void *handle, void *info)" },
  amdsmi_get_gpu_memory_total: {
    c: "uint32_t amdsmi_get_gpu_memory_total(void *handle, uint32_t type, void *total)",
  },
  amdsmi_get_gpu_memory_usage: {
    c: "uint32_t amdsmi_get_gpu_memory_usage(void *handle, uint32_t type, void *used)",
  },
  amdsmi_get_gpu_bdf_id: { c: "uint32_t amdsmi_get_gpu_bdf_id(void *handle, void *bdfid)" },
  amdsmi_get_gpu_device_uuid: {
    c: "uint32_t amdsmi_get_gpu_device_uuid(void *handle, _Inout_ uint32_t *len, _Out_ char *uuid)",
  },
  amdsmi_topo_get_numa_node_number: {
    c: "uint32_t amdsmi_topo_get_numa_node_number(void *handle, _Out_ uint32_t *numaNode)",
  },
  /** amdsmi_engine_usage_t: gfx_activity (percent) at offset 0 in every measured release. */
  amdsmi_get_gpu_activity: { c: "uint32_t amdsmi_get_gpu_activity(void *handle, void *info)" },
  /** Degrees Celsius as int64. */
  amdsmi_get_temp_metric: {
    c: "uint32_t amdsmi_get_temp_metric(void *handle, uint32_t sensorType, uint32_t metric, void *temperature)",
  },
  amdsmi_get_power_info: { c: "uint32_t amdsmi_get_power_info(void *handle, void *info)" },
} as const satisfies SymbolTable;
