/**
 * NVIDIA probe through NVML (libnvidia-ml.so.1). Symbols and layouts follow ABI.md §1: the
 * library exports versioned names (nvmlInit_v2, …_v2, nvmlDeviceGetPciInfo_v3), and every
 * per-device query beyond handle and name is optional — drivers lack some and answer
 * NVML_ERROR_NOT_SUPPORTED for others (power on GeForce, NUMA off Grace), which we skip.
 */
import { nowMs } from "../clock.js";
import {
  believeCount,
  countGpus,
  firstFew,
  formatCudaVersion,
  type ProbeContext,
  startResult,
  withNotes,
} from "./context.js";
import { decodeCString, VendorLibrary } from "./ffi.js";
import { INIT_HINTS, NVML_SUCCESS } from "./nvml-codes.js";
import { deviceReaders, stringReaders } from "./nvml-device.js";
import { NVML_SYMBOLS } from "./symbols/nvml.js";

/** Run the NVML probe. Never throws for vendor failures: they become the result's status. */
export function probeNvml(ctx: ProbeContext) {
  const { result, finish } = startResult("nvml", ctx.library);
  const lib = new VendorLibrary(ctx.library, NVML_SYMBOLS, ctx.track);
  const errorString = lib.fn("nvmlErrorString");
  const describe = (rc: number) => (errorString && decodeCString(errorString(rc))) || `error ${rc}`;

  const init = lib.first("nvmlInit_v2", "nvmlInit");
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
    const strings = stringReaders();
    result.driverVersion = strings.system(lib.fn("nvmlSystemGetDriverVersion"), 80);
    const nvmlVersion = strings.system(lib.fn("nvmlSystemGetNVMLVersion"), 80);
    result.cudaVersion = readCudaDriverVersion(lib);
    result.version =
      [nvmlVersion && `NVML ${nvmlVersion}`, result.cudaVersion && `CUDA ${result.cudaVersion}`]
        .filter(Boolean)
        .join(", ") || null;

    const getCount = lib.first("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
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
    const claimed = believeCount("nvmlDeviceGetCount_v2", countOut[0]!);
    if (claimed.count === 0) return finish("no-devices", "NVML found no NVIDIA GPU", slowHint);

    const getHandle = lib.first("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    if (!getHandle) return finish("error", "the library exports no nvmlDeviceGetHandleByIndex_v2");
    const notes: string[] = [];
    const device = deviceReaders(lib, strings, (note) => notes.push(note));
    const skipped: string[] = [];
    for (let i = 0; i < claimed.count; i++) {
      const out = Buffer.alloc(8);
      const hrc = getHandle(i, out) as number;
      if (hrc !== NVML_SUCCESS) {
        skipped.push(`GPU ${i}: nvmlDeviceGetHandleByIndex_v2: ${describe(hrc)}`);
        continue;
      }
      result.gpus.push(device.read(i, out.readBigUInt64LE(0)));
    }
    const found = `${countGpus(result.gpus.length)}, driver ${result.driverVersion ?? "unknown"}`;
    const message = withNotes(found, [
      ...(claimed.note ? [claimed.note] : []),
      ...(skipped.length ? [`skipped ${firstFew(skipped)}`] : []),
      ...notes,
    ]);
    // GPUs beyond the believed count were not read either: CUDA's probe may still find them.
    if (skipped.length || claimed.beyond) result.skippedDevices = skipped.length + claimed.beyond;
    return finish(result.gpus.length ? "ok" : "error", message, slowHint);
  } finally {
    // Shut down after the answer is out: a hang there must not cost the result.
    const shutDown = lib.fn("nvmlShutdown");
    if (shutDown) ctx.defer(() => shutDown());
  }
}

function readCudaDriverVersion(lib: VendorLibrary<typeof NVML_SYMBOLS>): string | null {
  const fn = lib.first("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");
  const out = [0];
  if (!fn || fn(out) !== NVML_SUCCESS) return null;
  return formatCudaVersion(out[0]!);
}
