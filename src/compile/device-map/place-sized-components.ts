/**
 * The budget half of the resolver, used when `components` gives sizes: checks what presets and
 * overrides pinned against each device's room, places the rest by strategy, and totals the
 * bytes per device.
 */
import type { Problem } from "../../problems/problem.js";
import type { DeviceMapSpec } from "../../schema-types/pipeline.js";
import { doesNotFit, overBudget, spills } from "./device-map-problems.js";
import type { DeviceTarget } from "./device-target.js";
import { type Bin, placeBalanced, placeSequential, type SizedComponent } from "./place-components.js";
import type { DeviceMapContext } from "./types.js";

export interface SizedPlacementInput {
  /** Every component in output order. */
  order: readonly string[];
  sizes: ReadonlyMap<string, number>;
  pins: ReadonlyMap<string, DeviceTarget>;
  /** Pinned components already resolved to device ids; auto placements are added here. */
  placed: Map<string, string>;
  /** Bytes kept free on every GPU for the context. */
  reserve: number;
  spec: DeviceMapSpec;
  ctx: DeviceMapContext;
  problems: Problem[];
}

/** Place the sized components that nobody pinned and report what does not fit; returns bytes per device. */
export function placeSizedComponents(input: SizedPlacementInput): { bytesByDevice: Record<string, number> } {
  const { order, sizes, pins, placed, reserve, spec, ctx, problems } = input;
  const onCpu = ctx.gpus.length === 0;
  const gpuBins: Bin[] = ctx.gpus.map((g) => ({ id: g.id, room: Math.max(0, g.budgetBytes - reserve) }));
  // Unknown host memory is assumed to fit, as the context promises; disk is unbounded.
  const cpuBin: Bin = { id: "cpu", room: ctx.cpuMemoryBytes ?? Number.POSITIVE_INFINITY };
  const diskBin: Bin = { id: "disk", room: Number.POSITIVE_INFINITY };
  const bins = new Map<string, Bin>([...gpuBins, cpuBin, diskBin].map((b) => [b.id, b]));

  chargePinned(input, bins);

  const auto: SizedComponent[] = order
    .filter((c) => sizes.has(c) && !pins.has(c))
    .map((name) => ({ name, bytes: sizes.get(name) ?? 0 }));
  // An explicit `disk` override is the user's choice; allow_disk only governs automatic spilling.
  const spill = spec.allow_disk === true ? [cpuBin, diskBin] : [cpuBin];
  const { placed: autoPlaced, unplaced } = onCpu
    ? placeSequential(auto, spill)
    : spec.strategy === "balanced"
      ? placeBalanced(auto, gpuBins, spill)
      : placeSequential(auto, [...gpuBins, ...spill]);

  const spilled: Record<"cpu" | "disk", string[]> = { cpu: [], disk: [] };
  for (const { name } of auto) {
    const device = autoPlaced.get(name);
    if (device === undefined) continue;
    placed.set(name, device);
    // On a CPU step cpu is where everything belongs; `device-map-on-cpu` already says so.
    if (device === "cpu" && !onCpu) spilled.cpu.push(name);
    if (device === "disk") spilled.disk.push(name);
  }
  if (spilled.cpu.length > 0) problems.push(spills("cpu", spilled.cpu, sizes, ctx));
  if (spilled.disk.length > 0) problems.push(spills("disk", spilled.disk, sizes, ctx));
  if (unplaced.length > 0) problems.push(doesNotFit(unplaced, sizes, onCpu, ctx));

  return { bytesByDevice: totalBytes(order, sizes, placed, [...gpuBins.map((b) => b.id), "cpu", "disk"]) };
}

/** Take pinned sizes out of their device's room; a device pinned past its room is an error. */
function chargePinned(input: SizedPlacementInput, bins: ReadonlyMap<string, Bin>): void {
  const { order, sizes, placed, ctx, problems } = input;
  const byDevice = new Map<string, string[]>();
  for (const component of order) {
    const device = placed.get(component);
    if (device === undefined || !sizes.has(component)) continue;
    byDevice.set(device, [...(byDevice.get(device) ?? []), component]);
  }
  for (const [device, components] of byDevice) {
    const bin = bins.get(device);
    if (bin === undefined) throw new Error(`no bin for pinned device ${device}`);
    const room = bin.room;
    let used = 0;
    let firstOver: string | undefined;
    for (const component of components) {
      used += sizes.get(component) ?? 0;
      if (used > room && firstOver === undefined) firstOver = component;
    }
    if (firstOver !== undefined) problems.push(overBudget(device, components, sizes, room, firstOver, ctx));
    bin.room = Math.max(0, room - used);
  }
}

/** Bytes per device for sized components, devices in a fixed order so plans are byte-identical. */
function totalBytes(
  order: readonly string[],
  sizes: ReadonlyMap<string, number>,
  placed: ReadonlyMap<string, string>,
  devices: readonly string[],
): Record<string, number> {
  const totals = new Map<string, number>();
  for (const component of order) {
    const device = placed.get(component);
    const bytes = sizes.get(component);
    if (device !== undefined && bytes !== undefined) totals.set(device, (totals.get(device) ?? 0) + bytes);
  }
  const result: Record<string, number> = {};
  for (const device of devices) {
    const bytes = totals.get(device);
    if (bytes !== undefined) result[device] = bytes;
  }
  return result;
}
