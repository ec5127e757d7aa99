// The step environment as a table: which variables each kind of step gets, and that the step's
// own env wins.
import { describe, expect, it } from "vitest";
import {
  buildStepEnvironment,
  computeStepEnv,
  frameworkMemoryEnv,
  localDeviceMap,
} from "../../src/run/step/step-env.js";
import type { PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../../src/schema-types/plan.js";

const GiB = 1024 ** 3;
const entry = (
  gpu: string,
  uuid: string,
  backend: "cuda" | "rocm" = "cuda",
  memoryBytes = 80 * GiB,
): PlanRegistryEntry => ({
  gpu,
  uuid,
  name: "test GPU",
  backend,
  pciBusId: null,
  memoryBytes,
  memoryBudgetBytes: Math.floor(memoryBytes * 0.75),
  warmReserveBytes: 0,
  maxPipelines: 2,
  limitedBy: "configured",
});
const REGISTRY = [
  entry("cuda:0", "GPU-aaaa"),
  entry("cuda:3", "GPU-dddd"),
  entry("cuda:2/mig1", "MIG-1111", "cuda", 20 * GiB),
  entry("rocm:1", "GPU-5f2c6a1d4e3b7a90", "rocm", 192 * GiB),
];

const step = (over: Partial<PlannedStep> = {}): PlannedStep => ({
  id: "train",
  device: "cuda:3",
  uuid: "GPU-dddd",
  argv: ["python3", "train.py"],
  shell: false,
  cwd: null,
  env: {},
  memory: { input: "numpy", output: "torch", uses: [] },
  gpu: true,
  vramBytes: 10 * GiB,
  memoryBudgetBytes: 20 * GiB,
  dataBytes: null,
  needs: [],
  conversions: [],
  deviceMap: null,
  exclusive: false,
  timeoutMs: null,
  estimateMs: 0,
  onOom: { retries: 0, fallback: null },
  keepWarm: false,
  worker: null,
  source: "p.yaml#/pipelines/0/steps/0",
  ...over,
});
const pipeline = (s: PlannedStep, gpus = s.uuid ? [s.device] : []): PlannedPipeline => ({
  name: "plate-1",
  template: "plate-{n}",
  matrix: {},
  gpu: gpus[0] ?? null,
  gpus,
  backend: s.uuid ? "cuda" : "cpu",
  fellBackToCpu: false,
  estimateMs: 0,
  estimatedStartMs: 0,
  peakVramBytes: 0,
  reservationBytes: 0,
  steps: [s],
});
const envFor = (s: PlannedStep, gpus?: string[], onCpu = false) =>
  computeStepEnv({ run: "R1", pipeline: pipeline(s, gpus), step: s, registry: REGISTRY, onCpu });

describe("step environment", () => {
  it.each([
    {
      name: "CUDA GPU step: UUID, PCI order, budget and framework limits",
      s: step(),
      expected: {
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
        CUDA_VISIBLE_DEVICES: "GPU-dddd",
        GPUPLAN_RUN: "R1",
        GPUPLAN_PIPELINE: "plate-1",
        GPUPLAN_STEP: "train",
        GPUPLAN_DEVICE: "cuda:3",
        GPUPLAN_OOM_ATTEMPT: "1",
        GPUPLAN_OOM_SCALE: "1",
        GPUPLAN_MEMORY_BUDGET_BYTES: String(20 * GiB),
        GPUPLAN_MEMORY_TYPES: "numpy,torch",
        XLA_PYTHON_CLIENT_PREALLOCATE: "false",
        XLA_PYTHON_CLIENT_MEM_FRACTION: "0.250",
        TF_FORCE_GPU_ALLOW_GROWTH: "true",
        CUPY_GPU_MEMORY_LIMIT: String(20 * GiB),
        PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True",
      },
      unset: ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"],
    },
    {
      name: "CPU step: no GPU visible, no framework limits",
      s: step({
        device: "cpu",
        uuid: null,
        gpu: false,
        memoryBudgetBytes: null,
        memory: { input: "numpy", output: "numpy", uses: [] },
      }),
      expected: {
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
        CUDA_VISIBLE_DEVICES: "",
        GPUPLAN_RUN: "R1",
        GPUPLAN_PIPELINE: "plate-1",
        GPUPLAN_STEP: "train",
        GPUPLAN_DEVICE: "cpu",
        GPUPLAN_OOM_ATTEMPT: "1",
        GPUPLAN_OOM_SCALE: "1",
        GPUPLAN_MEMORY_TYPES: "numpy",
      },
      unset: ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"],
    },
    {
      name: "MIG step: the MIG UUID alone",
      s: step({ device: "cuda:2/mig1", uuid: "MIG-1111", memoryBudgetBytes: 15 * GiB }),
      expected: {
        CUDA_VISIBLE_DEVICES: "MIG-1111",
        XLA_PYTHON_CLIENT_MEM_FRACTION: "0.750",
        GPUPLAN_DEVICE: "cuda:2/mig1",
      },
      unset: ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"],
    },
    {
      name: "AMD step: ROCR_VISIBLE_DEVICES only; CUDA and HIP variables removed",
      s: step({ device: "rocm:1", uuid: "GPU-5f2c6a1d4e3b7a90", memoryBudgetBytes: 96 * GiB }),
      expected: { ROCR_VISIBLE_DEVICES: "GPU-5f2c6a1d4e3b7a90", XLA_PYTHON_CLIENT_MEM_FRACTION: "0.500" },
      absent: ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"],
      unset: ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"],
    },
    {
      name: "gpus: 2 pipeline: the step's GPU first, then the others",
      s: step(),
      gpus: ["cuda:0", "cuda:3"],
      expected: { CUDA_VISIBLE_DEVICES: "GPU-dddd,GPU-aaaa" },
      unset: ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"],
    },
    {
      name: "CPU fallback of a GPU step: CPU env",
      s: step(),
      onCpu: true,
      expected: { CUDA_VISIBLE_DEVICES: "", GPUPLAN_DEVICE: "cpu" },
      absent: ["GPUPLAN_MEMORY_BUDGET_BYTES", "XLA_PYTHON_CLIENT_MEM_FRACTION", "CUPY_GPU_MEMORY_LIMIT"],
      unset: ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"],
    },
  ])("$name", ({ s, gpus, onCpu, expected, absent, unset }) => {
    const env = envFor(s, gpus, onCpu);
    if (Object.keys(expected).length > 8) expect(env.set).toEqual(expected);
    else expect(env.set).toMatchObject(expected);
    for (const name of absent ?? []) expect(env.set).not.toHaveProperty(name);
    expect(env.unset.sort()).toEqual([...unset].sort());
  });

  it("the step's own env wins over everything gpuplan sets, and keeps its inherited variable", () => {
    const s = step({
      env: {
        PYTORCH_CUDA_ALLOC_CONF: "max_split_size_mb:128",
        HIP_VISIBLE_DEVICES: "0",
        WANDB_MODE: "offline",
      },
    });
    const env = buildStepEnvironment(
      { run: "R1", pipeline: pipeline(s), step: s, registry: REGISTRY },
      { PATH: "/bin", CUDA_VISIBLE_DEVICES: "0,1,2,3", ROCR_VISIBLE_DEVICES: "1", HOME: "/home/u" },
    );
    expect(env).toMatchObject({
      PATH: "/bin",
      HOME: "/home/u",
      CUDA_VISIBLE_DEVICES: "GPU-dddd",
      PYTORCH_CUDA_ALLOC_CONF: "max_split_size_mb:128",
      HIP_VISIBLE_DEVICES: "0",
      WANDB_MODE: "offline",
    });
    expect(env).not.toHaveProperty("ROCR_VISIBLE_DEVICES");
  });

  it("inherited variables named like Object's own keys are passed on; gpuplan's own variables replace inherited ones", () => {
    const s = step({});
    const env = buildStepEnvironment(
      { run: "R2", pipeline: pipeline(s), step: s, registry: REGISTRY },
      {
        PATH: "/bin",
        toString: "a",
        constructor: "b",
        hasOwnProperty: "c",
        GPUPLAN_RUN: "outer",
        GPUPLAN_STEP: "outer",
      },
    );
    expect(Object.hasOwn(env, "toString") && env.toString).toBe("a");
    expect(Object.hasOwn(env, "constructor") && env.constructor).toBe("b");
    expect(Object.hasOwn(env, "hasOwnProperty") && env.hasOwnProperty).toBe("c");
    expect(env).toMatchObject({ PATH: "/bin", GPUPLAN_RUN: "R2", GPUPLAN_STEP: s.id });
  });

  it("device maps in the step's own view: cuda:3 is cuda:0, the second GPU cuda:1; cpu and disk unchanged", () => {
    const s = step({
      deviceMap: {
        preset: "a100-80gb",
        map: { unet: "cuda:3", text_encoder: "cuda:0", vae: "cpu", offload: "disk" },
        bytesByDevice: {},
      },
    });
    const env = envFor(s, ["cuda:0", "cuda:3"]);
    expect(JSON.parse(env.set.GPUPLAN_DEVICE_MAP!)).toEqual({
      unet: "cuda:0",
      text_encoder: "cuda:1",
      vae: "cpu",
      offload: "disk",
    });
    expect(localDeviceMap({ unet: "cuda:3" }, [])).toEqual({ unet: "cpu" });
    // A component named __proto__ is a component: JSON.parse makes it an own key, as the plan reader does.
    const proto = localDeviceMap(JSON.parse('{ "__proto__": "cuda:3", "vae": "cpu" }'), []);
    expect(JSON.stringify(proto)).toBe('{"__proto__":"cpu","vae":"cpu"}');
  });

  it("device maps on AMD GPUs say cuda:N, as PyTorch on ROCm names them (it refuses rocm:N)", () => {
    const s = step({
      device: "rocm:1",
      uuid: "GPU-5f2c6a1d4e3b7a90",
      deviceMap: { preset: "mi300x", map: { unet: "rocm:1", vae: "cpu" }, bytesByDevice: {} },
    });
    const env = envFor(s, ["rocm:1"]);
    expect(JSON.parse(env.set.GPUPLAN_DEVICE_MAP!)).toEqual({ unet: "cuda:0", vae: "cpu" });
    // gpuplan's own name for the card stays the plan's.
    expect(env.set.GPUPLAN_DEVICE).toBe("rocm:1");
  });

  it.each([
    [20 * GiB, 80 * GiB, "0.250"],
    [60 * GiB, 80 * GiB, "0.750"],
    [1, 3, "0.333"],
    [2, 3, "0.666"],
    [12 * GiB, 192 * GiB, "0.0625"],
    // 64 MiB of an H100: 0.000 to 3 decimals, which JAX reads as nothing at all.
    [64 * 1024 ** 2, 80 * GiB, "0.000781"],
    [1, 80 * GiB, "0.0000000000116"],
    [80 * GiB, 80 * GiB, "1.000"],
  ])(
    "memory fraction %d of %d is %s (rounded down, never above the budget, never 0)",
    (budget, total, fraction) => {
      expect(frameworkMemoryEnv(budget, total).XLA_PYTHON_CLIENT_MEM_FRACTION).toBe(fraction);
    },
  );

  it("a multi-GPU step on cards of different sizes: the fraction gives its budget on the smallest", () => {
    const registry = [
      entry("cuda:0", "GPU-a100", "cuda", 80 * GiB),
      entry("cuda:1", "GPU-l4", "cuda", 24 * GiB),
    ];
    const s = step({ device: "cuda:0", uuid: "GPU-a100", memoryBudgetBytes: 12 * GiB });
    const p = pipeline(s, ["cuda:0", "cuda:1"]);
    const env = computeStepEnv({ run: "R1", pipeline: p, step: s, registry });
    // 12 GiB of the L4 (0.150, of the A100, was 3.6 GiB there).
    expect(env.set.XLA_PYTHON_CLIENT_MEM_FRACTION).toBe("0.500");
    expect(env.set.CUPY_GPU_MEMORY_LIMIT).toBe(String(12 * GiB));
  });

  it("a budget of 0 (a plan from before vram: 0 was refused) sets no limits — CuPy reads 0 as unlimited", () => {
    const env = envFor(step({ memoryBudgetBytes: 0 }));
    for (const name of [
      "GPUPLAN_MEMORY_BUDGET_BYTES",
      "CUPY_GPU_MEMORY_LIMIT",
      "XLA_PYTHON_CLIENT_MEM_FRACTION",
    ])
      expect(env.set).not.toHaveProperty(name);
  });

  it("no fraction when no card's memory is known, rather than a fraction of nothing", () => {
    const registry = [entry("cuda:3", "GPU-dddd", "cuda", 0)];
    const s = step();
    const env = computeStepEnv({ run: "R1", pipeline: pipeline(s), step: s, registry });
    expect(env.set).not.toHaveProperty("XLA_PYTHON_CLIENT_MEM_FRACTION");
    expect(env.set.CUPY_GPU_MEMORY_LIMIT).toBe(String(20 * GiB));
  });
});
