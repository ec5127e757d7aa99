/**
 * AMD probe through the HIP runtime (libamdhip64.so): mainly for HIP's own device order,
 * which HIP_VISIBLE_DEVICES indexes (ABI.md §5). hipGetDevicePropertiesR0600 exists from
 * HIP 6.0 only; older releases have a different hipDeviceProp_t, so the gfx target is read
 * only through the R0600 layout and skipped otherwise.
 */
import { believeMemory } from "../believe-memory.js";
import { gfxTargetFromArchName } from "../gfx.js";
import { normalizePciBusId } from "../pci.js";
import type { RawGpu } from "../probe-types.js";
import { believeCount, countGpus, type ProbeContext, startResult, withNotes } from "./context.js";
import { cString, decodeCString, VendorLibrary } from "./ffi.js";
import { HIP_SYMBOLS } from "./symbols/hip.js";

const HIP_SUCCESS = 0;
const HIP_ERROR_NO_DEVICE = 100;
const HIP_ERROR_INVALID_DEVICE = 101;
const HIP_ERROR_INSUFFICIENT_DRIVER = 35;
const PROPS_R0600_SIZE = 1472;
const GCN_ARCH_NAME_OFFSET = 1160;

/** Run the HIP probe. */
export function probeHip(ctx: ProbeContext) {
  const { result, finish } = startResult("hip", ctx.library);
  const lib = new VendorLibrary(ctx.library, HIP_SYMBOLS, ctx.track);
  const errorString = lib.fn("hipGetErrorString");
  const describe = (rc: number) => (errorString && decodeCString(errorString(rc))) || `error ${rc}`;

  const version = [0];
  if (lib.fn("hipRuntimeGetVersion")?.(version) === HIP_SUCCESS) {
    // MAJOR*10000000 + MINOR*100000 + PATCH (clr source, ABI.md §5).
    const v = version[0]!;
    result.version = `${Math.floor(v / 10_000_000)}.${Math.floor((v % 10_000_000) / 100_000)}.${v % 100_000}`;
  }
  const rc = lib.need("hipInit")(0) as number;
  const noDriver = !ctx.amdDriverLoaded && " (the amdgpu kernel driver is not loaded)";
  if (rc === HIP_ERROR_NO_DEVICE || (rc !== HIP_SUCCESS && !ctx.amdDriverLoaded)) {
    return finish("no-devices", `hipInit: ${describe(rc)} (${rc})${noDriver || ""}`);
  }
  if (rc !== HIP_SUCCESS) {
    const hint =
      rc === HIP_ERROR_INSUFFICIENT_DRIVER
        ? "the amdgpu driver is older than this HIP runtime needs"
        : "check that /dev/kfd is accessible (user in the render group)";
    return finish("error", `hipInit: ${describe(rc)} (${rc})`, hint);
  }
  const count = [0];
  const crc = lib.need("hipGetDeviceCount")(count) as number;
  if (
    crc === HIP_ERROR_NO_DEVICE ||
    crc === HIP_ERROR_INVALID_DEVICE ||
    (crc === HIP_SUCCESS && count[0] === 0)
  ) {
    return finish(
      "no-devices",
      crc === HIP_SUCCESS ? "HIP found no device" : `hipGetDeviceCount: ${describe(crc)}`,
    );
  }
  if (crc !== HIP_SUCCESS) return finish("error", `hipGetDeviceCount: ${describe(crc)} (${crc})`);
  const claimed = believeCount("hipGetDeviceCount", count[0]!);
  if (claimed.error) return finish("error", claimed.error);

  const getName = lib.fn("hipDeviceGetName");
  const totalMem = lib.fn("hipDeviceTotalMem");
  const getBusId = lib.fn("hipDeviceGetPCIBusId");
  const getProps = lib.fn("hipGetDevicePropertiesR0600");
  const notes: string[] = claimed.note ? [claimed.note] : [];
  for (let i = 0; i < claimed.count; i++) {
    const name = Buffer.alloc(256);
    const mem = Buffer.alloc(8);
    const bus = Buffer.alloc(64);
    let arch: string | null = null;
    if (getProps) {
      const props = Buffer.alloc(PROPS_R0600_SIZE);
      if (getProps(props, i) === HIP_SUCCESS)
        arch = gfxTargetFromArchName(cString(props, GCN_ARCH_NAME_OFFSET, 256));
    }
    const gpu: RawGpu = {
      index: i,
      name: getName?.(name, 256, i) === HIP_SUCCESS ? cString(name) : "AMD GPU",
      uuid: null,
      pciBusId: getBusId?.(bus, 64, i) === HIP_SUCCESS ? normalizePciBusId(cString(bus)) : null,
      memoryBytes:
        totalMem?.(mem, i) === HIP_SUCCESS
          ? believeMemory({ total: mem.readBigUInt64LE(0) }, `device ${i}`, (n) => notes.push(n)).total
          : null,
      computeCapability: arch,
    };
    result.gpus.push(gpu);
  }
  return finish("ok", withNotes(`${countGpus(result.gpus.length)} in HIP order`, notes));
}
