/**
 * NVML per-device reads. Each symbol is bound once; a symbol the driver lacks is null and
 * skipped, and any error from an optional query (NOT_SUPPORTED above all) leaves the field null.
 */

import { displayText } from "../../text/safe-text.js";
import { believeMemory, believeProcessBytes } from "../believe-memory.js";
import { normalizePciBusId } from "../pci.js";
import { type RawGpu, type RawMigDevice, type RawProcess, UNNAMED_NVIDIA_GPU } from "../probe-types.js";
import { isNvidiaUuid } from "../uuid.js";
import { believeCount, formatComputeCapability } from "./context.js";
import { cpuMaskToList, cString, type NativeFn, type VendorLibrary } from "./ffi.js";
import {
  ARCHITECTURES,
  BRANDS,
  CPU_SET_WORDS,
  MAX_PROCESSES,
  NVML_DEVICE_MIG_ENABLE,
  NVML_ERROR_INSUFFICIENT_SIZE,
  NVML_MEMORY_V2,
  NVML_SUCCESS,
  NVML_TEMPERATURE_GPU,
  NVML_TEMPERATURE_V1,
  NVML_VALUE_NOT_AVAILABLE,
  PROCESS_INFO_SIZE,
} from "./nvml-codes.js";
import type { NVML_SYMBOLS } from "./symbols/nvml.js";

type Nvml = VendorLibrary<typeof NVML_SYMBOLS>;

export interface StringReaders {
  system(fn: NativeFn | null, size: number): string | null;
  device(fn: NativeFn | null, handle: bigint, size: number): string | null;
}

/**
 * String getters, retried with a larger buffer on NVML_ERROR_INSUFFICIENT_SIZE: buffer sizes
 * grew across releases (names from 64 to 96 bytes), so the documented size is only a start.
 */
export function stringReaders(): StringReaders {
  const call = (invoke: (buf: Buffer, size: number) => number, size: number): string | null => {
    for (let n = size; n <= 4096; n *= 2) {
      const buf = Buffer.alloc(n);
      const rc = invoke(buf, n);
      if (rc === NVML_SUCCESS) return cString(buf) || null;
      if (rc !== NVML_ERROR_INSUFFICIENT_SIZE) return null;
    }
    return null;
  };
  return {
    system(fn, size) {
      return fn ? call((buf, n) => fn(buf, n) as number, size) : null;
    },
    device(fn, handle, size) {
      return fn ? call((buf, n) => fn(handle, buf, n) as number, size) : null;
    },
  };
}

/**
 * A100 and H100 have seven compute slices, so at most seven MIG devices; a count above this is a
 * broken library, not a GPU.
 */
const MAX_MIG_DEVICES = 64;

/**
 * Per-device queries, each bound once; missing symbols are null and simply skipped. `note` takes
 * what the probe's message should say about an answer not believed.
 */
