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

/**
 * The most devices a probe asks a library about. NVIDIA's kernel module drives at most 32 GPUs in
 * one system (NV_MAX_DEVICES, open-gpu-kernel-modules nvlimits.h), amdgpu at most 64
 * (MAX_GPU_INSTANCE, amdgpu.h), an MI300X partitioned as CPX shows 8 devices per card: a count
 * above 1024 is a broken library (0xFFFFFFFF for -1, say), and walking it would take minutes and
 * a message of megabytes.
 */
export const MAX_DEVICES = 1024;

/** Items (skipped devices, notes) named one by one in a probe's message before "and N more". */
const SHOWN = 5;

const formatCount = (n: number): string => n.toLocaleString("en-US");

/**
 * A device count from `call`, as far as it is believed: `count` to walk (at most `max`), and a
 * note for the probe's message when the library claimed more, or a count that is no count at all
 * (negative: `error`, nothing to walk).
 */
export function believeCount(
  call: string,
  claimed: number,
  max = MAX_DEVICES,
): { count: number; beyond: number; note: string | null; error: string | null } {
  if (!Number.isInteger(claimed) || claimed < 0)
    return {
      count: 0,
      beyond: 0,
      note: null,
      error: `${call} answered ${claimed}, which is no device count`,
    };
  if (claimed <= max) return { count: claimed, beyond: 0, note: null, error: null };
  return {
    count: max,
    beyond: claimed - max,
    note: `${call} answered ${formatCount(claimed)}, more than a machine has: only the first ${formatCount(max)} were read`,
    error: null,
  };
}

/** Items for a probe's message, which stays one short line: the first few, then how many more. */
export function firstFew(items: readonly string[], what = ""): string {
  const shown = items.slice(0, SHOWN).join("; ");
  const more = items.length - SHOWN;
  return more > 0 ? `${shown}; and ${formatCount(more)} more${what}` : shown;
}

/** A probe's message: what it found, then its notes (a count not believed, values left unknown). */
export function withNotes(found: string, notes: readonly string[]): string {
  return notes.length ? `${found}; ${firstFew(notes, " notes")}` : found;
}

/** "1 GPU" / "3 GPUs". */
export const countGpus = (n: number): string => `${n} GPU${n === 1 ? "" : "s"}`;

/** A CUDA version integer, 1000 * major + 10 * minor (ABI.md §6.5): 12040 is "12.4". */
export function formatCudaVersion(v: number): string | null {
  return v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : null;
}

/**
 * "9.0" from the two integers a library answers, or null where they are no compute capability
 * (negative, or a major past any GPU's): "-1.-1" would stand in the inventory as the GPU's own,
 * keep the CUDA probe from telling the real one and never satisfy `requires.compute_capability`.
 */
export function formatComputeCapability(major: number | null, minor: number | null): string | null {
  if (major === null || minor === null) return null;
  const plausible = (n: number, max: number) => Number.isInteger(n) && n >= 0 && n <= max;
  return plausible(major, 99) && major > 0 && plausible(minor, 99) ? `${major}.${minor}` : null;
}
