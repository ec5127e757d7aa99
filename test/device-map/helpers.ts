import type { DeviceMapContext } from "../../src/compile/device-map/index.js";

export const GiB = 1024 ** 3;
export const MiB = 1024 ** 2;

/** A context for `step \`gen\` of pipeline \`p\``, overridable per test. */
export function context(overrides: Partial<DeviceMapContext> = {}): DeviceMapContext {
  return {
    gpus: [{ id: "cuda:0", budgetBytes: 80 * GiB }],
    cpuMemoryBytes: 256 * GiB,
    contextReserveBytes: 1 * GiB,
    file: "pipeline.yaml",
    pointer: "/pipelines/0/steps/1/device_map",
    label: "step `gen` of pipeline `p`",
    ...overrides,
  };
}
