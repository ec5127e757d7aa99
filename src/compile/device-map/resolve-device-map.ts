/**
 * Resolves a step's device map to real device ids. Placements come from three sources:
 * a preset and overrides pin components (overrides win and may add components); `components`
 * gives sizes, and every sized component nobody pinned is placed automatically by `strategy`.
 * So a preset with `components` is allowed: the preset places, the sizes are checked against
 * the budgets. Pure: returns problems, never prints or throws for user mistakes.
 */
import { type Checked, hasErrors, type Problem } from "../../problems/problem.js";
import type { DeviceMapSpec } from "../../schema-types/pipeline.js";
import { parseSize } from "../../units/size.js";
import {
  emptyMap,
  invalidSize,
  invalidTarget,
  mapOnCpu,
  optionUnused,
  overrideGpuOutOfRange,
  presetGpuOutOfRange,
  unknownPreset,
} from "./device-map-problems.js";
import { type DeviceTarget, parseDeviceTarget } from "./device-target.js";
import { placeSizedComponents } from "./place-sized-components.js";
import { type DeviceMapPreset, findPreset, presetNames } from "./presets.js";
import type { DeviceMapContext, ResolvedDeviceMap } from "./types.js";

/** A placement a preset or an override pins; `from` decides where an out-of-range GPU is reported. */
type Pin = DeviceTarget & { from: "preset" | "override" };

/** Resolve a step's device map against the pipeline's GPUs; value is undefined when there are errors. */
export function resolveDeviceMap(spec: DeviceMapSpec, ctx: DeviceMapContext): Checked<ResolvedDeviceMap> {
  const problems: Problem[] = [];
  const preset = spec.preset === undefined ? undefined : findPreset(spec.preset);
  if (spec.preset !== undefined && preset === undefined) {
    problems.push(unknownPreset(spec.preset, presetNames(), ctx));
  }
  const pins = collectPins(preset, spec.overrides ?? {}, ctx, problems);
  const sizes = collectSizes(spec.components ?? {}, ctx, problems);
  const order = [
    ...new Set([
      ...Object.keys(preset?.components ?? {}),
      ...Object.keys(spec.components ?? {}),
      ...Object.keys(spec.overrides ?? {}),
    ]),
  ];

  const onCpu = ctx.gpus.length === 0;
  const placed = pinToDevices(pins, preset, ctx, problems);
  let bytesByDevice: Record<string, number> = {};
  if (spec.components !== undefined) {
    const reserve = resolveReserve(spec, ctx, problems);
    const auto = placeSizedComponents({ order, sizes, pins, placed, reserve, spec, ctx, problems });
    bytesByDevice = auto.bytesByDevice;
  } else {
    for (const option of ["strategy", "reserve", "allow_disk"] as const) {
      if (spec[option] !== undefined) problems.push(optionUnused(option, ctx));
    }
  }

  // Auto-placed components would have gone to a GPU too, so they count as GPU placements.
  const usesGpu =
    [...pins.values()].some((t) => t.kind === "gpu") || [...sizes.keys()].some((c) => !pins.has(c));
  if (onCpu && usesGpu) problems.push(mapOnCpu(ctx));
  if (order.length === 0 && spec.preset === undefined) problems.push(emptyMap(ctx));

  if (hasErrors(problems)) return { value: undefined, problems };
  // No prototype: a component named `__proto__` is a key, not a prototype assignment.
  const map: Record<string, string> = Object.create(null);
  for (const component of order) {
    const device = placed.get(component);
    if (device !== undefined) map[component] = device;
  }
  return { value: { map, bytesByDevice, preset: preset?.name ?? null }, problems };
}

/** Preset placements, then overrides on top (a Map keeps each key's first position). */
function collectPins(
  preset: DeviceMapPreset | undefined,
  overrides: Readonly<Record<string, string>>,
  ctx: DeviceMapContext,
  problems: Problem[],
): Map<string, Pin> {
  const pins = new Map<string, Pin>();
  for (const [component, text] of Object.entries(preset?.components ?? {})) {
    const target = parseDeviceTarget(text);
    if (target === undefined) throw new Error(`preset ${preset?.name} has a bad target ${text}`);
    pins.set(component, { ...target, from: "preset" });
  }
  for (const [component, text] of Object.entries(overrides)) {
    const target = parseDeviceTarget(text);
    // The schema's pattern already rejects these; kept so a skipped schema check cannot crash us.
    if (target === undefined) problems.push(invalidTarget(component, text, ctx));
    else pins.set(component, { ...target, from: "override" });
  }
  return pins;
}

function collectSizes(
  components: Readonly<Record<string, string | number>>,
  ctx: DeviceMapContext,
  problems: Problem[],
): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const [component, text] of Object.entries(components)) {
    const bytes = parseSize(text);
    if (bytes === undefined) problems.push(invalidSize(["components", component], text, ctx));
    else sizes.set(component, bytes);
  }
  return sizes;
}

function resolveReserve(spec: DeviceMapSpec, ctx: DeviceMapContext, problems: Problem[]): number {
  if (spec.reserve === undefined) return ctx.contextReserveBytes;
  const bytes = parseSize(spec.reserve);
  if (bytes === undefined) problems.push(invalidSize(["reserve"], spec.reserve, ctx));
  return bytes ?? ctx.contextReserveBytes;
}

/** Pinned components -> real device ids; a step on the CPU gets cpu for every GPU placement. */
function pinToDevices(
  pins: ReadonlyMap<string, Pin>,
  preset: DeviceMapPreset | undefined,
  ctx: DeviceMapContext,
  problems: Problem[],
): Map<string, string> {
  const placed = new Map<string, string>();
  const presetMissing: string[] = [];
  let presetNeeds = 0;
  for (const [component, pin] of pins) {
    if (pin.kind !== "gpu") {
      placed.set(component, pin.kind);
      continue;
    }
    if (ctx.gpus.length === 0) {
      placed.set(component, "cpu");
      continue;
    }
    const gpu = ctx.gpus[pin.index];
    if (gpu !== undefined) placed.set(component, gpu.id);
    else if (pin.from === "override") {
      problems.push(overrideGpuOutOfRange(component, pin.index, ctx.gpus.length, ctx));
    } else {
      presetMissing.push(component);
      presetNeeds = Math.max(presetNeeds, pin.index + 1);
    }
  }
  // One problem for the preset, not one per component: the fix is the same for all of them.
  if (preset !== undefined && presetMissing.length > 0) {
    problems.push(presetGpuOutOfRange(preset.name, presetNeeds, presetMissing, ctx.gpus.length, ctx));
  }
  return placed;
}
