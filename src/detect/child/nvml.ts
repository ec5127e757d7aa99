/**
 * NVIDIA probe through NVML (libnvidia-ml.so.1). Symbols and layouts follow ABI.md §1: the
 * library exports versioned names (nvmlInit_v2, …_v2, nvmlDeviceGetPciInfo_v3), and every
 * per-device query beyond handle and name is optional — drivers lack some and answer
 * NVML_ERROR_NOT_SUPPORTED for others (power on GeForce, NUMA off Grace), which we skip.
 */

import { nowMs } from "../clock.js";
import { normalizePciBusId } from "../pci.js";
import type { RawGpu, RawMigDevice } from "../probe-types.js";
import { countGpus, type ProbeContext, startResult } from "./context.js";
import { cpuMaskToList, cString, type NativeFn, u64, VendorLibrary } from "./ffi.js";

const NVML_SUCCESS = 0;
const NVML_ERROR_NOT_FOUND = 6;
const NVML_ERROR_INSUFFICIENT_SIZE = 7;
const NVML_DEVICE_MIG_ENABLE = 1;
/** nvmlMemory_v2 = sizeof(nvmlMemory_v2_t) | 2 << 24 (ABI.md §1). */
const NVML_MEMORY_V2 = 0x02000028;
/** 1024 CPUs; cpuSet is an array of unsigned long, 64 CPUs each. */
const CPU_SET_WORDS = 16;

const ARCHITECTURES: Record<number, string> = {
  2: "Kepler",
  3: "Maxwell",
  4: "Pascal",
  5: "Volta",
  6: "Turing",
  7: "Ampere",
  8: "Ada",
  9: "Hopper",
  10: "Blackwell",
  13: "Rubin",
};
const BRANDS: Record<number, string> = {
  1: "Quadro",
  2: "Tesla",
  3: "NVS",
  4: "GRID",
  5: "GeForce",
  6: "Titan",
  7: "NVIDIA vApps",
  8: "NVIDIA VPC",
  9: "NVIDIA VCS",
  10: "NVIDIA VWS",
  11: "NVIDIA Cloud Gaming",
  12: "Quadro RTX",
  13: "NVIDIA RTX",
  14: "NVIDIA",
  15: "GeForce RTX",
  16: "Titan RTX",
};

/** Hints for the init errors people actually meet (codes from ABI.md §1). */
const INIT_HINTS: Record<number, string> = {
  4: "no permission to open /dev/nvidia*: check the device files' group, or the container's device mounts",
  9: "the NVIDIA kernel driver is not loaded: check `lsmod | grep nvidia` and `dmesg`, or install the driver",
  12: "NVML could not find the driver's libraries: reinstall the driver or set GPUPLAN_NVML_LIBRARY",
  15: "a GPU fell off the bus: check `dmesg` for Xid errors; the GPU needs a reset or the host a reboot",
  16: "a GPU needs a reset: `nvidia-smi -r` or reboot",
  18: "the NVIDIA kernel module and libnvidia-ml differ in version, usually after a driver upgrade without a reboot: reboot, or reload the nvidia kernel modules",
  999: "check `nvidia-smi` and `dmesg`",
};

