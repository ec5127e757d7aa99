/**
 * The name a step is shown its GPU by, in CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES. The
 * UUID where the runtime accepts it: it picks the one card whatever the enumeration order. A GPU
 * whose UUID detection could not learn (`unknown-0000:03:00.0`: NVML's answer was no UUID and
 * CUDA did not see the card, or ROCm SMI has no `unique_id` for a Radeon) was put in the
 * variable as that, which the runtime rejects, so the step saw no GPU at all. Such a GPU is named
 * by its index instead, where the index is sure to be the runtime's own; where it is not, the GPU
 * cannot be shown to a step alone and no step is placed on it.
 */
import { isNvidiaUuid } from "../detect/uuid.js";
import { displayText } from "../text/safe-text.js";
import { isMigInstance } from "./mig.js";
import type { GpuInfo } from "./types.js";

// ROCr's own UUID (rocminfo prints it): GPU- and the 64-bit unique id in hex. AMD SMI's
// 8-4-4-4-12 form is another string ROCr does not match.
const ROCR_UUID = /^GPU-[0-9a-f]{16}$/i;

/**
 * The GPU's name for its vendor's *_VISIBLE_DEVICES variable, or null when there is none that
 * is sure to name this GPU alone. `all` is the inventory the GPU is part of.
 */
export function visibleName(gpu: GpuInfo, all: readonly GpuInfo[]): string | null {
  if (gpu.backend === "rocm") {
    if (ROCR_UUID.test(gpu.uuid)) return gpu.uuid;
    // HIP is probed with ROCR/HIP_VISIBLE_DEVICES cleared, so its order is ROCr's whole list,
    // which ROCR_VISIBLE_DEVICES indexes.
    return typeof gpu.hipIndex === "number" ? String(gpu.hipIndex) : null;
  }
  // A MIG instance can be named only by its UUID (CUDA_VISIBLE_DEVICES has no index for one).
  if (isMigInstance(gpu)) return isNvidiaUuid(gpu.uuid, "MIG") ? gpu.uuid : null;
  if (isNvidiaUuid(gpu.uuid, "GPU")) return gpu.uuid;
  // Steps run with CUDA_DEVICE_ORDER=PCI_BUS_ID, where CUDA's index N is its N-th card in PCI
  // order; `index` is the card's place in PCI order among NVML's. The two agree when CUDA lists
  // the cards NVML does: CUDA was not asked (no card has a CUDA index), or it saw every one.
  if (typeof gpu.index !== "number") return null;
  const cards = all.filter((g) => g.backend === "cuda" && !isMigInstance(g));
  const seenByCuda = cards.filter((g) => typeof g.cudaIndex === "number").length;
  return seenByCuda === 0 || seenByCuda === cards.length ? String(gpu.index) : null;
}

/** Why `visibleName` has none for this GPU, for messages that list such GPUs. */
function whyNotVisible(gpu: GpuInfo): string {
  if (gpu.backend === "rocm")
    return "no UUID that ROCr accepts (ROCm SMI gave no unique id) and no HIP index, so ROCR_VISIBLE_DEVICES cannot name them";
  if (isMigInstance(gpu))
    return "MIG instances without a UUID, and CUDA_VISIBLE_DEVICES takes a MIG instance only by its UUID";
  return "no UUID, and CUDA did not list the cards NVML did, so no CUDA_VISIBLE_DEVICES index is sure to name them";
}

/** One problem (code gpu-not-addressable) per reason, naming its GPUs; the caller picks error or warning. */
export function notAddressable(
  gpus: readonly GpuInfo[],
): { code: "gpu-not-addressable"; message: string; hint: string }[] {
  const byReason = new Map<string, GpuInfo[]>();
  for (const g of gpus) byReason.set(whyNotVisible(g), [...(byReason.get(whyNotVisible(g)) ?? []), g]);
  return [...byReason].map(([why, list]) => ({
    code: "gpu-not-addressable",
    message: `${list.map((g) => `${g.id} (${displayText(g.name, 60)}, ${g.pciBusId ?? "PCI bus id unknown"})`).join(", ")}: ${why}; no step is placed on ${list.length === 1 ? "this GPU" : `these ${list.length} GPUs`}`,
    hint:
      list[0]!.backend === "rocm"
        ? "install HIP (libamdhip64) beside ROCm SMI, so that gpuplan can name the GPU by its index; see gpuplan detect"
        : "check the driver (does nvidia-smi -L list a UUID for it?); see gpuplan detect",
  }));
}
