/**
 * AMD probe through ROCm SMI (librocm_smi64.so). Signatures from ABI.md §3: rsmi_init takes
 * a uint64_t, statuses are read as uint32 because RSMI_STATUS_UNKNOWN_ERROR is 0xFFFFFFFF, and
 * every string comes back through an out-pointer.
 */
import { believeMemory, believeProcessBytes } from "../believe-memory.js";
import { gfxTargetFromVersion } from "../gfx.js";
import { formatBdfId } from "../pci.js";
import type { RawGpu, RawProcess } from "../probe-types.js";
import { formatAmdUniqueId } from "../uuid.js";
import { believeCount, countGpus, type ProbeContext, startResult, withNotes } from "./context.js";
import { cString, decodeCString, type NativeFn, VendorLibrary } from "./ffi.js";
import { ROCM_SMI_SYMBOLS } from "./symbols/rocm-smi.js";

const RSMI_STATUS_SUCCESS = 0;
const RSMI_STATUS_INSUFFICIENT_SIZE = 11;
const RSMI_MEM_TYPE_VRAM = 0;
const RSMI_TEMP_TYPE_EDGE = 0;
/** MI300-class GPUs have no edge sensor; junction (hotspot) is what they report. */
const RSMI_TEMP_TYPE_JUNCTION = 1;
const RSMI_TEMP_CURRENT = 0;
const RSMI_SW_COMP_DRIVER = 0;
/** sizeof(rsmi_process_info_t): process_id@0, pasid@4, vram_usage@8 (ABI.md §3). */
const PROCESS_INFO_SIZE = 32;
/** More processes than any machine runs on its GPUs: a library answering more is not believed. */
const MAX_PROCESSES = 65_536;

/** Run the ROCm SMI probe. */
export function probeRocmSmi(ctx: ProbeContext) {
  const { result, finish } = startResult("rocm-smi", ctx.library);
  const lib = new VendorLibrary(ctx.library, ROCM_SMI_SYMBOLS, ctx.track);
  const statusString = lib.fn("rsmi_status_string");
  const describe = (rc: number): string => {
    const out = Buffer.alloc(8);
    if (statusString?.(rc, out) === RSMI_STATUS_SUCCESS)
      return decodeCString(out.readBigUInt64LE(0)) ?? `status ${rc}`;
    return `status ${rc}`;
  };

  const version = Buffer.alloc(24);
  if (lib.fn("rsmi_version_get")?.(version) === RSMI_STATUS_SUCCESS) {
    // rsmi_version_t: major@0, minor@4, patch@8 (build@16 is a char pointer).
    result.version = `${version.readUInt32LE(0)}.${version.readUInt32LE(4)}.${version.readUInt32LE(8)}`;
  }
  const rc = lib.need("rsmi_init")(0n) as number;
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
    if (lib.fn("rsmi_version_str_get")?.(RSMI_SW_COMP_DRIVER, driver, 256) === RSMI_STATUS_SUCCESS)
      result.driverVersion = cString(driver) || null;

    const count = [0];
    const crc = lib.need("rsmi_num_monitor_devices")(count) as number;
    if (crc !== RSMI_STATUS_SUCCESS)
      return finish("error", `rsmi_num_monitor_devices: ${describe(crc)} (${crc})`);
    const claimed = believeCount("rsmi_num_monitor_devices", count[0]!);
    if (claimed.count === 0) return finish("no-devices", "ROCm SMI found no AMD GPU");

    const getName = lib.fn("rsmi_dev_name_get");
    const memTotal = lib.fn("rsmi_dev_memory_total_get");
    const memUsed = lib.fn("rsmi_dev_memory_usage_get");
    const pciId = lib.fn("rsmi_dev_pci_id_get");
    const uniqueId = lib.fn("rsmi_dev_unique_id_get");
    const serialFn = lib.fn("rsmi_dev_serial_number_get");
    const numa = lib.fn("rsmi_topo_numa_affinity_get");
    const busy = lib.fn("rsmi_dev_busy_percent_get");
    const powerNow = lib.fn("rsmi_dev_power_get");
    const powerAve = lib.fn("rsmi_dev_power_ave_get");
    const temp = lib.fn("rsmi_dev_temp_metric_get");
    const gfx = lib.fn("rsmi_dev_target_graphics_version_get");

    const u64Out = (fn: NativeFn | null, ...args: unknown[]): bigint | null => {
      if (!fn) return null;
      const buf = Buffer.alloc(8);
      return fn(...args, buf) === RSMI_STATUS_SUCCESS ? buf.readBigUInt64LE(0) : null;
    };
    const text = (fn: NativeFn | null, dv: number): string | null => {
      for (let n = 256; n <= 4096 && fn; n *= 2) {
        const buf = Buffer.alloc(n);
        const src = fn(dv, buf, n) as number;
        if (src === RSMI_STATUS_SUCCESS) return cString(buf) || null;
        if (src !== RSMI_STATUS_INSUFFICIENT_SIZE) return null;
      }
      return null;
    };
    /** Microwatts: the current-or-average call of newer libraries, else the average one. */
    const power = (dv: number): bigint | null => {
      const buf = Buffer.alloc(8);
      if (powerNow?.(dv, buf, [0]) === RSMI_STATUS_SUCCESS) return buf.readBigUInt64LE(0);
      return u64Out(powerAve, dv, 0);
    };
    /** Signed millidegrees: edge sensor, else junction. */
    const millidegrees = (dv: number): bigint | null =>
      u64Out(temp, dv, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT) ??
      u64Out(temp, dv, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT);
    const processes = listProcesses(lib);
    const notes: string[] = claimed.note ? [claimed.note] : [];

    for (let i = 0; i < claimed.count; i++) {
      const mem = believeMemory(
        { total: u64Out(memTotal, i, RSMI_MEM_TYPE_VRAM), used: u64Out(memUsed, i, RSMI_MEM_TYPE_VRAM) },
        `GPU ${i}`,
        (n) => notes.push(n),
      );
      const bdf = u64Out(pciId, i);
      const uid = u64Out(uniqueId, i);
      const numaOut = [0];
      const busyOut = [0];
      const microwatts = power(i);
      const mc = millidegrees(i);
      const gpu: RawGpu = {
        index: i,
        name: text(getName, i) ?? "AMD GPU",
        uuid: uid === null || uid === 0n ? null : formatAmdUniqueId(uid),
        pciBusId: bdf === null ? null : formatBdfId(bdf),
        memoryBytes: mem.total,
        // believeMemory keeps used only where it is at most the total.
        freeMemoryBytes: mem.total !== null && mem.used !== null ? mem.total - mem.used : null,
        usedMemoryBytes: mem.used,
        computeCapability: gfxTargetFromVersion(u64Out(gfx, i)),
        serial: text(serialFn, i),
        numaNode: numa?.(i, numaOut) === RSMI_STATUS_SUCCESS && numaOut[0]! >= 0 ? numaOut[0]! : null,
        utilizationPercent: busy?.(i, busyOut) === RSMI_STATUS_SUCCESS ? busyOut[0]! : null,
        powerWatts: microwatts === null ? null : Number(microwatts) / 1e6,
        temperatureC: mc === null ? null : Number(BigInt.asIntN(64, mc)) / 1000,
        processes: processes === null ? null : (processes.get(i) ?? []),
      };
      result.gpus.push(gpu);
    }
    const found = `${countGpus(result.gpus.length)}${result.driverVersion ? `, driver ${result.driverVersion}` : ""}`;
    return finish("ok", withNotes(found, notes));
  } finally {
    // Shut down after the answer is out: a hang there must not cost the result.
    const shutDown = lib.fn("rsmi_shut_down");
    if (shutDown) ctx.defer(() => shutDown());
  }
}

