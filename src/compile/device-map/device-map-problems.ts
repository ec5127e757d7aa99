/**
 * The problems the device-map resolver reports, one constructor per stable code, so the
 * wording and hints live in one place and the resolver reads as rules.
 */
import { didYouMean } from "../../problems/did-you-mean.js";
import { error, type Problem, toPointer, warning } from "../../problems/problem.js";
import { formatSize } from "../../units/size.js";
import type { DeviceMapContext } from "./types.js";

type Where = Pick<DeviceMapContext, "file" | "pointer" | "label">;

/** file + pointer for a node under the step's device_map. */
function locate(ctx: Where, segments: readonly string[]): Pick<Problem, "file" | "pointer"> {
  const pointer = ctx.pointer + toPointer(segments);
  return ctx.file === undefined ? { pointer } : { file: ctx.file, pointer };
}

/** "`unet` (5 GiB), `vae` (300 MiB)" or "`unet`" when sizes are unknown. */
function listComponents(names: readonly string[], sizes?: ReadonlyMap<string, number>): string {
  return names
    .map((n) => {
      const bytes = sizes?.get(n);
      return bytes === undefined ? `\`${n}\`` : `\`${n}\` (${formatSize(bytes)})`;
    })
    .join(", ");
}

function describeGpuCount(count: number): string {
  return count === 1 ? "1 GPU (cuda:0)" : `${count} GPUs (cuda:0 to cuda:${count - 1})`;
}

export function unknownPreset(name: string, known: readonly string[], ctx: Where): Problem {
  const guess = didYouMean(name, known);
  return error({
    code: "unknown-device-map-preset",
    message: `unknown device-map preset \`${name}\` in ${ctx.label}`,
    hint: `${guess ? `did you mean \`${guess}\`? ` : ""}known presets: ${known.join(", ")} (see \`gpuplan presets\`)`,
    ...locate(ctx, ["preset"]),
  });
}

export function invalidTarget(component: string, target: string, ctx: Where): Problem {
  return error({
    code: "device-map-invalid-target",
    message: `\`${target}\` is not a device for \`${component}\` in ${ctx.label}`,
    hint: "use cuda:N or gpu:N (the pipeline's N-th GPU, from 0), cpu or disk",
    ...locate(ctx, ["overrides", component]),
  });
}

export function invalidSize(segments: readonly string[], value: string | number, ctx: Where): Problem {
  return error({
    code: "device-map-invalid-size",
    message: `\`${value}\` is not a size in the device map of ${ctx.label}`,
    hint: "write bytes or a size like 5GiB, 300MiB, 16GB",
    ...locate(ctx, segments),
  });
}

export function overrideGpuOutOfRange(
  component: string,
  index: number,
  gpuCount: number,
  ctx: Where,
): Problem {
  return error({
    code: "device-map-gpu-out-of-range",
    message: `${ctx.label} puts \`${component}\` on cuda:${index}, but its pipeline has ${describeGpuCount(gpuCount)}`,
    hint: "cuda:N counts the pipeline's own GPUs from 0: give the pipeline more GPUs or place the component elsewhere",
    ...locate(ctx, ["overrides", component]),
  });
}

export function presetGpuOutOfRange(
  preset: string,
  needs: number,
  components: readonly string[],
  gpuCount: number,
  ctx: Where,
): Problem {
  return error({
    code: "device-map-gpu-out-of-range",
    message: `preset \`${preset}\` needs ${needs} GPUs, but the pipeline of ${ctx.label} has ${describeGpuCount(gpuCount)}; ${listComponents(components)} have no GPU`,
    hint: `give the pipeline ${needs} GPUs, pick a single-GPU preset, or move ${listComponents(components)} with overrides`,
    ...locate(ctx, ["preset"]),
  });
}

export function overBudget(
  device: string,
  components: readonly string[],
  sizes: ReadonlyMap<string, number>,
  room: number,
  firstOver: string,
  ctx: Where,
): Problem {
  const total = components.reduce((sum, c) => sum + (sizes.get(c) ?? 0), 0);
  return error({
    code: "device-map-over-budget",
    message: `${ctx.label} places ${listComponents(components, sizes)} on ${device}: ${formatSize(total)}, more than the ${formatSize(room)} it may use there`,
    hint:
      device === "cpu"
        ? "move a component to a GPU or to disk with overrides"
        : "move a component with overrides, lower `reserve`, or give the step more memory on that GPU",
    ...locate(ctx, ["components", firstOver]),
  });
}

export function doesNotFit(
  components: readonly string[],
  sizes: ReadonlyMap<string, number>,
  onCpu: boolean,
  ctx: Where,
): Problem {
  const where = onCpu ? "in CPU memory" : "on the GPUs or in CPU memory";
  return error({
    code: "device-map-does-not-fit",
    message: `${ctx.label}: ${listComponents(components, sizes)} ${components.length === 1 ? "does" : "do"} not fit ${where}`,
    hint: "set `allow_disk: true` to spill to disk, give the step a bigger memory budget, or lower `reserve`",
    ...locate(ctx, ["components", components[0] ?? ""]),
  });
}

export function spills(
  device: "cpu" | "disk",
  components: readonly string[],
  sizes: ReadonlyMap<string, number>,
  ctx: Where,
): Problem {
  const verb = components.length === 1 ? "does" : "do";
  return warning({
    code: device === "cpu" ? "device-map-spills-to-cpu" : "device-map-spills-to-disk",
    message:
      device === "cpu"
        ? `${ctx.label}: ${listComponents(components, sizes)} ${verb} not fit on the GPUs and go to cpu`
        : `${ctx.label}: ${listComponents(components, sizes)} ${verb} not fit on the GPUs or in CPU memory and go to disk`,
    hint: `components offloaded to ${device} run much slower: give the step more GPU memory or lower \`reserve\``,
    ...locate(ctx, ["components", components[0] ?? ""]),
  });
}

export function mapOnCpu(ctx: Where): Problem {
  return warning({
    code: "device-map-on-cpu",
    message: `${ctx.label} runs on the CPU, so its device map puts every GPU component on cpu`,
    hint: "give the pipeline a GPU, or write the map with cpu placements to say this is intended",
    ...locate(ctx, []),
  });
}

export function optionUnused(option: string, ctx: Where): Problem {
  return warning({
    code: "device-map-option-unused",
    message: `\`${option}\` has no effect without \`components\` in the device map of ${ctx.label}`,
    hint: "list the components with their sizes, or remove the option",
    ...locate(ctx, [option]),
    at: "key",
  });
}

export function emptyMap(ctx: Where): Problem {
  return warning({
    code: "device-map-empty",
    message: `the device map of ${ctx.label} places nothing`,
    hint: "name a preset, list components with sizes, or place components with overrides",
    ...locate(ctx, []),
  });
}
