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