/** Run the NVML probe. Never throws for vendor failures: they become the result's status. */
export function probeNvml(ctx: ProbeContext) {
  const { result, finish } = startResult("nvml", ctx.library);
  const lib = new VendorLibrary(ctx.library, ctx.track);
  const errorString = lib.optional("const char *nvmlErrorString(int result)");
  const describe = (rc: number) => (errorString ? String(errorString(rc) ?? `error ${rc}`) : `error ${rc}`);

  const init = lib.firstOf("int nvmlInit_v2(void)", "int nvmlInit(void)");
  if (!init)
    return finish(
      "error",
      "the library exports neither nvmlInit_v2 nor nvmlInit",
      "is this really libnvidia-ml?",
    );
  const initStart = nowMs();
  const rc = init() as number;
  const initMs = nowMs() - initStart;
  if (rc !== NVML_SUCCESS) {
    result.initCode = rc;
    return finish("error", `nvmlInit_v2: ${describe(rc)} (${rc})`, INIT_HINTS[rc]);
  }
  const slowHint =
    initMs > ctx.slowInitMs
      ? `nvmlInit took ${(initMs / 1000).toFixed(1)} s: enable persistence mode (\`sudo nvidia-smi -pm 1\` or the nvidia-persistenced service) so that the driver keeps the GPUs initialized`
      : undefined;
  try {
    const strings = stringReaders(lib);
    result.driverVersion = strings.system("nvmlSystemGetDriverVersion", 80);
    const nvmlVersion = strings.system("nvmlSystemGetNVMLVersion", 80);
    const cudaVersion = readCudaDriverVersion(lib);
    result.version =
      [nvmlVersion && `NVML ${nvmlVersion}`, cudaVersion && `CUDA ${cudaVersion}`]
        .filter(Boolean)
        .join(", ") || null;

    const getCount = lib.firstOf(
      "int nvmlDeviceGetCount_v2(_Out_ unsigned int *deviceCount)",
      "int nvmlDeviceGetCount(_Out_ unsigned int *deviceCount)",
    );
    if (!getCount) return finish("error", "the library exports no nvmlDeviceGetCount_v2");
    const countOut = [0];
    const countRc = getCount(countOut) as number;
    if (countRc !== NVML_SUCCESS) {
      return finish(
        "error",
        `nvmlDeviceGetCount_v2: ${describe(countRc)} (${countRc})`,
        INIT_HINTS[countRc] ?? slowHint,
      );
    }
    const count = countOut[0]!;
    if (count === 0) return finish("no-devices", "NVML found no NVIDIA GPU", slowHint);

    const getHandle = lib.firstOf(
      "int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void *device)",
      "int nvmlDeviceGetHandleByIndex(unsigned int index, void *device)",
    )!;
    const device = deviceReaders(lib, strings);
    const skipped: string[] = [];
    for (let i = 0; i < count; i++) {
      const out = Buffer.alloc(8);
      const hrc = getHandle(i, out) as number;
      if (hrc !== NVML_SUCCESS) {
        skipped.push(`GPU ${i}: nvmlDeviceGetHandleByIndex_v2: ${describe(hrc)}`);
        continue;
      }
      result.gpus.push(device.read(i, out.readBigUInt64LE(0)));
    }
    const found = `${countGpus(result.gpus.length)}, driver ${result.driverVersion ?? "unknown"}`;
    const message = skipped.length ? `${found}; skipped ${skipped.join("; ")}` : found;
    return finish(result.gpus.length ? "ok" : "error", message, slowHint);
  } finally {
    lib.optional("int nvmlShutdown(void)")?.();
  }
}

interface StringReaders {
  system(symbol: string, size: number): string | null;
  device(fn: NativeFn | null, handle: bigint, size: number): string | null;
}

/**
 * String getters, retried with a larger buffer on NVML_ERROR_INSUFFICIENT_SIZE: buffer sizes
 * grew across releases (names from 64 to 96 bytes), so the documented size is only a start.
 */
function stringReaders(lib: VendorLibrary): StringReaders {
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

function readCudaDriverVersion(lib: VendorLibrary): string | null {
  const fn = lib.firstOf(
    "int nvmlSystemGetCudaDriverVersion_v2(_Out_ int *cudaDriverVersion)",
    "int nvmlSystemGetCudaDriverVersion(_Out_ int *cudaDriverVersion)",
  );
  const out = [0];
  if (!fn || fn(out) !== NVML_SUCCESS) return null;
  // 1000 * major + 10 * minor (ABI.md §6.5).
  return `${Math.floor(out[0]! / 1000)}.${Math.floor((out[0]! % 1000) / 10)}`;
}

/** Per-device queries, each bound once; missing symbols are null and simply skipped. */
function deviceReaders(lib: VendorLibrary, strings: StringReaders) {
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
