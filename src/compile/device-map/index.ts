/** Device maps: presets, overrides and automatic placement, resolved to the pipeline's real devices. */
export { type DeviceMapPreset, findPreset, listPresets } from "./presets.js";
export { resolveDeviceMap } from "./resolve-device-map.js";
export type { DeviceMapContext } from "./types.js";
