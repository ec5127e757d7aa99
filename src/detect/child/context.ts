/** What every vendor probe in the child gets, and small helpers to shape its result. */
import { nowMs } from "../clock.js";
import type { ProbeResult, ProbeStatus, VendorProbeName } from "../probe-types.js";

export interface ProbeContext {
  /** Absolute path of the library to load. */
  library: string;
  /** Called before each vendor call, so a crash can be pinned on it. */
  track: (call: string) => void;
  /** An init call slower than this earns a hint. */
  slowInitMs: number;
  /** Whether the amdgpu kernel driver is loaded: without it an init failure means "no AMD GPU". */
  amdDriverLoaded: boolean;
  /** Run `fn` once every answer has been sent (library shutdown calls). */
  defer: (fn: () => void) => void;
}

/** Start a result for `name`; `finish` stamps the duration. */
export function startResult(name: VendorProbeName, library: string) {
  const started = nowMs();
  const result: ProbeResult = {
    name,
    status: "ok",
    message: "",
    library,
    version: null,
    durationMs: 0,
    gpus: [],
  };
  return {
    result,
    finish(status: ProbeStatus, message: string, hint?: string): ProbeResult {
      result.status = status;
      result.message = message;
      if (hint) result.hint = hint;
      result.durationMs = Math.round((nowMs() - started) * 10) / 10;
      return result;
    },
  };
}

/** "1 GPU" / "3 GPUs". */
export const countGpus = (n: number): string => `${n} GPU${n === 1 ? "" : "s"}`;

/** A CUDA version integer, 1000 * major + 10 * minor (ABI.md §6.5): 12040 is "12.4". */
export function formatCudaVersion(v: number): string | null {
  return v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : null;
}
