/**
 * AMD probe through AMD SMI (libamd_smi.so). Its structs changed size and layout between
 * releases (ABI.md §4: amdsmi_asic_info_t is 256/448/456/896 bytes for 24.5/24.6/24.7/26.x),
 * so: every struct is handed an over-sized zeroed buffer (a newer, bigger struct can never
 * overflow it), only fields at offsets that never moved are read unconditionally (market_name
 * and driver_version at 0), and version-dependent fields only for a library version whose
 * layout ABI.md measured. Memory, BDF and NUMA come from scalar calls, which are stable.
 */

import { displayText } from "../../text/safe-text.js";
import { believeMemory } from "../believe-memory.js";
import { gfxTargetFromVersion } from "../gfx.js";
import { formatBdfId } from "../pci.js";
import type { RawGpu } from "../probe-types.js";
import { isAmdUuid } from "../uuid.js";
import {
  believeCount,
  countGpus,
  MAX_DEVICES,
  type ProbeContext,
  startResult,
  withNotes,
} from "./context.js";
import { cString, decodeCString, type NativeFn, pointerAt, VendorLibrary } from "./ffi.js";
import { AMD_SMI_SYMBOLS } from "./symbols/amd-smi.js";

const AMDSMI_STATUS_SUCCESS = 0;
const AMDSMI_INIT_AMD_GPUS = 2n;
const AMDSMI_PROCESSOR_TYPE_AMD_GPU = 1;
const AMDSMI_MEM_TYPE_VRAM = 0;
const AMDSMI_TEMPERATURE_TYPE_EDGE = 0;
/** MI300-class GPUs have no edge sensor; hotspot (junction) is what they report. */
const AMDSMI_TEMPERATURE_TYPE_HOTSPOT = 1;
const AMDSMI_TEMP_CURRENT = 0;
/** What amdsmi_power_info_t holds in a member the GPU does not support. */
const UNSUPPORTED_U32 = 0xffffffff;
/** Larger than any measured struct (the biggest, board info in 26.x, is 1792 bytes). */
const STRUCT_BUFFER = 4096;

/** Where target_graphics_version sits in amdsmi_asic_info_t, per library line (ABI.md §4). */
export function asicGfxOffset(major: number, minor: number): number | null {
  if (major === 24 && minor >= 7) return 384;
  if (major === 25) return 384;
  if (major === 26) return 800;
  return null;
}

/**
 * Where current_socket_power and average_socket_power (uint32, watts) sit in amdsmi_power_info_t,
 * per library line (ABI.md §4: 24.7 starts with them; 26.x puts a uint64 socket_power first).
 */
export function powerInfoOffsets(major: number, minor: number): { current: number; average: number } | null {
  if (major === 24 && minor >= 7) return { current: 0, average: 4 };
  if (major === 26) return { current: 8, average: 12 };
  return null;
}

/**
 * amdsmi_version_t put `year` first in 24.x and `major` first in 26.x; both name the same
 * first number (24 vs 26), so the first three words read the same way: 24.7.0 or 26.1.0.
 */
export function readLibVersion(buf: Buffer): { major: number; minor: number; text: string } {
  const major = buf.readUInt32LE(0);
  const minor = buf.readUInt32LE(4);
  return { major, minor, text: `${major}.${minor}.${buf.readUInt32LE(8)}` };
}

