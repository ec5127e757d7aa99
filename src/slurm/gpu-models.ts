/**
 * Slurm knows a GPU only by its GRES type, a name the cluster's admin chose (`h100`, `a100_80g`)
 * or that AutoDetect=nvml derived from the driver's name (`nvidia_h100_80gb_hbm3`: lower case,
 * spaces to underscores). This table maps such names to the model gpuplan plans for, and back
 * (model → the type to ask for in `--gres=gpu:TYPE:N`).
 *
 * Memory is the total NVML reports (nvidia-smi memory.total), not the marketing size: a plan's
 * budgets must fit the card the job lands on, and an "80 GB" H100 reports 81,559 MiB. Figures:
 * NVML totals as published by Modal ("Why does an NVIDIA H100 80GB card offer 85.52 GB?",
 * thundergolfer.com/blog/nvidia-gpu-memory-capacity), which agree with the fake H100 scenario
 * the detection tests use (85,520,809,984 bytes). Models without a reported figure on record are
 * left out on purpose: a cluster with them says so (`--gpu-model` or a hand-written inventory).
 *
 * An ambiguous short name maps to the smaller card (`a100` → the 40 GB one), so a plan made for
 * it fits on either.
 */
export interface GpuModel {
  /** The name NVML reports, as gpuplan inventories carry it. */
  name: string;
  memoryMiB: number;
  backend: "cuda";
  computeCapability: string;
  /** The type gpuplan asks Slurm for when nothing better is known. */
  gresType: string;
  /** Other GRES type names clusters use for it (compared after normalizeGresType). */
  aliases: readonly string[];
}

export const GPU_MODELS: readonly GpuModel[] = [
  {
    name: "NVIDIA H200",
    memoryMiB: 143_771,
    backend: "cuda",
    computeCapability: "9.0",
    gresType: "h200",
    aliases: ["h200_141gb", "h200_sxm"],
  },
  {
    name: "NVIDIA H100 80GB HBM3",
    memoryMiB: 81_559,
    backend: "cuda",
    computeCapability: "9.0",
    gresType: "h100",
    aliases: ["h100_80gb", "h100_sxm", "h100_sxm5", "h100_hbm3", "h100_80gb_hbm3"],
  },
  {
    name: "NVIDIA A100-SXM4-80GB",
    memoryMiB: 81_920,
    backend: "cuda",
    computeCapability: "8.0",
    gresType: "a100_80gb",
    aliases: ["a100_80g", "a100_sxm4_80gb", "a100_80"],
  },
  {
    name: "NVIDIA A100-SXM4-40GB",
    memoryMiB: 40_960,
    backend: "cuda",
    computeCapability: "8.0",
    gresType: "a100",
    aliases: ["a100_40gb", "a100_40g", "a100_sxm4_40gb", "a100_40"],
  },
  {
    name: "NVIDIA L40S",
    memoryMiB: 46_068,
    backend: "cuda",
    computeCapability: "8.9",
    gresType: "l40s",
    aliases: [],
  },
  {
    name: "NVIDIA L4",
    memoryMiB: 23_034,
    backend: "cuda",
    computeCapability: "8.9",
    gresType: "l4",
    aliases: [],
  },
  {
    name: "NVIDIA A10",
    memoryMiB: 23_028,
    backend: "cuda",
    computeCapability: "8.6",
    gresType: "a10",
    aliases: [],
  },
  {
    name: "Tesla T4",
    memoryMiB: 15_360,
    backend: "cuda",
    computeCapability: "7.5",
    gresType: "t4",
    aliases: [],
  },
];

/** Lower case, runs of space/dash/underscore to one underscore, vendor prefix dropped: `NVIDIA_A100-SXM4-80GB` → `a100_sxm4_80gb`. */
function normalizeGresType(type: string): string {
  return type
    .toLowerCase()
    .replace(/[\s_-]+/g, "_")
    .replace(/^(nvidia|tesla)_/, "");
}

/** The model a GRES type names, or undefined when the table does not know it. */
export function modelForGresType(type: string): GpuModel | undefined {
  const key = normalizeGresType(type);
  return GPU_MODELS.find(
    (m) =>
      normalizeGresType(m.gresType) === key ||
      normalizeGresType(m.name) === key ||
      m.aliases.some((a) => normalizeGresType(a) === key),
  );
}

export const MiB = 1024 * 1024;