export function deviceReaders(lib: Nvml, strings: StringReaders, note: (text: string) => void) {
  const getName = lib.fn("nvmlDeviceGetName");
  const getUuid = lib.fn("nvmlDeviceGetUUID");
  const getSerial = lib.fn("nvmlDeviceGetSerial");
  const getPci = lib.fn("nvmlDeviceGetPciInfo_v3");
  const getMemV2 = lib.fn("nvmlDeviceGetMemoryInfo_v2");
  const getMemV1 = lib.fn("nvmlDeviceGetMemoryInfo");
  const getCc = lib.fn("nvmlDeviceGetCudaComputeCapability");
  const getArch = lib.fn("nvmlDeviceGetArchitecture");
  const getBrand = lib.fn("nvmlDeviceGetBrand");
  const getPower = lib.fn("nvmlDeviceGetPowerUsage");
  const getTempV = lib.fn("nvmlDeviceGetTemperatureV");
  const getTemp = lib.fn("nvmlDeviceGetTemperature");
  const getUtil = lib.fn("nvmlDeviceGetUtilizationRates");
  const getProcesses = lib.fn("nvmlDeviceGetComputeRunningProcesses_v3");
  const getAffinity = lib.fn("nvmlDeviceGetCpuAffinity");
  const getNuma = lib.fn("nvmlDeviceGetNumaNodeId");
  const getMigMode = lib.fn("nvmlDeviceGetMigMode");
  const getMaxMig = lib.fn("nvmlDeviceGetMaxMigDeviceCount");
  const getMigHandle = lib.fn("nvmlDeviceGetMigDeviceHandleByIndex");
  const getGi = lib.fn("nvmlDeviceGetGpuInstanceId");
  const getCi = lib.fn("nvmlDeviceGetComputeInstanceId");

  /** A scalar out-parameter query; null on any error (NOT_SUPPORTED included). */
  const scalar = (fn: NativeFn | null, ...args: unknown[]): number | null => {
    if (!fn) return null;
    const out = [0];
    return fn(...args, out) === NVML_SUCCESS ? out[0]! : null;
  };

  /**
   * The device's UUID where it has the shape of one; null (and a note) otherwise, so that the
   * CUDA probe is asked for it and no CUDA_VISIBLE_DEVICES is made of what a broken library said.
   */
  const uuid = (device: string, handle: bigint, kind: "GPU" | "MIG"): string | null => {
    const text = strings.device(getUuid, handle, 96);
    if (text === null || isNvidiaUuid(text, kind)) return text;
    note(
      `${device}: nvmlDeviceGetUUID answered "${displayText(text, 60)}", which is no ${kind} UUID: left unknown`,
    );
    return null;
  };

  /** Total, free and used bytes, each null where NVML does not say or is not believed. */
  const memory = (device: string, handle: bigint) => {
    const read = (buf: Buffer, total: number, free: number, used: number) =>
      believeMemory(
        {
          total: buf.readBigUInt64LE(total),
          free: buf.readBigUInt64LE(free),
          used: buf.readBigUInt64LE(used),
        },
        device,
        note,
      );
    // v2 needs its version field set, or NVML answers ARGUMENT_VERSION_MISMATCH; v2 also
    // reports "used" without the driver's reserved memory, which is what a plan can use.
    if (getMemV2) {
      const buf = Buffer.alloc(40);
      buf.writeUInt32LE(NVML_MEMORY_V2, 0);
      if (getMemV2(handle, buf) === NVML_SUCCESS) return read(buf, 8, 24, 32);
    }
    if (getMemV1) {
      const buf = Buffer.alloc(24);
      if (getMemV1(handle, buf) === NVML_SUCCESS) return read(buf, 0, 8, 16);
    }
    return null;
  };

  /** GPU temperature: the versioned call where the driver has it (12.9 headers on), else the old one. */
  const temperature = (handle: bigint): number | null => {
    if (getTempV) {
      // nvmlTemperature_v1_t: version@0, sensorType@4, temperature@8 (int).
      const buf = Buffer.alloc(12);
      buf.writeUInt32LE(NVML_TEMPERATURE_V1, 0);
      buf.writeUInt32LE(NVML_TEMPERATURE_GPU, 4);
      if (getTempV(handle, buf) === NVML_SUCCESS) return buf.readInt32LE(8);
    }
    return scalar(getTemp, handle, NVML_TEMPERATURE_GPU);
  };

  const utilization = (handle: bigint): number | null => {
    if (!getUtil) return null;
    // nvmlUtilization_t: gpu@0, memory@4 (the memory controller's busy time, not memory used).
    const buf = Buffer.alloc(8);
    return getUtil(handle, buf) === NVML_SUCCESS ? buf.readUInt32LE(0) : null;
  };

  /**
   * Compute processes: size with *infoCount = 0 (INSUFFICIENT_SIZE, or SUCCESS when there are
   * none), then fill with some headroom, since processes may start between the two calls.
   */
  const processes = (handle: bigint): RawProcess[] | null => {
    if (!getProcesses) return null;
    let capacity = 0;
    for (let attempt = 0; attempt < 4; attempt++) {
      const count = [capacity];
      const buf = capacity ? Buffer.alloc(capacity * PROCESS_INFO_SIZE) : null;
      const rc = getProcesses(handle, count, buf) as number;
      if (rc === NVML_SUCCESS) return buf ? decodeProcesses(buf, Math.min(count[0]!, capacity)) : [];
      if (rc !== NVML_ERROR_INSUFFICIENT_SIZE || count[0]! > MAX_PROCESSES) return null;
      capacity = count[0]! + 8;
    }
    return null;
  };

  const migDevices = (index: number, handle: bigint): RawMigDevice[] => {
    const max = believeCount(
      "nvmlDeviceGetMaxMigDeviceCount",
      scalar(getMaxMig, handle) ?? 0,
      MAX_MIG_DEVICES,
    );
    if (max.note) note(`GPU ${index}: ${max.note}`);
    if (!max.count || !getMigHandle) return [];
    const list: RawMigDevice[] = [];
    for (let k = 0; k < max.count; k++) {
      const out = Buffer.alloc(8);
      if (getMigHandle(handle, k, out) !== NVML_SUCCESS) continue;
      const mig = out.readBigUInt64LE(0);
      const mem = memory(`GPU ${index} MIG device ${k}`, mig);
      list.push({
        index: k,
        name: strings.device(getName, mig, 96) ?? "MIG device",
        uuid: uuid(`GPU ${index} MIG device ${k}`, mig, "MIG") ?? "",
        memoryBytes: mem?.total ?? null,
        freeMemoryBytes: mem?.free ?? null,
        usedMemoryBytes: mem?.used ?? null,
        gpuInstanceId: scalar(getGi, mig),
        computeInstanceId: scalar(getCi, mig),
        // Per instance: on the parent, NVML answers in MIG mode only to privileged callers.
        processes: processes(mig),
      });
    }
    return list;
  };

  return {
    read(index: number, handle: bigint): RawGpu {
      const mem = memory(`GPU ${index}`, handle);
      let pciBusId: string | null = null;
      if (getPci) {
        const pci = Buffer.alloc(68);
        if (getPci(handle, pci) === NVML_SUCCESS) {
          // busId@36(32) is the 8-digit-domain form; busIdLegacy@0(16) the old one.
          pciBusId = normalizePciBusId(cString(pci, 36, 32)) ?? normalizePciBusId(cString(pci, 0, 16));
        }
      }
      let computeCapability: string | null = null;
      if (getCc) {
        const major = [0];
        const minor = [0];
        if (getCc(handle, major, minor) === NVML_SUCCESS)
          computeCapability = formatComputeCapability(major[0]!, minor[0]!);
      }
      const arch = scalar(getArch, handle);
      const brand = scalar(getBrand, handle);
      const powerMw = scalar(getPower, handle);
      let cpuAffinity: number[] | null = null;
      if (getAffinity) {
        const buf = Buffer.alloc(CPU_SET_WORDS * 8);
        if (getAffinity(handle, CPU_SET_WORDS, buf) === NVML_SUCCESS)
          cpuAffinity = cpuMaskToList(buf, CPU_SET_WORDS);
      }
      const migMode = (() => {
        if (!getMigMode) return null;
        const current = [0];
        const pending = [0];
        return getMigMode(handle, current, pending) === NVML_SUCCESS
          ? current[0] === NVML_DEVICE_MIG_ENABLE
          : null;
      })();
      const gpu: RawGpu = {
        index,
        name: strings.device(getName, handle, 96) ?? UNNAMED_NVIDIA_GPU,
        uuid: uuid(`GPU ${index}`, handle, "GPU"),
        pciBusId,
        memoryBytes: mem?.total ?? null,
        freeMemoryBytes: mem?.free ?? null,
        usedMemoryBytes: mem?.used ?? null,
        computeCapability,
        architecture: arch === null ? null : (ARCHITECTURES[arch] ?? null),
        brand: brand === null ? null : (BRANDS[brand] ?? null),
        serial: strings.device(getSerial, handle, 32),
        numaNode: scalar(getNuma, handle),
        cpuAffinity,
        powerWatts: powerMw === null ? null : powerMw / 1000,
        temperatureC: temperature(handle),
        utilizationPercent: utilization(handle),
        migEnabled: migMode,
        processes: processes(handle),
      };
      if (migMode) {
        gpu.migDevices = migDevices(index, handle);
        // An unprivileged caller gets no aggregate list for a MIG-enabled GPU: its instances' lists add up to it.
        if (gpu.processes === null && gpu.migDevices.length && gpu.migDevices.every((m) => m.processes))
          gpu.processes = gpu.migDevices.flatMap((m) => m.processes!);
      }
      return gpu;
    },
  };
}

/** nvmlProcessInfo_t (24 bytes): pid@0, usedGpuMemory@8, gpuInstanceId@16, computeInstanceId@20. */
function decodeProcesses(buf: Buffer, count: number): RawProcess[] {
  const list: RawProcess[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * PROCESS_INFO_SIZE;
    const used = buf.readBigUInt64LE(at + 8);
    const gi = buf.readUInt32LE(at + 16);
    const ci = buf.readUInt32LE(at + 20);
    list.push({
      pid: buf.readUInt32LE(at),
      usedMemoryBytes: used === NVML_VALUE_NOT_AVAILABLE ? null : believeProcessBytes(used),
      // 0xFFFFFFFF: not in a MIG instance.
      gpuInstanceId: gi === 0xffffffff ? null : gi,
      computeInstanceId: ci === 0xffffffff ? null : ci,
    });
  }
  return list;
}