/** Run the AMD SMI probe. */
export function probeAmdSmi(ctx: ProbeContext) {
  const { result, finish } = startResult("amd-smi", ctx.library);
  const lib = new VendorLibrary(ctx.library, AMD_SMI_SYMBOLS, ctx.track);
  const statusString = lib.fn("amdsmi_status_code_to_string");
  const describe = (rc: number): string => {
    const out = Buffer.alloc(8);
    if (statusString?.(rc, out) === AMDSMI_STATUS_SUCCESS)
      return decodeCString(pointerAt(out)) ?? `status ${rc}`;
    return `status ${rc}`;
  };

  const rc = lib.need("amdsmi_init")(AMDSMI_INIT_AMD_GPUS) as number;
  if (rc !== AMDSMI_STATUS_SUCCESS) {
    if (!ctx.amdDriverLoaded) {
      return finish(
        "no-devices",
        `amdsmi_init: ${describe(rc)} (${rc}); the amdgpu kernel driver is not loaded`,
      );
    }
    return finish(
      "error",
      `amdsmi_init: ${describe(rc)} (${rc})`,
      "check that /dev/dri and /dev/kfd are accessible",
    );
  }
  try {
    const versionBuf = Buffer.alloc(64);
    let gfxOffset: number | null = null;
    let powerOffsets: { current: number; average: number } | null = null;
    if (lib.fn("amdsmi_get_lib_version")?.(versionBuf) === AMDSMI_STATUS_SUCCESS) {
      const v = readLibVersion(versionBuf);
      result.version = v.text;
      gfxOffset = asicGfxOffset(v.major, v.minor);
      powerOffsets = powerInfoOffsets(v.major, v.minor);
    }
    const notes: string[] = [];
    const handles = listGpuHandles(lib, (text) => notes.push(text));
    if (handles === null) return finish("error", "amdsmi_get_socket_handles failed");
    if (handles.length === 0) return finish("no-devices", withNotes("AMD SMI found no AMD GPU", notes));

    const asicInfo = lib.fn("amdsmi_get_gpu_asic_info");
    const driverInfo = lib.fn("amdsmi_get_gpu_driver_info");
    const memTotal = lib.fn("amdsmi_get_gpu_memory_total");
    const memUsage = lib.fn("amdsmi_get_gpu_memory_usage");
    const bdfId = lib.fn("amdsmi_get_gpu_bdf_id");
    const uuidFn = lib.fn("amdsmi_get_gpu_device_uuid");
    const numa = lib.fn("amdsmi_topo_get_numa_node_number");
    const activity = lib.fn("amdsmi_get_gpu_activity");
    const temp = lib.fn("amdsmi_get_temp_metric");
    const powerInfo = powerOffsets ? lib.fn("amdsmi_get_power_info") : null;
    const u64Out = (fn: NativeFn | null, ...args: unknown[]): bigint | null => {
      if (!fn) return null;
      const buf = Buffer.alloc(8);
      return fn(...args, buf) === AMDSMI_STATUS_SUCCESS ? buf.readBigUInt64LE(0) : null;
    };

    /** gfx_activity (percent) at offset 0 of amdsmi_engine_usage_t. */
    const busy = (handle: bigint): number | null => {
      const buf = Buffer.alloc(STRUCT_BUFFER);
      if (activity?.(handle, buf) !== AMDSMI_STATUS_SUCCESS) return null;
      const percent = buf.readUInt32LE(0);
      return percent <= 100 ? percent : null;
    };
    /** Degrees Celsius (int64): edge sensor, else hotspot. */
    const celsius = (handle: bigint): number | null => {
      const t =
        u64Out(temp, handle, AMDSMI_TEMPERATURE_TYPE_EDGE, AMDSMI_TEMP_CURRENT) ??
        u64Out(temp, handle, AMDSMI_TEMPERATURE_TYPE_HOTSPOT, AMDSMI_TEMP_CURRENT);
      return t === null ? null : Number(BigInt.asIntN(64, t));
    };
    /** Watts: current socket power (MI300 on), else the average (older GPUs). */
    const watts = (handle: bigint): number | null => {
      const buf = Buffer.alloc(STRUCT_BUFFER);
      if (!powerOffsets || powerInfo?.(handle, buf) !== AMDSMI_STATUS_SUCCESS) return null;
      const current = buf.readUInt32LE(powerOffsets.current);
      if (current !== UNSUPPORTED_U32 && current !== 0) return current;
      const average = buf.readUInt32LE(powerOffsets.average);
      return average !== UNSUPPORTED_U32 ? average : null;
    };

    /** A UUID of another shape (`0`, `1,2`) is left unknown, as NVML's is (nvml-device.ts). */
    const believeUuid = (i: number, text: string): string | null => {
      if (!text || isAmdUuid(text)) return text || null;
      notes.push(
        `GPU ${i}: amdsmi_get_gpu_device_uuid answered "${displayText(text, 60)}", which is no UUID: left unknown`,
      );
      return null;
    };

    handles.forEach((handle, i) => {
      const asic = Buffer.alloc(STRUCT_BUFFER);
      const hasAsic = asicInfo?.(handle, asic) === AMDSMI_STATUS_SUCCESS;
      if (i === 0) {
        const drv = Buffer.alloc(STRUCT_BUFFER);
        if (driverInfo?.(handle, drv) === AMDSMI_STATUS_SUCCESS)
          result.driverVersion = cString(drv, 0, 64) || null;
      }
      const mem = believeMemory(
        {
          total: u64Out(memTotal, handle, AMDSMI_MEM_TYPE_VRAM),
          used: u64Out(memUsage, handle, AMDSMI_MEM_TYPE_VRAM),
        },
        `GPU ${i}`,
        (n) => notes.push(n),
      );
      const bdf = u64Out(bdfId, handle);
      const len = [64];
      const uuidBuf = Buffer.alloc(64);
      const numaOut = [0];
      const gpu: RawGpu = {
        index: i,
        name: (hasAsic && cString(asic, 0, 64)) || "AMD GPU",
        uuid:
          uuidFn?.(handle, len, uuidBuf) === AMDSMI_STATUS_SUCCESS ? believeUuid(i, cString(uuidBuf)) : null,
        pciBusId: bdf === null ? null : formatBdfId(bdf),
        memoryBytes: mem.total,
        usedMemoryBytes: mem.used,
        // believeMemory keeps used only where it is at most the total.
        freeMemoryBytes: mem.total !== null && mem.used !== null ? mem.total - mem.used : null,
        computeCapability:
          hasAsic && gfxOffset !== null ? gfxTargetFromVersion(asic.readBigUInt64LE(gfxOffset)) : null,
        numaNode: numa?.(handle, numaOut) === AMDSMI_STATUS_SUCCESS ? numaOut[0]! : null,
        utilizationPercent: busy(handle),
        temperatureC: celsius(handle),
        powerWatts: watts(handle),
      };
      result.gpus.push(gpu);
    });
    const found = `${countGpus(result.gpus.length)}, AMD SMI ${result.version ?? "unknown version"}`;
    return finish("ok", withNotes(found, notes));
  } finally {
    // Shut down after the answer is out: a hang there must not cost the result.
    const shutDown = lib.fn("amdsmi_shut_down");
    if (shutDown) ctx.defer(() => shutDown());
  }
}

