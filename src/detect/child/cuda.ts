/**
 * NVIDIA probe through the CUDA driver API (libcuda.so.1): the fallback when NVML is missing
 * (containers often mount only libcuda), and the source of CUDA's own enumeration order,
 * which is fastest-first rather than PCI order (ABI.md §2 for symbols and codes).
 */

import { believeMemory } from "../believe-memory.js";
import { normalizePciBusId } from "../pci.js";
import { type RawGpu, UNNAMED_NVIDIA_GPU } from "../probe-types.js";
import { formatNvidiaUuid } from "../uuid.js";
import {
  believeCount,
  countGpus,
  firstFew,
  formatComputeCapability,
  formatCudaVersion,
  type ProbeContext,
  startResult,
  withNotes,
} from "./context.js";
import { cString, decodeCString, VendorLibrary } from "./ffi.js";
import { CUDA_SYMBOLS } from "./symbols/cuda.js";

const CUDA_SUCCESS = 0;
const CUDA_ERROR_NO_DEVICE = 100;
const ATTR_CC_MAJOR = 75;
const ATTR_CC_MINOR = 76;
const ATTR_PCI_BUS = 33;
const ATTR_PCI_DEVICE = 34;
const ATTR_PCI_DOMAIN = 50;

const INIT_HINTS: Record<number, string> = {
  3: "the CUDA driver did not initialize: check `nvidia-smi` and `dmesg`",
  34: "this libcuda.so is the toolkit's stub library, not the driver's: point GPUPLAN_CUDA_LIBRARY at the driver's libcuda.so.1",
  36: "the installed driver is older than this CUDA library needs: update the NVIDIA driver",
  46: "the GPUs are in exclusive or prohibited compute mode, or busy",
  304: "the CUDA driver hit an OS error: check permissions on /dev/nvidia*",
  803: "the NVIDIA kernel module and the user-space driver differ in version: reboot or reload the nvidia kernel modules",
  999: "check `nvidia-smi` and `dmesg`",
};

/** Run the CUDA driver probe. */
export function probeCuda(ctx: ProbeContext) {
  const { result, finish } = startResult("cuda", ctx.library);
  const lib = new VendorLibrary(ctx.library, CUDA_SYMBOLS, ctx.track);
  const errorString = lib.fn("cuGetErrorString");
  const describe = (rc: number): string => {
    const out = Buffer.alloc(8);
    // cuGetErrorString answers INVALID_VALUE and NULL for codes it does not know (ABI.md §2).
    if (errorString && errorString(rc, out) === CUDA_SUCCESS)
      return decodeCString(out.readBigUInt64LE(0)) ?? `error ${rc}`;
    return `error ${rc}`;
  };

  // cuDriverGetVersion needs no cuInit: the version is known even when no GPU answers.
  const version = [0];
  if (lib.fn("cuDriverGetVersion")?.(version) === CUDA_SUCCESS) {
    result.cudaVersion = formatCudaVersion(version[0]!);
    if (result.cudaVersion) result.version = `CUDA ${result.cudaVersion}`;
  }
  const rc = lib.need("cuInit")(0) as number;
  if (rc === CUDA_ERROR_NO_DEVICE) return finish("no-devices", `cuInit: ${describe(rc)}`);
  if (rc !== CUDA_SUCCESS) return finish("error", `cuInit: ${describe(rc)} (${rc})`, INIT_HINTS[rc]);

  const count = [0];
  const crc = lib.need("cuDeviceGetCount")(count) as number;
  if (crc !== CUDA_SUCCESS) return finish("error", `cuDeviceGetCount: ${describe(crc)} (${crc})`);
  const claimed = believeCount("cuDeviceGetCount", count[0]!);
  if (claimed.error) return finish("error", claimed.error);
  if (claimed.count === 0) return finish("no-devices", "CUDA found no device");

  const deviceGet = lib.need("cuDeviceGet");
  const getName = lib.fn("cuDeviceGetName");
  const totalMem = lib.fn("cuDeviceTotalMem_v2");
  const getAttr = lib.fn("cuDeviceGetAttribute");
  const getUuid = lib.first("cuDeviceGetUuid_v2", "cuDeviceGetUuid");
  const getBusId = lib.fn("cuDeviceGetPCIBusId");
  const attr = (dev: number, which: number): number | null => {
    const out = [0];
    return getAttr?.(out, which, dev) === CUDA_SUCCESS ? out[0]! : null;
  };

  const skipped: string[] = [];
  const memoryNotes: string[] = [];
  for (let i = 0; i < claimed.count; i++) {
    const dev = [0];
    const grc = deviceGet(dev, i) as number;
    if (grc !== CUDA_SUCCESS) {
      skipped.push(`device ${i}: cuDeviceGet: ${describe(grc)}`);
      continue;
    }
    const d = dev[0]!;
    const nameBuf = Buffer.alloc(256);
    const name = getName?.(nameBuf, 256, d) === CUDA_SUCCESS ? cString(nameBuf) : UNNAMED_NVIDIA_GPU;
    const mem = Buffer.alloc(8);
    const memoryBytes =
      totalMem?.(mem, d) === CUDA_SUCCESS
        ? believeMemory({ total: mem.readBigUInt64LE(0) }, `device ${i}`, (n) => memoryNotes.push(n)).total
        : null;
    const uuidBuf = Buffer.alloc(16);
    const uuid = getUuid?.(uuidBuf, d) === CUDA_SUCCESS ? formatNvidiaUuid(uuidBuf) : null;
    const busBuf = Buffer.alloc(32);
    let pciBusId = getBusId?.(busBuf, 32, d) === CUDA_SUCCESS ? normalizePciBusId(cString(busBuf)) : null;
    if (!pciBusId) {
      const [domain, bus, device] = [
        attr(d, ATTR_PCI_DOMAIN),
        attr(d, ATTR_PCI_BUS),
        attr(d, ATTR_PCI_DEVICE),
      ];
      if (domain !== null && bus !== null && device !== null) {
        pciBusId = normalizePciBusId(`${domain.toString(16)}:${bus.toString(16)}:${device.toString(16)}.0`);
      }
    }
    const major = attr(d, ATTR_CC_MAJOR);
    const minor = attr(d, ATTR_CC_MINOR);
    const gpu: RawGpu = {
      index: i,
      name,
      uuid,
      pciBusId,
      memoryBytes,
      computeCapability: formatComputeCapability(major, minor),
    };
    result.gpus.push(gpu);
  }
  const found = `${countGpus(result.gpus.length)} in CUDA order`;
  const notes = [
    ...(claimed.note ? [claimed.note] : []),
    ...(skipped.length ? [`skipped ${firstFew(skipped)}`] : []),
    ...memoryNotes,
  ];
  return finish(result.gpus.length ? "ok" : "error", withNotes(found, notes));
}
