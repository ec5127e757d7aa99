/** What the device-map resolver needs to know about the step, and what it hands back. */
export interface DeviceMapContext {
  /** The pipeline's GPUs in order (its first GPU is cuda:0 in presets), each with the bytes this step may use there. Empty when the step runs on the CPU. */
  gpus: { id: string; budgetBytes: number }[];
  /** Host memory the map may spill to; null = unknown (then assume it fits). */
  cpuMemoryBytes: number | null;
  /** Default per-GPU reserve for the context (spec.reserve wins). */
  contextReserveBytes: number;
  /** Where problems point: file and the JSON pointer of the step's device_map node, e.g. "/pipelines/0/steps/2/device_map". */
  file?: string;
  pointer: string;
  /** For messages: e.g. "step `segment` of pipeline `plate-1`". */
  label: string;
}

export interface ResolvedDeviceMap {
  /** component -> real device id ("cuda:3", "rocm:1", "cpu", "disk"), keys in a deterministic order (preset order, then components declared, then overrides added). */
  map: Record<string, string>;
  /** Bytes placed per device id, GPUs in pipeline order then cpu then disk (only when `components` gives sizes; {} otherwise). */
  bytesByDevice: Record<string, number>;
  /** Canonical lower-case preset name. */
  preset: string | null;
}