/**
 * Sockets, then each socket's processors (count-then-fill), keeping the AMD GPUs. Each count is
 * believed up to MAX_DEVICES (the buffer is sized by it), and a fill may not answer more than it
 * was given room for; `note` says where a library claimed more.
 */
function listGpuHandles(
  lib: VendorLibrary<typeof AMD_SMI_SYMBOLS>,
  note: (text: string) => void,
): bigint[] | null {
  const getSockets = lib.need("amdsmi_get_socket_handles");
  const getProcessors = lib.need("amdsmi_get_processor_handles");
  const getType = lib.fn("amdsmi_get_processor_type");
  const socketCount = [0];
  if (getSockets(socketCount, null) !== AMDSMI_STATUS_SUCCESS) return null;
  const claimedSockets = believeCount("amdsmi_get_socket_handles", socketCount[0]!);
  if (claimedSockets.note) note(claimedSockets.note);
  const room = Math.max(1, claimedSockets.count);
  const sockets = Buffer.alloc(8 * room);
  socketCount[0] = room;
  if (getSockets(socketCount, sockets) !== AMDSMI_STATUS_SUCCESS) return null;
  const gpus: bigint[] = [];
  for (let s = 0; s < Math.min(socketCount[0]!, room) && gpus.length < MAX_DEVICES; s++) {
    const socket = pointerAt(sockets, s * 8);
    const n = [0];
    if (getProcessors(socket, n, null) !== AMDSMI_STATUS_SUCCESS || n[0] === 0) continue;
    const claimed = believeCount("amdsmi_get_processor_handles", n[0]!, MAX_DEVICES - gpus.length);
    if (claimed.note) note(claimed.note);
    if (claimed.count === 0) continue;
    const list = Buffer.alloc(8 * claimed.count);
    n[0] = claimed.count;
    if (getProcessors(socket, n, list) !== AMDSMI_STATUS_SUCCESS) continue;
    for (let p = 0; p < Math.min(n[0]!, claimed.count); p++) {
      const handle = pointerAt(list, p * 8);
      const type = [AMDSMI_PROCESSOR_TYPE_AMD_GPU];
      if (
        getType &&
        getType(handle, type) === AMDSMI_STATUS_SUCCESS &&
        type[0] !== AMDSMI_PROCESSOR_TYPE_AMD_GPU
      )
        continue;
      gpus.push(handle);
    }
  }
  return gpus;
}
