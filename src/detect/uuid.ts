/** Formatting of the 16-byte UUIDs that CUDA and HIP hand back. */

/**
 * Format 16 raw bytes the way NVML and nvidia-smi print them: `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
 * CUDA returns the MIG UUID for a MIG device (ABI.md §2), which NVML prints with a `MIG-` prefix.
 */
export function formatNvidiaUuid(bytes: Uint8Array, prefix: "GPU" | "MIG" = "GPU"): string {
  const hex = Array.from(bytes.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
  return `${prefix}-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** ROCr names an AMD GPU `GPU-` + its 64-bit unique id in hex (ROCR_VISIBLE_DEVICES accepts it). */
export function formatAmdUniqueId(id: bigint): string {
  return `GPU-${id.toString(16).padStart(16, "0")}`;
}

const HEX_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const NVIDIA_GPU_UUID = new RegExp(`^GPU-${HEX_UUID}$`, "i");
// A MIG instance: MIG-<uuid> since R470, MIG-GPU-<uuid>/<gi>/<ci> before it.
const NVIDIA_MIG_UUID = new RegExp(`^MIG-(${HEX_UUID}|GPU-${HEX_UUID}/\\d+/\\d+)$`, "i");

/**
 * Whether NVML's answer has the shape nvidia-smi prints (`GPU-` or `MIG-` and 32 hex digits).
 * gpuplan names a GPU by its UUID in CUDA_VISIBLE_DEVICES and in the slot lock's file: an answer
 * of another shape (`0`, `GPU-a,GPU-b`) would pick another card there, or several.
 */
export function isNvidiaUuid(text: string, kind: "GPU" | "MIG"): boolean {
  return (kind === "GPU" ? NVIDIA_GPU_UUID : NVIDIA_MIG_UUID).test(text);
}

// AMD SMI's UUID: 8-4-4-4-12 hex digits (amdsmi_uuid_gen), or the 64-bit unique id in hex.
const AMD_UUID = new RegExp(`^(GPU-)?(${HEX_UUID}|[0-9a-f]{16})$`, "i");

/** Whether AMD SMI's UUID answer has one of its shapes; for the same reason as isNvidiaUuid (ROCR_VISIBLE_DEVICES). */
export const isAmdUuid = (text: string): boolean => AMD_UUID.test(text);
