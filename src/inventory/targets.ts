/**
 * Built-in inventory profiles for CI (`--target NAME`): common machines a plan is compiled for
 * when the runner has no GPU. Each GPU's memory is the total its vendor library reports for that
 * card (NVML's nvmlDeviceGetMemoryInfo, as `nvidia-smi` prints it in MiB; ROCm's VRAM total), not
 * the marketing size: a plan's budgets must fit the real card, and run-time binding compares a
 * live card's reported total with the plan's. Where each figure was read is noted beside it.
 */
import type { Target } from "../schema-types/targets.js";

/** schemas/targets.schema.json, what `gpuplan targets --json` lists. */
export type { Target } from "../schema-types/targets.js";

/** nvidia-smi prints NVML's total in MiB (whole MiB: NVML's bytes are a multiple of it). */
const MiB = 1024 ** 2;

export const TARGETS: readonly Target[] = [
  {
    name: "dgx-a100-80gb",
    description: "NVIDIA DGX A100: 8× A100-SXM4-80GB, 2× EPYC 7742 (256 threads), 2 TiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA A100-SXM4-80GB",
          // nvidia-smi: 81920MiB (modal-labs/modal-client#2797 lists nvidia-smi totals per card).
          memory: 81920 * MiB,
          count: 8,
          backend: "cuda",
          compute_capability: "8.0",
        },
      ],
      cpu: { threads: 256, memory: "2TiB", model: "AMD EPYC 7742 64-Core Processor" },
    },
  },
  {
    name: "dgx-a100-40gb",
    description: "NVIDIA DGX A100 (40 GB): 8× A100-SXM4-40GB, 256 threads, 1 TiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA A100-SXM4-40GB",
          // nvidia-smi: 40960MiB (modal-labs/modal-client#2797).
          memory: 40960 * MiB,
          count: 8,
          backend: "cuda",
          compute_capability: "8.0",
        },
      ],
      cpu: { threads: 256, memory: "1TiB", model: "AMD EPYC 7742 64-Core Processor" },
    },
  },
  {
    name: "dgx-h100",
    description: "NVIDIA DGX H100: 8× H100 80GB HBM3, 2× Xeon 8480C (224 threads), 2 TiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA H100 80GB HBM3",
          // nvidia-smi: 81559MiB = 85,520,809,984 bytes (modal-labs/modal-client#2797; NVIDIA/nccl#1264
          // and wilicc/gpu-burn#114 show the same on DGX/HGX H100 machines), 79.6 GiB, not 80.
          memory: 81559 * MiB,
          count: 8,
          backend: "cuda",
          compute_capability: "9.0",
        },
      ],
      cpu: { threads: 224, memory: "2TiB", model: "Intel(R) Xeon(R) Platinum 8480C" },
    },
  },
  {
    name: "dgx-h200",
    description: "NVIDIA DGX H200: 8× H200 141 GB, 224 threads, 2 TiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA H200",
          // nvidia-smi: 143771MiB on H200 SXM machines (nvidia-smi listings in public issue threads).
          memory: 143771 * MiB,
          count: 8,
          backend: "cuda",
          compute_capability: "9.0",
        },
      ],
      cpu: { threads: 224, memory: "2TiB", model: "Intel(R) Xeon(R) Platinum 8480C" },
    },
  },
  {
    name: "rtx4090",
    description: "Workstation: 1× GeForce RTX 4090 24 GB, 32 threads, 128 GiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA GeForce RTX 4090",
          // nvidia-smi: 24564MiB (RLinf/RLinf#255 and other nvidia-smi listings).
          memory: 24564 * MiB,
          count: 1,
          backend: "cuda",
          compute_capability: "8.9",
        },
      ],
      cpu: { threads: 32, memory: "128GiB", model: "AMD Ryzen 9 7950X 16-Core Processor" },
    },
  },
  {
    name: "2x-rtx3090",
    description: "Workstation: 2× GeForce RTX 3090 24 GB, 24 threads, 64 GiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA GeForce RTX 3090",
          // nvidia-smi: 24576MiB (noonghunna/club-3090#1128 nvidia-smi listings).
          memory: 24576 * MiB,
          count: 2,
          backend: "cuda",
          compute_capability: "8.6",
        },
      ],
      cpu: { threads: 24, memory: "64GiB", model: "AMD Ryzen 9 5900X 12-Core Processor" },
    },
  },
  {
    name: "l4-x4",
    description: "Inference server: 4× NVIDIA L4 24 GB, 48 threads, 192 GiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA L4",
          // nvidia-smi: 23034MiB (modal-labs/modal-client#2797): 22.5 GiB, 6.3 % under the 24 GiB it is sold as.
          memory: 23034 * MiB,
          count: 4,
          backend: "cuda",
          compute_capability: "8.9",
        },
      ],
      cpu: { threads: 48, memory: "192GiB", model: "AMD EPYC 9354 32-Core Processor" },
    },
  },
  {
    name: "mi300x-8",
    description: "AMD Instinct MI300X platform: 8× MI300X 192 GB, 2× EPYC 9654 (384 threads), 2 TiB",
    inventory: {
      gpus: [
        {
          name: "AMD Instinct MI300X",
          // ROCm: 206,141,652,992 bytes = 196,592 MiB (rocminfo's VRAM pool, 201310208 KB, in
          // ROCm/legacy-rocm-build#4414; 8 × the 25,767,706,624-byte CPX partitions of #4750).
          memory: 206141652992,
          count: 8,
          backend: "rocm",
          compute_capability: "gfx942",
        },
      ],
      cpu: { threads: 384, memory: "2TiB", model: "AMD EPYC 9654 96-Core Processor" },
    },
  },
  {
    name: "cpu-only",
    description: "A CI runner or laptop without GPUs: 16 threads, 64 GiB",
    inventory: { gpus: [], cpu: { threads: 16, memory: "64GiB", model: "generic x86-64" } },
  },
];
