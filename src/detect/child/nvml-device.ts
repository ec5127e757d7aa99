/**
 * NVML per-device reads. Each symbol is bound once; a symbol the driver lacks is null and
 * skipped, and any error from an optional query (NOT_SUPPORTED above all) leaves the field null.
 */
import { normalizePciBusId } from "../pci.js";
import type { RawGpu, RawMigDevice } from "../probe-types.js";
import { cpuMaskToList, cString, type NativeFn, u64, type VendorLibrary } from "./ffi.js";
import {
  ARCHITECTURES,
  BRANDS,
  CPU_SET_WORDS,
  NVML_DEVICE_MIG_ENABLE,
  NVML_ERROR_INSUFFICIENT_SIZE,
  NVML_ERROR_NOT_FOUND,
  NVML_MEMORY_V2,
  NVML_SUCCESS,
} from "./nvml-codes.js";

export interface StringReaders {
  system(symbol: string, size: number): string | null;
  device(fn: NativeFn | null, handle: bigint, size: number): string | null;
}

/**
 * String getters, retried with a larger buffer on NVML_ERROR_INSUFFICIENT_SIZE: buffer sizes
 * grew across releases (names from 64 to 96 bytes), so the documented size is only a start.
 */
export function stringReaders(lib: VendorLibrary): StringReaders {
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
    system(symbol, size) {
      const fn = lib.optional(`int ${symbol}(_Out_ char *version, unsigned int length)`);
      return fn ? call((buf, n) => fn(buf, n) as number, size) : null;
    },
    device(fn, handle, size) {
      return fn ? call((buf, n) => fn(handle, buf, n) as number, size) : null;
    },
  };
}

/** Per-device queries, each bound once; missing symbols are null and simply skipped. */
export function deviceReaders(lib: VendorLibrary, strings: StringReaders) {
  const getName = lib.optional("int nvmlDeviceGetName(void *device, _Out_ char *name, unsigned int length)");
  const getUuid = lib.optional("int nvmlDeviceGetUUID(void *device, _Out_ char *uuid, unsigned int length)");
  const getSerial = lib.optional(
    "int nvmlDeviceGetSerial(void *device, _Out_ char *serial, unsigned int length)",
  );
  const getPci = lib.optional("int nvmlDeviceGetPciInfo_v3(void *device, void *pci)");
  const getMemV2 = lib.optional("int nvmlDeviceGetMemoryInfo_v2(void *device, void *memory)");
  const getMemV1 = lib.optional("int nvmlDeviceGetMemoryInfo(void *device, void *memory)");
  const getCc = lib.optional(
    "int nvmlDeviceGetCudaComputeCapability(void *device, _Out_ int *major, _Out_ int *minor)",
  );
  const getArch = lib.optional("int nvmlDeviceGetArchitecture(void *device, _Out_ uint32_t *arch)");
  const getBrand = lib.optional("int nvmlDeviceGetBrand(void *device, _Out_ uint32_t *type)");
  const getPower = lib.optional("int nvmlDeviceGetPowerUsage(void *device, _Out_ unsigned int *power)");
  const getTemp = lib.optional(
    "int nvmlDeviceGetTemperature(void *device, int sensorType, _Out_ unsigned int *temp)",
  );
  const getUtil = lib.optional("int nvmlDeviceGetUtilizationRates(void *device, void *utilization)");
  const getAffinity = lib.optional(
    "int nvmlDeviceGetCpuAffinity(void *device, unsigned int cpuSetSize, void *cpuSet)",
  );
  const getNuma = lib.optional("int nvmlDeviceGetNumaNodeId(void *device, _Out_ unsigned int *node)");
  const getMigMode = lib.optional(
    "int nvmlDeviceGetMigMode(void *device, _Out_ unsigned int *currentMode, _Out_ unsigned int *pendingMode)",
  );
  const getMaxMig = lib.optional(
    "int nvmlDeviceGetMaxMigDeviceCount(void *device, _Out_ unsigned int *count)",
  );
  const getMigHandle = lib.optional(
    "int nvmlDeviceGetMigDeviceHandleByIndex(void *device, unsigned int index, void *migDevice)",
  );
  const getGi = lib.optional("int nvmlDeviceGetGpuInstanceId(void *device, _Out_ unsigned int *id)");
  const getCi = lib.optional("int nvmlDeviceGetComputeInstanceId(void *device, _Out_ unsigned int *id)");

  /** A scalar out-parameter query; null on any error (NOT_SUPPORTED included). */
  const scalar = (fn: NativeFn | null, ...args: unknown[]): number | null => {
    if (!fn) return null;
    const out = [0];
    return fn(...args, out) === NVML_SUCCESS ? out[0]! : null;
  };

  const memory = (handle: bigint) => {
    // v2 needs its version field set, or NVML answers ARGUMENT_VERSION_MISMATCH; v2 also
    // reports "used" without the driver's reserved memory, which is what a plan can use.
    if (getMemV2) {
      const buf = Buffer.alloc(40);
      buf.writeUInt32LE(NVML_MEMORY_V2, 0);
      if (getMemV2(handle, buf) === NVML_SUCCESS)
        return { total: u64(buf, 8), free: u64(buf, 24), used: u64(buf, 32) };
    }
    if (getMemV1) {
      const buf = Buffer.alloc(24);
      if (getMemV1(handle, buf) === NVML_SUCCESS)
        return { total: u64(buf, 0), free: u64(buf, 8), used: u64(buf, 16) };
    }
    return null;
  };

  const migDevices = (handle: bigint): RawMigDevice[] => {
    const max = scalar(getMaxMig, handle);
    if (!max || !getMigHandle) return [];
    const list: RawMigDevice[] = [];
    for (let k = 0; k < max; k++) {
      const out = Buffer.alloc(8);
      const rc = getMigHandle(handle, k, out) as number;
      if (rc === NVML_ERROR_NOT_FOUND || rc !== NVML_SUCCESS) continue;
      const mig = out.readBigUInt64LE(0);
      const mem = memory(mig);
      list.push({
        index: k,
        name: strings.device(getName, mig, 96) ?? "MIG device",
        uuid: strings.device(getUuid, mig, 96) ?? "",
        memoryBytes: mem?.total ?? null,
        freeMemoryBytes: mem?.free ?? null,
        usedMemoryBytes: mem?.used ?? null,
        gpuInstanceId: scalar(getGi, mig),
        computeInstanceId: scalar(getCi, mig),
      });
    }
    return list;
  };

  return {
    read(index: number, handle: bigint): RawGpu {
      const mem = memory(handle);
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
        if (getCc(handle, major, minor) === NVML_SUCCESS) computeCapability = `${major[0]}.${minor[0]}`;
      }
      const arch = scalar(getArch, handle);
      const brand = scalar(getBrand, handle);
      const powerMw = scalar(getPower, handle);
      let utilization: number | null = null;
      if (getUtil) {
        const buf = Buffer.alloc(8);
        if (getUtil(handle, buf) === NVML_SUCCESS) utilization = buf.readUInt32LE(0);
      }
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
        name: strings.device(getName, handle, 96) ?? "NVIDIA GPU",
        uuid: strings.device(getUuid, handle, 96),
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
        temperatureC: scalar(getTemp, handle, 0),
        utilizationPercent: utilization,
        migEnabled: migMode,
      };
      if (migMode) gpu.migDevices = migDevices(handle);
      return gpu;
    },
  };
}
