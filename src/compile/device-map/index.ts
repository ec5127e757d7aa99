/** Device maps: presets, overrides and automatic placement, resolved to the pipeline's real devices. */
export { type DeviceTarget, formatDeviceTarget, parseDeviceTarget } from "./device-target.js";
export { type DeviceMapPreset, findPreset, listPresets, presetNames } from "./presets.js";
export { resolveDeviceMap } from "./resolve-device-map.js";
export type { DeviceMapContext, ResolvedDeviceMap } from "./types.js";
