/**
 * The ROCm SMI functions gpuplan binds (librocm_smi64.so), checked against ABI.md §3: statuses as
 * uint32 (RSMI_STATUS_UNKNOWN_ERROR is 0xFFFFFFFF), rsmi_init's uint64 flags, uint64 out-values
 * and `const char **` through raw buffers. The two compute-process calls are not in ABI.md's
 * function table; their signatures are the rocm_smi.h ones (rsmi_compute_process_info_get(
 * rsmi_process_info_t *procs, uint32_t *num_items), rsmi_compute_process_gpus_get(uint32_t pid,
 * uint32_t *dv_indices, uint32_t *num_devices)) and rsmi_process_info_t is ABI.md's 32 bytes.
 * rsmi_dev_power_get is newer than Debian's ROCm 5.2 library; power_ave_get is the fallback.
 */
import type { SymbolTable } from "./table.js";

export const ROCM_SMI_SYMBOLS = {
  rsmi_init: { c: "uint32_t rsmi_init(uint64_t flags)", required: true },
  rsmi_shut_down: { c: "uint32_t rsmi_shut_down(void)" },
  rsmi_status_string: { c: "uint32_t rsmi_status_string(uint32_t status, void *statusString)" },
  rsmi_version_get: { c: "uint32_t rsmi_version_get(void *version)" },
  rsmi_version_str_get: {
    c: "uint32_t rsmi_version_str_get(uint32_t component, _Out_ char *verStr, uint32_t len)",
  },
  rsmi_num_monitor_devices: {
    c: "uint32_t rsmi_num_monitor_devices(_Out_ uint32_t *numDevices)",
    required: true,
  },
  rsmi_dev_name_get: { c: "uint32_t rsmi_dev_name_get(uint32_t dv, _Out_ char *name, size_t len)" },
  rsmi_dev_memory_total_get: {
    c: "uint32_t rsmi_dev_memory_total_get(uint32_t dv, uint32_t type, void *total)",
  },
  rsmi_dev_memory_usage_get: {
    c: "uint32_t rsmi_dev_memory_usage_get(uint32_t dv, uint32_t type, void *used)",
  },
  rsmi_dev_pci_id_get: { c: "uint32_t rsmi_dev_pci_id_get(uint32_t dv, void *bdfid)" },
  rsmi_dev_unique_id_get: { c: "uint32_t rsmi_dev_unique_id_get(uint32_t dv, void *id)" },
  rsmi_dev_serial_number_get: {
    c: "uint32_t rsmi_dev_serial_number_get(uint32_t dv, _Out_ char *serial, uint32_t len)",
  },
  rsmi_topo_numa_affinity_get: {
    c: "uint32_t rsmi_topo_numa_affinity_get(uint32_t dv, _Out_ int32_t *numaNode)",
  },
  rsmi_dev_busy_percent_get: {
    c: "uint32_t rsmi_dev_busy_percent_get(uint32_t dv, _Out_ uint32_t *busyPercent)",
  },
  /** Microwatts; `type` says current or average (RSMI_POWER_TYPE, 4 bytes). */
  rsmi_dev_power_get: { c: "uint32_t rsmi_dev_power_get(uint32_t dv, void *power, _Out_ uint32_t *type)" },
  /** Microwatts, averaged. */
  rsmi_dev_power_ave_get: { c: "uint32_t rsmi_dev_power_ave_get(uint32_t dv, uint32_t sensor, void *power)" },
  /** Signed millidegrees Celsius. */
  rsmi_dev_temp_metric_get: {
    c: "uint32_t rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensorType, uint32_t metric, void *temperature)",
  },
  rsmi_dev_target_graphics_version_get: {
    c: "uint32_t rsmi_dev_target_graphics_version_get(uint32_t dv, void *gfxVersion)",
  },
  rsmi_compute_process_info_get: {
    c: "uint32_t rsmi_compute_process_info_get(void *procs, _Inout_ uint32_t *numItems)",
  },
  rsmi_compute_process_gpus_get: {
    c: "uint32_t rsmi_compute_process_gpus_get(uint32_t pid, void *dvIndices, _Inout_ uint32_t *numDevices)",
  },
} as const satisfies SymbolTable;
