// A step's env wins over what gpuplan sets, so CUDA_VISIBLE_DEVICES in it took the step off the
// GPUs gpuplan bound and locked: a CPU step given "0" ran on GPU 0 with no slot held. compile
// refuses every variable that picks devices, at the key where it is written.
import { describe, expect, it } from "vitest";
import { check, withCode, yaml } from "../../helpers/pipeline.js";

describe("rule: a step's env may not choose its GPUs", () => {
  it("refuses each device variable in a step's, a pipeline's or the defaults' env, once, at its key", () => {
    const loaded = check(yaml`
      version: 1
      defaults:
        env: { GPU_DEVICE_ORDINAL: "1", WANDB_MODE: offline }
      pipelines:
        - name: a
          env: { ROCR_VISIBLE_DEVICES: "0" }
          steps:
            - id: cpu
              run: [x]
              memory: numpy
              env: { CUDA_VISIBLE_DEVICES: "0" }
            - id: gpu
              run: [y]
              memory: torch
              vram: 1GiB
              env: { HIP_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: FASTEST_FIRST }
    `);
    const found = withCode(loaded.problems, "env-sets-devices");
    const places = [...new Set(found.map((p) => `${p.pointer} ${p.line}:${p.column}`))].sort();
    expect(places).toEqual([
      "/defaults/env/GPU_DEVICE_ORDINAL 3:10",
      "/pipelines/0/env/ROCR_VISIBLE_DEVICES 6:12",
      "/pipelines/0/steps/0/env/CUDA_VISIBLE_DEVICES 11:16",
      "/pipelines/0/steps/1/env/HIP_VISIBLE_DEVICES 16:16",
    ]);
    expect(found.every((p) => p.severity === "error")).toBe(true);
    const cpu = found.find((p) => p.pointer?.endsWith("/CUDA_VISIBLE_DEVICES"));
    expect(cpu?.message).toContain("of step `cpu`");
  });

  it("leaves other variables alone, CUDA_DEVICE_ORDER among them", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: a
          steps:
            - id: s
              run: [x]
              env: { CUDA_DEVICE_ORDER: PCI_BUS_ID, cuda_visible_devices: "0", TF_CPP_MIN_LOG_LEVEL: "2" }
    `);
    expect(withCode(loaded.problems, "env-sets-devices")).toEqual([]);
  });
});
