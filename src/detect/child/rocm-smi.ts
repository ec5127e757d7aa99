/**
 * AMD probe through ROCm SMI (librocm_smi64.so). Signatures from ABI.md §3: rsmi_init takes
 * a uint64_t, statuses are read as uint32 because RSMI_STATUS_UNKNOWN_ERROR is 0xFFFFFFFF, and
 * every string comes back through an out-pointer.
 */
import { gfxTargetFromVersion } from "../gfx.js";
import { formatBdfId } from "../pci.js";
import type { RawGpu } from "../probe-types.js";
import { formatAmdUniqueId } from "../uuid.js";
import { countGpus, type ProbeContext, startResult } from "./context.js";
import { cString, decodeCString, VendorLibrary } from "./ffi.js";

const RSMI_STATUS_SUCCESS = 0;
const RSMI_STATUS_INSUFFICIENT_SIZE = 11;
const RSMI_MEM_TYPE_VRAM = 0;
const RSMI_TEMP_TYPE_EDGE = 0;
const RSMI_TEMP_CURRENT = 0;

/** Run the ROCm SMI probe. */
export function probeRocmSmi(ctx: ProbeContext) {
  const { result, finish } = startResult("rocm-smi", ctx.library);
  const lib = new VendorLibrary(ctx.library, ctx.track);
  const statusString = lib.optional("uint32_t rsmi_status_string(uint32_t status, void *statusString)");
  const describe = (rc: number): string => {
    const out = Buffer.alloc(8);
    if (statusString?.(rc, out) === RSMI_STATUS_SUCCESS)
      return decodeCString(out.readBigUInt64LE(0)) ?? `status ${rc}`;
    return `status ${rc}`;
  };

  const version = Buffer.alloc(24);
  if (lib.optional("uint32_t rsmi_version_get(void *version)")?.(version) === RSMI_STATUS_SUCCESS) {
    // rsmi_version_t: major@0, minor@4, patch@8 (build@16 is a char pointer).
    result.version = `${version.readUInt32LE(0)}.${version.readUInt32LE(4)}.${version.readUInt32LE(8)}`;
  }
  const rc = lib.require("uint32_t rsmi_init(uint64_t flags)")(0n) as number;
  if (rc !== RSMI_STATUS_SUCCESS) {
    if (!ctx.amdDriverLoaded) {
      return finish(
        "no-devices",
        `rsmi_init: ${describe(rc)} (${rc}); the amdgpu kernel driver is not loaded`,
      );
    }
    return finish(
      "error",
      `rsmi_init: ${describe(rc)} (${rc})`,
      "check that /dev/kfd and /dev/dri are accessible (user in the video and render groups)",
    );
  }
  try {
    const driver = Buffer.alloc(256);
    const driverFn = lib.optional(
      "uint32_t rsmi_version_str_get(uint32_t component, _Out_ char *verStr, uint32_t len)",
    );
    if (driverFn?.(0, driver, 256) === RSMI_STATUS_SUCCESS) result.driverVersion = cString(driver) || null;

    const count = [0];
    const crc = lib.require("uint32_t rsmi_num_monitor_devices(_Out_ uint32_t *numDevices)")(count) as number;
    if (crc !== RSMI_STATUS_SUCCESS)
      return finish("error", `rsmi_num_monitor_devices: ${describe(crc)} (${crc})`);
    if (count[0] === 0) return finish("no-devices", "ROCm SMI found no AMD GPU");

    const getName = lib.optional("uint32_t rsmi_dev_name_get(uint32_t dv, _Out_ char *name, size_t len)");
    const memTotal = lib.optional(
      "uint32_t rsmi_dev_memory_total_get(uint32_t dv, uint32_t type, void *total)",
    );
    const memUsed = lib.optional(
      "uint32_t rsmi_dev_memory_usage_get(uint32_t dv, uint32_t type, void *used)",
    );
    const pciId = lib.optional("uint32_t rsmi_dev_pci_id_get(uint32_t dv, void *bdfid)");
    const uniqueId = lib.optional("uint32_t rsmi_dev_unique_id_get(uint32_t dv, void *id)");
    const serialFn = lib.optional(
      "uint32_t rsmi_dev_serial_number_get(uint32_t dv, _Out_ char *serial, uint32_t len)",
    );
    const numa = lib.optional("uint32_t rsmi_topo_numa_affinity_get(uint32_t dv, _Out_ int32_t *numaNode)");
    const busy = lib.optional("uint32_t rsmi_dev_busy_percent_get(uint32_t dv, _Out_ uint32_t *busyPercent)");
    const powerAve = lib.optional(
      "uint32_t rsmi_dev_power_ave_get(uint32_t dv, uint32_t sensor, void *power)",
    );
    const temp = lib.optional(
      "uint32_t rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensorType, uint32_t metric, void *temperature)",
    );
    const gfx = lib.optional("uint32_t rsmi_dev_target_graphics_version_get(uint32_t dv, void *gfxVersion)");

    const u64Out = (fn: typeof memTotal, ...args: unknown[]): bigint | null => {
      if (!fn) return null;
      const buf = Buffer.alloc(8);
      return fn(...args, buf) === RSMI_STATUS_SUCCESS ? buf.readBigUInt64LE(0) : null;
    };
    const text = (fn: typeof getName, dv: number): string | null => {
      for (let n = 256; n <= 4096 && fn; n *= 2) {
        const buf = Buffer.alloc(n);
        const src = fn(dv, buf, n) as number;
        if (src === RSMI_STATUS_SUCCESS) return cString(buf) || null;
        if (src !== RSMI_STATUS_INSUFFICIENT_SIZE) return null;
      }
      return null;
    };

    for (let i = 0; i < count[0]!; i++) {
      const total = u64Out(memTotal, i, RSMI_MEM_TYPE_VRAM);
      const used = u64Out(memUsed, i, RSMI_MEM_TYPE_VRAM);
      const bdf = u64Out(pciId, i);
      const uid = u64Out(uniqueId, i);
      const numaOut = [0];
      const busyOut = [0];
      const power = u64Out(powerAve, i, 0);
      const millidegrees = u64Out(temp, i, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT);
      const gpu: RawGpu = {
        index: i,
        name: text(getName, i) ?? "AMD GPU",
        uuid: uid === null || uid === 0n ? null : formatAmdUniqueId(uid),
        pciBusId: bdf === null ? null : formatBdfId(bdf),
        memoryBytes: total === null ? null : Number(total),
        freeMemoryBytes: total !== null && used !== null ? Number(total - used) : null,
        usedMemoryBytes: used === null ? null : Number(used),
        computeCapability: gfxTargetFromVersion(u64Out(gfx, i)),
        serial: text(serialFn, i),
        numaNode: numa?.(i, numaOut) === RSMI_STATUS_SUCCESS && numaOut[0]! >= 0 ? numaOut[0]! : null,
        utilizationPercent: busy?.(i, busyOut) === RSMI_STATUS_SUCCESS ? busyOut[0]! : null,
        // Average power in microwatts; temperature as signed millidegrees (ABI.md §3).
        powerWatts: power === null ? null : Number(power) / 1e6,
        temperatureC: millidegrees === null ? null : Number(BigInt.asIntN(64, millidegrees)) / 1000,
      };
      result.gpus.push(gpu);
    }
    return finish(
      "ok",
      `${countGpus(result.gpus.length)}${result.driverVersion ? `, driver ${result.driverVersion}` : ""}`,
    );
  } finally {
    // Shut down after the answer is out: a hang there must not cost the result.
    const shutDown = lib.optional("uint32_t rsmi_shut_down(void)");
    if (shutDown) ctx.defer(() => shutDown());
  }
}
