/**
 * Built-in inventory profiles for CI (`--target NAME`): common machines a plan is compiled for
 * when the runner has no GPU. Figures are the vendors' published ones.
 */
import type { Target } from "../schema-types/targets.js";

/** schemas/targets.schema.json, what `gpuplan targets --json` lists. */
export type { Target } from "../schema-types/targets.js";

const GiB = 1024 ** 3;

export const TARGETS: readonly Target[] = [
  {
    name: "dgx-a100-80gb",
    description: "NVIDIA DGX A100: 8× A100-SXM4-80GB, 2× EPYC 7742 (256 threads), 2 TiB",
    inventory: {
      gpus: [
        {
          name: "NVIDIA A100-SXM4-80GB",
          memory: 80 * GiB,
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
          memory: 40 * GiB,
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
          memory: 80 * GiB,
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
        { name: "NVIDIA H200", memory: 141 * 1e9, count: 8, backend: "cuda", compute_capability: "9.0" },
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
          memory: 24 * GiB,
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
          memory: 24 * GiB,
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
      gpus: [{ name: "NVIDIA L4", memory: 24 * GiB, count: 4, backend: "cuda", compute_capability: "8.9" }],
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
          memory: 192 * GiB,
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