/**
 * Compute processes by device index: ROCm SMI lists them system-wide (count, then fill), and
 * says per process which devices it uses. Its VRAM figure is the process's total, so it is given
 * only for a process on one GPU. Null when the library cannot list them.
 */
function listProcesses(lib: VendorLibrary<typeof ROCM_SMI_SYMBOLS>): Map<number, RawProcess[]> | null {
  const infoGet = lib.fn("rsmi_compute_process_info_get");
  const gpusGet = lib.fn("rsmi_compute_process_gpus_get");
  if (!infoGet || !gpusGet) return null;
  const count = [0];
  if (infoGet(null, count) !== RSMI_STATUS_SUCCESS || count[0]! > MAX_PROCESSES) return null;
  let buf = Buffer.alloc(0);
  for (let attempt = 0; attempt < 4; attempt++) {
    // Headroom: processes may start between the two calls.
    const capacity = count[0]! + 8;
    buf = Buffer.alloc(capacity * PROCESS_INFO_SIZE);
    count[0] = capacity;
    const rc = infoGet(buf, count) as number;
    if (rc === RSMI_STATUS_SUCCESS) break;
    if (rc !== RSMI_STATUS_INSUFFICIENT_SIZE || attempt === 3 || count[0]! > MAX_PROCESSES) return null;
  }
  const byDevice = new Map<number, RawProcess[]>();
  const n = Math.min(count[0]!, buf.length / PROCESS_INFO_SIZE);
  for (let p = 0; p < n; p++) {
    const pid = buf.readUInt32LE(p * PROCESS_INFO_SIZE);
    const vram = buf.readBigUInt64LE(p * PROCESS_INFO_SIZE + 8);
    const devices = processDevices(gpusGet, pid);
    // A process that ended between the two calls answers NOT_FOUND: it no longer uses a GPU.
    if (!devices) continue;
    for (const dv of devices) {
      const list = byDevice.get(dv) ?? [];
      list.push({ pid, usedMemoryBytes: devices.length === 1 ? believeProcessBytes(vram) : null });
      byDevice.set(dv, list);
    }
  }
  return byDevice;
}

function processDevices(gpusGet: NativeFn, pid: number): number[] | null {
  const num = [0];
  if (gpusGet(pid, null, num) !== RSMI_STATUS_SUCCESS || num[0]! > 4096) return null;
  if (num[0] === 0) return [];
  const indices = Buffer.alloc(4 * num[0]!);
  if (gpusGet(pid, indices, num) !== RSMI_STATUS_SUCCESS) return null;
  const devices: number[] = [];
  for (let k = 0; k < Math.min(num[0]!, indices.length / 4); k++) devices.push(indices.readUInt32LE(k * 4));
  return [...new Set(devices)];
}
