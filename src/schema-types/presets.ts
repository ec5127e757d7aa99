/* Generated from schemas/presets.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What `gpuplan presets --json` prints: the built-in device-map presets a step's `device_map.preset` names.
 */
export interface GpuplanPresets {
  schema: "gpuplan/presets@1";
  presets: DeviceMapPreset[];
}
export interface DeviceMapPreset {
  /**
   * Canonical, lower-case name; `device_map.preset` matches it case-insensitively.
   */
  name: string;
  description: string;
  /**
   * The card (per GPU) the preset is sized for, e.g. "80 GB".
   */
  memoryClass: string;
  /**
   * How many of the pipeline's GPUs the preset uses.
   */
  gpus: number;
  /**
   * Component → `cuda:N` (the pipeline's N-th GPU) or `cpu`, in the order the map is written.
   */
  components: {
    [k: string]: string;
  };
}
